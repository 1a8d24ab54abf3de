// Embedding and EmbeddingBag.
#include <kiln/autograd.h>
#include <kiln/nn/functional.h>
#include <kiln/nn/init.h>
#include <kiln/nn/modules/embedding.h>

#include "repr.h"

namespace kiln::nn {
namespace {

// The checked padding row in [0, num), or none.
std::optional<int64_t> padding_row(const char* module, std::optional<int64_t> padding_idx,
                                   int64_t num) {
  if (!padding_idx) return std::nullopt;
  int64_t p = *padding_idx;
  KILN_CHECK_INDEX(p >= -num && p < num, module, ": padding_idx must be within num_embeddings ",
                   "(got padding_idx=", p, ", num_embeddings=", num, ")");
  return p < 0 ? p + num : p;
}

// options._weight when given (its shape checked), else a fresh [num, dim] table.
Tensor table(const char* module, int64_t num, int64_t dim, const Tensor& given) {
  KILN_CHECK_VALUE(num >= 0 && dim >= 0, module, ": num_embeddings and embedding_dim must be ",
                   "non-negative (got ", num, " and ", dim, ")");
  if (!given.defined()) return empty({num, dim});
  KILN_CHECK_VALUE(given.dim() == 2 && given.size(0) == num && given.size(1) == dim, module,
                   ": shape of _weight ", given.sizes(), " does not match num_embeddings and ",
                   "embedding_dim [", num, ", ", dim, "]");
  return given;
}

void init_rows(Tensor& weight, std::optional<int64_t> padding_idx) {
  init::normal_(weight);
  if (padding_idx) {
    NoGradGuard no_grad;
    weight[*padding_idx].fill_(0);
  }
}

Tensor pretrained(const char* name, const Tensor& embeddings) {
  KILN_CHECK_VALUE(embeddings.dim() == 2, name, "::from_pretrained: embeddings parameter is ",
                   "expected to be 2-dimensional, but got embeddings of size ", embeddings.sizes());
  return embeddings;
}

}  // namespace

EmbeddingImpl::EmbeddingImpl(EmbeddingOptions options_) : options(std::move(options_)) {
  options.padding_idx(padding_row("Embedding", options.padding_idx(), options.num_embeddings()));
  Tensor given = options._weight();
  weight = register_parameter("weight", table("Embedding", options.num_embeddings(),
                                              options.embedding_dim(), given));
  if (!given.defined()) reset_parameters();
}

void EmbeddingImpl::reset_parameters() { init_rows(weight, options.padding_idx()); }

Tensor EmbeddingImpl::forward(const Tensor& input) {
  return functional::embedding(input, weight,
                               functional::EmbeddingFuncOptions()
                                   .padding_idx(options.padding_idx())
                                   .max_norm(options.max_norm())
                                   .norm_type(options.norm_type())
                                   .scale_grad_by_freq(options.scale_grad_by_freq())
                                   .sparse(options.sparse()));
}

void EmbeddingImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::Embedding(num_embeddings=" << options.num_embeddings()
         << ", embedding_dim=" << options.embedding_dim();
  if (options.padding_idx()) stream << ", padding_idx=" << *options.padding_idx();
  if (options.max_norm()) stream << ", max_norm=" << *options.max_norm();
  if (options.norm_type() != 2.0) stream << ", norm_type=" << options.norm_type();
  if (options.scale_grad_by_freq()) stream << ", scale_grad_by_freq=true";
  if (options.sparse()) stream << ", sparse=true";
  stream << ")";
}

Embedding Embedding::from_pretrained(const Tensor& embeddings,
                                     const EmbeddingFromPretrainedOptions& options) {
  Tensor w = pretrained("Embedding", embeddings);
  Embedding embedding(EmbeddingOptions(w.size(0), w.size(1))
                          ._weight(w)
                          .padding_idx(options.padding_idx())
                          .max_norm(options.max_norm())
                          .norm_type(options.norm_type())
                          .scale_grad_by_freq(options.scale_grad_by_freq())
                          .sparse(options.sparse()));
  embedding->weight.requires_grad_(!options.freeze());
  return embedding;
}

EmbeddingBagImpl::EmbeddingBagImpl(EmbeddingBagOptions options_) : options(std::move(options_)) {
  options.padding_idx(padding_row("EmbeddingBag", options.padding_idx(), options.num_embeddings()));
  Tensor given = options._weight();
  weight = register_parameter("weight", table("EmbeddingBag", options.num_embeddings(),
                                              options.embedding_dim(), given));
  if (!given.defined()) reset_parameters();
}

void EmbeddingBagImpl::reset_parameters() { init_rows(weight, options.padding_idx()); }

Tensor EmbeddingBagImpl::forward(const Tensor& input, const Tensor& offsets,
                                 const Tensor& per_sample_weights) {
  return functional::embedding_bag(input, weight,
                                   functional::EmbeddingBagFuncOptions()
                                       .offsets(offsets)
                                       .max_norm(options.max_norm())
                                       .norm_type(options.norm_type())
                                       .scale_grad_by_freq(options.scale_grad_by_freq())
                                       .mode(options.mode())
                                       .sparse(options.sparse())
                                       .per_sample_weights(per_sample_weights)
                                       .include_last_offset(options.include_last_offset())
                                       .padding_idx(options.padding_idx()));
}

void EmbeddingBagImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::EmbeddingBag(num_embeddings=" << options.num_embeddings()
         << ", embedding_dim=" << options.embedding_dim();
  if (options.max_norm()) stream << ", max_norm=" << *options.max_norm();
  if (options.norm_type() != 2.0) stream << ", norm_type=" << options.norm_type();
  if (options.scale_grad_by_freq()) stream << ", scale_grad_by_freq=true";
  if (options.sparse()) stream << ", sparse=true";
  if (!(options.mode() == Reduction::Mean)) stream << ", mode=" << options.mode();
  if (options.include_last_offset()) stream << ", include_last_offset=true";
  if (options.padding_idx()) stream << ", padding_idx=" << *options.padding_idx();
  stream << ")";
}

EmbeddingBag EmbeddingBag::from_pretrained(const Tensor& embeddings,
                                           const EmbeddingBagFromPretrainedOptions& options) {
  Tensor w = pretrained("EmbeddingBag", embeddings);
  EmbeddingBag bag(EmbeddingBagOptions(w.size(0), w.size(1))
                       ._weight(w)
                       .max_norm(options.max_norm())
                       .norm_type(options.norm_type())
                       .scale_grad_by_freq(options.scale_grad_by_freq())
                       .mode(options.mode())
                       .sparse(options.sparse())
                       .include_last_offset(options.include_last_offset())
                       .padding_idx(options.padding_idx()));
  bag->weight.requires_grad_(!options.freeze());
  return bag;
}

}  // namespace kiln::nn
