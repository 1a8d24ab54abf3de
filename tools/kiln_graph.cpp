// kiln-graph: prints a graph saved by kiln::jit::save (its inputs, parameters, operators and
// shapes, in TorchScript's IR style, then a count per operator and the fused groups when there
// are any), and runs and times it on a device.
//
//   kiln-graph FILE [--device DEVICE] [--runs N] [--input INPUTS.safetensors] [--no-print]
//
// The inputs are random (normal floats, integers in [0, 10), of the recorded dtypes and shapes)
// unless --input names a safetensors file holding them in order. --runs N (default 0: no run)
// replays the graph N times without grad after one warm-up call (which plans the replay: Note
// [Replay plan] in core/src/jit/plan.cpp) and prints the median, the nodes replayed from their
// kernels and the bytes of the shared buffers, and the outputs' shapes.
#include <kiln/kiln.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <string>
#include <vector>

namespace {

struct Options {
  std::string file;
  std::string device = "cpu";
  int runs = 0;
  std::string input;
  bool print = true;
};

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr,
               "kiln-graph: %s\nusage: kiln-graph FILE [--device DEVICE] [--runs N] "
               "[--input INPUTS.safetensors] [--no-print]\n",
               why.c_str());
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(a + " needs a value");
      return argv[++i];
    };
    if (a == "--device") {
      o.device = value();
    } else if (a == "--runs") {
      std::string v = value();
      char* end = nullptr;
      long n = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || n < 0 || n > 1000000) {
        usage("--runs takes a count in [0, 1000000], not '" + v + "'");
      }
      o.runs = static_cast<int>(n);
    } else if (a == "--input") {
      o.input = value();
    } else if (a == "--no-print") {
      o.print = false;
    } else if (a == "-h" || a == "--help") {
      usage("prints and runs a saved graph");
    } else if (!a.empty() && a[0] == '-') {
      usage("unknown option " + a);
    } else if (o.file.empty()) {
      o.file = a;
    } else {
      usage("one graph file at a time");
    }
  }
  if (o.file.empty()) usage("no graph file given");
  return o;
}

std::vector<kiln::Tensor> make_inputs(const kiln::jit::Graph& g, const Options& o,
                                      kiln::Device device) {
  std::vector<kiln::Tensor> inputs;
  if (!o.input.empty()) {
    kiln::NamedTensors file = kiln::load(o.input);
    if (file.size() != g.inputs.size()) {
      throw kiln::ValueError(kiln::detail::str("kiln-graph: ", o.input, " holds ", file.size(),
                                               " tensors; the graph takes ", g.inputs.size()));
    }
    for (auto& [name, t] : file) inputs.push_back(t.to(device));
    return inputs;
  }
  for (int v : g.inputs) {
    const kiln::jit::Value& value = g.values[static_cast<size_t>(v)];
    kiln::TensorOptions options = kiln::TensorOptions().dtype(value.dtype);
    kiln::Tensor t = kiln::is_floating_point(value.dtype)
                         ? kiln::randn(value.sizes, options)
                         : kiln::randint(0, 10, value.sizes, options);
    inputs.push_back(t.to(device));
  }
  return inputs;
}

void print_summary(const kiln::jit::Graph& g) {
  std::map<std::string, int> counts;
  int fused = 0;
  for (const kiln::jit::Node& n : g.nodes) {
    std::string name = n.detach ? "detach" : n.call->op().name();
    ++counts[name];
    fused += name.find("fused") != std::string::npos;
  }
  std::printf("%zu nodes, %zu inputs, %zu outputs\n", g.nodes.size(), g.inputs.size(),
              g.outputs.size());
  for (const auto& [name, n] : counts) std::printf("  %-28s %d\n", name.c_str(), n);
  std::printf("fused groups: %d\n", fused);
}

}  // namespace

int main(int argc, char** argv) {
  Options o = parse(argc, argv);
  try {
    kiln::Device device(o.device);
    kiln::jit::TracedFunction traced = kiln::jit::load(o.file, device);
    const kiln::jit::Graph& g = traced.graph();
    if (o.print) {
      std::cout << g.str();
      print_summary(g);
    }
    if (o.runs == 0) return 0;
    std::vector<kiln::Tensor> inputs = make_inputs(g, o, device);
    kiln::autograd::NoGradGuard no_grad;
    std::vector<kiln::Tensor> outputs = traced(inputs);  // plans
    std::vector<double> times;
    for (int r = 0; r < o.runs; ++r) {
      auto start = std::chrono::steady_clock::now();
      outputs = traced(inputs);
      // (a device whose kernels run asynchronously is timed up to the last launch)
      times.push_back(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    std::nth_element(times.begin(), times.begin() + o.runs / 2, times.end());
    kiln::jit::ReplayStats stats = traced.replay_stats();
    std::printf("ran %d times on %s: median %.3f us; %zu of %zu nodes from their kernels, %zu "
                "bytes in shared buffers\n",
                o.runs, device.str().c_str(), times[static_cast<size_t>(o.runs / 2)] * 1e6,
                stats.fast_nodes, stats.nodes, stats.shared_bytes);
    for (size_t i = 0; i < outputs.size(); ++i) {
      std::cout << "output " << i << ": " << kiln::dtype_name(outputs[i].dtype())
                << outputs[i].sizes() << "\n";
    }
  } catch (const kiln::Error& e) {
    std::fprintf(stderr, "kiln-graph: %s\n", e.what());
    return 1;
  }
  return 0;
}
