// kiln-amp-bench: mixed precision on the CPU beside PyTorch (bench/amp_bench.py, run as a
// subprocess afterwards in the same invocation, with the same thread count):
//   - bfloat16 matmul 1024 and 2048 under autocast (GFLOP/s), the weight a parameter inside one
//     region (the cast is cached in both frameworks) and a plain weight (cast on every call), and
//     the product of operands already in bfloat16 (oneDNN's kernel alone), and the hardware
//     limit: AVX512-BF16 dot products on every thread with no memory traffic (bench/peak.hpp);
//   - one SGD step of an MLP 784-512-512-10, batch 128, under autocast + GradScaler and in float32;
//   - one Adam step of "Effective PyTorch"'s checkerboard network at 128x128 and 256x256,
//     float32 and autocast + GradScaler (ms).
// Prints a table with ratios (higher is better for kiln in the last column), then one JSON line.
//   kiln-amp-bench [--quick]   (--quick: skips the 256x256 checkerboard)
#include "bench_common.hpp"
#include "peak.hpp"

#include <kiln/amp.h>
#include <kiln/kiln.h>
#include <kiln/nn.h>
#include <kiln/optim.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <thread>

namespace {

using Measures = bench::Measures;
using namespace kiln;

void matmul(Measures& m) {
  for (int64_t n : {1024, 2048}) {
    manual_seed(0);
    Tensor a = rand({n, n}) - 0.5;
    Tensor w = (rand({n, n}) - 0.5).requires_grad_();
    int inner = n == 1024 ? 20 : 4;
    double flop = 2.0 * static_cast<double>(n * n * n);
    {
      amp::autocast region(kCPU);
      NoGradGuard no_grad;
      double t = bench::median_seconds([&] { mm(a, w); }, inner, 11);
      m["matmul_bf16_" + std::to_string(n) + "_gflops"] = flop / t / 1e9;
    }
    {
      Tensor plain = w.detach();
      amp::autocast region(kCPU);
      double t = bench::median_seconds([&] { mm(a, plain); }, inner, 11);
      m["matmul_bf16_" + std::to_string(n) + "_plain_gflops"] = flop / t / 1e9;
    }
    // the limit: the same product on operands already in bfloat16 (oneDNN's kernel, no cast)
    Tensor ab = a.to(kBFloat16), wb = w.detach().to(kBFloat16);
    double t = bench::median_seconds([&] { mm(ab, wb); }, inner, 11);
    m["matmul_bf16_" + std::to_string(n) + "_kernel_gflops"] = flop / t / 1e9;
  }
}

void mlp(Measures& m) {
  manual_seed(0);
  nn::Sequential model(nn::Linear(784, 512), nn::ReLU(), nn::Linear(512, 512), nn::ReLU(),
                       nn::Linear(512, 10));
  optim::SGD opt(model->parameters(), optim::SGDOptions(0.01));
  Tensor x = rand({128, 784});
  Tensor y = randint(0, 10, {128});
  amp::GradScaler scaler;
  auto amp_step = [&] {
    opt.zero_grad();
    Tensor loss;
    {
      amp::autocast region(kCPU);
      loss = nn::functional::cross_entropy(model->forward(x), y);
    }
    scaler.scale(loss).backward();
    scaler.step(opt);
    scaler.update();
  };
  auto fp32_step = [&] {
    opt.zero_grad();
    Tensor loss = nn::functional::cross_entropy(model->forward(x), y);
    loss.backward();
    opt.step();
  };
  m["mlp_amp_steps_per_s"] = 1.0 / bench::median_seconds(amp_step, 50, 7);
  m["mlp_fp32_steps_per_s"] = 1.0 / bench::median_seconds(fp32_step, 50, 7);
}

Tensor grid(int64_t n) {
  Tensor h = arange(n).unsqueeze(0).repeat({n, 1}).div(static_cast<double>(n));
  Tensor v = arange(n).unsqueeze(1).repeat({1, n}).div(static_cast<double>(n));
  return stack({h, v}, 0);
}

Tensor checker(int64_t n, double freq) {
  Tensor h = arange(n).reshape({1, n}).mul(freq / static_cast<double>(n) / 2.0);
  Tensor v = arange(n).reshape({n, 1}).mul(freq / static_cast<double>(n) / 2.0);
  return logical_xor(gt(fmod(h, 1.0), 0.5), gt(fmod(v, 1.0), 0.5)).to(kFloat);
}

void checkerboard(Measures& m, bool quick) {
  for (int64_t n : {128, 256}) {
    if (quick && n == 256) continue;
    Tensor inputs = grid(n).unsqueeze(0);
    Tensor targets = checker(n, 8).unsqueeze(0).unsqueeze(1);
    for (bool mixed : {false, true}) {
      manual_seed(0);
      nn::Sequential net;
      for (auto [cin, cout] : {std::pair<int64_t, int64_t>{2, 256}, {256, 256}, {256, 256}}) {
        net->push_back(nn::Conv2d(nn::Conv2dOptions(cin, cout, 1)));
        net->push_back(nn::BatchNorm2d(cout));
        net->push_back(nn::ReLU());
      }
      net->push_back(nn::Conv2d(nn::Conv2dOptions(256, 1, 1)));
      optim::Adam opt(net->parameters(), optim::AdamOptions(0.001));
      amp::GradScaler scaler(amp::GradScalerOptions().set_enabled(mixed));
      auto step = [&] {
        opt.zero_grad();
        Tensor loss;
        {
          amp::autocast region(kCPU, std::nullopt, mixed);
          loss = nn::functional::mse_loss(net->forward(inputs), targets);
        }
        scaler.scale(loss).backward();
        scaler.step(opt);
        scaler.update();
      };
      std::string key = "checkerboard_" + std::to_string(n) + (mixed ? "_amp_ms" : "_fp32_ms");
      m[key] = bench::median_seconds(step, n == 128 ? 5 : 2, 5) * 1e3;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  Measures k;
  // the hardware limit, probed before and after the work (the larger: a busy neighbour on a
  // shared host lowers one probe, never raises it)
  int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  double peak = bench::bf16_dot_peak_gflops(threads);
  try {
    matmul(k);
    mlp(k);
    checkerboard(k, quick);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  peak = std::max(peak, bench::bf16_dot_peak_gflops(threads));
  Measures t = bench::run_json("/usr/bin/python3 " KILN_BENCH_DIR "/amp_bench.py " +
                               std::to_string(threads) + " 2>/dev/null");
  std::printf("%-34s %12s %12s %14s\n", "measure", "kiln", "pytorch", "kiln advantage");
  std::vector<bench::Result> results;
  for (const auto& [key, value] : k) {
    auto it = t.find(key);
    bool lower_is_better = key.size() > 3 && key.compare(key.size() - 3, 3, "_ms") == 0;
    if (it == t.end()) {
      std::printf("%-34s %12.2f %12s %14s\n", key.c_str(), value, "-", "-");
    } else {
      double advantage = lower_is_better ? it->second / value : value / it->second;
      std::printf("%-34s %12.2f %12.2f %13.2fx\n", key.c_str(), value, it->second, advantage);
      results.push_back({"pytorch_" + key, it->second, ""});
    }
    results.push_back({"kiln_" + key, value, ""});
  }
  if (t.empty()) std::printf("(PyTorch: /usr/bin/python3 with torch not available)\n");
  // the yardsticks: autocast against the bfloat16 kernel itself, and the checkerboard
  // under autocast against PyTorch's float32 step
  std::printf("\n%-40s %8s\n", "ratio", "value");
  for (int64_t n : {1024, 2048}) {
    std::string key = "matmul_bf16_" + std::to_string(n);
    double ratio = k[key + "_gflops"] / k[key + "_kernel_gflops"];
    std::printf("%-40s %7.2fx\n", (key + " autocast/kernel").c_str(), ratio);
    results.push_back({key + "_autocast_over_kernel", ratio, ""});
    if (peak <= 0) continue;
    std::printf("%-40s %7.2fx\n", (key + " autocast/hardware").c_str(), k[key + "_gflops"] / peak);
    results.push_back({key + "_autocast_over_hardware", k[key + "_gflops"] / peak, ""});
    auto torch = t.find(key + "_gflops");
    if (torch == t.end()) continue;
    std::printf("%-40s %7.2fx\n", (key + " pytorch/hardware").c_str(), torch->second / peak);
    results.push_back({key + "_pytorch_over_hardware", torch->second / peak, ""});
  }
  if (peak > 0) {
    std::printf("%-40s %8.1f\n", "bf16 dot limit GFLOP/s (AVX512-BF16)", peak);
    results.push_back({"bf16_dot_peak_gflops", peak, ""});
    if (bench::bf16_amx_present())
      std::printf("(this CPU has AMX: oneDNN's tiles go beyond the AVX512-BF16 limit above)\n");
  }
  for (int64_t n : {128, 256}) {
    std::string key = "checkerboard_" + std::to_string(n);
    auto fp32 = t.find(key + "_fp32_ms");
    if (fp32 == t.end() || k.count(key + "_amp_ms") == 0) continue;
    double ratio = fp32->second / k[key + "_amp_ms"];
    std::printf("%-40s %7.2fx\n", (key + " pytorch fp32/kiln amp").c_str(), ratio);
    results.push_back({key + "_pytorch_fp32_over_kiln_amp", ratio, ""});
  }
  bench::print_json(results);
  return 0;
}
