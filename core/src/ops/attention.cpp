// Fused attention (attention.h): the optional primitives flash_attention and
// flash_attention_backward, and the autograd formula that joins them.
//
// Note [Fused attention]: scaled_dot_product_attention is a composite (matmul, softmax, dropout,
// matmul) that runs on every device and materialises the [..., L, S] weights. Where the device
// has both optional primitives, the arguments are float32 or bfloat16 alike, q, k and v have
// the same batch dimensions, dropout_p is 0 and the mask (additive float, or boolean turned into
// 0 / -inf of its own shape) needs no gradient, it runs flash_attention instead: the tiled
// algorithm of "FlashAttention: Fast and Memory-Efficient Exact Attention with IO-Awareness"
// (tiles of queries against tiles of keys with an online softmax, never the whole [L, S] row
// block), which also returns the logsumexp of each query's logits [B, L] in float32. Its
// backward, flash_attention_backward, recomputes the probabilities from that logsumexp as
// "FlashAttention-2" does. Dropout runs the composite (no dropout inside the kernel). Under
// create_graph the backward is written in differentiable operators from the same saved tensors,
// so higher derivatives work; the gradients equal the composite's to rounding.
#include "attention.h"

#include "elementwise.h"

#include "../autograd/function.h"
#include "../kernel_call.h"
#include "../tensor_internal.h"

#include <kiln/autograd.h>
#include <kiln/dispatch.h>
#include <kiln/ops.h>

#include <limits>
#include <tuple>

namespace kiln::detail {
namespace {

using ForwardOp = Operator<std::tuple<Tensor, Tensor>(const Tensor&, const Tensor&, const Tensor&,
                                                      const Tensor&, double, bool)>;
using BackwardOp =
    Operator<std::tuple<Tensor, Tensor, Tensor>(const Tensor&, const Tensor&, const Tensor&,
                                                const Tensor&, const Tensor&, const Tensor&,
                                                const Tensor&, double, bool)>;

bool supported_dtype(ScalarType d) { return d == kFloat || d == kBFloat16; }

// Checks q [B, L, E], k [B, S, E], v [B, S, Ev] of one supported dtype, and a float32 mask whose
// last two sizes are [L, S] and whose batch sizes multiply to B.
void check_operands(const char* op, const Tensor& q, const Tensor& k, const Tensor& v,
                    const Tensor& mask) {
  KILN_CHECK_VALUE(q.dim() == 3 && k.dim() == 3 && v.dim() == 3 && k.size(0) == q.size(0) &&
                       v.size(0) == q.size(0) && k.size(2) == q.size(2) && v.size(1) == k.size(1),
                   op, ": expected query [B, L, E], key [B, S, E] and value [B, S, Ev], but got ",
                   q.sizes(), ", ", k.sizes(), " and ", v.sizes());
  KILN_CHECK_TYPE(supported_dtype(q.dtype()) && k.dtype() == q.dtype() && v.dtype() == q.dtype(),
                  op, ": expected float32 or bfloat16 query, key and value of one dtype, but got ",
                  dtype_name(q.dtype()), ", ", dtype_name(k.dtype()), " and ",
                  dtype_name(v.dtype()));
  if (!mask.defined()) return;
  int64_t batch = 1;
  for (int64_t d = 0; d + 2 < mask.dim(); ++d) batch *= mask.size(d);
  KILN_CHECK_VALUE(mask.dim() >= 2 && mask.size(-2) == q.size(1) && mask.size(-1) == k.size(1) &&
                       batch == q.size(0) && mask.dtype() == kFloat,
                   op, ": expected a float32 mask [..., ", q.size(1), ", ", k.size(1), "] of ",
                   q.size(0), " batches, but got ", dtype_name(mask.dtype()), " ", mask.sizes());
}

Attrs attention_attrs(double scale, bool causal) {
  return Attrs().f64("scale", scale).i64("causal", causal ? 1 : 0);
}

std::tuple<Tensor, Tensor> forward_backend(const ForwardOp& op, const Tensor& query,
                                           const Tensor& key, const Tensor& value,
                                           const Tensor& mask, double scale, bool causal) {
  check_operands(op.name(), query, key, value, mask);
  common_device(op.name(), {&query, &key, &value});
  if (mask.defined()) common_device(op.name(), {&query, &mask});
  const Tensor q = query.contiguous(), k = key.contiguous(), v = value.contiguous();
  Tensor out = empty_tensor({q.size(0), q.size(1), v.size(2)}, q.dtype(), q.device());
  Tensor lse = empty_tensor({q.size(0), q.size(1)}, kFloat, q.device());
  if (mask.defined()) {
    run_kernel(op, {&q, &k, &v, &mask}, {&out, &lse}, attention_attrs(scale, causal));
  } else {
    run_kernel(op, {&q, &k, &v}, {&out, &lse}, attention_attrs(scale, causal));
  }
  return {out, lse};
}

// (grad_out, q, k, v, out, lse, mask or undefined, scale, causal) -> (grad_q, grad_k, grad_v)
std::tuple<Tensor, Tensor, Tensor> backward_backend(const BackwardOp& op, const Tensor& grad_out,
                                                    const Tensor& query, const Tensor& key,
                                                    const Tensor& value, const Tensor& out,
                                                    const Tensor& lse, const Tensor& mask,
                                                    double scale, bool causal) {
  check_operands(op.name(), query, key, value, mask);
  const DimVector out_sizes{query.size(0), query.size(1), value.size(2)};
  KILN_CHECK_VALUE(grad_out.sizes().equals(out_sizes) && out.sizes().equals(out_sizes) &&
                       grad_out.dtype() == query.dtype() && out.dtype() == query.dtype(),
                   op.name(), ": expected grad_out and out of size ", IntArrayRef(out_sizes),
                   " and dtype ", dtype_name(query.dtype()), ", but got ", grad_out.sizes(),
                   " and ", out.sizes());
  KILN_CHECK_VALUE(lse.dim() == 2 && lse.size(0) == query.size(0) && lse.size(1) == query.size(1) &&
                       lse.dtype() == kFloat,
                   op.name(), ": expected a float32 logsumexp [", query.size(0), ", ",
                   query.size(1), "], but got ", lse.sizes());
  common_device(op.name(), {&grad_out, &query, &key, &value, &out, &lse});
  if (mask.defined()) common_device(op.name(), {&query, &mask});
  const Tensor g = grad_out.contiguous(), q = query.contiguous(), k = key.contiguous(),
               v = value.contiguous(), o = out.contiguous(), m = lse.contiguous();
  Tensor gq = empty_tensor(q.sizes(), q.dtype(), q.device());
  Tensor gk = empty_tensor(k.sizes(), k.dtype(), k.device());
  Tensor gv = empty_tensor(v.sizes(), v.dtype(), v.device());
  if (mask.defined()) {
    run_kernel(op, {&g, &q, &k, &v, &o, &m, &mask}, {&gq, &gk, &gv},
               attention_attrs(scale, causal));
  } else {
    run_kernel(op, {&g, &q, &k, &v, &o, &m}, {&gq, &gk, &gv}, attention_attrs(scale, causal));
  }
  return {gq, gk, gv};
}

ForwardOp flash_attention_op("flash_attention",
                             "flash_attention(Tensor query, Tensor key, Tensor value, "
                             "Tensor? mask, float scale, bool causal) -> (Tensor, Tensor)",
                             forward_backend);
BackwardOp flash_attention_backward_op(
    "flash_attention_backward",
    "flash_attention_backward(Tensor grad_out, Tensor query, Tensor key, Tensor value, "
    "Tensor out, Tensor logsumexp, Tensor? mask, float scale, bool causal) "
    "-> (Tensor, Tensor, Tensor)",
    backward_backend);

// The causal mask of [L, S] as 0 / -inf (query i sees keys j <= i), in float32.
Tensor causal_bias(int64_t l, int64_t s, Device device) {
  Tensor keep = tril(ones({l, s}, TensorOptions().dtype(kBool).device(device)));
  return where(keep, zeros({}, TensorOptions().device(device)),
               full({}, -std::numeric_limits<double>::infinity(), TensorOptions().device(device)));
}

// The logits q @ k^T * scale + mask (+ the causal mask) in float32, differentiably.
Tensor logits(const Tensor& q, const Tensor& k, const Tensor& mask, double scale, bool causal) {
  Tensor s = matmul(q.to(kFloat), k.to(kFloat).transpose(-2, -1)) * scale;
  // the kernel's mask is [b..., L, S] over the [B, L, S] operands
  if (mask.defined()) s = s + mask.reshape({q.size(0), q.size(1), k.size(1)});
  if (causal) s = s + causal_bias(q.size(1), k.size(1), q.device());
  return s;
}

// The gradients written in differentiable operators (what create_graph needs): the
// probabilities and the output recomputed from q, k and v, so that the second derivatives see
// how they depend on them.
std::vector<Tensor> differentiable_gradients(const Tensor& g, const Tensor& q, const Tensor& k,
                                             const Tensor& v, const Tensor& mask, double scale,
                                             bool causal) {
  Tensor p = softmax(logits(q, k, mask, scale, causal), -1);
  Tensor gf = g.to(kFloat), vf = v.to(kFloat);
  Tensor grad_v = matmul(p.transpose(-2, -1), gf);
  Tensor dp = matmul(gf, vf.transpose(-2, -1));
  Tensor delta = sum(gf * matmul(p, vf), {-1}, /*keepdim=*/true);
  Tensor ds = p * (dp - delta) * scale;
  Tensor grad_q = matmul(ds, k.to(kFloat));
  Tensor grad_k = matmul(ds.transpose(-2, -1), q.to(kFloat));
  return {grad_q.to(q.dtype()), grad_k.to(k.dtype()), grad_v.to(v.dtype())};
}

std::tuple<Tensor, Tensor> forward_autograd(const ForwardOp& op, const Tensor& q, const Tensor& k,
                                            const Tensor& v, const Tensor& mask, double scale,
                                            bool causal) {
  Tensor out, lse;
  {
    ExcludeDispatchKeyGuard below(DispatchKey::Autograd);
    std::tie(out, lse) = op(q, k, v, mask, scale, causal);
  }
  auto node = autograd::detail::record(
      "ScaledDotProductFlashAttentionBackward0", {&q, &k, &v}, {&out},
      [scale, causal](autograd::detail::FunctionNode& n, const std::vector<Tensor>& grads) {
        Tensor q = n.saved(0), k = n.saved(1), v = n.saved(2), mask = n.saved(5);
        std::vector<Tensor> result;
        if (autograd::GradMode::is_enabled()) {
          result = differentiable_gradients(grads[0], q, k, v, mask, scale, causal);
        } else {
          auto [gq, gk, gv] = flash_attention_backward_op(grads[0], q, k, v, n.saved(3), n.saved(4),
                                                          mask, scale, causal);
          result = {gq, gk, gv};
        }
        for (size_t i = 0; i < result.size(); ++i) {
          if (!n.needs_input_grad(i)) result[i] = Tensor();
        }
        return result;
      });
  if (node) {
    NoGradGuard no_grad;
    node->save(q);
    node->save(k);
    node->save(v);
    node->save(out, /*is_output=*/true);
    node->save(lse);
    node->save(mask);
  }
  return {out, lse};
}

const bool flash_attention_registered = [] {
  flash_attention_op.set_optional();
  flash_attention_backward_op.set_optional();
  flash_attention_op.set_kernel(DispatchKey::Autograd, forward_autograd);
  return true;
}();

}  // namespace

Tensor fused_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask,
                       double scale, bool causal) {
  const DeviceType type = q.device().type();
  if (!flash_attention_op.has_plugin_kernel(type) ||
      !flash_attention_backward_op.has_plugin_kernel(type)) {
    return Tensor();
  }
  if (!supported_dtype(q.dtype()) || k.dtype() != q.dtype() || v.dtype() != q.dtype()) {
    return Tensor();
  }
  if (q.dim() < 2 || k.dim() != q.dim() || v.dim() != q.dim() || q.numel() == 0 || k.numel() == 0 ||
      v.numel() == 0) {
    return Tensor();
  }
  for (int64_t d = 0; d + 2 < q.dim(); ++d) {
    if (k.size(d) != q.size(d) || v.size(d) != q.size(d)) return Tensor();
  }
  if (k.device() != q.device() || v.device() != q.device()) return Tensor();
  if (mask.defined() && (mask.requires_grad() || mask.device() != q.device())) return Tensor();
  const int64_t l = q.size(-2), s = k.size(-2);
  std::vector<int64_t> batch(q.sizes().begin(), q.sizes().end() - 2);
  if (mask.defined()) {
    if (mask.dim() > q.dim()) return Tensor();
    for (int64_t d = 1; d <= mask.dim(); ++d) {
      const int64_t want = d == 1 ? s : (d == 2 ? l : q.size(-d));
      if (mask.size(-d) != 1 && mask.size(-d) != want) return Tensor();  // the composite's error
    }
  }
  int64_t b = 1;
  for (int64_t n : batch) b *= n;
  Tensor m;
  if (mask.defined()) {
    std::vector<int64_t> full_sizes = batch;
    full_sizes.push_back(l);
    full_sizes.push_back(s);
    if (full_sizes.size() == 2) full_sizes.insert(full_sizes.begin(), 1);
    m = mask.to(kFloat).expand(full_sizes);  // a view: never the [..., L, S] block
  }
  Tensor out =
      std::get<0>(flash_attention_op(q.reshape({b, l, q.size(-1)}), k.reshape({b, s, k.size(-1)}),
                                     v.reshape({b, s, v.size(-1)}), m, scale, causal));
  std::vector<int64_t> out_sizes = batch;
  out_sizes.push_back(l);
  out_sizes.push_back(v.size(-1));
  return out.view(out_sizes);
}

}  // namespace kiln::detail
