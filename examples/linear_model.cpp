// "Encapsulate your model with Modules" from "Effective PyTorch": the linear model y = a x + b as a
// user Module with two parameters, fitted to y = 5x + 3 + noise with MSELoss and SGD (lr 0.01,
// 10000 steps); then the same model on kiln::nn::Linear; then its Sequential. Prints a and b, which
// should come out near 5 and 3.
#include <kiln/kiln.h>
#include <kiln/nn.h>
#include <kiln/optim.h>

#include <cmath>
#include <cstdio>
#include <iostream>

namespace nn = kiln::nn;
using kiln::Tensor;

// y = a x + b with scalar parameters a and b.
struct NetImpl : nn::Module {
  NetImpl() {
    a = register_parameter("a", kiln::rand({1}));
    b = register_parameter("b", kiln::rand({1}));
  }
  Tensor forward(const Tensor& x) { return a * x + b; }
  Tensor a, b;
};
KILN_MODULE(Net);

// The same model on nn::Linear(1, 1), which works on batches of vectors: hence (un)squeeze.
struct LinearNetImpl : nn::Module {
  LinearNetImpl() : linear(register_module("linear", nn::Linear(1, 1))) {}
  Tensor forward(const Tensor& x) { return linear(x.unsqueeze(1)).squeeze(1); }
  nn::Linear linear;
};
KILN_MODULE(LinearNet);

// Fits `net` to (x, y) as the article does and returns the last loss.
template <class Model>
double fit(Model& net, const Tensor& x, const Tensor& y) {
  nn::MSELoss criterion;
  kiln::optim::SGD optimizer(net->parameters(), kiln::optim::SGDOptions(0.01));
  Tensor loss;
  for (int i = 0; i < 10000; ++i) {
    net->zero_grad();
    Tensor yhat = net(x);
    loss = criterion(yhat, y);
    loss.backward();
    optimizer.step();
  }
  return loss.item<double>();
}

int main() {
  kiln::manual_seed(0);
  Tensor x = kiln::arange(100, kiln::kFloat) / 100;
  Tensor y = 5 * x + 3 + kiln::rand({100}) * 0.3;

  Net net;
  std::cout << "parameters of " << *net << ":\n";
  for (const Tensor& p : net->parameters()) std::cout << p << "\n";
  double loss = fit(net, x, y);
  double a = net->a.item<double>(), b = net->b.item<double>();
  std::printf("Net: a = %.4f, b = %.4f (loss %.5f)\n", a, b, loss);
  bool close = std::abs(a - 5) < 0.3 && std::abs(b - 3) < 0.3;
  std::printf("Net: a near 5 and b near 3: %s\n", close ? "yes" : "no");

  LinearNet linear_net;
  std::cout << *linear_net << "\n";
  for (const auto& [name, p] : linear_net->named_parameters()) {
    std::cout << name << ": " << p << "\n";
  }
  loss = fit(linear_net, x, y);
  a = linear_net->linear->weight.item<double>();
  b = linear_net->linear->bias.item<double>();
  std::printf("LinearNet: a = %.4f, b = %.4f (loss %.5f)\n", a, b, loss);
  bool linear_close = std::abs(a - 5) < 0.3 && std::abs(b - 3) < 0.3;
  std::printf("LinearNet: a near 5 and b near 3: %s\n", linear_close ? "yes" : "no");

  nn::Sequential model(nn::Linear(64, 32), nn::ReLU(), nn::Linear(32, 10));
  std::cout << *model << "\n";
  std::printf("both fits close: %s\n", close && linear_close ? "yes" : "no");
  return close && linear_close ? 0 : 1;
}
