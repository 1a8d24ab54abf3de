// kiln-jit-bench: graph replay (kiln/jit.h) against eager. A chain of 8 pointwise operators on
// 16 floats, in nanoseconds per operator, and the MLP of the examples (2 -> 64 -> 64 -> 1, batch
// 64) forward, in microseconds: kiln eager, kiln replayed (Note [Replay plan],
// core/src/jit/plan.cpp), and the same in PyTorch eager and torch.jit.trace
// (bench/jit_bench.py, run as a subprocess in the same invocation). No grad. Medians of 15 runs.
// Also the checkerboard net on a 256x256 image, kiln only: a training step eager and with the
// forward traced, and the eval forward eager and traced (milliseconds).
// Prints a table with ratios, then one JSON line. `kiln-jit-bench --kiln-only` skips PyTorch.
#include "bench_common.hpp"

#include <kiln/kiln.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

using Measures = bench::Measures;

kiln::Tensor chain(const kiln::Tensor& x) {
  kiln::Tensor y = x * 1.5;
  y = y + 0.25;
  y = kiln::sin(y);
  y = y * y;
  y = y - x;
  y = kiln::exp(y);
  y = kiln::relu(y);
  return y / 3.0;
}

Measures measure_kiln() {
  Measures m;
  kiln::manual_seed(0);
  kiln::Tensor x = kiln::rand({16});
  auto traced = kiln::jit::trace(chain, x);
  auto mlp = kiln::nn::Sequential(kiln::nn::Linear(2, 64), kiln::nn::ReLU(),
                                  kiln::nn::Linear(64, 64), kiln::nn::ReLU(),
                                  kiln::nn::Linear(64, 1));
  kiln::Tensor xm = kiln::rand({64, 2});
  auto traced_mlp = kiln::jit::trace_module(mlp, {xm});
  kiln::autograd::NoGradGuard no_grad;
  m["chain8_eager_ns_per_op"] = bench::median_seconds([&] { chain(x); }, 5000) * 1e9 / 8;
  m["chain8_traced_ns_per_op"] = bench::median_seconds([&] { traced.forward(x); }, 5000) * 1e9 / 8;
  m["mlp_eager_us"] = bench::median_seconds([&] { mlp->forward(xm); }, 2000) * 1e6;
  m["mlp_traced_us"] = bench::median_seconds([&] { traced_mlp.forward(xm); }, 2000) * 1e6;
  return m;
}

// The checkerboard net (tests/jit: 1x1 convolutions, batch norm, ReLU) on a 256x256 image:
// a training step (forward, MSE loss, backward, SGD step) eager and with the forward traced
// (under grad, replay dispatches each node so that autograd records), in milliseconds.
Measures measure_checkerboard_step() {
  namespace nn = kiln::nn;
  Measures m;
  kiln::manual_seed(0);
  nn::Sequential net(nn::Conv2d(nn::Conv2dOptions(2, 16, 1)), nn::BatchNorm2d(16), nn::ReLU(),
                     nn::Conv2d(nn::Conv2dOptions(16, 16, 1)), nn::BatchNorm2d(16), nn::ReLU(),
                     nn::Conv2d(nn::Conv2dOptions(16, 1, 1)));
  kiln::Tensor x = kiln::rand({1, 2, 256, 256});
  kiln::Tensor y = kiln::rand({1, 1, 256, 256});
  kiln::optim::SGD opt(net->parameters(), kiln::optim::SGDOptions(0.01));
  auto traced = kiln::jit::trace_module(net, {x});
  auto step = [&](auto&& forward) {
    opt.zero_grad();
    kiln::nn::functional::mse_loss(forward(x), y).backward();
    opt.step();
  };
  m["checkerboard_step_eager_ms"] =
      bench::median_seconds([&] { step([&](const kiln::Tensor& t) { return net->forward(t); }); },
                            5) *
      1e3;
  m["checkerboard_step_traced_ms"] =
      bench::median_seconds([&] { step([&](const kiln::Tensor& t) { return traced.forward(t); }); },
                            5) *
      1e3;
  {
    kiln::autograd::NoGradGuard no_grad;
    net->eval();
    auto traced_eval = kiln::jit::trace_module(net, {x});
    m["checkerboard_forward_eval_eager_ms"] = bench::median_seconds([&] { net->forward(x); }, 5) *
                                              1e3;
    m["checkerboard_forward_eval_traced_ms"] =
        bench::median_seconds([&] { traced_eval.forward(x); }, 5) * 1e3;
  }
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  bool kiln_only = argc > 1 && std::strcmp(argv[1], "--kiln-only") == 0;
  Measures kiln_m = measure_kiln();
  for (auto& [key, value] : measure_checkerboard_step()) kiln_m[key] = value;
  Measures torch_m;
  if (!kiln_only) {
    torch_m = bench::run_json("/usr/bin/python3 " KILN_BENCH_DIR "/jit_bench.py 2>/dev/null");
  }
  std::printf("%-26s %12s %12s %10s\n", "", "kiln", "pytorch", "kiln/pt");
  std::vector<bench::Result> results;
  for (const char* key :
       {"chain8_eager_ns_per_op", "chain8_traced_ns_per_op", "mlp_eager_us", "mlp_traced_us",
        "checkerboard_step_eager_ms", "checkerboard_step_traced_ms",
        "checkerboard_forward_eval_eager_ms", "checkerboard_forward_eval_traced_ms"}) {
    double k = kiln_m[key];
    auto t = torch_m.find(key);
    if (t == torch_m.end()) {
      std::printf("%-26s %12.1f %12s %10s\n", key, k, "-", "-");
    } else {
      std::printf("%-26s %12.1f %12.1f %10.2f\n", key, k, t->second, k / t->second);
      results.push_back({std::string("pytorch_") + key, t->second, ""});
    }
    results.push_back({std::string("kiln_") + key, k, ""});
  }
  std::printf("kiln traced/eager: chain %.2f, mlp %.2f\n",
              kiln_m["chain8_traced_ns_per_op"] / kiln_m["chain8_eager_ns_per_op"],
              kiln_m["mlp_traced_us"] / kiln_m["mlp_eager_us"]);
  if (!kiln_only && torch_m.empty()) {
    std::printf("(PyTorch: /usr/bin/python3 with torch not available)\n");
  }
  bench::print_json(results);
  return 0;
}
