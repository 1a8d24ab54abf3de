// Bilinear maps (F::bilinear, kiln::bilinear), pairwise distances within a batch (F::pdist) and
// Gumbel-softmax sampling: composites of kiln operators.
#include <kiln/dispatch.h>
#include <kiln/nn/functional.h>
#include <kiln/nn/functional/distance.h>
#include <kiln/nn/functional/gumbel_softmax.h>
#include <kiln/nn/functional/linear.h>
#include <kiln/tensor_data.h>

#include <cmath>
#include <vector>

namespace kiln::nn::functional {
namespace {

using BilinearOp = Operator<Tensor(const Tensor&, const Tensor&, const Tensor&, const Tensor&)>;

// Checks as ATen's bilinear, then contracts input1 with weight by a matrix product and the
// result with input2 elementwise (integer inputs by broadcasting, as there is no integer gemm).
Tensor bilinear_composite(const BilinearOp&, const Tensor& input1, const Tensor& input2,
                          const Tensor& weight, const Tensor& bias) {
  KILN_CHECK_VALUE(input1.dim() == input2.dim(), "bilinear(): input dimensions do not match: got ",
                   input1.dim(), " and ", input2.dim());
  KILN_CHECK_VALUE(input1.dim() >= 1, "bilinear(): expected inputs of at least 1 dimension");
  for (int64_t i = 0; i < input1.dim() - 1; ++i) {
    KILN_CHECK_VALUE(input1.size(i) == input2.size(i), "bilinear(): input batch dimensions do ",
                     "not match: got ", input1.sizes(), " and ", input2.sizes());
  }
  KILN_CHECK_VALUE(weight.dim() == 3, "bilinear(): expected a 3-D weight [out, in1, in2], but ",
                   "got weight of size ", weight.sizes());
  KILN_CHECK_VALUE(input1.size(-1) == weight.size(1), "bilinear(): input1 size does not match ",
                   "weight size: got ", input1.size(-1), " but expected ", weight.size(1));
  KILN_CHECK_VALUE(input2.size(-1) == weight.size(2), "bilinear(): input2 size does not match ",
                   "weight size: got ", input2.size(-1), " but expected ", weight.size(2));
  KILN_CHECK_VALUE(!bias.defined() || (bias.dim() == 1 && bias.size(0) == weight.size(0)),
                   "bilinear(): bias size does not match weight size: got ",
                   bias.defined() ? bias.sizes() : IntArrayRef(), " but expected [", weight.size(0),
                   "]");
  const int64_t out = weight.size(0), in1 = weight.size(1), in2 = weight.size(2);
  Tensor x1 = input1.reshape({-1, in1}), x2 = input2.reshape({-1, in2});
  Tensor y;
  if (is_floating_point(result_type(x1, weight))) {
    // t[b, o, j] = sum_i x1[b, i] * weight[o, i, j]
    Tensor t = matmul(x1, weight.transpose(0, 1).reshape({in1, out * in2}));
    y = sum(t.view({-1, out, in2}) * x2.unsqueeze(1), {2});
  } else {
    y = sum(x1.view({-1, 1, in1, 1}) * weight.unsqueeze(0) * x2.view({-1, 1, 1, in2}), {2, 3});
  }
  if (bias.defined()) y = y + bias;
  DimVector sizes(input1.sizes());
  sizes[sizes.size() - 1] = out;
  return y.reshape(sizes);
}
BilinearOp bilinear_op("bilinear",
                       "bilinear(Tensor input1, Tensor input2, Tensor weight, Tensor? bias=None) "
                       "-> Tensor",
                       bilinear_composite, /*primitive=*/false);

using PdistOp = Operator<Tensor(const Tensor&, double)>;

// The differences of every pair i < j of rows, reduced by their p-norm.
Tensor pdist_composite(const PdistOp&, const Tensor& input, double p) {
  KILN_CHECK_VALUE(input.dim() == 2, "pdist: only supports 2D tensors, got: ", input.dim(), "D");
  KILN_CHECK_TYPE(input.is_floating_point(), "pdist: only supports floating-point dtypes, got ",
                  dtype_name(input.dtype()));
  KILN_CHECK_VALUE(p >= 0, "pdist: only supports non-negative p values, got ", p);
  const int64_t n = input.size(0);
  std::vector<int64_t> first, second;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = i + 1; j < n; ++j) {
      first.push_back(i);
      second.push_back(j);
    }
  }
  if (first.empty()) return empty({0}, TensorOptions().dtype(input.dtype()).device(input.device()));
  Tensor a = input.index_select(0, kiln::tensor(first, kLong).to(input.device()));
  Tensor b = input.index_select(0, kiln::tensor(second, kLong).to(input.device()));
  return norm(a - b, p, {1});
}
PdistOp pdist_op("pdist", "pdist(Tensor self, float p=2) -> Tensor", pdist_composite,
                 /*primitive=*/false);

}  // namespace

Tensor bilinear(const Tensor& input1, const Tensor& input2, const Tensor& weight,
                const Tensor& bias) {
  return bilinear_op(input1, input2, weight, bias);
}

Tensor pdist(const Tensor& input, double p) { return pdist_op(input, p); }

Tensor gumbel_softmax(const Tensor& logits, const GumbelSoftmaxFuncOptions& options) {
  KILN_CHECK_TYPE(logits.is_floating_point(), "gumbel_softmax: expected floating point logits, ",
                  "but got ", dtype_name(logits.dtype()));
  KILN_CHECK_VALUE(options.tau() > 0, "gumbel_softmax: tau must be positive, but got ",
                   options.tau());
  // -log(E) with E ~ Exponential(1) = -log(1 - U); the tiny floor keeps log finite when U = 0
  Tensor exponential = clamp_min(-log1p(-rand_like(logits)), 1e-30);
  Tensor gumbels = (logits - log(exponential)) / options.tau();
  Tensor soft = softmax(gumbels, options.dim());
  if (!options.hard()) return soft;
  int64_t dim = options.dim() < 0 ? options.dim() + logits.dim() : options.dim();
  Tensor index = argmax(soft, dim, /*keepdim=*/true);
  DimVector shape(static_cast<size_t>(logits.dim()), 1);
  shape[static_cast<size_t>(dim)] = logits.size(dim);
  Tensor positions = arange(logits.size(dim), TensorOptions().dtype(kLong).device(logits.device()));
  Tensor hard = eq(positions.view(shape), index).to(soft.dtype());
  return hard - soft.detach() + soft;
}

}  // namespace kiln::nn::functional

namespace kiln {

Tensor bilinear(const Tensor& input1, const Tensor& input2, const Tensor& weight,
                const Tensor& bias) {
  return nn::functional::bilinear(input1, input2, weight, bias);
}

Tensor pdist(const Tensor& input, double p) { return nn::functional::pdist(input, p); }

}  // namespace kiln
