// The ONNX importer's internals: the operator table (one OpDef per operator, its inputs,
// outputs and typed attributes, checked at load time), the context a node runs in, and the
// TensorProto conversion.
#pragma once

#include <kiln/error.h>
#include <kiln/onnx.h>
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace kiln::onnx::detail {

namespace pb = ::onnx;

// A value while the graph runs: its tensor, and whether it is known at trace time (an
// initializer, a Constant, or computed from such values and from shapes only). Known values
// are computed outside the trace: they are constants of the signature's graph.
struct Val {
  Tensor t;
  bool known = false;
};

struct ModelState;

// A node as it runs (or, at load time with no inputs, as it is checked): its attributes,
// inputs and the model.
class NodeRun {
 public:
  NodeRun(const pb::NodeProto& node, int index, int64_t opset, const std::string& file)
      : node_(node), index_(index), opset_(opset), file_(file) {}

  const pb::NodeProto& node() const { return node_; }
  int64_t opset() const { return opset_; }
  // "model.onnx: node 3 (conv1, Conv)": the prefix of this node's errors.
  std::string where() const;

  // Attributes (their types were checked at load time against the OpDef).
  bool has(const char* name) const { return attr(name) != nullptr; }
  const pb::AttributeProto* attr(const char* name) const;
  int64_t i(const char* name, int64_t def) const;
  float f(const char* name, float def) const;
  std::string s(const char* name, const std::string& def) const;
  std::vector<int64_t> ints(const char* name, std::vector<int64_t> def = {}) const;
  std::vector<float> floats(const char* name) const;

  // Inputs: present (a non-empty name), the tensor, and the values read on the host (an int64
  // or floating list). Reading a value not known at trace time marks the model as depending on
  // values: it then runs without the trace.
  size_t num_inputs() const { return in.size(); }
  bool has_input(size_t k) const { return k < in.size() && in[k] != nullptr; }
  const Tensor& input(size_t k) const;
  bool known(size_t k) const { return has_input(k) && in[k]->known; }
  std::vector<int64_t> host_ints(size_t k) const;
  std::vector<double> host_doubles(size_t k) const;
  // How many outputs the node names (trailing optional outputs may be absent).
  int num_outputs() const { return node_.output_size(); }
  bool has_output(int k) const { return k < node_.output_size() && !node_.output(k).empty(); }

  // Throws a kiln::ValueError (NotImplementedError when unsupported) naming this node.
  [[noreturn]] void fail(const std::string& what) const;
  [[noreturn]] void unsupported(const std::string& what) const;

  std::vector<Val*> in;
  bool* value_read = nullptr;        // set when a value not known at trace time was read
  const Tensor* constant = nullptr;  // a Constant node's tensor (converted at load time)
  Device device = kCPU;

 private:
  const pb::NodeProto& node_;
  int index_;
  int64_t opset_;
  const std::string& file_;
};

using RunFn = std::vector<Tensor> (*)(NodeRun&);
// Load-time checks of attribute values (ranges, strings, element types) beyond their types.
using CheckFn = void (*)(const NodeRun&);

struct AttrSpec {
  const char* name;
  pb::AttributeProto_AttributeType type;
};

struct OpDef {
  const char* name;
  int min_inputs;
  int max_inputs;  // -1: variadic
  int min_outputs;
  int max_outputs;
  std::vector<AttrSpec> attrs;
  RunFn run;
  CheckFn check = nullptr;
  int since = 13;  // the first supported opset (LayerNormalization: 17)
};

// The operator families (ops_*.cpp) add their OpDefs.
void add_elementwise_ops(std::vector<OpDef>& ops);
void add_nn_ops(std::vector<OpDef>& ops);
void add_shape_ops(std::vector<OpDef>& ops);
void add_reduce_ops(std::vector<OpDef>& ops);
void add_extra_ops(std::vector<OpDef>& ops);
void add_resize_ops(std::vector<OpDef>& ops);
const std::unordered_map<std::string, OpDef>& op_table();

// Element types: ONNX's TensorProto.DataType code to kiln's, nullopt when kiln has none.
std::optional<ScalarType> dtype_from_onnx(int32_t code);
const char* onnx_dtype_name(int32_t code);
// A TensorProto as a CPU tensor, every field checked (`where` names it in errors); external
// data relative to base_dir (empty: refused).
Tensor tensor_from_proto(const pb::TensorProto& proto, const std::string& where,
                         const std::string& base_dir);
// The first element of a tensor as a Scalar, read on the host without item() (which a trace
// would note as a value read).
Scalar first_scalar(const Tensor& t);
// Normalizes an axis in [-rank, rank) (rank + 1 for Unsqueeze's) or fails naming the node.
int64_t norm_axis(const NodeRun& n, int64_t axis, int64_t rank);
// The checks shared by the families: an auto_pad string.
void check_auto_pad(const NodeRun& n);

}  // namespace kiln::onnx::detail
