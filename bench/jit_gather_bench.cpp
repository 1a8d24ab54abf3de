// kiln-jit-gather-bench: the batch gather of the effective-PyTorch notes ("Optimizing runtime
// with TorchScript"): output[i] = input[i, index[i]] as a loop of small operators and
// vectorized (flat[indices + offset]), on a [32, 16, 4] float tensor and [32, 5] indices, no
// grad, in microseconds per call (medians of 15 runs): kiln eager, kiln traced (jit::trace,
// planned replay), beside PyTorch eager and torch.jit.script (bench/jit_gather_bench.py, run
// as a subprocess in the same invocation: the seed's "traced" is torch.jit.script). Prints a
// table, then one JSON line. `--kiln-only` skips PyTorch.
#include "bench_common.hpp"

#include <kiln/kiln.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

using kiln::Tensor;

Tensor batch_gather(const Tensor& tensor, const Tensor& indices) {
  std::vector<Tensor> output;
  for (int64_t i = 0; i < tensor.size(0); ++i) output.push_back(tensor[i][indices[i]]);
  return kiln::stack(output);
}

Tensor batch_gather_vec(const Tensor& tensor, const Tensor& indices) {
  int64_t b = tensor.size(0), n = tensor.size(1);
  Tensor flat_first = tensor.reshape({b * n, tensor.size(2)});
  Tensor offset = (kiln::arange(b) * n).reshape({b, 1});
  return flat_first[indices + offset];
}

bench::Measures measure_kiln() {
  bench::Measures m;
  kiln::manual_seed(0);
  Tensor x = kiln::randn({32, 16, 4});
  Tensor idx = kiln::randint(0, 16, {32, 5});
  auto traced =
      kiln::jit::trace([](const std::vector<Tensor>& in)
                           -> std::vector<Tensor> { return {batch_gather(in[0], in[1])}; },
                       {x, idx});
  kiln::autograd::NoGradGuard no_grad;
  Tensor other = kiln::randint(0, 16, {32, 5});  // other values: the graph must not freeze them
  traced({x, idx});
  if (!kiln::equal(traced({x, other})[0], batch_gather(x, other)) ||
      !kiln::equal(batch_gather_vec(x, idx), batch_gather(x, idx))) {
    std::fprintf(stderr, "kiln-jit-gather-bench: the variants disagree\n");
    std::exit(1);
  }
  m["loop_eager_us"] = bench::median_seconds([&] { batch_gather(x, idx); }, 200) * 1e6;
  m["loop_traced_us"] = bench::median_seconds([&] { traced({x, idx}); }, 200) * 1e6;
  m["vectorized_eager_us"] = bench::median_seconds([&] { batch_gather_vec(x, idx); }, 2000) * 1e6;
  kiln::jit::ReplayStats stats = traced.replay_stats();
  std::printf("traced graph: %zu nodes, %zu replayed from their kernels\n", stats.nodes,
              stats.fast_nodes);
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  bool kiln_only = argc > 1 && std::strcmp(argv[1], "--kiln-only") == 0;
  bench::Measures kiln_m = measure_kiln();
  bench::Measures torch_m;
  if (!kiln_only) {
    torch_m =
        bench::run_json("/usr/bin/python3 " KILN_BENCH_DIR "/jit_gather_bench.py 2>/dev/null");
  }
  std::printf("%-22s %12s %12s %10s\n", "microseconds", "kiln", "pytorch", "kiln/pt");
  std::vector<bench::Result> results;
  for (const char* key : {"loop_eager_us", "loop_traced_us", "vectorized_eager_us"}) {
    double k = kiln_m[key];
    auto t = torch_m.find(key);
    if (t == torch_m.end()) {
      std::printf("%-22s %12.1f %12s %10s\n", key, k, "-", "-");
    } else {
      std::printf("%-22s %12.1f %12.1f %10.2f\n", key, k, t->second, k / t->second);
      results.push_back({std::string("pytorch_") + key, t->second, "us"});
    }
    results.push_back({std::string("kiln_") + key, k, "us"});
  }
  std::printf("kiln loop: eager / traced %.2fx (the pytorch column's traced is torch.jit.script)\n",
              kiln_m["loop_eager_us"] / kiln_m["loop_traced_us"]);
  bench::print_json(results);
  return 0;
}
