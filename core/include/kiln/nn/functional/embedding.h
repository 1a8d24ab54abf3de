// Embeddings with libtorch's options (torch/nn/functional/embedding.h): F::embedding with
// max_norm and scale_grad_by_freq, F::embedding_bag (sums, means or maxima of bags of rows, given
// by offsets or by the rows of a 2-D input, with per-sample weights and a padding index), and
// F::one_hot; the ATen forms kiln::embedding and kiln::embedding_bag. All are composites of
// index_select, masks and reductions, so autograd differentiates them on every device. kiln has
// no sparse tensors: `sparse` is accepted and the weight's gradient is dense (the same values).
#pragma once

#include <kiln/export.h>
#include <kiln/nn/options.h>
#include <kiln/ops.h>
#include <kiln/tensor.h>

#include <optional>
#include <ostream>
#include <tuple>

namespace kiln {
namespace enumtype {
struct kMax {};
}  // namespace enumtype
// EmbeddingBag's third mode (kiln::kSum and kiln::kMean are the others).
inline constexpr enumtype::kMax kMax{};
}  // namespace kiln

namespace kiln::nn {

// How an embedding bag reduces its rows: kiln::kSum, kiln::kMean or kiln::kMax.
class KILN_API EmbeddingBagMode {
 public:
  enum Kind : int64_t { Sum = 0, Mean = 1, Max = 2 };  // ATen's mode numbers
  EmbeddingBagMode(Reduction r);                       // NOLINT: kiln::kSum, kiln::kMean
  EmbeddingBagMode(enumtype::kMax) : kind_(Max) {}     // NOLINT: kiln::kMax
  Kind kind() const { return kind_; }
  bool operator==(const EmbeddingBagMode& other) const { return kind_ == other.kind_; }

 private:
  Kind kind_;
};
// kSum, kMean or kMax, as libtorch prints it.
KILN_API std::ostream& operator<<(std::ostream& stream, const EmbeddingBagMode& mode);

}  // namespace kiln::nn

namespace kiln::nn::functional {

struct EmbeddingFuncOptions {
  // A row that gets no gradient.
  KILN_ARG(std::optional<int64_t>, padding_idx) = std::nullopt;
  // Rows looked up whose norm_type-norm exceeds max_norm are rescaled in place to max_norm.
  KILN_ARG(std::optional<double>, max_norm) = std::nullopt;
  KILN_ARG(double, norm_type) = 2.0;
  // Each row's gradient divided by how often its index occurs in the input.
  KILN_ARG(bool, scale_grad_by_freq) = false;
  KILN_ARG(bool, sparse) = false;
};

struct EmbeddingBagFuncOptions {
  // Where each bag starts in a 1-D input (1-D int64/int32); a 2-D input's rows are the bags.
  KILN_ARG(Tensor, offsets) = Tensor();
  KILN_ARG(std::optional<double>, max_norm) = std::nullopt;
  KILN_ARG(double, norm_type) = 2.0;
  KILN_ARG(bool, scale_grad_by_freq) = false;
  KILN_ARG(EmbeddingBagMode, mode) = Reduction::Mean;
  KILN_ARG(bool, sparse) = false;
  // Weights of the input's entries (its shape), multiplying their rows; kSum only.
  KILN_ARG(Tensor, per_sample_weights) = Tensor();
  // offsets has one more entry, the end of the last bag.
  KILN_ARG(bool, include_last_offset) = false;
  // Entries equal to padding_idx count for nothing (not in a bag's mean or maximum either).
  KILN_ARG(std::optional<int64_t>, padding_idx) = std::nullopt;
};

// Rows of weight [num_embeddings, embedding_dim] at input's indices: [..., embedding_dim].
KILN_API Tensor embedding(const Tensor& input, Tensor weight, const EmbeddingFuncOptions& options);
// One vector per bag [B, embedding_dim]: the sum, mean or maximum of the rows of weight that
// the bag's entries of input index (weighted by per_sample_weights in kSum); an empty bag gives
// zeros. B is input.size(0) for a 2-D input, the number of offsets (less one when
// include_last_offset) for a 1-D one.
KILN_API Tensor embedding_bag(const Tensor& input, Tensor weight,
                              const EmbeddingBagFuncOptions& options = {});
// kiln::one_hot, as torch::nn::functional::one_hot.
using kiln::one_hot;

}  // namespace kiln::nn::functional

namespace kiln {
// ATen's forms, as torch::embedding and torch::embedding_bag. embedding: padding_idx -1 for
// none. embedding_bag (mode 0 sum, 1 mean, 2 max) returns (output [B, D], offset2bag: the bag of
// each entry of the flattened input, bag_size: each bag's entry count (padding excluded),
// max_indices: in mode max the rows of weight each output element came from, -1 for an empty
// bag; otherwise empty).
KILN_API Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx = -1,
                          bool scale_grad_by_freq = false, bool sparse = false);
KILN_API std::tuple<Tensor, Tensor, Tensor, Tensor> embedding_bag(
    const Tensor& weight, const Tensor& indices, const Tensor& offsets,
    bool scale_grad_by_freq = false, int64_t mode = 0, bool sparse = false,
    const Tensor& per_sample_weights = {}, bool include_last_offset = false,
    std::optional<int64_t> padding_idx = std::nullopt);
}  // namespace kiln
