// Fractional max pooling, after ATen's FractionalMaxPool2d.cpp and FractionalMaxPool3d.cpp: the
// same window positions (generate_intervals, in the input's precision), then the maximum of each
// window through a gather.
#include <kiln/dispatch.h>
#include <kiln/nn/functional/fractional_pooling.h>
#include <kiln/ops.h>
#include <kiln/tensor_data.h>

#include <vector>

namespace kiln::nn::functional {
namespace {

// ATen's generate_intervals: where each of output_size windows of pool_size starts along a
// dimension of input_size, for one sample in [0, 1). T is the input's floating type.
template <class T>
std::vector<int64_t> intervals(T sample, int64_t input_size, int64_t output_size,
                               int64_t pool_size) {
  std::vector<int64_t> starts(static_cast<size_t>(output_size), 0);
  if (output_size > 1) {
    T alpha = static_cast<T>(input_size - pool_size) / static_cast<T>(output_size - 1);
    for (int64_t i = 0; i < output_size - 1; ++i) {
      starts[static_cast<size_t>(i)] = static_cast<int64_t>(static_cast<int>((i + sample) * alpha) -
                                                            static_cast<int>(sample * alpha));
    }
  }
  if (output_size > 0) starts[static_cast<size_t>(output_size - 1)] = input_size - pool_size;
  return starts;
}

using FractionalOp =
    Operator<std::tuple<Tensor, Tensor>(const Tensor&, IntArrayRef, IntArrayRef, const Tensor&)>;

// D spatial dims; `sample_of[d]`: which of a plane's samples places the windows of dim d.
std::tuple<Tensor, Tensor> fractional_max_pool(const char* op, const Tensor& input,
                                               IntArrayRef kernel, IntArrayRef output,
                                               const Tensor& samples, IntArrayRef sample_of) {
  const int64_t nd = static_cast<int64_t>(kernel.size());
  KILN_CHECK_VALUE(input.dim() == nd + 1 || input.dim() == nd + 2, op, ": expected ", nd + 1,
                   "D or ", nd + 2, "D input, but got input of size ", input.sizes());
  KILN_CHECK_TYPE(input.is_floating_point(), op, ": expected a floating point input, but got ",
                  dtype_name(input.dtype()));
  KILN_CHECK_VALUE(static_cast<int64_t>(output.size()) == nd, op, ": expected ", nd,
                   " output sizes, but got ", output);
  const bool batched = input.dim() == nd + 2;
  Tensor x = batched ? input : input.unsqueeze(0);
  const int64_t n = x.size(0), channels = x.size(1), planes = n * channels;
  IntArrayRef spatial = x.sizes().slice(2);
  for (int64_t d = 0; d < nd; ++d) {
    size_t i = static_cast<size_t>(d);
    KILN_CHECK_VALUE(spatial[i] > 0, op, ": expected non-empty spatial dimensions, but got input ",
                     "of size ", input.sizes());
    KILN_CHECK_VALUE(kernel[i] > 0 && output[i] > 0, op, ": expected positive kernel_size and ",
                     "output_size, but got kernel_size ", kernel, " and output_size ", output);
    // ATen allows the last window to end at the input's end in 2-D, not in 3-D
    int64_t end = output[i] + kernel[i] - 1;
    KILN_CHECK_VALUE(nd == 2 ? end <= spatial[i] : end < spatial[i], op, ": pool size ", kernel[i],
                     " of spatial dimension ", d, " too large relative to input size ", spatial[i],
                     " (output size ", output[i], ")");
  }
  KILN_CHECK_VALUE(samples.defined() && samples.dim() == 3 && samples.size(0) == n &&
                       samples.size(1) == channels && samples.size(2) == nd,
                   op, ": expected _random_samples of size [", n, ", ", channels, ", ", nd,
                   "], but got ", samples.defined() ? samples.sizes() : IntArrayRef());
  // the positions (in the flattened plane) of every window's elements, [P, O..., K...]
  Tensor host = samples.to(Device(kCPU)).to(kDouble).contiguous();
  const double* s = host.data_ptr<double>();
  Tensor positions;
  int64_t stride = 1;
  for (int64_t d = nd - 1; d >= 0; --d) {
    size_t i = static_cast<size_t>(d);
    std::vector<int64_t> cells;
    cells.reserve(static_cast<size_t>(planes * output[i] * kernel[i]));
    for (int64_t p = 0; p < planes; ++p) {
      double sample = s[p * nd + sample_of[i]];
      std::vector<int64_t> starts =
          input.dtype() == kDouble
              ? intervals<double>(sample, spatial[i], output[i], kernel[i])
              : intervals<float>(static_cast<float>(sample), spatial[i], output[i], kernel[i]);
      for (int64_t start : starts) {
        for (int64_t k = 0; k < kernel[i]; ++k) cells.push_back((start + k) * stride);
      }
    }
    DimVector shape(static_cast<size_t>(1 + 2 * nd), 1);
    shape[0] = planes;
    shape[1 + i] = output[i];
    shape[1 + static_cast<size_t>(nd) + i] = kernel[i];
    Tensor part = kiln::tensor(cells, kLong).to(input.device()).view(shape);
    positions = positions.defined() ? positions + part : part;
    stride *= spatial[i];
  }
  int64_t out_count = 1, window = 1;
  for (int64_t d = 0; d < nd; ++d) {
    out_count *= output[static_cast<size_t>(d)];
    window *= kernel[static_cast<size_t>(d)];
  }
  DimVector full(static_cast<size_t>(1 + 2 * nd), 0);
  full[0] = planes;
  for (int64_t d = 0; d < nd; ++d) {
    full[1 + static_cast<size_t>(d)] = output[static_cast<size_t>(d)];
    full[1 + static_cast<size_t>(nd + d)] = kernel[static_cast<size_t>(d)];
  }
  Tensor where_read = positions.expand(full).reshape({planes, out_count, window});
  Tensor values = gather(x.reshape({planes, -1}), 1, where_read.reshape({planes, -1}))
                      .view({planes, out_count, window});
  auto [out, arg] = max(values, 2);
  Tensor indices = gather(where_read, 2, arg.unsqueeze(-1)).squeeze(-1);
  DimVector out_sizes{n, channels};
  for (int64_t o : output) out_sizes.push_back(o);
  out = out.view(out_sizes);
  indices = indices.view(out_sizes);
  if (!batched) return {out.squeeze(0), indices.squeeze(0)};
  return {out, indices};
}

std::tuple<Tensor, Tensor> fractional_max_pool2d_composite(const FractionalOp&, const Tensor& input,
                                                           IntArrayRef kernel, IntArrayRef output,
                                                           const Tensor& samples) {
  // a plane's first sample places the columns (W), the second the rows (H)
  return fractional_max_pool("fractional_max_pool2d", input, kernel, output, samples, {1, 0});
}

std::tuple<Tensor, Tensor> fractional_max_pool3d_composite(const FractionalOp&, const Tensor& input,
                                                           IntArrayRef kernel, IntArrayRef output,
                                                           const Tensor& samples) {
  return fractional_max_pool("fractional_max_pool3d", input, kernel, output, samples, {0, 1, 2});
}

FractionalOp fractional_max_pool2d_op(
    "fractional_max_pool2d",
    "fractional_max_pool2d(Tensor self, int[2] kernel_size, int[2] output_size, Tensor "
    "random_samples) -> (Tensor, Tensor)",
    fractional_max_pool2d_composite, /*primitive=*/false);
FractionalOp fractional_max_pool3d_op(
    "fractional_max_pool3d",
    "fractional_max_pool3d(Tensor self, int[3] kernel_size, int[3] output_size, Tensor "
    "random_samples) -> (Tensor, Tensor)",
    fractional_max_pool3d_composite, /*primitive=*/false);

// libtorch's F::fractional_max_pool{2,3}d: the output size from output_ratio when not given,
// random samples drawn when not given.
template <size_t D>
std::tuple<Tensor, Tensor> with_options(const char* op, const FractionalOp& impl,
                                        const Tensor& input,
                                        const FractionalMaxPoolOptions<D>& options) {
  KILN_CHECK_VALUE(options.output_size() || options.output_ratio(), op, " requires specifying ",
                   "either an output_size or an output_ratio");
  KILN_CHECK_VALUE(input.dim() >= static_cast<int64_t>(D) + 1, op, ": expected ", D + 1, "D or ",
                   D + 2, "D input, but got input of size ", input.sizes());
  std::array<int64_t, D> size{};
  for (size_t i = 0; i < D; ++i) {
    int64_t in = input.size(input.dim() - static_cast<int64_t>(D) + static_cast<int64_t>(i));
    size[i] = options.output_size()
                  ? (*options.output_size())[i]
                  : static_cast<int64_t>(static_cast<double>(in) * (*options.output_ratio())[i]);
  }
  Tensor samples = options._random_samples();
  if (!samples.defined()) {
    int64_t batch = input.dim() == static_cast<int64_t>(D) + 1 ? 1 : input.size(0);
    int64_t channels = input.size(-static_cast<int64_t>(D) - 1);
    samples = rand({batch, channels, static_cast<int64_t>(D)},
                   TensorOptions().dtype(input.dtype()).device(input.device()));
  }
  return impl(input, options.kernel_size(), IntArrayRef(size.data(), D), samples);
}

}  // namespace

Tensor fractional_max_pool2d(const Tensor& input, const FractionalMaxPool2dFuncOptions& options) {
  return std::get<0>(fractional_max_pool2d_with_indices(input, options));
}

std::tuple<Tensor, Tensor> fractional_max_pool2d_with_indices(
    const Tensor& input, const FractionalMaxPool2dFuncOptions& options) {
  return with_options<2>("fractional_max_pool2d", fractional_max_pool2d_op, input, options);
}

Tensor fractional_max_pool3d(const Tensor& input, const FractionalMaxPool3dFuncOptions& options) {
  return std::get<0>(fractional_max_pool3d_with_indices(input, options));
}

std::tuple<Tensor, Tensor> fractional_max_pool3d_with_indices(
    const Tensor& input, const FractionalMaxPool3dFuncOptions& options) {
  return with_options<3>("fractional_max_pool3d", fractional_max_pool3d_op, input, options);
}

}  // namespace kiln::nn::functional

namespace kiln {

std::tuple<Tensor, Tensor> fractional_max_pool2d(const Tensor& input, IntArrayRef kernel_size,
                                                 IntArrayRef output_size,
                                                 const Tensor& random_samples) {
  KILN_CHECK_VALUE(kernel_size.size() == 2, "fractional_max_pool2d: expected 2 kernel sizes, ",
                   "but got ", kernel_size);
  return nn::functional::fractional_max_pool2d_op(input, kernel_size, output_size, random_samples);
}

std::tuple<Tensor, Tensor> fractional_max_pool3d(const Tensor& input, IntArrayRef kernel_size,
                                                 IntArrayRef output_size,
                                                 const Tensor& random_samples) {
  KILN_CHECK_VALUE(kernel_size.size() == 3, "fractional_max_pool3d: expected 3 kernel sizes, ",
                   "but got ", kernel_size);
  return nn::functional::fractional_max_pool3d_op(input, kernel_size, output_size, random_samples);
}

}  // namespace kiln
