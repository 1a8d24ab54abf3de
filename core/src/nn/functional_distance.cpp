// kiln::nn::functional's distances between batches of vectors: cosine similarity and the
// pairwise p-norm distance, composites of kiln operators.
#include <kiln/nn/functional.h>

#include "loss_util.h"

namespace kiln::nn::functional {
namespace {

using CosineSimilarityOp = Operator<Tensor(const Tensor&, const Tensor&, int64_t, double)>;
Tensor cosine_similarity_backend(const CosineSimilarityOp&, const Tensor& x1, const Tensor& x2,
                                 int64_t dim, double eps) {
  ScalarType common = result_type(x1, x2);
  KILN_CHECK_TYPE(is_floating_point(common), "cosine_similarity: expected the inputs' common ",
                  "dtype to be floating point, but it is ", dtype_name(common), " (inputs ",
                  dtype_name(x1.dtype()), " and ", dtype_name(x2.dtype()), ")");
  std::vector<int64_t> shape = broadcast_shapes(x1.sizes(), x2.sizes());
  Tensor a = x1.to(common).expand(shape), b = x2.to(common).expand(shape);
  // As PyTorch 1.13: squared norms raised to eps^2 (the gradient passing through unchanged),
  // then sum(a * b) / sqrt(|a|^2 |b|^2).
  Tensor square_a = detail::clamp_min_keep_grad(sum(a * a, {dim}), eps * eps);
  Tensor square_b = detail::clamp_min_keep_grad(sum(b * b, {dim}), eps * eps);
  return sum(a * b, {dim}) * rsqrt(square_a * square_b);
}
CosineSimilarityOp cosine_similarity_op("cosine_similarity",
                                        "cosine_similarity(Tensor x1, Tensor x2, int dim=1, float "
                                        "eps=1e-08) -> Tensor",
                                        cosine_similarity_backend, false);

}  // namespace

Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, int64_t dim, double eps) {
  return cosine_similarity_op(x1, x2, dim, eps);
}

Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, double p, double eps, bool keepdim) {
  const int64_t innermost = std::max(x1.dim(), x2.dim()) - 1;
  KILN_CHECK_VALUE(innermost >= 0, "pairwise_distance: expected inputs of at least 1 ",
                   "dimension, but got sizes ", x1.sizes(), " and ", x2.sizes());
  return norm(x1 - x2 + eps, p, {innermost}, keepdim);
}

Tensor cosine_similarity(const Tensor& x1, const Tensor& x2,
                         const CosineSimilarityFuncOptions& options) {
  return cosine_similarity(x1, x2, options.dim(), options.eps());
}

Tensor pairwise_distance(const Tensor& x1, const Tensor& x2,
                         const PairwiseDistanceFuncOptions& options) {
  return pairwise_distance(x1, x2, options.p(), options.eps(), options.keepdim());
}

}  // namespace kiln::nn::functional
