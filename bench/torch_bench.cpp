// libtorch counterpart of kiln-bench: prints one JSON line with the same keys.
#include "bench_common.hpp"

#include <torch/torch.h>

int main() {
  torch::set_num_threads(2);
  std::vector<bench::Result> out;
  auto a1 = torch::rand({1}), b1 = torch::rand({1});
  out.push_back({"add_1elem_ns", bench::median_seconds([&] { auto c = a1 + b1; }, 20000) * 1e9,
                 "ns"});
  for (int64_t n : {256, 512, 1024, 2048}) {
    auto a = torch::rand({n, n}) + 0.5, b = torch::rand({n, n}) + 0.5;
    int inner = n >= 2048 ? 2 : (n >= 1024 ? 5 : 20);
    double s = bench::median_seconds([&] { auto c = torch::mm(a, b); }, inner, 7);
    out.push_back({"matmul_" + std::to_string(n) + "_gflops", 2.0 * n * n * n / s / 1e9,
                   "GFLOP/s"});
  }
  int64_t big = 16 << 20;
  auto x = torch::rand({big}), y = torch::rand({big});
  double add_s = bench::median_seconds([&] { auto c = x + y; }, 3, 9);
  out.push_back({"add_16M_gbs", 3.0 * big * 4 / add_s / 1e9, "GB/s"});
  auto m = torch::rand({4096, 4096});
  double sum_s = bench::median_seconds([&] { auto c = torch::sum(m, 0); }, 3, 9);
  out.push_back({"sum0_16M_gbs", 1.0 * big * 4 / sum_s / 1e9, "GB/s"});
  bench::print_json(out);
  return 0;
}
