// kiln-gpt-bench: the training step of a GPT (kiln::models::GPT) in nanoGPT's shakespeare-char
// configuration (6 layers, 6 heads, 384 wide, block 256, vocabulary 65, dropout 0.2, bias
// false) at batch 8: forward with targets, backward, AdamW from configure_optimizers; in float32
// and under autocast (bfloat16 on the CPU), beside nanoGPT's model in PyTorch run in the same
// invocation on the same thread count (bench/gpt_bench.py). Medians of several steps, in
// milliseconds, and training tokens per second; the ratio column is PyTorch's time over kiln's
// (above 1: kiln is faster). Debian's python3-torch multiplies float32 matrices with the generic
// BLAS (torch.__config__.show(): BLAS_INFO=generic), some 20x slower than oneDNN here, so its
// float32 column measures that; under autocast both run oneDNN's bfloat16 matmul.
//   build/bin/kiln-gpt-bench               the table, then one JSON line
//   build/bin/kiln-gpt-bench --small       2 layers, 128 wide, block 64 (a quick look)
//   build/bin/kiln-gpt-bench --kiln [measure]   kiln's numbers only (or only `measure`, e.g.
//                                               train_step_amp_ms, to profile it), as JSON
#include "bench_common.hpp"

#include <kiln/amp.h>
#include <kiln/kiln.h>
#include <kiln/models.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

namespace {

using namespace kiln;
using Measures = bench::Measures;

struct Shape {
  int64_t layers = 6, heads = 6, embd = 384, block = 256, batch = 8;
  int runs = 5;
};

// Every measure, or only `only` when it is not empty.
Measures measure(const Shape& s, const std::string& only) {
  Measures m;
  manual_seed(0);
  models::GPT model(models::GPTConfig()
                        .n_layer(s.layers)
                        .n_head(s.heads)
                        .n_embd(s.embd)
                        .block_size(s.block)
                        .vocab_size(65)
                        .dropout(0.2)
                        .bias(false));
  model->train();
  auto opt = model->configure_optimizers(0.1, 1e-3, {0.9, 0.99});
  Tensor x = randint(0, 65, {s.batch, s.block});
  Tensor y = randint(0, 65, {s.batch, s.block});
  for (bool mixed : {false, true}) {
    std::string key = mixed ? "train_step_amp_ms" : "train_step_fp32_ms";
    auto step = [&] {
      Tensor loss;
      {
        amp::autocast region(kCPU, std::nullopt, mixed);
        loss = std::get<1>(model(x, y));
      }
      opt->zero_grad();
      loss.backward();
      opt->step();
    };
    if (only.empty() || only == key) m[key] = bench::median_seconds(step, 1, s.runs) * 1e3;
  }
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    Shape s;
    bool kiln_only = false;
    std::string only;
    for (int i = 1; i < argc; ++i) {
      if (std::strcmp(argv[i], "--small") == 0) {
        s.layers = 2, s.heads = 4, s.embd = 128, s.block = 64, s.runs = 9;
      } else if (std::strcmp(argv[i], "--kiln") == 0) {
        kiln_only = true;
        if (i + 1 < argc && argv[i + 1][0] != '-') only = argv[++i];
      } else {
        std::fprintf(stderr, "kiln-gpt-bench: unknown option '%s' (--small, --kiln [measure])\n",
                     argv[i]);
        return 2;
      }
    }
    Measures k = measure(s, only);
    if (kiln_only) {
      std::vector<bench::Result> results;
      for (const auto& [key, value] : k) results.push_back({key, value, "ms"});
      bench::print_json(results);
      return 0;
    }
    int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    std::string args = std::to_string(threads);
    for (int64_t v : {s.layers, s.heads, s.embd, s.block, s.batch, int64_t{s.runs}}) {
      args += " " + std::to_string(v);
    }
    Measures t = bench::run_json("/usr/bin/python3 " KILN_BENCH_DIR "/gpt_bench.py " + args +
                                 " 2>/dev/null");
    const double tokens = static_cast<double>(s.batch * s.block);
    std::printf("GPT training step: %lld layers, %lld heads, %lld wide, block %lld, batch %lld, "
                "%d threads, median of %d\n",
                static_cast<long long>(s.layers), static_cast<long long>(s.heads),
                static_cast<long long>(s.embd), static_cast<long long>(s.block),
                static_cast<long long>(s.batch), threads, s.runs);
    std::printf("%-20s %10s %10s %12s %12s %14s\n", "measure", "kiln ms", "pytorch ms",
                "kiln tok/s", "pytorch tok/s", "pytorch/kiln");
    std::vector<bench::Result> results;
    for (const auto& [key, value] : k) {
      results.push_back({"kiln_" + key, value, "ms"});
      auto it = t.find(key);
      if (it == t.end()) {
        std::printf("%-20s %10.1f %10s %12.0f %12s %14s\n", key.c_str(), value, "-",
                    tokens * 1e3 / value, "-", "-");
        continue;
      }
      std::printf("%-20s %10.1f %10.1f %12.0f %12.0f %13.2fx\n", key.c_str(), value, it->second,
                  tokens * 1e3 / value, tokens * 1e3 / it->second, it->second / value);
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
