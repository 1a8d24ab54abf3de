// kiln-resnet-bench: ResNet-18 (kiln::models::resnet18, 1000 classes) on a batch of 32 images
// 3x112x112: one training step (forward, cross_entropy, backward, SGD with momentum 0.9) and
// inference (eval mode, no gradients), in float32 and under autocast (bfloat16 on the CPU),
// beside PyTorch's torchvision resnet18 run in the same invocation on the same thread count
// (bench/resnet_bench.py). Medians of several runs, in milliseconds; the ratio column is
// PyTorch's time over kiln's (above 1: kiln is faster).
//   build/bin/kiln-resnet-bench           the table, then one JSON line
//   build/bin/kiln-resnet-bench --kiln [measure]   kiln's numbers only (or only `measure`, e.g.
//                                                  train_step_amp_ms, to profile it), as JSON
#include "bench_common.hpp"

#include <kiln/amp.h>
#include <kiln/kiln.h>
#include <kiln/models.h>
#include <kiln/nn.h>
#include <kiln/optim.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

namespace {

using namespace kiln;
using Measures = bench::Measures;

constexpr int64_t kBatch = 32, kSize = 112;

// Every measure, or only `only` when it is not empty.
Measures measure(const std::string& only) {
  Measures m;
  manual_seed(0);
  models::ResNet model = models::resnet18();
  optim::SGD opt(model->parameters(), optim::SGDOptions(0.01).momentum(0.9));
  Tensor x = randn({kBatch, 3, kSize, kSize});
  Tensor y = randint(0, 1000, {kBatch});
  for (bool mixed : {false, true}) {
    std::string mode = mixed ? "_amp_ms" : "_fp32_ms";
    model->train();
    auto step = [&] {
      opt.zero_grad();
      Tensor loss;
      {
        amp::autocast region(kCPU, std::nullopt, mixed);
        loss = nn::functional::cross_entropy(model(x), y);
      }
      loss.backward();
      opt.step();
    };
    if (only.empty() || only == "train_step" + mode) {
      m["train_step" + mode] = bench::median_seconds(step, 1, 5) * 1e3;
    }
    model->eval();
    auto infer = [&] {
      NoGradGuard no_grad;
      amp::autocast region(kCPU, std::nullopt, mixed);
      model(x);
    };
    if (only.empty() || only == "inference" + mode) {
      m["inference" + mode] = bench::median_seconds(infer, 2, 5) * 1e3;
    }
  }
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    bool kiln_only = argc > 1 && std::strcmp(argv[1], "--kiln") == 0;
    Measures k = measure(kiln_only && argc > 2 ? argv[2] : "");
    if (kiln_only) {
      std::vector<bench::Result> results;
      for (const auto& [key, value] : k) results.push_back({key, value, "ms"});
      bench::print_json(results);
      return 0;
    }
    int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    Measures t = bench::run_json("/usr/bin/python3 " KILN_BENCH_DIR "/resnet_bench.py " +
                                 std::to_string(threads) + " 2>/dev/null");
    std::printf("ResNet-18, batch %lld, 3x%lldx%lld, %d threads, median ms\n",
                static_cast<long long>(kBatch), static_cast<long long>(kSize),
                static_cast<long long>(kSize), threads);
    std::printf("%-22s %10s %10s %16s\n", "measure", "kiln", "pytorch", "pytorch/kiln");
    std::vector<bench::Result> results;
    for (const auto& [key, value] : k) {
      results.push_back({"kiln_" + key, value, "ms"});
      auto it = t.find(key);
      if (it == t.end()) {
        std::printf("%-22s %10.1f %10s %16s\n", key.c_str(), value, "-", "-");
        continue;
      }
      std::printf("%-22s %10.1f %10.1f %15.2fx\n", key.c_str(), value, it->second,
                  it->second / value);
      results.push_back({"pytorch_" + key, it->second, "ms"});
    }
    if (t.empty()) std::printf("(PyTorch: /usr/bin/python3 with torchvision not available)\n");
    bench::print_json(results);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
