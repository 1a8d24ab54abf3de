// CrossMapLRN2d, after libtorch's modules/_functions.cpp (itself Lua Torch's
// SpatialCrossMapLRN): the forward's running sum over channels and the backward's window are
// written as 0/1 channel matrices, so both run on every device as matrix products.
#include <kiln/custom_function.h>
#include <kiln/nn/modules/cross_map_lrn2d.h>
#include <kiln/ops.h>

#include <algorithm>
#include <vector>

namespace kiln::nn {
namespace {

// [C, C] 0/1 matrix of `like`'s dtype and device from a predicate on (c, c').
template <class F>
Tensor channel_matrix(int64_t channels, const Tensor& like, F member) {
  std::vector<double> m(static_cast<size_t>(channels * channels), 0.0);
  for (int64_t c = 0; c < channels; ++c) {
    for (int64_t j = 0; j < channels; ++j) {
      if (member(c, j)) m[static_cast<size_t>(c * channels + j)] = 1.0;
    }
  }
  return from_blob(m.data(), {channels, channels}, TensorOptions().dtype(kDouble))
      .to(like.device(), like.dtype(), /*copy=*/true);
}

// Which squares libtorch's running sum holds for each channel: the first pre_pad channels, then
// for each next channel the one pre_pad - 1 ahead added and, past pre_pad, the one pre_pad
// behind removed.
Tensor forward_window(int64_t channels, int64_t size, const Tensor& like) {
  const int64_t pre_pad = (size - 1) / 2 + 1;
  std::vector<std::vector<bool>> in(static_cast<size_t>(channels),
                                    std::vector<bool>(static_cast<size_t>(channels), false));
  for (int64_t j = 0; j < std::min(pre_pad, channels); ++j) in[0][static_cast<size_t>(j)] = true;
  for (int64_t c = 1; c < channels; ++c) {
    auto& now = in[static_cast<size_t>(c)];
    now = in[static_cast<size_t>(c - 1)];
    if (c < channels - pre_pad + 1) now[static_cast<size_t>(c + pre_pad - 1)] = true;
    if (c > pre_pad) now[static_cast<size_t>(c - pre_pad)] = false;
  }
  return channel_matrix(channels, like, [&](int64_t c, int64_t j) {
    return in[static_cast<size_t>(c)][static_cast<size_t>(j)];
  });
}

struct CrossMapLRN2dFunction : autograd::Function<CrossMapLRN2dFunction> {
  static Tensor forward(autograd::AutogradContext* ctx, const Tensor& input, int64_t size,
                        double alpha, double beta, int64_t k) {
    const int64_t n = input.size(0), channels = input.size(1);
    Tensor square = (input * input).reshape({n, channels, -1});
    Tensor window = forward_window(channels, size, input);
    Tensor scale =
        (matmul(window, square) * (alpha / static_cast<double>(size)) + static_cast<double>(k))
            .view(input.sizes());
    Tensor output = input * pow(scale, -beta);
    ctx->saved_data["size"] = size;
    ctx->saved_data["alpha"] = alpha;
    ctx->saved_data["beta"] = beta;
    ctx->saved_data["scale"] = scale;
    ctx->save_for_backward({input, output});
    return output;
  }

  // libtorch's backward: grad * scale^-beta - 2 alpha beta / size * input * (the sum over a
  // window of channels of grad * output / scale).
  static autograd::variable_list backward(autograd::AutogradContext* ctx,
                                          autograd::variable_list grads) {
    autograd::variable_list saved = ctx->get_saved_variables();
    const Tensor& input = saved[0];
    const Tensor& output = saved[1];
    Tensor scale = ctx->saved_data["scale"].toTensor();
    const int64_t size = ctx->saved_data["size"].toInt();
    const double alpha = ctx->saved_data["alpha"].toDouble();
    const double beta = ctx->saved_data["beta"].toDouble();
    const int64_t n = input.size(0), channels = input.size(1);
    const int64_t inverse_pre_pad = size - (size - 1) / 2;
    Tensor window = channel_matrix(channels, input, [&](int64_t c, int64_t j) {
      return j >= c - inverse_pre_pad && j <= c + size - 1 - inverse_pre_pad;
    });
    Tensor ratio = (grads[0] * output / scale).reshape({n, channels, -1});
    Tensor accum = matmul(window, ratio).view(input.sizes());
    double cache_ratio = 2.0 * alpha * beta / static_cast<double>(size);
    Tensor grad_input = pow(scale, -beta) * grads[0] - cache_ratio * input * accum;
    return {grad_input, Tensor(), Tensor(), Tensor(), Tensor()};
  }
};

}  // namespace

CrossMapLRN2dImpl::CrossMapLRN2dImpl(const CrossMapLRN2dOptions& options) : options(options) {
  KILN_CHECK_VALUE(options.size() > 0, "CrossMapLRN2d: size must be positive, but got ",
                   options.size());
}

Tensor CrossMapLRN2dImpl::forward(const Tensor& input) {
  KILN_CHECK_VALUE(input.dim() == 4, "CrossMapLRN2d: Input must be 4D, but got input of size ",
                   input.sizes());
  KILN_CHECK_TYPE(input.is_floating_point(), "CrossMapLRN2d: expected a floating point input, ",
                  "but got ", dtype_name(input.dtype()));
  return CrossMapLRN2dFunction::apply(input, options.size(), options.alpha(), options.beta(),
                                      options.k());
}

void CrossMapLRN2dImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::CrossMapLRN2d(" << options.size() << ", alpha=" << options.alpha()
         << ", beta=" << options.beta() << ", k=" << options.k() << ")";
}

}  // namespace kiln::nn
