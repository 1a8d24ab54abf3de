// kiln-resnet-bench: ResNet-18 (kiln::models::resnet18, 1000 classes) on a batch of 32 images
// 3x112x112: one training step (forward, cross_entropy, backward, SGD with momentum 0.9) and
// inference (eval mode, no gradients), in float32 and under autocast (bfloat16 on the CPU),
// beside PyTorch's torchvision resnet18 run in the same invocation on the same thread count
// (bench/resnet_bench.py). Medians of several runs, in milliseconds; the ratio column is
// PyTorch's time over kiln's (above 1: kiln is faster).
//   build/bin/kiln-resnet-bench           the table, then one JSON line
//   build/bin/kiln-resnet-bench --rounds N  kiln and PyTorch alternating measure by measure, N
//                                           times (medians, and the median of the ratios)
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
#include <map>
#include <string>
#include <thread>
#include <vector>

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

// The median of v (the upper one of an even count).
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main(int argc, char** argv) {
  try {
    bool kiln_only = argc > 1 && std::strcmp(argv[1], "--kiln") == 0;
    if (kiln_only) {
      Measures k = measure(argc > 2 ? argv[2] : "");
      std::vector<bench::Result> results;
      for (const auto& [key, value] : k) results.push_back({key, value, "ms"});
      bench::print_json(results);
      return 0;
    }
    // --rounds N: kiln and PyTorch alternate, N times per measure, so that a change in the
    // machine's load (other processes on a shared machine) falls on both; the ratio is the
    // median of the rounds' ratios
    int rounds = 1;
    if (argc > 2 && std::strcmp(argv[1], "--rounds") == 0) rounds = std::max(1, std::atoi(argv[2]));
    int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    std::map<std::string, std::vector<double>> kiln_ms, torch_ms, ratio;
    // with several rounds, each measure runs in kiln and at once in PyTorch (a few seconds
    // apart), so that both see much the same load
    const std::vector<std::string> each =
        rounds > 1 ? std::vector<std::string>{"inference_amp_ms", "inference_fp32_ms",
                                              "train_step_amp_ms", "train_step_fp32_ms"}
                   : std::vector<std::string>{""};
    for (int r = 0; r < rounds; ++r) {
      for (const std::string& only : each) {
        Measures k = measure(only);
        Measures t = bench::run_json("/usr/bin/python3 " KILN_BENCH_DIR "/resnet_bench.py " +
                                     std::to_string(threads) + " " + only + " 2>/dev/null");
        for (const auto& [key, value] : k) {
          kiln_ms[key].push_back(value);
          auto it = t.find(key);
          if (it == t.end()) continue;
          torch_ms[key].push_back(it->second);
          ratio[key].push_back(it->second / value);
        }
      }
    }
    std::printf("ResNet-18, batch %lld, 3x%lldx%lld, %d threads, median ms of %d round(s)\n",
                static_cast<long long>(kBatch), static_cast<long long>(kSize),
                static_cast<long long>(kSize), threads, rounds);
    std::printf("%-22s %10s %10s %16s\n", "measure", "kiln", "pytorch", "pytorch/kiln");
    std::vector<bench::Result> results;
    for (const auto& [key, values] : kiln_ms) {
      const double value = median(values);
      results.push_back({"kiln_" + key, value, "ms"});
      if (torch_ms[key].empty()) {
        std::printf("%-22s %10.1f %10s %16s\n", key.c_str(), value, "-", "-");
        continue;
      }
      const double torch = median(torch_ms[key]);
      std::printf("%-22s %10.1f %10.1f %15.2fx\n", key.c_str(), value, torch, median(ratio[key]));
      results.push_back({"pytorch_" + key, torch, "ms"});
      results.push_back({"ratio_" + key, median(ratio[key]), "x"});
    }
    if (torch_ms.empty())
      std::printf("(PyTorch: /usr/bin/python3 with torchvision not available)\n");
    bench::print_json(results);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
