// Embedding and EmbeddingBag, as libtorch's (torch/nn/modules/embedding.h), with their options
// and from_pretrained.
#pragma once

#include <kiln/nn/functional/embedding.h>
#include <kiln/nn/module.h>
#include <kiln/nn/options.h>

#include <optional>

namespace kiln::nn {

struct EmbeddingOptions {
  EmbeddingOptions(int64_t num_embeddings, int64_t embedding_dim)
      : num_embeddings_(num_embeddings), embedding_dim_(embedding_dim) {}
  KILN_ARG(int64_t, num_embeddings);
  KILN_ARG(int64_t, embedding_dim);
  // A row that reads as zeros initially and gets no gradient.
  KILN_ARG(std::optional<int64_t>, padding_idx) = std::nullopt;
  // Rows looked up whose norm_type-norm exceeds max_norm are rescaled to it (F::embedding).
  KILN_ARG(std::optional<double>, max_norm) = std::nullopt;
  KILN_ARG(double, norm_type) = 2.0;
  KILN_ARG(bool, scale_grad_by_freq) = false;
  KILN_ARG(bool, sparse) = false;  // accepted; the gradient is dense
  // The weight to use instead of a fresh one, [num_embeddings, embedding_dim].
  KILN_ARG(Tensor, _weight) = Tensor();
};

struct EmbeddingFromPretrainedOptions {
  KILN_ARG(bool, freeze) = true;  // the weight does not require grad
  KILN_ARG(std::optional<int64_t>, padding_idx) = std::nullopt;
  KILN_ARG(std::optional<double>, max_norm) = std::nullopt;
  KILN_ARG(double, norm_type) = 2.0;
  KILN_ARG(bool, scale_grad_by_freq) = false;
  KILN_ARG(bool, sparse) = false;
};

// A lookup table: integer indices [...] -> rows of weight [num_embeddings, embedding_dim],
// [..., embedding_dim]. weight is initialised from N(0, 1), as PyTorch.
class KILN_API EmbeddingImpl : public Module {
 public:
  EmbeddingImpl(int64_t num_embeddings, int64_t embedding_dim)
      : EmbeddingImpl(EmbeddingOptions(num_embeddings, embedding_dim)) {}
  explicit EmbeddingImpl(EmbeddingOptions options);

  // weight from N(0, 1), the padding row zeroed.
  void reset_parameters();
  // F::embedding(input, weight, options).
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;

  EmbeddingOptions options;
  Tensor weight;
};

// The holder, as libtorch's: Embedding::from_pretrained(weights) makes a table of those rows.
class KILN_API Embedding : public ModuleHolder<EmbeddingImpl> {
 public:
  using ModuleHolder<EmbeddingImpl>::ModuleHolder;
  using Impl = EmbeddingImpl;
  // A table whose weight is `embeddings` [num_embeddings, embedding_dim] (not copied).
  static Embedding from_pretrained(const Tensor& embeddings,
                                   const EmbeddingFromPretrainedOptions& options = {});
};

struct EmbeddingBagOptions {
  EmbeddingBagOptions(int64_t num_embeddings, int64_t embedding_dim)
      : num_embeddings_(num_embeddings), embedding_dim_(embedding_dim) {}
  KILN_ARG(int64_t, num_embeddings);
  KILN_ARG(int64_t, embedding_dim);
  KILN_ARG(std::optional<double>, max_norm) = std::nullopt;
  KILN_ARG(double, norm_type) = 2.0;
  KILN_ARG(bool, scale_grad_by_freq) = false;
  KILN_ARG(EmbeddingBagMode, mode) = Reduction::Mean;
  KILN_ARG(bool, sparse) = false;  // accepted; the gradient is dense
  KILN_ARG(Tensor, _weight) = Tensor();
  KILN_ARG(bool, include_last_offset) = false;
  KILN_ARG(std::optional<int64_t>, padding_idx) = std::nullopt;
};

struct EmbeddingBagFromPretrainedOptions {
  KILN_ARG(bool, freeze) = true;
  KILN_ARG(std::optional<double>, max_norm) = std::nullopt;
  KILN_ARG(double, norm_type) = 2.0;
  KILN_ARG(bool, scale_grad_by_freq) = false;
  KILN_ARG(EmbeddingBagMode, mode) = Reduction::Mean;
  KILN_ARG(bool, sparse) = false;
  KILN_ARG(bool, include_last_offset) = false;
  KILN_ARG(std::optional<int64_t>, padding_idx) = std::nullopt;
};

// Sums, means or maxima of bags of embeddings (F::embedding_bag) without materialising the
// rows of each entry separately: input [B, L] (bags of L) or 1-D with offsets -> [B, dim].
class KILN_API EmbeddingBagImpl : public Module {
 public:
  EmbeddingBagImpl(int64_t num_embeddings, int64_t embedding_dim)
      : EmbeddingBagImpl(EmbeddingBagOptions(num_embeddings, embedding_dim)) {}
  explicit EmbeddingBagImpl(EmbeddingBagOptions options);

  // weight from N(0, 1), the padding row zeroed.
  void reset_parameters();
  // F::embedding_bag(input, weight, options with these offsets and per_sample_weights).
  Tensor forward(const Tensor& input, const Tensor& offsets = {},
                 const Tensor& per_sample_weights = {});
  void pretty_print(std::ostream& stream) const override;

  EmbeddingBagOptions options;
  Tensor weight;
};

class KILN_API EmbeddingBag : public ModuleHolder<EmbeddingBagImpl> {
 public:
  using ModuleHolder<EmbeddingBagImpl>::ModuleHolder;
  using Impl = EmbeddingBagImpl;
  static EmbeddingBag from_pretrained(const Tensor& embeddings,
                                      const EmbeddingBagFromPretrainedOptions& options = {});
};

}  // namespace kiln::nn
