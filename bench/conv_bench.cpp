// kiln-conv-bench: Conv2d 64->64 3x3, padding 1, on [8, 64, 56, 56], forward and forward+backward
// (gradients of input, weight and bias), float32 and bfloat16, in GFLOP/s, beside PyTorch run in
// the same invocation (bench/conv_bench.py, 2 threads) and beside kiln with the operands kept in
// plain NCHW layouts (KILN_CPU_CONV_PLAIN=1, this program re-run with --json).
//   build/bin/kiln-conv-bench           the table
//   build/bin/kiln-conv-bench --json    kiln's numbers only, as one JSON object
#include "bench_common.hpp"

#include <kiln/kiln.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

namespace {

using Measures = bench::Measures;

constexpr int64_t N = 8, C = 64, O = 64, H = 56, W = 56, K = 3;
constexpr double kFlops = 2.0 * N * O * C * K * K * H * W;

void measure(kiln::ScalarType dtype, const std::string& name, Measures& out) {
  kiln::manual_seed(0);
  kiln::Tensor x = kiln::randn({N, C, H, W}).to(dtype).requires_grad_();
  kiln::Tensor w = (kiln::randn({O, C, K, K}) * 0.05).to(dtype).requires_grad_();
  kiln::Tensor b = kiln::zeros({O}, dtype).requires_grad_();
  kiln::Tensor gy = kiln::randn({N, O, H, W}).to(dtype);
  double fwd = bench::median_seconds(
      [&] {
        kiln::NoGradGuard no_grad;
        kiln::conv2d(x, w, b, 1, 1);
      },
      3, 7);
  double fwd_bwd = bench::median_seconds(
      [&] {
        kiln::Tensor y = kiln::conv2d(x, w, b, 1, 1);
        kiln::autograd::grad({y}, {x, w, b}, {gy});
      },
      2, 7);
  out["conv_fwd_" + name + "_gflops"] = kFlops / fwd / 1e9;
  out["conv_fwdbwd_" + name + "_gflops"] = 3 * kFlops / fwd_bwd / 1e9;
}

Measures measure_kiln() {
  Measures m;
  measure(kiln::kFloat, "f32", m);
  measure(kiln::kBFloat16, "bf16", m);
  return m;
}

std::string cell(const Measures& m, const std::string& key) {
  auto it = m.find(key);
  if (it == m.end()) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", it->second);
  return buf;
}

std::string ratio(const Measures& a, const Measures& b, const std::string& key) {
  auto x = a.find(key), y = b.find(key);
  if (x == a.end() || y == b.end() || y->second == 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2fx", x->second / y->second);
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--json") == 0) {
    Measures m = measure_kiln();
    std::vector<bench::Result> results;
    for (const auto& [key, value] : m) results.push_back({key, value, "GFLOP/s"});
    bench::print_json(results);
    return 0;
  }
  Measures kiln_m = measure_kiln();
  Measures plain = bench::run_json("KILN_CPU_CONV_PLAIN=1 " + std::string(argv[0]) + " --json");
  Measures pytorch =
      bench::run_json("/usr/bin/python3 " KILN_BENCH_DIR "/conv_bench.py 2>/dev/null");
  std::printf("Conv2d 64->64 3x3 pad 1 on [8, 64, 56, 56], GFLOP/s (fwd+bwd counts 3x fwd)\n");
  std::printf("%-24s %10s %12s %10s %10s\n", "measure", "kiln", "kiln plain", "pytorch",
              "kiln/pyt.");
  for (const char* key : {"conv_fwd_f32_gflops", "conv_fwdbwd_f32_gflops", "conv_fwd_bf16_gflops",
                          "conv_fwdbwd_bf16_gflops"}) {
    std::printf("%-24s %10s %12s %10s %10s\n", key, cell(kiln_m, key).c_str(),
                cell(plain, key).c_str(), cell(pytorch, key).c_str(),
                ratio(kiln_m, pytorch, key).c_str());
  }
  return 0;
}
