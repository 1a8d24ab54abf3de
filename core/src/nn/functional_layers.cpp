// kiln::nn::functional layers: linear, activations, softmax family, dropout, embedding, conv2d.
#include "../ops/softmax.h"

#include <kiln/autograd.h>
#include <kiln/dispatch.h>
#include <kiln/nn/functional.h>

namespace kiln::nn::functional {

// linear, softmax, log_softmax and softplus are composite operators (not plain functions) so
// that the Autocast layer can apply their policies (core/src/amp/policy.h).
namespace {
using LinearOp = Operator<Tensor(const Tensor&, const Tensor&, const Tensor&)>;
using SoftmaxOp = Operator<Tensor(const Tensor&, int64_t, std::optional<ScalarType>)>;

Tensor linear_backend(const LinearOp&, const Tensor& input, const Tensor& weight,
                      const Tensor& bias) {
  KILN_CHECK_VALUE(weight.dim() == 2, "linear: expected a 2-D weight [out_features, ",
                   "in_features], but got weight of size ", weight.sizes());
  KILN_CHECK_VALUE(input.dim() >= 1 && input.size(-1) == weight.size(1), "linear: input of size ",
                   input.sizes(), " does not match weight of size ", weight.sizes(),
                   " (expected the last dimension of input to be ", weight.size(1), ")");
  KILN_CHECK_TYPE(input.dtype() == weight.dtype(), "linear: expected input and weight to have ",
                  "the same dtype, but got ", dtype_name(input.dtype()), " and ",
                  dtype_name(weight.dtype()));
  Tensor out = matmul(input, weight.t());
  if (!bias.defined()) return out;
  KILN_CHECK_VALUE(bias.dim() <= 1 && bias.numel() == weight.size(0), "linear: expected bias of ",
                   "size [", weight.size(0), "], but got ", bias.sizes());
  return out + bias;
}

LinearOp linear_op("linear", "linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor",
                   linear_backend, false);
}  // namespace

Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias) {
  return linear_op(input, weight, bias);
}

Tensor relu(const Tensor& input) { return kiln::relu(input); }

namespace {
using SoftplusOp = Operator<Tensor(const Tensor&, double, double)>;

// log(1 + exp(beta * x)) / beta, and x itself where beta * x > threshold, as PyTorch. The
// exponent is clamped to the threshold, so the branch where() drops stays finite and so does its
// gradient (an infinite exp would give 0 * nan there). 16-bit inputs are computed in float32
// (exp(20) overflows float16) and rounded once.
Tensor softplus_composite(const SoftplusOp&, const Tensor& input, double beta, double threshold) {
  KILN_CHECK_TYPE(input.is_floating_point(), "softplus: expected a floating point input, but got ",
                  dtype_name(input.dtype()));
  bool narrow = input.dtype() == kHalf || input.dtype() == kBFloat16;
  Tensor x = narrow ? input.to(kFloat) : input;
  Tensor scaled = x * beta;
  Tensor smooth = log1p(exp(clamp_max(scaled, threshold))) / beta;
  Tensor out = where(gt(scaled, threshold), x, smooth);
  return narrow ? out.to(input.dtype()) : out;
}
SoftplusOp softplus_op("softplus",
                       "softplus(Tensor self, Scalar beta=1, Scalar threshold=20) -> Tensor",
                       softplus_composite, /*primitive=*/false);
}  // namespace

Tensor softplus(const Tensor& input, double beta, double threshold) {
  return softplus_op(input, beta, threshold);
}

namespace {
Tensor floating_input(const char* op, const Tensor& input, std::optional<ScalarType> dtype) {
  if (dtype) {
    KILN_CHECK_TYPE(is_floating_point(*dtype), op, ": expected a floating point dtype, got ",
                    dtype_name(*dtype));
    return input.to(*dtype);
  }
  KILN_CHECK_TYPE(input.is_floating_point(), op, ": expected a floating point input, but got ",
                  dtype_name(input.dtype()));
  return input;
}

bool is_last_dim(const Tensor& x, int64_t dim) {
  return x.dim() > 0 && (dim == -1 || dim == x.dim() - 1);
}

Tensor softmax_backend(const SoftmaxOp& op, const Tensor& input, int64_t dim,
                       std::optional<ScalarType> dtype) {
  Tensor x = floating_input("softmax", input, dtype);
  if (x.numel() == 0) return x.clone();
  if (is_last_dim(x, dim)) {  // See Note [Fused softmax]
    Tensor y = kiln::detail::fused_softmax(x, /*log=*/false);
    if (y.defined()) return y;
  }
  if (x.dtype() == kHalf || x.dtype() == kBFloat16) {  // in float32, rounded once, as the fused
    return softmax_backend(op, x.to(kFloat), dim, std::nullopt).to(x.dtype());
  }
  // subtracting the maximum changes nothing mathematically (nor the gradient): detach it
  Tensor shifted = x - amax(x, {dim}, /*keepdim=*/true).detach();
  Tensor e = exp(shifted);
  return e / sum(e, {dim}, /*keepdim=*/true);
}

Tensor log_softmax_backend(const SoftmaxOp& op, const Tensor& input, int64_t dim,
                           std::optional<ScalarType> dtype) {
  Tensor x = floating_input("log_softmax", input, dtype);
  if (x.numel() == 0) return x.clone();
  if (is_last_dim(x, dim)) {  // See Note [Fused softmax]
    Tensor y = kiln::detail::fused_softmax(x, /*log=*/true);
    if (y.defined()) return y;
  }
  if (x.dtype() == kHalf || x.dtype() == kBFloat16) {  // in float32, rounded once, as the fused
    return log_softmax_backend(op, x.to(kFloat), dim, std::nullopt).to(x.dtype());
  }
  return x - kiln::logsumexp(x, {dim}, /*keepdim=*/true);
}

SoftmaxOp softmax_op("softmax", "softmax(Tensor self, int dim, ScalarType? dtype=None) -> Tensor",
                     softmax_backend, false);
SoftmaxOp log_softmax_op("log_softmax",
                         "log_softmax(Tensor self, int dim, ScalarType? dtype=None) -> Tensor",
                         log_softmax_backend, false);
}  // namespace

Tensor softmax(const Tensor& input, int64_t dim, std::optional<ScalarType> dtype) {
  return softmax_op(input, dim, dtype);
}

Tensor log_softmax(const Tensor& input, int64_t dim, std::optional<ScalarType> dtype) {
  return log_softmax_op(input, dim, dtype);
}

Tensor logsumexp(const Tensor& input, IntArrayRef dims, bool keepdim) {
  return kiln::logsumexp(input, dims, keepdim);
}

Tensor dropout(const Tensor& input, double p, bool training) {
  KILN_CHECK_VALUE(p >= 0.0 && p <= 1.0, "dropout: probability has to be between 0 and 1, but ",
                   "got ", p);
  if (!training || p == 0.0) return input;
  KILN_CHECK_TYPE(input.is_floating_point(), "dropout: expected a floating point input, but got ",
                  dtype_name(input.dtype()));
  if (p == 1.0) return input * zeros_like(input);
  Tensor keep = lt(rand_like(input), 1.0 - p).to(input.dtype());
  return input * (keep * (1.0 / (1.0 - p)));
}

Tensor embedding(const Tensor& input, const Tensor& weight, std::optional<int64_t> padding_idx) {
  KILN_CHECK_TYPE(input.dtype() == kLong || input.dtype() == kInt, "embedding: expected indices ",
                  "of dtype int64 or int32, but got ", dtype_name(input.dtype()));
  KILN_CHECK_VALUE(weight.dim() == 2, "embedding: expected a 2-D weight [num_embeddings, ",
                   "embedding_dim], but got weight of size ", weight.sizes());
  Tensor table = weight;
  if (padding_idx) {
    int64_t num = weight.size(0);
    KILN_CHECK_INDEX(*padding_idx >= -num && *padding_idx < num, "embedding: padding_idx ",
                     *padding_idx, " is out of range for ", num, " embeddings");
    int64_t row = *padding_idx < 0 ? *padding_idx + num : *padding_idx;
    // the same values, but the padding row reads the detached weight: it gets no gradient
    Tensor rows = arange(num, TensorOptions().dtype(kLong).device(weight.device())).unsqueeze(1);
    table = where(ne(rows, row), weight, weight.detach());
  }
  DimVector sizes(input.sizes());
  sizes.push_back(weight.size(1));
  return table.index_select(0, input.reshape({-1})).view(sizes);
}

Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
              IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  if (input.dim() == 3) {
    return kiln::conv2d(input.unsqueeze(0), weight, bias, stride, padding, dilation, groups)
        .squeeze(0);
  }
  KILN_CHECK_VALUE(input.dim() == 4, "conv2d: expected 3D (unbatched) or 4D (batched) input, ",
                   "but got input of size: ", input.sizes());
  return kiln::conv2d(input, weight, bias, stride, padding, dilation, groups);
}

}  // namespace kiln::nn::functional
