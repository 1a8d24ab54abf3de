// Writes the graph of a traced MLP (2 -> 16 -> 1, batch 8) to argv[1] with kiln::jit::save, and
// one input for it to argv[2] (a safetensors file), making argv[1]'s folder: the fixture of
// kiln-graph's tests.
#include <kiln/kiln.h>

#include <cstdio>
#include <filesystem>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: save_example_graph GRAPH INPUTS\n");
    return 2;
  }
  std::filesystem::create_directories(std::filesystem::path(argv[1]).parent_path());
  kiln::manual_seed(0);
  kiln::nn::Sequential net(kiln::nn::Linear(2, 16), kiln::nn::ReLU(), kiln::nn::Linear(16, 1));
  kiln::Tensor x = kiln::randn({8, 2});
  kiln::jit::save(kiln::jit::trace_module(net, {x}), argv[1]);
  kiln::save({{"x", x}}, argv[2]);
  return 0;
}
