// kiln-resample-bench: on [8, 64, 56, 56] float32, the forward and forward+backward of reflect
// padding by 1, nearest and bilinear upsampling by 2, and 3x3 stride-2 max and average pooling,
// in median milliseconds, beside PyTorch run in the same invocation (bench/resample_bench.py,
// 2 threads).
//   build/bin/kiln-resample-bench
#include "bench_common.hpp"

#include <kiln/kiln.h>

#include <cstdio>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace {

namespace F = kiln::nn::functional;
using Op = std::function<kiln::Tensor(const kiln::Tensor&)>;

std::vector<std::pair<std::string, Op>> ops() {
  return {
      {"pad_reflect",
       [](const kiln::Tensor& x) {
         return F::pad(x, F::PadFuncOptions({1, 1, 1, 1}).mode(kiln::kReflect));
       }},
      {"nearest_x2",
       [](const kiln::Tensor& x) {
         return F::interpolate(x, F::InterpolateFuncOptions().scale_factor(std::vector<double>{
                                      2.0, 2.0}));
       }},
      {"bilinear_x2",
       [](const kiln::Tensor& x) {
         return F::interpolate(x, F::InterpolateFuncOptions()
                                      .scale_factor(std::vector<double>{2.0, 2.0})
                                      .mode(kiln::kBilinear)
                                      .align_corners(false));
       }},
      {"max_pool_3s2", [](const kiln::Tensor& x) { return kiln::max_pool2d(x, 3, 2, 1); }},
      {"avg_pool_3s2", [](const kiln::Tensor& x) { return kiln::avg_pool2d(x, 3, 2, 1); }},
  };
}

}  // namespace

int main() {
  kiln::manual_seed(0);
  kiln::Tensor x = kiln::randn({8, 64, 56, 56}).requires_grad_();
  bench::Measures mine;
  for (const auto& entry : ops()) {
    const std::string& name = entry.first;
    const Op& op = entry.second;  // a reference, not a binding: lambdas capture it (clang 14)
    kiln::Tensor gy = kiln::randn(op(x).sizes());
    double fwd = bench::median_seconds(
        [&] {
          kiln::NoGradGuard no_grad;
          op(x);
        },
        3, 7);
    double fwd_bwd = bench::median_seconds([&] { kiln::autograd::grad({op(x)}, {x}, {gy}); }, 3, 7);
    mine[name + "_fwd_ms"] = fwd * 1e3;
    mine[name + "_fwdbwd_ms"] = fwd_bwd * 1e3;
  }
  bench::Measures pytorch =
      bench::run_json("/usr/bin/python3 " KILN_BENCH_DIR "/resample_bench.py 2>/dev/null");
  std::printf("[8, 64, 56, 56] float32, median ms (lower is better)\n");
  std::printf("%-28s %10s %10s %12s\n", "measure", "kiln", "pytorch", "kiln/pyt.");
  for (const auto& [key, value] : mine) {
    auto it = pytorch.find(key);
    double theirs = it == pytorch.end() ? 0 : it->second;
    std::printf("%-28s %10.2f %10.2f %11.2fx\n", key.c_str(), value, theirs,
                theirs > 0 ? value / theirs : 0.0);
  }
  return 0;
}
