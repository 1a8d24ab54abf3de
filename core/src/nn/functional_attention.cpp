// scaled_dot_product_attention: a composite operator (so that autocast applies PyTorch's policy
// to it) that runs the fused kernels where the device has them (See Note [Fused attention]).
#include "../amp/policy.h"
#include "../ops/attention.h"

#include <kiln/autograd.h>
#include <kiln/dispatch.h>
#include <kiln/nn/functional.h>
#include <kiln/nn/functional/attention.h>

#include <cmath>
#include <limits>

namespace kiln::nn::functional {
namespace {

using SdpaOp = Operator<Tensor(const Tensor&, const Tensor&, const Tensor&, const Tensor&, double,
                               bool, std::optional<double>)>;

constexpr const char* kOp = "scaled_dot_product_attention";

// The additive float mask of attn_mask (undefined stays undefined): a boolean one (true: take
// part) becomes 0 / -inf of its own shape, in `dtype`.
Tensor additive_mask(const Tensor& attn_mask, ScalarType dtype) {
  if (!attn_mask.defined() || attn_mask.dtype() != kBool) return attn_mask;
  TensorOptions options = TensorOptions().dtype(dtype).device(attn_mask.device());
  return where(attn_mask, zeros({}, options),
               full({}, -std::numeric_limits<double>::infinity(), options));
}

// Checks the arguments as PyTorch 2.0 does, naming the shapes; returns the scale.
double check_arguments(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask,
                       double dropout_p, bool is_causal, std::optional<double> scale) {
  KILN_CHECK_VALUE(q.defined() && k.defined() && v.defined(), kOp,
                   ": query, key and value must be defined tensors");
  KILN_CHECK_VALUE(q.dim() >= 2 && k.dim() >= 2 && v.dim() >= 2, kOp,
                   ": expected query [..., L, E], key [..., S, E] and value [..., S, Ev] of at "
                   "least 2 dimensions, but got ",
                   q.sizes(), ", ", k.sizes(), " and ", v.sizes());
  KILN_CHECK_VALUE(k.size(-1) == q.size(-1), kOp, ": query ", q.sizes(), " and key ", k.sizes(),
                   " must have the same embedding size E (the last dimension)");
  KILN_CHECK_VALUE(v.size(-2) == k.size(-2), kOp, ": key ", k.sizes(), " and value ", v.sizes(),
                   " must have the same sequence length S (the second to last dimension)");
  KILN_CHECK_TYPE(q.is_floating_point() && k.dtype() == q.dtype() && v.dtype() == q.dtype(), kOp,
                  ": expected query, key and value of one floating dtype, but got ",
                  dtype_name(q.dtype()), ", ", dtype_name(k.dtype()), " and ",
                  dtype_name(v.dtype()));
  KILN_CHECK_VALUE(q.device() == k.device() && q.device() == v.device(), kOp,
                   ": expected query, key and value on one device, but got ", q.device(), ", ",
                   k.device(), " and ", v.device());
  KILN_CHECK_VALUE(dropout_p >= 0.0 && dropout_p <= 1.0, kOp,
                   ": dropout_p must be in [0, 1], but got ", dropout_p);
  KILN_CHECK_VALUE(!(is_causal && mask.defined()), kOp,
                   ": is_causal and attn_mask cannot both be given (pass the causal mask in "
                   "attn_mask, or drop attn_mask)");
  if (mask.defined()) {
    KILN_CHECK_TYPE(mask.dtype() == kBool || mask.dtype() == q.dtype(), kOp,
                    ": expected a boolean attn_mask or one of the query's dtype ",
                    dtype_name(q.dtype()), ", but got ", dtype_name(mask.dtype()));
    KILN_CHECK_VALUE(mask.device() == q.device(), kOp, ": attn_mask is on ", mask.device(),
                     " but query is on ", q.device());
    std::vector<int64_t> logits(q.sizes().begin(), q.sizes().end() - 1);
    logits.push_back(k.size(-2));
    try {
      broadcast_shapes(mask.sizes(), logits);
    } catch (const Error&) {
      KILN_CHECK_VALUE(false, kOp, ": attn_mask of size ", mask.sizes(),
                       " does not broadcast to the attention logits [..., L, S] = ",
                       IntArrayRef(logits));
    }
  }
  const double s = scale ? *scale : 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
  KILN_CHECK_VALUE(std::isfinite(s), kOp, ": scale must be finite, but got ", s);
  return s;
}

// (output, weights) of the composite: matmul, softmax (float32 for 16-bit inputs), dropout,
// matmul.
std::tuple<Tensor, Tensor> composite(const Tensor& q, const Tensor& k, const Tensor& v,
                                     const Tensor& mask, double dropout_p, bool is_causal,
                                     double scale) {
  Tensor attn = matmul(q, k.transpose(-2, -1)) * scale;
  if (mask.defined()) attn = attn + additive_mask(mask, q.dtype());
  if (is_causal) {
    Tensor keep =
        tril(ones({q.size(-2), k.size(-2)}, TensorOptions().dtype(kBool).device(q.device())));
    attn = attn + additive_mask(keep, q.dtype());
  }
  const bool narrow = q.dtype() == kHalf || q.dtype() == kBFloat16;
  Tensor weights = narrow ? softmax(attn, -1, kFloat).to(q.dtype()) : softmax(attn, -1);
  Tensor dropped = dropout_p > 0.0 ? dropout(weights, dropout_p, true) : weights;
  return {matmul(dropped, v), weights};
}

Tensor sdpa_backend(const SdpaOp&, const Tensor& q, const Tensor& k, const Tensor& v,
                    const Tensor& attn_mask, double dropout_p, bool is_causal,
                    std::optional<double> scale) {
  const double s = check_arguments(q, k, v, attn_mask, dropout_p, is_causal, scale);
  if (dropout_p == 0.0 && (!attn_mask.defined() || attn_mask.dim() <= q.dim())) {
    Tensor fused =
        kiln::detail::fused_attention(q, k, v, additive_mask(attn_mask, q.dtype()), s, is_causal);
    if (fused.defined()) return fused;
  }
  return std::get<0>(composite(q, k, v, attn_mask, dropout_p, is_causal, s));
}

SdpaOp sdpa_op(kOp,
               "scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, "
               "Tensor? attn_mask=None, float dropout_p=0.0, bool is_causal=False, "
               "float? scale=None) -> Tensor",
               sdpa_backend, /*primitive=*/false);

// PyTorch's autocast lists: the lower precision on CUDA and on the CPU.
const bool sdpa_policy_declared = [] {
  amp::detail::declare_policy(sdpa_op, {amp::detail::CastPolicy::lower_precision,
                                        amp::detail::CastPolicy::lower_precision});
  return true;
}();

}  // namespace

Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const Tensor& attn_mask, double dropout_p, bool is_causal,
                                    std::optional<double> scale) {
  return sdpa_op(query, key, value, attn_mask, dropout_p, is_causal, scale);
}

std::tuple<Tensor, Tensor> scaled_dot_product_attention_with_weights(
    const Tensor& query, const Tensor& key, const Tensor& value, const Tensor& attn_mask,
    double dropout_p, bool is_causal, std::optional<double> scale) {
  const double s = check_arguments(query, key, value, attn_mask, dropout_p, is_causal, scale);
  return composite(query, key, value, attn_mask, dropout_p, is_causal, s);
}

}  // namespace kiln::nn::functional
