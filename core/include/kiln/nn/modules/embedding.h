// Embedding.
#pragma once

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
  KILN_ARG(std::optional<int64_t>, padding_idx);
};

// A lookup table: integer indices [...] -> rows of weight [num_embeddings, embedding_dim],
// [..., embedding_dim]. weight is initialised from N(0, 1), as PyTorch.
class KILN_API EmbeddingImpl : public Module {
 public:
  EmbeddingImpl(int64_t num_embeddings, int64_t embedding_dim)
      : EmbeddingImpl(EmbeddingOptions(num_embeddings, embedding_dim)) {}
  explicit EmbeddingImpl(const EmbeddingOptions& options);

  // weight from N(0, 1), the padding row zeroed.
  void reset_parameters();
  // embedding(input, weight, padding_idx).
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;

  EmbeddingOptions options;
  Tensor weight;
};
KILN_MODULE(Embedding);

}  // namespace kiln::nn
