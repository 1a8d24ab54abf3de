// libFuzzer target for a saved graph's section (kiln::jit::load; built with clang when it is
// installed, see tests/jit/CMakeLists.txt). The input is the "kiln.graph" text: it is parsed
// (graph_format.cpp, compiled here for coverage and sanitizers), then, when it parses, built
// (operators found by name, arguments read) with zero tensors of the declared shapes for the
// parameters and constants. Any outcome but a parsed graph or a kiln::Error (a crash, a hang, a
// sanitizer report, another exception) is a failure. The seeds (tests/jit/fuzz_seeds/graph) are
// the sections of saved graphs: the MLP, the checkerboard net, the curve fit, a chain.
#include "../../core/src/jit/graph_format.h"

#include <kiln/kiln.h>

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  namespace jd = kiln::jit::detail;
  try {
    jd::SavedGraph saved = jd::parse_graph_text("fuzz", text);
    kiln::NamedTensors tensors;
    for (size_t i = 0; i < saved.values.size(); ++i) {
      const jd::SavedValue& v = saved.values[i];
      if (v.kind != 1 && v.kind != 2) continue;
      int64_t n = 1;
      for (int64_t s : v.sizes) n *= s;
      if (n > 4096) return 0;  // parsed; too large to build quickly
      auto dtype = static_cast<kiln::ScalarType>(v.dtype);
      tensors.emplace_back("v" + std::to_string(i), kiln::zeros(v.sizes, dtype));
      if (v.has_initial) {
        tensors.emplace_back("v" + std::to_string(i) + ".initial", kiln::zeros(v.sizes, dtype));
      }
    }
    kiln::jit::Graph g = jd::build_graph("fuzz", saved, tensors, kiln::kCPU);
    // a built graph prints (every call's arguments, every value)
    if (g.str().empty()) __builtin_trap();
  } catch (const kiln::Error&) {
  }
  return 0;
}
