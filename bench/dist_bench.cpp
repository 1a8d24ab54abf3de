// kiln-dist-bench: distributed training on this machine, 2 ranks over loopback, beside PyTorch's
// torch.distributed on gloo run in the same invocation (bench/dist_bench.py):
//   - all_reduce (SUM, float32) bus bandwidth from 4 KiB to 64 MiB: 2 (n - 1) / n bytes / time;
//   - a DDP training step of an MLP 784-512-512-10 (SGD, batch 64 per rank, one thread per rank),
//     and the same step in one process at the same batch: their ratio is the cost of
//     communication left after overlapping it with backward.
// Medians of several runs. The ratio column is PyTorch's figure over kiln's: for step times above
// 1 means kiln is faster, for bandwidths above 1 means PyTorch is faster.
//   build/bin/kiln-dist-bench            the table, then one JSON line
//   build/bin/kiln-dist-bench --kiln     kiln's numbers only, as JSON (it starts its 2 ranks)
#include "bench_common.hpp"

#include <kiln/kiln.h>
#include <kiln/nn/parallel/distributed.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <string>

namespace {

namespace dist = kiln::distributed;
using kiln::Tensor;
using Measures = bench::Measures;

struct MlpImpl : kiln::nn::Module {
  MlpImpl()
      : fc1(register_module("fc1", kiln::nn::Linear(784, 512))),
        fc2(register_module("fc2", kiln::nn::Linear(512, 512))),
        fc3(register_module("fc3", kiln::nn::Linear(512, 10))) {}
  Tensor forward(Tensor x) { return fc3(kiln::relu(fc2(kiln::relu(fc1(x))))); }
  kiln::nn::Linear fc1, fc2, fc3;
};
KILN_MODULE(Mlp);

// One rank's measures (rank 0's are printed).
Measures measure_rank() {
  Measures m;
  dist::init_process_group();
  for (int64_t bytes = 4096; bytes <= 64 << 20; bytes *= 4) {
    Tensor t = kiln::ones({bytes / 4});
    int inner = bytes >= (16 << 20) ? 2 : bytes >= (1 << 20) ? 10 : 100;
    double s = bench::median_seconds([&] { dist::all_reduce(t); }, inner, 7);
    double bus = 2.0 * (2 - 1) / 2 * static_cast<double>(bytes) / s / 1e9;
    m["allreduce_busbw_gbs_" + std::to_string(bytes / 1024) + "k"] = bus;
  }
  kiln::manual_seed(0);
  Mlp model;
  Tensor x = kiln::randn({64, 784});
  Tensor y = kiln::randint(0, 10, {64});
  auto step_of = [&](auto& net, kiln::optim::SGD& opt) {
    return [&] {
      opt.zero_grad();
      kiln::nn::functional::cross_entropy(net->forward(x), y).backward();
      opt.step();
    };
  };
  {
    kiln::optim::SGD opt(model->parameters(), kiln::optim::SGDOptions(0.01));
    m["single_step_ms"] = 1e3 * bench::median_seconds(step_of(model, opt), 10, 9);
  }
  auto ddp = kiln::nn::parallel::DistributedDataParallel(model);
  kiln::optim::SGD opt(ddp->parameters(), kiln::optim::SGDOptions(0.01));
  m["ddp_step_ms"] = 1e3 * bench::median_seconds(step_of(ddp, opt), 10, 9);
  m["ddp_over_single"] = m["ddp_step_ms"] / m["single_step_ms"];
  dist::barrier();
  dist::destroy_process_group();
  return m;
}

// Starts 2 ranks of this program (`--rank`), each pinned to one CPU (so oneTBB runs one thread);
// returns rank 0's JSON numbers.
Measures run_ranks(const char* self) {
  long cpus = std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN));
  std::string port = std::to_string(29700 + ::getpid() % 200);
  std::string command;
  for (int r = 1; r >= 0; --r) {
    command += "RANK=" + std::to_string(r) +
               " WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=" + port +
               " GLOO_SOCKET_IFNAME=lo OMP_NUM_THREADS=1 taskset -c " + std::to_string(r % cpus) +
               " " + self + " --rank" + (r == 1 ? " >/dev/null &" : "; wait") + " ";
  }
  return bench::run_json(command);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc > 1 && std::strcmp(argv[1], "--rank") == 0) {
      Measures m = measure_rank();
      std::vector<bench::Result> results;
      for (const auto& [key, value] : m) results.push_back({key, value, ""});
      bench::print_json(results);
      return 0;
    }
    Measures k = run_ranks(argv[0]);
    if (argc > 1 && std::strcmp(argv[1], "--kiln") == 0) {
      std::vector<bench::Result> results;
      for (const auto& [key, value] : k) results.push_back({key, value, ""});
      bench::print_json(results);
      return 0;
    }
    Measures t = bench::run_json("/usr/bin/python3 " KILN_BENCH_DIR "/dist_bench.py 2>/dev/null");
    std::printf("2 ranks over loopback (gloo), one thread each; all_reduce bus bandwidth in GB/s, "
                "steps in ms (medians)\n");
    std::printf("%-32s %10s %10s %14s\n", "measure", "kiln", "pytorch", "pytorch/kiln");
    std::vector<bench::Result> results;
    for (const auto& [key, value] : k) {
      results.push_back({"kiln_" + key, value, ""});
      auto it = t.find(key);
      if (it == t.end()) {
        std::printf("%-32s %10.3f %10s %14s\n", key.c_str(), value, "-", "-");
        continue;
      }
      std::printf("%-32s %10.3f %10.3f %13.2fx\n", key.c_str(), value, it->second,
                  it->second / value);
      results.push_back({"pytorch_" + key, it->second, ""});
    }
    if (t.empty())
      std::printf("(PyTorch: /usr/bin/python3 with torch.distributed not available)\n");
    bench::print_json(results);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
