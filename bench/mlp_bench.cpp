// kiln-mlp-bench: an MLP 784-512-512-10 (ReLU, cross entropy) trained with SGD and momentum
// (lr 0.01, momentum 0.9) on batches of 128 in float32, in training steps per second (forward,
// backward, zero_grad, step), beside PyTorch (bench/mlp_bench.py, run as a subprocess in the same
// invocation with as many threads) and libtorch C++ (kiln-mlp-bench-torch, when built). Prints a
// table with ratios, then one JSON line.
//
//   kiln-mlp-bench [--steps N]     N timed steps per sample (default 20), 7 samples
#include "bench_common.hpp"

#include <kiln/kiln.h>
#include <kiln/nn.h>
#include <kiln/optim.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <thread>

namespace {

using Measures = bench::Measures;

double kiln_steps_per_second(int steps) {
  kiln::manual_seed(0);
  kiln::nn::Sequential model(kiln::nn::Linear(784, 512), kiln::nn::ReLU(),
                             kiln::nn::Linear(512, 512), kiln::nn::ReLU(),
                             kiln::nn::Linear(512, 10));
  kiln::optim::SGD opt(model->parameters(), kiln::optim::SGDOptions(0.01).momentum(0.9));
  kiln::Tensor x = kiln::rand({128, 784});
  kiln::Tensor y = kiln::randint(10, {128});
  auto step = [&] {
    kiln::Tensor loss = kiln::nn::functional::cross_entropy(model->forward(x), y);
    opt.zero_grad();
    loss.backward();
    opt.step();
  };
  return 1.0 / bench::median_seconds(step, steps, 7);
}

}  // namespace

int main(int argc, char** argv) {
  int steps = 20;
  if (argc == 3 && std::string(argv[1]) == "--steps") steps = std::atoi(argv[2]);
  if (steps < 1) {
    std::fprintf(stderr, "usage: %s [--steps N]\n", argv[0]);
    return 2;
  }
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::string args = " --steps " + std::to_string(steps) + " --threads " + std::to_string(threads);
  double kiln_sps = kiln_steps_per_second(steps);
  Measures py =
      bench::run_json("/usr/bin/python3 " KILN_BENCH_DIR "/mlp_bench.py" + args + " 2>/dev/null");
  Measures cpp;
#ifdef KILN_MLP_BENCH_TORCH
  cpp = bench::run_json(std::string(KILN_MLP_BENCH_TORCH) + args + " 2>/dev/null");
#endif
  std::printf("MLP 784-512-512-10, batch 128, SGD momentum, float32, %u threads\n", threads);
  std::printf("%-22s %12s %12s\n", "", "steps/s", "kiln/x");
  std::printf("%-22s %12.1f %12s\n", "kiln", kiln_sps, "1.00");
  std::vector<bench::Result> results = {{"kiln_steps_per_s", kiln_sps, "1/s"}};
  auto row = [&](const char* label, const char* key, const Measures& m) {
    auto it = m.find("steps_per_s");
    if (it == m.end()) {
      std::printf("%-22s %12s %12s\n", label, "-", "-");
      return;
    }
    std::printf("%-22s %12.1f %12.2f\n", label, it->second, kiln_sps / it->second);
    results.push_back({key, it->second, "1/s"});
    results.push_back({std::string("kiln_over_") + key, kiln_sps / it->second, "x"});
  };
  row("pytorch (python3)", "pytorch", py);
  row("libtorch (C++)", "libtorch", cpp);
  bench::print_json(results);
  return 0;
}
