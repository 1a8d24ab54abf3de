// kiln-sort-bench: sort of [1024, 1024] float32 along the last dim, topk k=5 of [64, 50000]
// float32, argsort, cumsum along the last dim, and einsum's batched matmul and bilinear forms, in
// median milliseconds, beside PyTorch run in the same invocation (bench/sort_bench.py, 2 threads).
//   build/bin/kiln-sort-bench
#include "bench_common.hpp"

#include <kiln/kiln.h>

#include <cstdio>
#include <functional>
#include <string>
#include <utility>
#include <vector>

int main() {
  kiln::manual_seed(0);
  kiln::NoGradGuard no_grad;
  kiln::Tensor square = kiln::randn({1024, 1024});
  kiln::Tensor wide = kiln::randn({64, 50000});
  kiln::Tensor ints = kiln::randint(0, 1000, {1024, 1024});
  kiln::Tensor a = kiln::randn({32, 64, 128}), b = kiln::randn({32, 128, 64});
  kiln::Tensor x1 = kiln::randn({64, 256}), w = kiln::randn({32, 256, 128}),
               x2 = kiln::randn({64, 128});
  std::vector<std::pair<std::string, std::function<void()>>> ops = {
      {"sort_1024x1024", [&] { kiln::sort(square, -1); }},
      {"sort_desc_1024x1024", [&] { kiln::sort(square, -1, true); }},
      {"sort_dim0_1024x1024", [&] { kiln::sort(square, 0); }},
      {"sort_int64_1024x1024", [&] { kiln::sort(ints, -1); }},
      {"argsort_1024x1024", [&] { kiln::argsort(square, int64_t{-1}); }},
      {"topk5_64x50000", [&] { kiln::topk(wide, 5); }},
      {"topk500_64x50000", [&] { kiln::topk(wide, 500); }},
      {"cumsum_1024x1024", [&] { kiln::cumsum(square, -1); }},
      {"einsum_bmm",
       [&] {
         kiln::einsum("bij,bjk->bik", {a, b});
       }},
      {"einsum_bilinear",
       [&] {
         kiln::einsum("bn,anm,bm->ba", {x1, w, x2});
       }},
  };
  bench::Measures mine;
  for (const auto& [name, op] : ops) mine[name + "_ms"] = bench::median_seconds(op, 3, 9) * 1e3;
  bench::Measures pytorch =
      bench::run_json("/usr/bin/python3 " KILN_BENCH_DIR "/sort_bench.py 2>/dev/null");
  std::printf("float32 unless named, median ms (lower is better)\n");
  std::printf("%-28s %10s %10s %12s\n", "measure", "kiln", "pytorch", "kiln/pyt.");
  for (const auto& [key, value] : mine) {
    auto it = pytorch.find(key);
    double theirs = it == pytorch.end() ? 0 : it->second;
    std::printf("%-28s %10.3f %10.3f %11.2fx\n", key.c_str(), value, theirs,
                theirs > 0 ? value / theirs : 0.0);
  }
  return 0;
}
