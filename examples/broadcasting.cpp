// "Broadcasting the good and the ugly" from "Effective PyTorch": adding [2, 2] and [2, 1];
// concatenating features by tiling versus the Merge module's broadcast sum of two linear maps (the
// same numbers, without the tiled copy); and the ugly case, sum([[1], [2]] + [1, 2]) = 12.
#include <kiln/kiln.h>
#include <kiln/nn.h>

#include <cstdio>
#include <functional>
#include <iostream>

namespace nn = kiln::nn;
using kiln::Tensor;

// activation(linear1(a) + linear2(b)), broadcasting a and b against each other.
struct MergeImpl : nn::Module {
  MergeImpl(int64_t in_features1, int64_t in_features2, int64_t out_features,
            std::function<Tensor(const Tensor&)> activation = nullptr)
      : linear1(register_module("linear1", nn::Linear(in_features1, out_features))),
        linear2(register_module("linear2", nn::Linear(in_features2, out_features))),
        activation(std::move(activation)) {}

  Tensor forward(const Tensor& a, const Tensor& b) {
    Tensor c = linear1(a) + linear2(b);
    return activation ? activation(c) : c;
  }

  nn::Linear linear1, linear2;
  std::function<Tensor(const Tensor&)> activation;
};
KILN_MODULE(Merge);

int main() {
  kiln::manual_seed(0);
  Tensor a = kiln::tensor({{1., 2.}, {3., 4.}});
  Tensor b = kiln::tensor({{1.}, {2.}});
  std::cout << "a + b =\n" << a + b << "\n";

  // tile b, concatenate, one linear map...
  Tensor x = kiln::rand({5, 3, 5});
  Tensor y = kiln::rand({5, 1, 6});
  nn::Linear linear(11, 10);
  Tensor tiled = kiln::cat({x, y.repeat({1, 3, 1})}, 2);
  Tensor d1 = nn::functional::relu(linear(tiled));
  std::cout << "tiled: d.sizes() = " << d1.sizes() << "\n";

  // ... or two linear maps and a broadcast sum, with the same weights split in two
  Merge merge(5, 6, 10, [](const Tensor& t) { return kiln::relu(t); });
  {
    kiln::NoGradGuard no_grad;
    merge->linear1->weight.copy_(linear->weight.narrow(1, 0, 5));
    merge->linear2->weight.copy_(linear->weight.narrow(1, 5, 6));
    merge->linear1->bias.copy_(linear->bias);
    merge->linear2->bias.zero_();
  }
  Tensor d2 = merge(x, y);
  std::cout << "broadcast: d.sizes() = " << d2.sizes() << "\n";
  std::cout << *merge << "\n";
  bool same = d1.allclose(d2, 1e-5, 1e-6);
  std::printf("tiled and broadcast results equal: %s\n", same ? "yes" : "no");

  // the ugly: [2, 1] + [2] broadcasts to [2, 2]
  Tensor u = kiln::tensor({{1.}, {2.}});
  Tensor v = kiln::tensor({1., 2.});
  Tensor c = kiln::sum(u + v);
  std::cout << "sum(a + b) = " << c << " (not 6)\n";
  std::cout << "sum(a + b, 0) = " << kiln::sum(u + v, {0}) << "\n";
  return same && c.item<double>() == 12.0 ? 0 : 1;
}
