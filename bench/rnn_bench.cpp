// kiln-rnn-bench: kiln::nn::LSTM(512, 512, num_layers=2) on input [64, 32, 512] (seq, batch,
// features), float32: one training step (forward, mse_loss against a fixed target, backward,
// SGD) and inference (eval mode, no gradients), beside PyTorch's nn.LSTM run in the same
// invocation on the same thread count (bench/rnn_bench.py). Medians of several runs, in
// milliseconds; the ratio column is PyTorch's time over kiln's (above 1: kiln is faster).
//   build/bin/kiln-rnn-bench                      the table, then one JSON line
//   build/bin/kiln-rnn-bench --kiln [measure]     kiln's numbers only (or only `measure`, e.g.
//                                                 train_step_ms, to profile it), as JSON
#include "bench_common.hpp"

#include <kiln/kiln.h>
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

constexpr int64_t kSeq = 64, kBatch = 32, kHidden = 512, kLayers = 2;

// Every measure, or only `only` when it is not empty.
Measures measure(const std::string& only) {
  Measures m;
  manual_seed(0);
  nn::LSTM model(nn::LSTMOptions(kHidden, kHidden).num_layers(kLayers));
  optim::SGD opt(model->parameters(), optim::SGDOptions(0.01));
  Tensor x = randn({kSeq, kBatch, kHidden});
  Tensor target = randn({kSeq, kBatch, kHidden});
  auto step = [&] {
    opt.zero_grad();
    Tensor out = std::get<0>(model(x));
    Tensor loss = nn::functional::mse_loss(out, target);
    loss.backward();
    opt.step();
  };
  if (only.empty() || only == "train_step_ms") {
    m["train_step_ms"] = bench::median_seconds(step, 1, 5) * 1e3;
  }
  model->eval();
  auto infer = [&] {
    NoGradGuard no_grad;
    model(x);
  };
  if (only.empty() || only == "inference_ms") {
    m["inference_ms"] = bench::median_seconds(infer, 2, 5) * 1e3;
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
    Measures t = bench::run_json("/usr/bin/python3 " KILN_BENCH_DIR "/rnn_bench.py " +
                                 std::to_string(threads) + " 2>/dev/null");
    std::printf("LSTM 2x%lld, seq %lld, batch %lld, float32, %d threads, median ms\n",
                static_cast<long long>(kHidden), static_cast<long long>(kSeq),
                static_cast<long long>(kBatch), threads);
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
    if (t.empty()) std::printf("(PyTorch: /usr/bin/python3 with torch not available)\n");
    bench::print_json(results);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
