// kiln-profiler-bench: the cost of the Observe layer (kiln/dispatch.h) on a 1-element add, in
// nanoseconds per call: no profile (the layer off), under a Profile (shapes and memory recorded,
// then neither), and the same in PyTorch (bench/profiler_bench.py, run as a subprocess in the
// same invocation: torch.profiler.profile with record_shapes and profile_memory, then without).
// Also a chain of 8 pointwise operators on 16 floats, eager against jit::trace's replay, in
// nanoseconds per operator. Prints a table with ratios, then one JSON line.
#include "bench_common.hpp"

#include <kiln/kiln.h>

#include <cstdio>
#include <string>
#include <vector>

namespace {

using Measures = bench::Measures;

Measures measure_kiln() {
  Measures m;
  kiln::Tensor a = kiln::rand({1}), b = kiln::rand({1});
  auto add = [&] { kiln::Tensor c = a + b; };
  m["add_off_ns"] = bench::median_seconds(add, 20000) * 1e9;
  {
    kiln::profiler::Profile prof;
    m["add_profiled_ns"] = bench::median_seconds(add, 20000, 5) * 1e9;
  }
  {
    kiln::profiler::ProfileOptions bare;
    bare.record_shapes = false;
    bare.profile_memory = false;
    kiln::profiler::Profile prof(bare);
    m["add_profiled_bare_ns"] = bench::median_seconds(add, 20000, 5) * 1e9;
  }
  m["add_after_ns"] = bench::median_seconds(add, 20000) * 1e9;

  auto chain = [](const kiln::Tensor& x) {
    kiln::Tensor y = x * 1.5;
    y = y + 0.25;
    y = kiln::sin(y);
    y = y * y;
    y = y - x;
    y = kiln::exp(y);
    y = kiln::relu(y);
    return y / 3.0;
  };
  kiln::Tensor x = kiln::rand({16});
  auto traced = kiln::jit::trace(chain, x);
  kiln::autograd::NoGradGuard no_grad;
  m["chain8_eager_ns_per_op"] = bench::median_seconds([&] { chain(x); }, 5000) * 1e9 / 8;
  m["chain8_traced_ns_per_op"] = bench::median_seconds([&] { traced.forward(x); }, 5000) * 1e9 / 8;
  return m;
}

}  // namespace

int main() {
  Measures kiln_m = measure_kiln();
  Measures torch_m =
      bench::run_json("/usr/bin/python3 " KILN_BENCH_DIR "/profiler_bench.py 2>/dev/null");
  std::printf("%-26s %12s %12s %10s\n", "nanoseconds", "kiln", "pytorch", "kiln/pt");
  std::vector<bench::Result> results;
  for (const char* key : {"add_off_ns", "add_profiled_ns", "add_profiled_bare_ns", "add_after_ns",
                          "chain8_eager_ns_per_op", "chain8_traced_ns_per_op"}) {
    double k = kiln_m[key];
    auto t = torch_m.find(key);
    if (t == torch_m.end()) {
      std::printf("%-26s %12.1f %12s %10s\n", key, k, "-", "-");
    } else {
      std::printf("%-26s %12.1f %12.1f %10.2f\n", key, k, t->second, k / t->second);
      results.push_back({std::string("pytorch_") + key, t->second, "ns"});
    }
    results.push_back({std::string("kiln_") + key, k, "ns"});
  }
  if (torch_m.empty()) std::printf("(PyTorch: /usr/bin/python3 with torch not available)\n");
  bench::print_json(results);
  return 0;
}
