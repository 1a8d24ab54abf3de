// kiln-curve-fit-bench: "Effective PyTorch"'s curve fit with kiln::optim::Adam (lr 0.1), in
// microseconds per training step (data, forward, backward, zero_grad, step) and per optimizer step
// alone, beside PyTorch's (bench/curve_fit_bench.py, run as a subprocess in the same invocation
// with two threads). Prints a table with ratios, then one JSON line.
#include "bench_common.hpp"

#include <kiln/kiln.h>
#include <kiln/nn.h>
#include <kiln/optim.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

namespace {

using Measures = bench::Measures;

Measures measure_kiln() {
  kiln::manual_seed(0);
  kiln::Tensor w = kiln::randn({3, 1}).requires_grad_();
  kiln::optim::Adam opt({w}, kiln::optim::AdamOptions(0.1));
  auto train_step = [&] {
    kiln::Tensor x = kiln::rand({100}) * 20 - 10;
    kiln::Tensor y = 5 * x * x + 3;
    kiln::Tensor f = kiln::stack({x * x, x, kiln::ones_like(x)}, 1);
    kiln::Tensor yhat = kiln::squeeze(f.matmul(w), 1);
    kiln::Tensor loss = kiln::nn::functional::mse_loss(yhat, y);
    opt.zero_grad();
    loss.backward();
    opt.step();
  };
  kiln::Tensor grad = kiln::randn({3, 1});
  auto adam_step = [&] {
    w.mutable_grad() = grad;
    opt.step();
  };
  Measures m;
  m["train_step_us"] = bench::median_seconds(train_step, 200) * 1e6;
  m["adam_step_us"] = bench::median_seconds(adam_step, 500) * 1e6;
  return m;
}

}  // namespace

int main() {
  Measures kiln_m = measure_kiln();
  Measures torch_m =
      bench::run_json("/usr/bin/python3 " KILN_BENCH_DIR "/curve_fit_bench.py 2>/dev/null");
  std::printf("%-16s %12s %12s %10s\n", "microseconds", "kiln", "pytorch", "kiln/pt");
  std::vector<bench::Result> results;
  for (const char* key : {"train_step_us", "adam_step_us"}) {
    double k = kiln_m[key];
    auto t = torch_m.find(key);
    if (t == torch_m.end()) {
      std::printf("%-16s %12.1f %12s %10s\n", key, k, "-", "-");
    } else {
      std::printf("%-16s %12.1f %12.1f %10.2f\n", key, k, t->second, k / t->second);
      results.push_back({std::string("pytorch_") + key, t->second, "us"});
    }
    results.push_back({std::string("kiln_") + key, k, "us"});
  }
  if (torch_m.empty()) std::printf("(PyTorch: /usr/bin/python3 with torch not available)\n");
  bench::print_json(results);
  return 0;
}
