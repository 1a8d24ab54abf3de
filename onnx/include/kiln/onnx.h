// ONNX import: run a model from the ecosystem's exchange format on any kiln device.
//
//   auto model = kiln::onnx::load("resnet18.onnx");                 // parsed and validated
//   std::vector<kiln::Tensor> out = model.run({kiln::randn({1, 3, 224, 224})});
//   std::cout << model.graph().str();                               // the traced graph
//
// The file is read with libonnx's protobuf classes (Debian's libonnx-dev) and validated at load
// time: opset 13 to 17 of the default domain, every node's operator one kiln has (an error names
// the operator, the node and the opset), its attributes of the right types, its inputs defined
// before it, every initializer's data as long as its shape and type say. run() interprets the
// graph node by node with kiln's operators under kiln::jit::trace, once per input signature
// (shapes, dtypes, devices): the result is the tracer's graph, replayed on later calls, so a
// dynamic batch dimension retraces and the graph passes and the profiler apply. Shape
// computations (Shape, Gather, Concat, ... on values known at trace time) are evaluated while
// tracing and are constants of each signature's graph. See docs/onnx.md.
//
// Built as the separate library kiln_onnx (target kiln::onnx) when CMake finds libonnx-dev
// (KILN_WITH_ONNX): kiln_core itself does not depend on protobuf.
#pragma once

#include <kiln/export.h>
#include <kiln/jit.h>
#include <kiln/tensor.h>

#include <memory>
#include <string>
#include <vector>

// Symbol visibility for libkiln_onnx.so, as KILN_API's for libkiln_core.so.
#define KILN_ONNX_API __attribute__((visibility("default")))

namespace kiln::onnx {

struct LoadOptions {
  // The device the initializers (weights) are placed on; run() takes inputs on this device.
  Device device = kCPU;
  // Trace each input signature and replay the graph (the default); false: interpret the graph
  // node by node on every call.
  bool trace = true;
  // A model of an opset before 13 is upgraded to opset 13 by ONNX's own shape inference and
  // version converter (onnx::version_conversion::ConvertVersion, as
  // onnx.version_converter.convert_version); false (the default): such a model is refused.
  // For trusted files only: libonnx 1.12's shape inference and converter are not hardened
  // against malformed models (fuzz_onnx_load found a crash in its Gemm shape inference), while
  // everything load does by default is fuzzed.
  bool convert_opset = false;
  // Run ONNX's checker (onnx::checker::check_model, full checks of the graph's structure) at
  // load time, before kiln's own validation.
  bool check = true;
};

// A graph input or output as the file declares it: its name, element type and shape (-1 for a
// dimension without a fixed size, such as a dynamic batch).
struct ValueInfo {
  std::string name;
  ScalarType dtype = kFloat;
  std::vector<int64_t> sizes;
};

namespace detail {
struct ModelState;
}

class KILN_ONNX_API Model {
 public:
  Model() = default;
  // Runs the model on its inputs (graph inputs without an initializer, in the file's order) and
  // returns its outputs in the file's order. Inputs are checked against the declared element
  // types, ranks and fixed dimensions (a kiln::ValueError names the input).
  std::vector<Tensor> run(const std::vector<Tensor>& inputs) const;
  // The first output for one input.
  Tensor forward(const Tensor& input) const;

  const std::vector<ValueInfo>& inputs() const;
  const std::vector<ValueInfo>& outputs() const;
  // The default domain's opset the model imports.
  int64_t opset() const;
  // The number of nodes of the ONNX graph.
  size_t num_nodes() const;
  // The traced graph of the most recent call (kiln::jit's graph type); a kiln::ValueError
  // before the first call or when tracing is off.
  const jit::Graph& graph() const;
  // Whether calls replay traced graphs: false before the first call, with LoadOptions::trace
  // off, or when the graph reads a value it computes (a shape from data, not from Shape
  // chains), which a trace would freeze: such a model interprets its graph on every call.
  bool replays() const;
  // The traced function of the model (retraced per signature); empty before the first call.
  const jit::TracedFunction& traced() const;

 private:
  friend KILN_ONNX_API Model load_from_string(const std::string&, const std::string&,
                                              const std::string&, const LoadOptions&);
  std::shared_ptr<detail::ModelState> state_;
};

// Parses and validates the model at `path`; external data files are read relative to the
// model's folder (and must stay inside it). Errors are kiln::ValueError (a malformed file or
// field, naming the file, the node and the field) or kiln::NotImplementedError (an operator,
// opset, attribute value or element type kiln does not support, naming it, the node and the
// opset).
KILN_ONNX_API Model load(const std::string& path, const LoadOptions& options = {});
// The same from the bytes of a model; `name` is the name errors give the file; external data
// is read relative to `base_dir` (an empty base_dir refuses external data).
KILN_ONNX_API Model load_from_string(const std::string& bytes, const std::string& name,
                                     const std::string& base_dir = {},
                                     const LoadOptions& options = {});

// A TensorProto file (as ONNX's test data sets' input_0.pb, output_0.pb) as a CPU tensor.
KILN_ONNX_API Tensor load_tensor(const std::string& path);
// The same from bytes; `name` is the name errors give them.
KILN_ONNX_API Tensor load_tensor_from_string(const std::string& bytes, const std::string& name);

// The operators of the default domain kiln runs, sorted.
KILN_ONNX_API std::vector<std::string> supported_operators();

}  // namespace kiln::onnx
