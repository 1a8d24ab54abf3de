// multi_head_attention_forward, as PyTorch 1.13's torch.nn.functional function: in-projection,
// bias_k/bias_v and zero attention, masks merged into one additive mask, attention per head
// (scaled_dot_product_attention, which may run fused, when the weights are not needed), and the
// out-projection.
#include <kiln/nn/functional.h>
#include <kiln/nn/functional/attention.h>

#include <limits>

namespace kiln::nn::functional {
namespace {

constexpr const char* kOp = "multi_head_attention_forward";

// t with one more column of zeros (false for a boolean t) along the last dimension.
Tensor pad_last(const Tensor& t) {
  std::vector<int64_t> sizes(t.sizes().begin(), t.sizes().end());
  sizes.back() = 1;
  return cat({t, zeros(sizes, TensorOptions().dtype(t.dtype()).device(t.device()))}, -1);
}

// The projections q, k, v [T, N, E] of query, key and value.
std::tuple<Tensor, Tensor, Tensor> in_projection(const Tensor& query, const Tensor& key,
                                                 const Tensor& value,
                                                 const MultiheadAttentionForwardFuncOptions& o,
                                                 int64_t e) {
  Tensor b_q, b_k, b_v;
  if (o.in_proj_bias().defined()) {
    KILN_CHECK_VALUE(o.in_proj_bias().dim() == 1 && o.in_proj_bias().size(0) == 3 * e, kOp,
                     ": expected in_proj_bias of size [", 3 * e, "], but got ",
                     o.in_proj_bias().sizes());
    auto b = o.in_proj_bias().chunk(3);
    b_q = b[0];
    b_k = b[1];
    b_v = b[2];
  }
  if (!o.use_separate_proj_weight()) {
    const Tensor& w = o.in_proj_weight();
    KILN_CHECK_VALUE(w.defined() && w.dim() == 2 && w.size(0) == 3 * e && w.size(1) == e, kOp,
                     ": expected in_proj_weight of size [", 3 * e, ", ", e, "], but got ",
                     w.defined() ? w.sizes() : IntArrayRef());
    KILN_CHECK_VALUE(key.size(-1) == e && value.size(-1) == e, kOp, ": key ", key.sizes(),
                     " and value ", value.sizes(), " must have embedding size ", e,
                     " without separate projection weights (give kdim and vdim)");
    auto w3 = w.chunk(3);
    return {linear(query, w3[0], b_q), linear(key, w3[1], b_k), linear(value, w3[2], b_v)};
  }
  const Tensor &wq = o.q_proj_weight(), &wk = o.k_proj_weight(), &wv = o.v_proj_weight();
  KILN_CHECK_VALUE(wq.defined() && wk.defined() && wv.defined(), kOp,
                   ": use_separate_proj_weight needs q_proj_weight, k_proj_weight and "
                   "v_proj_weight");
  KILN_CHECK_VALUE(wq.dim() == 2 && wq.size(0) == e && wq.size(1) == e && wk.dim() == 2 &&
                       wk.size(0) == e && wk.size(1) == key.size(-1) && wv.dim() == 2 &&
                       wv.size(0) == e && wv.size(1) == value.size(-1),
                   kOp, ": expected q_proj_weight [", e, ", ", e, "], k_proj_weight [", e, ", ",
                   key.size(-1), "] and v_proj_weight [", e, ", ", value.size(-1), "], but got ",
                   wq.sizes(), ", ", wk.sizes(), " and ", wv.sizes());
  return {linear(query, wq, b_q), linear(key, wk, b_k), linear(value, wv, b_v)};
}

// attn_mask as [1 or N*H, L, S], after PyTorch's checks.
Tensor attention_mask_3d(const Tensor& mask, int64_t l, int64_t s, int64_t nh) {
  if (!mask.defined()) return mask;
  KILN_CHECK_TYPE(mask.dtype() == kBool || mask.is_floating_point(), kOp,
                  ": only bool and floating types of attn_mask are supported, but got ",
                  dtype_name(mask.dtype()));
  if (mask.dim() == 2) {
    KILN_CHECK_VALUE(mask.size(0) == l && mask.size(1) == s, kOp, ": the shape of the 2D ",
                     "attn_mask is ", mask.sizes(), ", but should be [", l, ", ", s, "]");
    return mask.unsqueeze(0);
  }
  KILN_CHECK_VALUE(mask.dim() == 3, kOp, ": attn_mask's dimension ", mask.dim(),
                   " is not supported (expected [L, S] or [N * num_heads, L, S])");
  KILN_CHECK_VALUE(mask.size(0) == nh && mask.size(1) == l && mask.size(2) == s, kOp,
                   ": the shape of the 3D attn_mask is ", mask.sizes(), ", but should be [", nh,
                   ", ", l, ", ", s, "]");
  return mask;
}

}  // namespace

std::tuple<Tensor, Tensor> multi_head_attention_forward(
    const Tensor& query_in, const Tensor& key_in, const Tensor& value_in,
    const MultiheadAttentionForwardFuncOptions& o) {
  KILN_CHECK_VALUE(query_in.defined() && key_in.defined() && value_in.defined(), kOp,
                   ": query, key and value must be defined");
  const bool batched = query_in.dim() == 3;
  KILN_CHECK_VALUE((query_in.dim() == 3 || query_in.dim() == 2) && key_in.dim() == query_in.dim() &&
                       value_in.dim() == query_in.dim(),
                   kOp, ": expected query, key and value of 3 dimensions [L, N, E] (or 2, ",
                   "unbatched), but got ", query_in.sizes(), ", ", key_in.sizes(), " and ",
                   value_in.sizes());
  Tensor query = batched ? query_in : query_in.unsqueeze(1);
  Tensor key = batched ? key_in : key_in.unsqueeze(1);
  Tensor value = batched ? value_in : value_in.unsqueeze(1);
  Tensor kpm = o.key_padding_mask();
  if (kpm.defined() && !batched) kpm = kpm.unsqueeze(0);
  const int64_t l = query.size(0), n = query.size(1), e = query.size(2);
  const int64_t heads = o.num_heads();
  KILN_CHECK_VALUE(e == o.embed_dim_to_check(), kOp, ": was expecting embedding dimension of ",
                   o.embed_dim_to_check(), ", but got ", e);
  KILN_CHECK_VALUE(heads > 0 && e % heads == 0, kOp, ": embed_dim ", e,
                   " not divisible by num_heads ", heads);
  KILN_CHECK_VALUE(key.size(0) == value.size(0) && key.size(1) == n && value.size(1) == n, kOp,
                   ": key ", key_in.sizes(), " and value ", value_in.sizes(),
                   " must have the same sequence length and the query's batch ", n);
  KILN_CHECK_VALUE(!o.static_k().defined() && !o.static_v().defined(), kOp,
                   ": static_k and static_v are not supported");
  const int64_t head_dim = e / heads;
  auto [q, k, v] = in_projection(query, key, value, o, e);
  Tensor mask = attention_mask_3d(o.attn_mask(), l, key.size(0), n * heads);
  if (o.bias_k().defined() || o.bias_v().defined()) {
    KILN_CHECK_VALUE(o.bias_k().defined() && o.bias_v().defined(), kOp,
                     ": bias_k and bias_v must be given together");
    k = cat({k, o.bias_k().reshape({1, 1, e}).expand({1, n, e})}, 0);
    v = cat({v, o.bias_v().reshape({1, 1, e}).expand({1, n, e})}, 0);
    if (mask.defined()) mask = pad_last(mask);
    if (kpm.defined()) kpm = pad_last(kpm);
  }
  // [T, N, E] -> [N * H, T, head_dim]
  q = q.contiguous().view({l, n * heads, head_dim}).transpose(0, 1);
  k = k.contiguous().view({k.size(0), n * heads, head_dim}).transpose(0, 1);
  v = v.contiguous().view({v.size(0), n * heads, head_dim}).transpose(0, 1);
  if (o.add_zero_attn()) {
    TensorOptions options = TensorOptions().dtype(k.dtype()).device(k.device());
    k = cat({k, zeros({n * heads, 1, head_dim}, options)}, 1);
    v = cat({v, zeros({n * heads, 1, head_dim}, options)}, 1);
    if (mask.defined()) mask = pad_last(mask);
    if (kpm.defined()) kpm = pad_last(kpm);
  }
  const int64_t s = k.size(1);
  if (kpm.defined()) {
    KILN_CHECK_VALUE(kpm.dim() == 2 && kpm.size(0) == n && kpm.size(1) == s, kOp,
                     ": expected key_padding_mask of size [", n, ", ", s, "], but got ",
                     o.key_padding_mask().sizes());
    KILN_CHECK_TYPE(kpm.dtype() == kBool || kpm.is_floating_point(), kOp,
                    ": only bool and floating types of key_padding_mask are supported, but got ",
                    dtype_name(kpm.dtype()));
    if (kpm.dtype() == kBool) {
      Tensor pad = kpm.view({n, 1, 1, s}).expand({n, heads, 1, s}).reshape({n * heads, 1, s});
      if (!mask.defined()) {
        mask = pad;
      } else if (mask.dtype() == kBool) {
        mask = logical_or(mask, pad);
      } else {
        mask = where(pad,
                     full({}, -std::numeric_limits<double>::infinity(),
                          TensorOptions().dtype(mask.dtype()).device(mask.device())),
                     mask);
      }
    } else {
      Tensor pad = kpm.view({n, 1, 1, s}).expand({n, heads, 1, s}).reshape({n * heads, 1, s});
      mask = mask.defined() ? mask + pad : pad;
    }
  }
  if (mask.defined() && mask.dtype() == kBool) {  // PyTorch's boolean masks: true is masked out
    mask = zeros(mask.sizes(), TensorOptions().dtype(q.dtype()).device(q.device()))
               .masked_fill(mask, -std::numeric_limits<double>::infinity());
  }
  const double p = o.training() ? o.dropout_p() : 0.0;
  Tensor out, weights;
  if (o.need_weights()) {
    std::tie(out, weights) = scaled_dot_product_attention_with_weights(q, k, v, mask, p);
  } else {
    out = scaled_dot_product_attention(q, k, v, mask, p);
  }
  out = out.transpose(0, 1).contiguous().view({l * n, e});
  out = linear(out, o.out_proj_weight(), o.out_proj_bias()).view({l, n, e});
  if (!batched) out = out.squeeze(1);
  if (!o.need_weights()) return {out, Tensor()};
  weights = weights.view({n, heads, l, s});
  if (o.average_attn_weights()) weights = weights.sum({1}) / static_cast<double>(heads);
  if (!batched) weights = weights.squeeze(0);
  return {out, weights};
}

}  // namespace kiln::nn::functional
