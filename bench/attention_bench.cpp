// kiln-attention-bench: scaled_dot_product_attention with batch 4, 8 heads, head dim 64 and
// sequence length L = 128 .. 2048 (self-attention, no mask), in float32 and bfloat16, forward and
// forward+backward: kiln's fused kernel (flash_attention on the CPU plugin) against kiln's
// composite (matmul, softmax, matmul: scaled_dot_product_attention_with_weights) and against
// PyTorch 1.13's explicit attention and nn.MultiheadAttention (embed 512, 8 heads), run in the
// same invocation (bench/attention_bench.py).
//
// Time: median milliseconds of several runs. Memory: the RSS high-water mark (VmHWM, reset
// through /proc/self/clear_refs once the inputs exist) of a fresh process that runs the
// configuration once, minus its RSS just before: what the computation itself took, in MB. Each
// memory figure comes from a child process (this program with --memory, or the script with
// --memory).
//   build/bin/kiln-attention-bench [--quick]
#include "bench_common.hpp"

#include <kiln/kiln.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace {

namespace F = kiln::nn::functional;
using kiln::Tensor;

constexpr int64_t kBatch = 4, kHeads = 8, kHeadDim = 64;

double rss_mb() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  }
  return 0;
}

double hwm_mb() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  }
  return 0;
}

// Resets VmHWM to the current RSS (Linux's clear_refs), so that setup peaks do not count.
void reset_hwm() { std::ofstream("/proc/self/clear_refs") << "5"; }

struct Config {
  bool fused;
  kiln::ScalarType dtype;
  int64_t length;
  bool backward;
};

// One run of a configuration on inputs q, k, v (requiring grad when backward) and gy.
void run_once(const Config& c, const Tensor& q, const Tensor& k, const Tensor& v,
              const Tensor& gy) {
  auto attend = [&] {
    return c.fused ? F::scaled_dot_product_attention(q, k, v)
                   : std::get<0>(F::scaled_dot_product_attention_with_weights(q, k, v));
  };
  if (!c.backward) {
    kiln::NoGradGuard no_grad;
    attend();
    return;
  }
  kiln::autograd::grad({attend()}, {q, k, v}, {gy});
}

std::vector<Tensor> inputs(const Config& c) {
  const std::vector<int64_t> sizes{kBatch, kHeads, c.length, kHeadDim};
  std::vector<Tensor> t;
  for (int i = 0; i < 4; ++i) {
    t.push_back(kiln::randn(sizes).to(c.dtype).requires_grad_(c.backward && i < 3));
  }
  return t;
}

std::string key(const Config& c) {
  return std::string(c.fused ? "fused" : "composite") + "_" +
         (c.dtype == kiln::kFloat ? "f32" : "bf16") + "_L" + std::to_string(c.length) + "_" +
         (c.backward ? "fwdbwd" : "fwd");
}

// --memory fused|composite f32|bf16 L fwd|fwdbwd: prints the peak MB of one run.
int memory_child(char** argv) {
  Config c{std::strcmp(argv[2], "fused") == 0,
           std::strcmp(argv[3], "f32") == 0 ? kiln::kFloat : kiln::kBFloat16, std::stoll(argv[4]),
           std::strcmp(argv[5], "fwdbwd") == 0};
  auto t = inputs(c);
  const double before = rss_mb();
  reset_hwm();
  run_once(c, t[0], t[1], t[2], t[3]);
  std::printf("%.1f\n", hwm_mb() - before);
  return 0;
}

double child_memory(const char* self, const Config& c) {
  std::string cmd = std::string(self) + " --memory " + (c.fused ? "fused " : "composite ") +
                    (c.dtype == kiln::kFloat ? "f32 " : "bf16 ") + std::to_string(c.length) +
                    (c.backward ? " fwdbwd" : " fwd");
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return 0;
  double mb = 0;
  if (std::fscanf(pipe, "%lf", &mb) != 1) mb = 0;
  pclose(pipe);
  return mb;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 6 && std::strcmp(argv[1], "--memory") == 0) return memory_child(argv);
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  std::vector<int64_t> lengths{128, 256, 512, 1024, 2048};
  if (quick) lengths = {128, 512};
  kiln::manual_seed(0);
  bench::Measures mine;
  for (kiln::ScalarType dtype : {kiln::kFloat, kiln::kBFloat16}) {
    for (int64_t length : lengths) {
      for (bool backward : {false, true}) {
        for (bool fused : {true, false}) {
          Config c{fused, dtype, length, backward};
          auto t = inputs(c);
          const int runs = length >= 1024 ? 3 : 7;
          mine[key(c) + "_ms"] =
              1e3 * bench::median_seconds([&] { run_once(c, t[0], t[1], t[2], t[3]); }, 1, runs);
          mine[key(c) + "_mb"] = child_memory(argv[0], c);
        }
      }
    }
  }
  const std::string script = "/usr/bin/python3 " KILN_BENCH_DIR "/attention_bench.py";
  bench::Measures pytorch = bench::run_json(script + (quick ? " --quick" : "") + " 2>/dev/null");
  std::printf("attention, batch %lld, %lld heads, head dim %lld; median ms and peak MB "
              "(RSS high-water mark of a fresh process over its RSS before the run)\n",
              static_cast<long long>(kBatch), static_cast<long long>(kHeads),
              static_cast<long long>(kHeadDim));
  std::printf("%-8s %5s %-7s | %9s %9s %9s %9s | %7s %7s %7s %7s\n", "dtype", "L", "pass", "fused",
              "composite", "torch", "torch MHA", "fusedMB", "compMB", "torchMB", "mhaMB");
  for (const char* d : {"f32", "bf16"}) {
    for (int64_t length : lengths) {
      for (const char* pass : {"fwd", "fwdbwd"}) {
        const std::string tail = std::string(d) + "_L" + std::to_string(length) + "_" + pass;
        auto get = [](const bench::Measures& m, const std::string& k) {
          auto it = m.find(k);
          return it == m.end() ? 0.0 : it->second;
        };
        std::printf("%-8s %5lld %-7s | %9.2f %9.2f %9.2f %9.2f | %7.0f %7.0f %7.0f %7.0f\n", d,
                    static_cast<long long>(length), pass, get(mine, "fused_" + tail + "_ms"),
                    get(mine, "composite_" + tail + "_ms"), get(pytorch, "torch_" + tail + "_ms"),
                    get(pytorch, "mha_" + tail + "_ms"), get(mine, "fused_" + tail + "_mb"),
                    get(mine, "composite_" + tail + "_mb"), get(pytorch, "torch_" + tail + "_mb"),
                    get(pytorch, "mha_" + tail + "_mb"));
      }
    }
  }
  std::printf("{");
  bool first = true;
  for (const auto& [name, value] : mine) {
    std::printf("%s\"%s\": %.3f", first ? "" : ", ", name.c_str(), value);
    first = false;
  }
  std::printf("}\n");
  return 0;
}
