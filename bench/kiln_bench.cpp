// kiln-bench: kiln against the hardware limit (memcpy, oneDNN called directly) and against
// PyTorch (libtorch and Python, run as subprocesses in the same invocation). Prints a table of
// medians with ratios, then one JSON line.
#include "bench_common.hpp"
#include "peak.hpp"

#include <kiln/kiln.h>

#ifdef KILN_BENCH_ONEDNN
#include <oneapi/dnnl/dnnl.hpp>
#endif

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

using Measures = bench::Measures;

Measures measure_kiln() {
  Measures m;
  kiln::Tensor a1 = kiln::rand({1}), b1 = kiln::rand({1});
  m["add_1elem_ns"] = bench::median_seconds([&] { kiln::Tensor c = a1 + b1; }, 20000) * 1e9;
  for (int64_t n : {256, 512, 1024, 2048}) {
    kiln::Tensor a = kiln::rand({n, n}) + 0.5, b = kiln::rand({n, n}) + 0.5;
    int inner = n >= 2048 ? 2 : (n >= 1024 ? 5 : 20);
    double s = bench::median_seconds([&] { kiln::Tensor c = kiln::mm(a, b); }, inner, 7);
    m["matmul_" + std::to_string(n) + "_gflops"] = 2.0 * n * n * n / s / 1e9;
  }
  int64_t big = 16 << 20;
  kiln::Tensor x = kiln::rand({big}), y = kiln::rand({big});
  m["add_16M_gbs"] = 3.0 * big * 4 / bench::median_seconds([&] { kiln::Tensor c = x + y; }, 3, 9) /
                     1e9;
  // pointwise functors (kiln/sdk/pointwise.hpp) over 1M elements: libm, a NaN-aware select, a
  // comparison, where, clamp and an integer floor division with its zero-divisor check
  const int64_t mid = 1 << 20;
  kiln::Tensor p = kiln::rand({mid}) - 0.5, q = kiln::rand({mid}) - 0.5;
  kiln::Tensor i = (p * 1000).to(kiln::kInt), j = (q * 10).to(kiln::kInt) + 20;
  kiln::Tensor cond = p > q;
  auto us = [](const auto& f) { return bench::median_seconds(f, 5, 9) * 1e6; };
  m["exp_1M_us"] = us([&] { kiln::Tensor c = kiln::exp(p); });
  m["maximum_1M_us"] = us([&] { kiln::Tensor c = kiln::maximum(p, q); });
  m["gt_1M_us"] = us([&] { kiln::Tensor c = kiln::gt(p, q); });
  m["where_1M_us"] = us([&] { kiln::Tensor c = kiln::where(cond, p, q); });
  m["clamp_1M_us"] = us([&] { kiln::Tensor c = kiln::clamp(p, -0.25, 0.25); });
  m["floor_divide_i32_1M_us"] = us([&] { kiln::Tensor c = kiln::floor_divide(i, j); });
  kiln::Tensor mat = kiln::rand({4096, 4096});
  m["sum0_16M_gbs"] = 1.0 * big * 4 /
                      bench::median_seconds([&] { kiln::Tensor c = kiln::sum(mat, 0); }, 3, 9) /
                      1e9;
  return m;
}

// memcpy's GB/s (64 MB read, 64 MB written), the yardstick of the column sum, on as many
// threads as kiln uses (one slice each), since one core alone does not saturate memory.
double memcpy_gbs() {
  size_t bytes = size_t{16} << 22;
  std::unique_ptr<char[]> src(new char[bytes]), dst(new char[bytes]);
  std::memset(src.get(), 1, bytes);
  std::memset(dst.get(), 2, bytes);
  size_t threads = std::max(1u, std::thread::hardware_concurrency());
  size_t slice = bytes / threads;
  auto copy = [&] {
    std::vector<std::thread> pool;
    for (size_t t = 1; t < threads; ++t)
      pool.emplace_back([&, t] {
        std::memcpy(dst.get() + t * slice, src.get() + t * slice, slice);
      });
    std::memcpy(dst.get(), src.get(), slice);
    for (auto& th : pool) th.join();
  };
  double s = bench::median_seconds(copy, 3, 9);
  return 2.0 * static_cast<double>(slice * threads) / s / 1e9;
}

#ifdef KILN_BENCH_ONEDNN
double onednn_gflops(int64_t n) {
  using namespace dnnl;
  engine eng(engine::kind::cpu, 0);
  stream strm(eng);
  memory::desc md({n, n}, memory::data_type::f32, memory::format_tag::ab);
  memory a(md, eng), b(md, eng), c(md, eng);
  for (memory* mem : {&a, &b}) {
    auto* p = static_cast<float*>(mem->get_data_handle());
    for (int64_t i = 0; i < n * n; ++i) p[i] = 0.5f + static_cast<float>(i % 7) * 0.1f;
  }
  matmul::primitive_desc pd(matmul::desc(md, md, md), eng);
  matmul prim(pd);
  int inner = n >= 2048 ? 2 : (n >= 1024 ? 5 : 20);
  double s = bench::median_seconds(
      [&] {
        prim.execute(strm, {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, c}});
        strm.wait();
      },
      inner, 7);
  return 2.0 * n * n * n / s / 1e9;
}
#endif

std::string cell(const Measures& m, const std::string& key) {
  auto it = m.find(key);
  if (it == m.end()) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", it->second);
  return buf;
}

std::string ratio(const Measures& a, const Measures& b, const std::string& key, bool lower_better) {
  auto x = a.find(key), y = b.find(key);
  if (x == a.end() || y == b.end() || x->second == 0 || y->second == 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2fx",
                lower_better ? y->second / x->second : x->second / y->second);
  return buf;
}

}  // namespace

int main() {
  Measures kiln_m = measure_kiln();
  Measures limit;
  limit["add_16M_gbs"] =
      bench::stream_add_gbs(static_cast<int>(std::max(1u, std::thread::hardware_concurrency())),
                            size_t{16} << 20);
  limit["sum0_16M_gbs"] = memcpy_gbs();
#ifdef KILN_BENCH_ONEDNN
  for (int64_t n : {256, 512, 1024, 2048}) {
    limit["matmul_" + std::to_string(n) + "_gflops"] = onednn_gflops(n);
  }
#endif
  std::string bin = KILN_BENCH_BIN_DIR;
  // KILN_BENCH_KILN_ONLY=1: no PyTorch runs (minutes on a loaded machine), for before/after runs
  const bool kiln_only = std::getenv("KILN_BENCH_KILN_ONLY") != nullptr;
  Measures libtorch, pytorch;
  if (!kiln_only) {
    libtorch = bench::run_json("test -x " + bin + "/kiln-bench-torch && " + bin +
                               "/kiln-bench-torch 2>/dev/null");
    pytorch = bench::run_json("/usr/bin/python3 " KILN_BENCH_DIR "/torch_bench.py 2>/dev/null");
  }

  std::printf("%-22s %10s %12s %10s %10s %10s %12s %10s\n", "measure", "kiln", "limit", "kiln/lim",
              "libtorch", "vs libt.", "pytorch", "vs pyt.");
  const char* keys[] = {
      "add_1elem_ns",          "matmul_256_gflops", "matmul_512_gflops", "matmul_1024_gflops",
      "matmul_2048_gflops",    "add_16M_gbs",       "sum0_16M_gbs",      "exp_1M_us",
      "maximum_1M_us",         "gt_1M_us",          "where_1M_us",       "clamp_1M_us",
      "floor_divide_i32_1M_us"};
  for (const char* key : keys) {
    bool lower_better = std::strstr(key, "_ns") != nullptr || std::strstr(key, "_us") != nullptr;
    std::printf("%-22s %10s %12s %10s %10s %10s %12s %10s\n", key, cell(kiln_m, key).c_str(),
                cell(limit, key).c_str(), ratio(kiln_m, limit, key, lower_better).c_str(),
                cell(libtorch, key).c_str(), ratio(kiln_m, libtorch, key, lower_better).c_str(),
                cell(pytorch, key).c_str(), ratio(kiln_m, pytorch, key, lower_better).c_str());
  }
  std::printf("(limit: STREAM add with non-temporal stores for add, memcpy for sum, oneDNN "
              "called directly for matmul; ratios > 1 favour kiln; medians)\n");
  // the arithmetic limit itself: AVX-512 multiply-adds on every thread, no memory traffic
  int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  double fma_peak = bench::f32_fma_peak_gflops(threads);
  if (fma_peak > 0) {
    limit["fma_peak_gflops"] = fma_peak;
    std::printf("float32 FMA limit of this CPU: %.1f GFLOP/s on %d threads; kiln matmul 2048 "
                "reaches %.0f%% of it\n",
                fma_peak, threads, 100.0 * kiln_m["matmul_2048_gflops"] / fma_peak);
  }
  std::vector<bench::Result> all;
  for (auto& [k, v] : kiln_m) all.push_back({"kiln." + k, v, ""});
  for (auto& [k, v] : limit) all.push_back({"limit." + k, v, ""});
  for (auto& [k, v] : libtorch) all.push_back({"libtorch." + k, v, ""});
  for (auto& [k, v] : pytorch) all.push_back({"pytorch." + k, v, ""});
  bench::print_json(all);
  return 0;
}
