// "Numerical stability in PyTorch" from "Effective PyTorch": x * y / y for y too small and too
// large for float32; the naive softmax of [1000, 0] (NaN) against the stable one ([1, 0]); the
// naive cross entropy (inf) against the stable one (500) and its gradient ([0.5, -0.5]); and
// kiln::nn::functional's softmax and cross_entropy, which are the stable ones.
#include <kiln/kiln.h>
#include <kiln/nn.h>

#include <cstdio>
#include <iostream>

namespace F = kiln::nn::functional;
using kiln::Tensor;

namespace {

Tensor unstable_softmax(const Tensor& logits) {
  Tensor e = kiln::exp(logits);
  return e / kiln::sum(e);
}

Tensor softmax(const Tensor& logits) {
  Tensor e = kiln::exp(logits - kiln::max(logits));
  return e / kiln::sum(e);
}

Tensor unstable_softmax_cross_entropy(const Tensor& labels, const Tensor& logits) {
  return -kiln::sum(labels * kiln::log(softmax(logits)));
}

Tensor softmax_cross_entropy(const Tensor& labels, const Tensor& logits, int64_t dim = -1) {
  Tensor scaled = logits - kiln::max(logits);
  Tensor normalized = scaled - kiln::logsumexp(scaled, {dim});
  return -kiln::sum(labels * normalized);
}

}  // namespace

int main() {
  Tensor x = kiln::tensor(1.0f);
  for (double big_or_small : {1e-50, 1e39}) {
    Tensor y = kiln::tensor(big_or_small).to(kiln::kFloat);  // stored as 0 and as inf
    std::cout << "y = " << big_or_small << ": x * y / y = " << x * y / y << "\n";
  }

  Tensor logits = kiln::tensor({1000., 0.});
  std::cout << "unstable_softmax([1000, 0]) = " << unstable_softmax(logits) << "\n";
  std::cout << "softmax([1000, 0]) = " << softmax(logits) << "\n";

  Tensor labels = kiln::tensor({0.5, 0.5});
  std::cout << "unstable cross entropy = " << unstable_softmax_cross_entropy(labels, logits)
            << "\n";
  Tensor xe = softmax_cross_entropy(labels, logits);
  std::cout << "cross entropy = " << xe << "\n";
  logits.requires_grad_(true);
  xe = softmax_cross_entropy(labels, logits);
  Tensor g = kiln::autograd::grad({xe}, {logits})[0];
  std::cout << "gradient = " << g << "\n";

  // the library's own are the stable forms
  Tensor s = F::softmax(logits.detach(), 0);
  Tensor lib_xe = F::cross_entropy(logits, labels);
  Tensor lib_g = kiln::autograd::grad({lib_xe}, {logits})[0];
  std::cout << "F::softmax = " << s << ", F::cross_entropy = " << lib_xe.detach()
            << ", gradient = " << lib_g << "\n";
  bool ok = xe.item<double>() == 500.0 && lib_xe.item<double>() == 500.0 &&
            g.equal(kiln::tensor({0.5, -0.5})) && lib_g.equal(g) &&
            s.equal(kiln::tensor({1.0, 0.0}));
  std::printf("stable results as in Effective PyTorch: %s\n", ok ? "yes" : "no");
  return ok ? 0 : 1;
}
