// kiln-fused-bench: pointwise fusion (kiln::jit::fuse_pointwise) against eager, PyTorch eager and
// torch.jit.script (bench/fused_pointwise_bench.py, run in the same invocation), and against the
// STREAM limit measured in the same run.
//
// 1. A chain of 8 pointwise operators on 16M floats (two inputs): eager kiln writes and reads an
//    intermediate per operator; the fused program reads x and y once and writes the result once,
//    12 bytes per element. The STREAM limit is those bytes at the copy bandwidth measured here
//    (a copy of 16M floats moves 8 bytes per element).
// 2. The checkerboard net's forward (examples/checkerboard.h: 1x1 convolutions, batch norm and
//    ReLU) on a 256x256 grid, eval mode without grad: eager against traced with fusion, and the
//    bytes its graph's nodes read and write, unfused and fused.
//
// Medians of several runs; kiln on TBB's threads (all cores), PyTorch on two. Prints a table and
// a JSON line.
#include "../examples/checkerboard.h"
#include "bench_common.hpp"

#include <kiln/kiln.h>

#include <cstdio>

namespace {

std::vector<kiln::Tensor> chain(const std::vector<kiln::Tensor>& in) {
  const kiln::Tensor& x = in[0];
  const kiln::Tensor& y = in[1];
  kiln::Tensor t = x * y;
  t = t + 1.5;
  t = kiln::sigmoid(t);
  t = t - x;
  t = kiln::tanh(t);
  t = t * 2.0;
  t = kiln::relu(t);
  return {t / (y + 3.0)};
}

// The bytes a graph's nodes read and write (each input and output value once per node): the
// memory traffic of a memory-bound graph, a lower bound for each operator.
double bytes_moved(const kiln::jit::Graph& g) {
  double bytes = 0;
  auto value_bytes = [&](int v) {
    if (v < 0) return 0.0;
    const auto& value = g.values[static_cast<size_t>(v)];
    double n = static_cast<double>(kiln::element_size(value.dtype));
    for (int64_t s : value.sizes) n *= static_cast<double>(s);
    return n;
  };
  for (const auto& node : g.nodes) {
    for (int v : node.inputs) bytes += value_bytes(v);
    for (int v : node.outputs) bytes += value_bytes(v);
  }
  return bytes;
}

int count_fused(const kiln::jit::Graph& g) {
  int n = 0;
  for (const auto& node : g.nodes) n += std::string(node.call->op().name()) == "fused_pointwise";
  return n;
}

}  // namespace

int main() {
  kiln::NoGradGuard no_grad;
  const int64_t n = 16 * 1024 * 1024;
  kiln::Tensor x = kiln::randn({n}), y = kiln::randn({n});
  std::vector<bench::Result> results;

  kiln::Tensor dst = kiln::empty({n});
  const double copy_s = bench::median_seconds([&] { dst.copy_(x); }, 5, 9);
  const double copy_gbs = 8.0 * n / copy_s / 1e9;
  const double eager_s = bench::median_seconds([&] { chain({x, y}); }, 3, 7);
  auto traced = kiln::jit::trace(chain, {x, y});
  const double fused_s = bench::median_seconds([&] { traced({x, y}); }, 3, 7);
  kiln::jit::TraceOptions off;
  off.optimize = false;
  auto unfused = kiln::jit::trace(chain, {x, y}, off);
  const double unfused_s = bench::median_seconds([&] { unfused({x, y}); }, 3, 7);
  const double stream_s = 12.0 * n / (copy_gbs * 1e9);
  results.push_back({"copy_gbs", copy_gbs, "GB/s"});
  results.push_back({"chain_eager_ms", eager_s * 1e3, "ms"});
  results.push_back({"chain_traced_unfused_ms", unfused_s * 1e3, "ms"});
  results.push_back({"chain_traced_fused_ms", fused_s * 1e3, "ms"});
  results.push_back({"chain_stream_limit_ms", stream_s * 1e3, "ms"});

  bench::Measures torch =
      bench::run_json("/usr/bin/python3 " KILN_BENCH_DIR "/fused_pointwise_bench.py 2>/dev/null");

  // the checkerboard net (examples/checkerboard.h) on a 256x256 grid, eval mode
  kiln::manual_seed(1);
  kiln::nn::Sequential net = checkerboard::make_net();
  net->eval();
  kiln::Tensor grid = checkerboard::grid(256, 256).unsqueeze(0);
  auto traced_net = kiln::jit::trace_module(net, {grid});
  auto plain_net = kiln::jit::trace_module(net, {grid}, off);
  const double net_eager_s = bench::median_seconds([&] { net->forward(grid); }, 3, 9);
  const double net_traced_s = bench::median_seconds([&] { traced_net.forward(grid); }, 3, 9);
  results.push_back({"net_eager_ms", net_eager_s * 1e3, "ms"});
  results.push_back({"net_traced_fused_ms", net_traced_s * 1e3, "ms"});
  const double net_bytes = bytes_moved(plain_net.graph()),
               fused_bytes = bytes_moved(traced_net.graph());
  results.push_back({"net_mb_unfused", net_bytes / 1e6, "MB"});
  results.push_back({"net_mb_fused", fused_bytes / 1e6, "MB"});

  std::printf("chain of 8 pointwise ops on 16M floats (%d fused node)\n",
              count_fused(traced.graph()));
  std::printf("  copy bandwidth           %8.2f GB/s\n", copy_gbs);
  std::printf("  STREAM limit (12 B/elt)  %8.2f ms\n", stream_s * 1e3);
  std::printf("  kiln eager               %8.2f ms\n", eager_s * 1e3);
  std::printf("  kiln traced, unfused     %8.2f ms\n", unfused_s * 1e3);
  std::printf("  kiln traced, fused       %8.2f ms  (%.2fx the STREAM limit)\n", fused_s * 1e3,
              fused_s / stream_s);
  if (!torch.empty()) {
    std::printf("  PyTorch eager            %8.2f ms\n", torch["torch_eager_ms"]);
    std::printf("  torch.jit.script         %8.2f ms\n", torch["torch_script_ms"]);
    std::printf("  PyTorch copy             %8.2f ms\n", torch["torch_copy_ms"]);
  } else {
    std::printf("  (PyTorch: /usr/bin/python3 with torch not available)\n");
  }
  std::printf("checkerboard net forward, 256x256 grid, eval (%d fused nodes)\n",
              count_fused(traced_net.graph()));
  std::printf("  eager                    %8.3f ms\n", net_eager_s * 1e3);
  std::printf("  traced with fusion       %8.3f ms  (%.2fx)\n", net_traced_s * 1e3,
              net_eager_s / net_traced_s);
  std::printf("  bytes its nodes read and write: %.1f MB unfused, %.1f MB fused; at the copy "
              "bandwidth %.3f ms\n",
              net_bytes / 1e6, fused_bytes / 1e6, fused_bytes / (copy_gbs * 1e9) * 1e3);
  for (const auto& [k, v] : torch) results.push_back({k, v, "ms"});
  bench::print_json(results);
  return 0;
}
