// Embedding.
#include <kiln/autograd.h>
#include <kiln/nn/functional.h>
#include <kiln/nn/init.h>
#include <kiln/nn/modules/embedding.h>

namespace kiln::nn {

EmbeddingImpl::EmbeddingImpl(const EmbeddingOptions& options) : options(options) {
  const int64_t num = options.num_embeddings();
  KILN_CHECK_VALUE(num >= 0 && options.embedding_dim() >= 0, "Embedding: num_embeddings and ",
                   "embedding_dim must be non-negative (got ", num, " and ",
                   options.embedding_dim(), ")");
  if (options.padding_idx()) {
    int64_t p = *options.padding_idx();
    KILN_CHECK_INDEX(p >= -num && p < num, "Embedding: padding_idx must be within ",
                     "num_embeddings (got padding_idx=", p, ", num_embeddings=", num, ")");
    if (p < 0) this->options.padding_idx(p + num);
  }
  weight = register_parameter("weight", empty({num, options.embedding_dim()}));
  reset_parameters();
}

void EmbeddingImpl::reset_parameters() {
  init::normal_(weight);
  if (options.padding_idx()) {
    NoGradGuard no_grad;
    weight[*options.padding_idx()].fill_(0);
  }
}

Tensor EmbeddingImpl::forward(const Tensor& input) {
  return functional::embedding(input, weight, options.padding_idx());
}

void EmbeddingImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::Embedding(num_embeddings=" << options.num_embeddings()
         << ", embedding_dim=" << options.embedding_dim();
  if (options.padding_idx()) stream << ", padding_idx=" << *options.padding_idx();
  stream << ")";
}

}  // namespace kiln::nn
