// The graph section of a saved graph (kiln::jit::save / load; docs/graphs.md "Saved graphs"):
// a token stream (arguments.h's ArgWriter) with one record per line. Parsing checks
// the structure (ids in range, values defined before use, sizes within Note [Checked sizes]); the
// operators and their arguments are checked when the graph is built (serialize.cpp). Kept free
// of core's internals so that the fuzz harness (tests/jit/fuzz_graph_load.cpp) compiles it.
#pragma once

#include <kiln/jit.h>
#include <kiln/serialize.h>

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::jit::detail {

constexpr int64_t kGraphFormatVersion = 1;
constexpr const char* kGraphMetadataKey = "kiln.graph";
constexpr const char* kGraphVersionKey = "kiln.graph.version";
// Caps on counts read from a file (a damaged count must not allocate gigabytes).
constexpr size_t kMaxGraphValues = 1u << 20;
constexpr size_t kMaxNodeOperands = 4096;
constexpr size_t kMaxDims = 64;

struct SavedValue {
  int kind = 0;  // a ValueKind
  int dtype = 0;
  std::vector<int64_t> sizes;
  std::string name;
  bool requires_grad = false;
  bool has_initial = false;  // a constant written in place: its value before ("v<id>.initial")
  bool wrapped = false;      // a constant that is a wrapped number (a Scalar operand)
};

struct SavedNode {
  std::string kind;  // an operator's name, "detach", or a registered loader's kind
  bool grad_enabled = true;
  std::vector<int> inputs, outputs;
  std::string arguments;  // the call's write_arguments tokens
};

struct SavedGraph {
  std::vector<SavedValue> values;
  std::vector<int> inputs, outputs;
  std::vector<SavedNode> nodes;
};

std::string write_graph_text(const SavedGraph& graph);
// `where` names the file for messages ("model.kiln, graph section").
SavedGraph parse_graph_text(const std::string& where, const std::string& text);

// The graph of a parsed section (serialize.cpp): operators found by name, arguments read, the
// parameters and constants taken from `tensors` ("v<id>") and moved to `device`.
KILN_API Graph build_graph(const std::string& path, const SavedGraph& saved,
                           const NamedTensors& tensors, Device device);
// The operators whose signature load does not know (serialize_calls.cpp; tests).
KILN_API std::vector<std::string> operators_without_saved_signature();

}  // namespace kiln::jit::detail
