// Embeddings: F::embedding with max_norm and scale_grad_by_freq, F::embedding_bag, and ATen's
// forms kiln::embedding and kiln::embedding_bag, after ATen's Embedding.cpp and EmbeddingBag.cpp.
#include <kiln/autograd.h>
#include <kiln/indexing.h>
#include <kiln/nn/functional.h>
#include <kiln/nn/functional/embedding.h>
#include <kiln/tensor_data.h>

#include <limits>
#include <vector>

namespace kiln::nn {

EmbeddingBagMode::EmbeddingBagMode(Reduction r) {
  KILN_CHECK_VALUE(r != Reduction::None, "EmbeddingBag: mode must be kiln::kSum, kiln::kMean or ",
                   "kiln::kMax, but got kiln::kNone");
  kind_ = r == Reduction::Sum ? Sum : Mean;
}

std::ostream& operator<<(std::ostream& stream, const EmbeddingBagMode& mode) {
  const char* names[] = {"kSum", "kMean", "kMax"};
  return stream << names[mode.kind()];
}

}  // namespace kiln::nn

namespace kiln::nn::functional {
namespace {

void check_indices(const char* op, const Tensor& indices, const Tensor& weight) {
  KILN_CHECK_TYPE(indices.dtype() == kLong || indices.dtype() == kInt, op, ": expected indices ",
                  "of dtype int64 or int32, but got ", dtype_name(indices.dtype()));
  KILN_CHECK_VALUE(weight.dim() == 2, op, ": expected a 2-D weight [num_embeddings, ",
                   "embedding_dim], but got weight of size ", weight.sizes());
}

// ATen's embedding_renorm_: the rows of weight that indices look up whose norm_type-norm exceeds
// max_norm are scaled in place to max_norm (less 1e-7), outside autograd.
void embedding_renorm_(Tensor& weight, const Tensor& indices, double max_norm, double norm_type) {
  NoGradGuard no_grad;
  auto [rows, unused_inverse, unused_counts] = _unique2(indices.reshape({-1}).to(kLong));
  if (rows.numel() == 0) return;
  Tensor selected = weight.index_select(0, rows);
  Tensor norms = selected.norm(norm_type, {1}, /*keepdim=*/true);
  Tensor scale = where(gt(norms, max_norm), max_norm / (norms + 1e-7), ones_like(norms));
  weight.index_put_({TensorIndex(rows)}, selected * scale);
}

// A padding index in [0, num) from one in [-num, num), as libtorch's F::embedding checks it.
int64_t padding_row(const char* op, int64_t padding_idx, int64_t num) {
  KILN_CHECK_INDEX(padding_idx >= -num && padding_idx < num, op, ": padding_idx must be within ",
                   "num_embeddings (got padding_idx=", padding_idx, ", num_embeddings=", num, ")");
  return padding_idx < 0 ? padding_idx + num : padding_idx;
}

// rows (looked up at idx) with the same values and each row's gradient divided by how often
// its index occurs in counted (1-D int64): ATen's scale_grad_by_freq.
Tensor freq_scaled(const Tensor& rows, const Tensor& idx, const Tensor& counted,
                   int64_t num_embeddings) {
  if (!autograd::GradMode::is_enabled() || !rows.requires_grad()) return rows;
  Tensor flat = idx.reshape({-1}).to(kLong);
  Tensor counts = clamp_min(bincount(counted, {}, num_embeddings), 1).index_select(0, flat);
  DimVector sizes(idx.sizes());
  sizes.push_back(1);
  Tensor scale = (1.0 / counts.to(rows.dtype())).view(sizes);
  Tensor fixed = rows.detach();
  return fixed + (rows - fixed) * scale;
}

// Bag b holds the entries [starts[b], ends[b]) of the flattened input.
struct Bags {
  std::vector<int64_t> starts, ends;
  int64_t longest = 0;
};

Bags bags_of(const Tensor& input, const Tensor& offsets, bool include_last_offset) {
  Bags bags;
  if (input.dim() == 2) {
    KILN_CHECK_VALUE(!offsets.defined(), "embedding_bag: if input is 2D, then offsets has to be ",
                     "None, as input is treated is a mini-batch of fixed length sequences. ",
                     "However, found offsets of size ", offsets.sizes());
    for (int64_t b = 0; b < input.size(0); ++b) {
      bags.starts.push_back(b * input.size(1));
      bags.ends.push_back((b + 1) * input.size(1));
    }
    bags.longest = input.size(1);
    return bags;
  }
  KILN_CHECK_VALUE(input.dim() == 1, "embedding_bag: input has to be 1D or 2D Tensor, but got ",
                   "Tensor of dimension ", input.dim());
  KILN_CHECK_VALUE(offsets.defined(), "embedding_bag: offsets has to be a 1D Tensor when input ",
                   "is 1D, but got None");
  KILN_CHECK_VALUE(offsets.dim() == 1, "embedding_bag: offsets has to be a 1D Tensor, but got ",
                   "offsets of size ", offsets.sizes());
  KILN_CHECK_TYPE(offsets.dtype() == kLong || offsets.dtype() == kInt, "embedding_bag: expected ",
                  "offsets of dtype int64 or int32, but got ", dtype_name(offsets.dtype()));
  Tensor host = offsets.to(Device(kCPU)).to(kLong).contiguous();
  const int64_t* o = host.data_ptr<int64_t>();
  int64_t count = host.numel(), n = input.numel();
  KILN_CHECK_VALUE(count == 0 || o[0] == 0, "embedding_bag: offsets[0] has to be 0, i.e., the ",
                   "first sequence in the mini-batch has to start from position 0. However, got ",
                   count ? o[0] : 0);
  KILN_CHECK_VALUE(count == 0 || o[count - 1] <= n, "embedding_bag: offsets[-1] can not be ",
                   "greater than input's length ", n, ", but got offsets[-1] of ",
                   count ? o[count - 1] : 0);
  int64_t bag_count = include_last_offset ? std::max<int64_t>(count - 1, 0) : count;
  for (int64_t b = 0; b < bag_count; ++b) {
    int64_t end = b + 1 < count ? o[b + 1] : n;
    KILN_CHECK_VALUE(o[b] <= end, "embedding_bag: offsets must be non-decreasing, but offsets[", b,
                     "]=", o[b], " > offsets[", b + 1, "]=", end);
    bags.starts.push_back(o[b]);
    bags.ends.push_back(end);
    bags.longest = std::max(bags.longest, end - o[b]);
  }
  return bags;
}

struct BagResult {
  Tensor output, offset2bag, bag_size, max_indices;
};

// The bags as a padded [B, longest] table of entry positions (a mask marks the real ones), the
// rows they look up reduced along the bag.
BagResult embedding_bag_impl(const Tensor& input, const Tensor& weight, const Tensor& offsets,
                             bool scale_grad_by_freq, EmbeddingBagMode mode,
                             const Tensor& per_sample_weights, bool include_last_offset,
                             std::optional<int64_t> padding_idx) {
  check_indices("embedding_bag", input, weight);
  Bags bags = bags_of(input, offsets, include_last_offset);
  const int64_t num_bags = static_cast<int64_t>(bags.starts.size()), longest = bags.longest;
  const int64_t dim = weight.size(1);
  KILN_CHECK_VALUE(!per_sample_weights.defined() || mode.kind() == EmbeddingBagMode::Sum,
                   "embedding_bag: per_sample_weights was not None. per_sample_weights is only ",
                   "supported for mode='sum' (got mode='", mode == Reduction::Mean ? "mean" : "max",
                   "'). Please open a feature request on GitHub.");
  KILN_CHECK_VALUE(!per_sample_weights.defined() || per_sample_weights.sizes() == input.sizes(),
                   "embedding_bag: embedding_bag: If per_sample_weights (of size ",
                   per_sample_weights.defined() ? per_sample_weights.sizes() : IntArrayRef(),
                   ") passed, it must have the same shape as the input (", input.sizes(), ")");
  std::vector<int64_t> positions(static_cast<size_t>(num_bags * longest), 0);
  std::vector<uint8_t> in_bag(positions.size(), 0);
  std::vector<int64_t> offset2bag(static_cast<size_t>(input.numel()), 0);
  for (int64_t b = 0; b < num_bags; ++b) {
    for (int64_t e = bags.starts[b]; e < bags.ends[b]; ++e) {
      size_t at = static_cast<size_t>(b * longest + e - bags.starts[b]);
      positions[at] = e;
      in_bag[at] = 1;
      offset2bag[static_cast<size_t>(e)] = b;
    }
  }
  TensorOptions on = TensorOptions().device(input.device());
  Tensor flat = input.reshape({-1}).to(kLong);
  Tensor pos = kiln::tensor(positions, kLong).to(input.device()).view({num_bags, longest});
  Tensor mask = kiln::tensor(std::vector<int64_t>(in_bag.begin(), in_bag.end()), kLong)
                    .to(input.device())
                    .view({num_bags, longest})
                    .to(kBool);
  Tensor idx = flat.numel() ? flat.index_select(0, pos.reshape({-1})).view({num_bags, longest})
                            : zeros({num_bags, longest}, on.dtype(kLong));
  if (padding_idx)
    mask = logical_and(mask, ne(idx, padding_row("embedding_bag", *padding_idx, weight.size(0))));
  Tensor rows = functional::embedding(idx, weight, std::optional<int64_t>());
  if (scale_grad_by_freq) rows = freq_scaled(rows, idx, flat, weight.size(0));
  Tensor keep = mask.unsqueeze(-1);
  Tensor bag_size = mask.sum({1}).to(kLong);
  BagResult result;
  result.offset2bag = kiln::tensor(offset2bag, kLong).to(input.device());
  result.bag_size = bag_size;
  if (mode.kind() == EmbeddingBagMode::Max) {
    Tensor lowest = rows.masked_fill(logical_not(keep), -std::numeric_limits<double>::infinity());
    auto [values, where_max] = max(lowest, 1);
    Tensor empty_bag = eq(bag_size, 0).unsqueeze(-1);
    result.output = where(empty_bag, zeros_like(values), values);
    Tensor chosen =
        gather(idx.unsqueeze(-1).expand({num_bags, longest, dim}), 1, where_max.unsqueeze(1))
            .squeeze(1);
    result.max_indices = where(empty_bag, full_like(chosen, -1), chosen);
    return result;
  }
  Tensor weighted = where(keep, rows, zeros_like(rows));
  if (per_sample_weights.defined()) {
    Tensor w = per_sample_weights.reshape({-1}).index_select(0, pos.reshape({-1}));
    weighted = weighted * w.view({num_bags, longest, 1}).to(rows.dtype());
  }
  Tensor out = weighted.sum({1});
  if (mode.kind() == EmbeddingBagMode::Mean) {
    out = out / clamp_min(bag_size, 1).unsqueeze(-1).to(out.dtype());
  }
  result.output = out;
  result.max_indices = empty({0}, on.dtype(kLong));
  return result;
}

}  // namespace

Tensor embedding(const Tensor& input, Tensor weight, const EmbeddingFuncOptions& options) {
  check_indices("embedding", input, weight);
  int64_t padding = -1;
  if (options.padding_idx()) {
    padding = padding_row("embedding", *options.padding_idx(), weight.size(0));
  }
  if (options.max_norm()) {
    embedding_renorm_(weight, input, *options.max_norm(), options.norm_type());
  }
  return kiln::embedding(weight, input, padding, options.scale_grad_by_freq(), options.sparse());
}

Tensor embedding_bag(const Tensor& input, Tensor weight, const EmbeddingBagFuncOptions& options) {
  check_indices("embedding_bag", input, weight);
  if (options.max_norm()) {
    embedding_renorm_(weight, input, *options.max_norm(), options.norm_type());
  }
  return embedding_bag_impl(input, weight, options.offsets(), options.scale_grad_by_freq(),
                            options.mode(), options.per_sample_weights(),
                            options.include_last_offset(), options.padding_idx())
      .output;
}

}  // namespace kiln::nn::functional

namespace kiln {

Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx,
                 bool scale_grad_by_freq, bool /*sparse: the gradient is dense*/) {
  std::optional<int64_t> padding;
  if (padding_idx >= 0) padding = padding_idx;
  Tensor rows = nn::functional::embedding(indices, weight, padding);
  if (!scale_grad_by_freq) return rows;
  return nn::functional::freq_scaled(rows, indices, indices.reshape({-1}).to(kLong),
                                     weight.size(0));
}

std::tuple<Tensor, Tensor, Tensor, Tensor> embedding_bag(
    const Tensor& weight, const Tensor& indices, const Tensor& offsets, bool scale_grad_by_freq,
    int64_t mode, bool /*sparse: the gradient is dense*/, const Tensor& per_sample_weights,
    bool include_last_offset, std::optional<int64_t> padding_idx) {
  KILN_CHECK_VALUE(mode >= 0 && mode <= 2, "embedding_bag: mode must be 0 (sum), 1 (mean) or 2 ",
                   "(max), but got ", mode);
  nn::EmbeddingBagMode m = mode == 0   ? nn::EmbeddingBagMode(kSum)
                           : mode == 1 ? nn::EmbeddingBagMode(kMean)
                                       : nn::EmbeddingBagMode(kMax);
  auto r = nn::functional::embedding_bag_impl(indices, weight, offsets, scale_grad_by_freq, m,
                                              per_sample_weights, include_last_offset, padding_idx);
  return {r.output, r.offset2bag, r.bag_size, r.max_indices};
}

}  // namespace kiln
