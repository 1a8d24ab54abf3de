// kiln-activation-bench: on 4M float32 elements ([64, 65536]), the forward and forward+backward
// of some of issue 15's one-pass primitives (elu, hardswish, atan2, lerp with a tensor weight,
// addcmul), in median milliseconds, beside PyTorch run in the same invocation
// (bench/activation_bench.py, 2 threads).
//   build/bin/kiln-activation-bench
#include "bench_common.hpp"

#include <kiln/kiln.h>

#include <cstdio>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace {

using Op = std::function<kiln::Tensor(const kiln::Tensor&, const kiln::Tensor&)>;

std::vector<std::pair<std::string, Op>> ops() {
  return {
      {"elu", [](const kiln::Tensor& x, const kiln::Tensor&) { return kiln::elu(x); }},
      {"hardswish", [](const kiln::Tensor& x, const kiln::Tensor&) { return kiln::hardswish(x); }},
      {"atan2", [](const kiln::Tensor& x, const kiln::Tensor& y) { return kiln::atan2(x, y); }},
      {"lerp", [](const kiln::Tensor& x, const kiln::Tensor& y) { return kiln::lerp(x, y, y); }},
      {"addcmul",
       [](const kiln::Tensor& x, const kiln::Tensor& y) { return kiln::addcmul(x, y, y, 0.5); }},
  };
}

}  // namespace

int main() {
  kiln::manual_seed(0);
  kiln::Tensor x = kiln::randn({64, 65536}).requires_grad_();
  kiln::Tensor y = kiln::rand({64, 65536}).requires_grad_();
  kiln::Tensor gy = kiln::randn({64, 65536});
  bench::Measures mine;
  for (const auto& entry : ops()) {
    const std::string& name = entry.first;
    const Op& op = entry.second;  // a reference, not a binding: lambdas capture it (clang 14)
    double fwd = bench::median_seconds(
        [&] {
          kiln::NoGradGuard no_grad;
          op(x, y);
        },
        5, 9);
    double fwd_bwd = bench::median_seconds(
        [&] {
          kiln::autograd::grad({op(x, y)}, {x, y}, {gy}, {}, false, true);
        },
        3, 7);
    mine[name + "_fwd_ms"] = fwd * 1e3;
    mine[name + "_fwdbwd_ms"] = fwd_bwd * 1e3;
  }
  bench::Measures pytorch =
      bench::run_json("/usr/bin/python3 " KILN_BENCH_DIR "/activation_bench.py 2>/dev/null");
  std::printf("[64, 65536] float32, median ms (lower is better)\n");
  std::printf("%-24s %10s %10s %12s\n", "measure", "kiln", "pytorch", "kiln/pyt.");
  for (const auto& [key, value] : mine) {
    auto it = pytorch.find(key);
    double theirs = it == pytorch.end() ? 0 : it->second;
    std::printf("%-24s %10.2f %10.2f %11.2fx\n", key.c_str(), value, theirs,
                theirs > 0 ? value / theirs : 0.0);
  }
  std::vector<bench::Result> all;
  for (auto& [k, v] : mine) all.push_back({"kiln." + k, v, ""});
  for (auto& [k, v] : pytorch) all.push_back({"pytorch." + k, v, ""});
  bench::print_json(all);
  return 0;
}
