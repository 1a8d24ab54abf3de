// Distance modules: CosineSimilarity and PairwiseDistance, forwarding (x1, x2) to
// kiln::nn::functional's cosine_similarity and pairwise_distance with their options. They print
// as libtorch's (`kiln::nn::CosineSimilarity(dim=1, eps=1e-08)`).
#pragma once

#include <kiln/nn/loss_options.h>
#include <kiln/nn/module.h>

namespace kiln::nn {

class KILN_API CosineSimilarityImpl : public Module {
 public:
  explicit CosineSimilarityImpl(const CosineSimilarityOptions& options = {}) : options(options) {}
  // cosine_similarity(x1, x2, dim, eps).
  Tensor forward(const Tensor& x1, const Tensor& x2);
  void pretty_print(std::ostream& stream) const override;
  CosineSimilarityOptions options;
};
KILN_MODULE(CosineSimilarity);

class KILN_API PairwiseDistanceImpl : public Module {
 public:
  explicit PairwiseDistanceImpl(const PairwiseDistanceOptions& options = {}) : options(options) {}
  // pairwise_distance(x1, x2, p, eps, keepdim).
  Tensor forward(const Tensor& x1, const Tensor& x2);
  void pretty_print(std::ostream& stream) const override;
  PairwiseDistanceOptions options;
};
KILN_MODULE(PairwiseDistance);

}  // namespace kiln::nn
