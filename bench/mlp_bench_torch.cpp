// kiln-mlp-bench-torch: kiln-mlp-bench's MLP step on libtorch (Debian's libtorch-dev), for the
// C++-to-C++ comparison; run by kiln-mlp-bench. Prints one JSON line.
//
//   kiln-mlp-bench-torch [--steps N] [--threads T]
#include "bench_common.hpp"

#include <torch/torch.h>

#include <cstdio>
#include <cstdlib>
#include <string>

int main(int argc, char** argv) {
  int steps = 20, threads = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--steps") steps = std::atoi(argv[i + 1]);
    if (flag == "--threads") threads = std::atoi(argv[i + 1]);
  }
  if (threads > 0) torch::set_num_threads(threads);
  torch::manual_seed(0);
  torch::nn::Sequential model(torch::nn::Linear(784, 512), torch::nn::ReLU(),
                              torch::nn::Linear(512, 512), torch::nn::ReLU(),
                              torch::nn::Linear(512, 10));
  torch::optim::SGD opt(model->parameters(), torch::optim::SGDOptions(0.01).momentum(0.9));
  torch::Tensor x = torch::rand({128, 784});
  torch::Tensor y = torch::randint(10, {128});
  auto step = [&] {
    torch::Tensor loss = torch::nn::functional::cross_entropy(model->forward(x), y);
    opt.zero_grad();
    loss.backward();
    opt.step();
  };
  double sps = 1.0 / bench::median_seconds(step, steps, 7);
  std::printf("{\"steps_per_s\": %.6g, \"threads\": %d}\n", sps, torch::get_num_threads());
  return 0;
}
