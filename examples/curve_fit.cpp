// Curve fitting from "Effective PyTorch" ("PyTorch basics"): fit g(x, w) = w0 x^2 + w1 x + w2 to
// samples of f(x) = 5x^2 + 3 with Adam (lr 0.1), 1000 steps of 100 fresh samples each, and print
// w, which should come out near [5, 0, 3]. Runs on the best device available (KILN_DEVICE
// overrides). `--profile trace.json` profiles the training loop (examples/options.h).
#include <kiln/kiln.h>
#include <kiln/nn.h>
#include <kiln/optim.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "options.h"

namespace {

using kiln::Tensor;

// yhat = [x^2, x, 1] @ w, one estimate per sample.
Tensor model(const Tensor& x, const Tensor& w) {
  Tensor f = kiln::stack({x * x, x, kiln::ones_like(x)}, 1);
  return kiln::squeeze(f.matmul(w), 1);
}

// The mean squared error between the estimates and the true values.
Tensor compute_loss(const Tensor& y, const Tensor& yhat) {
  return kiln::nn::functional::mse_loss(yhat, y);
}

// 100 samples of the true function on [-10, 10).
std::pair<Tensor, Tensor> generate_data(kiln::Device device) {
  Tensor x = kiln::rand({100}, device) * 20 - 10;
  Tensor y = 5 * x * x + 3;
  return {x, y};
}

}  // namespace

int main(int argc, char** argv) {
  std::string profile;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--profile" && i + 1 < argc) {
      profile = argv[++i];
    } else {
      std::fprintf(stderr,
                   "kiln-curve-fit: unknown option '%s'\nusage: %s [--profile TRACE.json]\n",
                   arg.c_str(), argv[0]);
      return 2;
    }
  }
  kiln::Device device = kiln::default_device();
  kiln::manual_seed(0);
  // The coefficients start as random noise, as in "Effective PyTorch".
  Tensor w = kiln::randn({3, 1}, device).requires_grad_();
  kiln::optim::Adam opt({w}, kiln::optim::AdamOptions(0.1));

  auto train_step = [&] {
    auto [x, y] = generate_data(device);
    Tensor yhat = model(x, w);
    Tensor loss = compute_loss(y, yhat);
    opt.zero_grad();
    loss.backward();
    opt.step();
    return loss;
  };
  Tensor loss;
  {
    example_options::ProfileRun profiling(profile);
    for (int i = 0; i < 1000; ++i) {
      kiln::profiler::record_function step_range("train_step");
      loss = train_step();
    }
  }

  Tensor v = w.detach().cpu().contiguous();
  const float* p = v.data_ptr<float>();
  std::printf("device %s, last loss %.4g\n", device.str().c_str(), loss.item<double>());
  std::printf("w = [%.6g, %.6g, %.6g]\n", p[0], p[1], p[2]);
  bool close = std::abs(p[0] - 5) < 0.1 && std::abs(p[1]) < 0.1 && std::abs(p[2] - 3) < 1.0;
  std::printf("close to [5, 0, 3]: %s\n", close ? "yes" : "no");
  return close ? 0 : 1;
}
