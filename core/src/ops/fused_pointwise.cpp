// The optional primitive fused_pointwise (docs/primitives.md, "Fused pointwise programs"): a
// pointwise program over broadcast inputs. Core checks the program (every field a plugin will
// read, with kiln/sdk/pointwise_program.hpp's validate, bounded and overflow-checked), broadcasts
// and expands the inputs to the output's sizes, allocates the outputs and calls the device's
// kernel. It has no backward: kiln::jit::fuse_pointwise keeps the unfused operators for grad.
#include "../kernel_call.h"
#include "../tensor_internal.h"
#include "elementwise.h"

#include <kiln/autograd.h>
#include <kiln/dispatch.h>
#include <kiln/jit/fused_pointwise.h>
#include <kiln/sdk/pointwise_program.hpp>

#include <cstring>
#include <sstream>

namespace kiln {
namespace pg = kiln::sdk::program;
namespace jit {

std::vector<int64_t> PointwiseProgram::encode() const {
  std::vector<int64_t> flat = {version,
                               static_cast<int64_t>(compute),
                               n_inputs,
                               static_cast<int64_t>(steps.size()),
                               static_cast<int64_t>(outputs.size()),
                               static_cast<int64_t>(constants.size())};
  for (const PointwiseStep& s : steps) {
    flat.insert(flat.end(), {s.op, static_cast<int64_t>(s.dtype), s.a, s.b, s.c});
  }
  for (int32_t r : outputs) flat.push_back(r);
  for (double c : constants) {
    int64_t bits = 0;
    if (compute == kLong) {
      bits = static_cast<int64_t>(c);
    } else {
      std::memcpy(&bits, &c, sizeof bits);
    }
    flat.push_back(bits);
  }
  return flat;
}

PointwiseProgram PointwiseProgram::decode(IntArrayRef flat) {
  KILN_CHECK_VALUE(flat.size() >= 6, "fused_pointwise: the program has ", flat.size(),
                   " entries, fewer than its 6 header fields");
  const int64_t n_steps = flat[3], n_outputs = flat[4], n_constants = flat[5];
  KILN_CHECK_VALUE(n_steps >= 0 && n_steps <= pg::kMaxSteps && n_outputs >= 0 &&
                       n_outputs <= pg::kMaxOutputs && n_constants >= 0 &&
                       n_constants <= pg::kMaxConstants,
                   "fused_pointwise: the program has ", n_steps, " steps, ", n_outputs,
                   " outputs and ", n_constants, " constants (at most ", pg::kMaxSteps, ", ",
                   pg::kMaxOutputs, " and ", pg::kMaxConstants, ")");
  // bounded above: no overflow
  const int64_t expected = 6 + n_steps * pg::kStepFields + n_outputs + n_constants;
  KILN_CHECK_VALUE(static_cast<int64_t>(flat.size()) == expected, "fused_pointwise: the program ",
                   "has ", flat.size(), " entries where its header announces ", expected);
  KILN_CHECK_VALUE(flat[2] >= 0 && flat[2] <= pg::kMaxInputs, "fused_pointwise: ", flat[2],
                   " inputs (at most ", pg::kMaxInputs, ")");
  KILN_CHECK_VALUE(flat[1] == KILN_F32 || flat[1] == KILN_F64 || flat[1] == KILN_I64,
                   "fused_pointwise: compute type ", flat[1], " is not float32, float64 or int64");
  PointwiseProgram p;
  p.version = flat[0];
  p.compute = static_cast<ScalarType>(flat[1]);
  p.n_inputs = static_cast<int32_t>(flat[2]);
  size_t at = 6;
  auto narrow32 = [](int64_t v) {
    KILN_CHECK_VALUE(v >= INT32_MIN && v <= INT32_MAX, "fused_pointwise: program field ", v,
                     " out of range");
    return static_cast<int32_t>(v);
  };
  for (int64_t k = 0; k < n_steps; ++k, at += pg::kStepFields) {
    KILN_CHECK_VALUE(flat[at + 1] >= 0 && flat[at + 1] < KILN_NUM_DTYPES, "fused_pointwise: step ",
                     k, " has an unknown dtype ", flat[at + 1]);
    p.steps.push_back({narrow32(flat[at]), static_cast<ScalarType>(flat[at + 1]),
                       narrow32(flat[at + 2]), narrow32(flat[at + 3]), narrow32(flat[at + 4])});
  }
  for (int64_t i = 0; i < n_outputs; ++i) p.outputs.push_back(narrow32(flat[at++]));
  for (int64_t i = 0; i < n_constants; ++i) {
    const int64_t bits = flat[at++];
    double c = 0;
    if (p.compute == kLong) {
      c = static_cast<double>(bits);
    } else {
      std::memcpy(&c, &bits, sizeof c);
    }
    p.constants.push_back(c);
  }
  return p;
}

std::string PointwiseProgram::str() const {
  std::ostringstream out;
  out.precision(17);
  for (size_t k = 0; k < steps.size(); ++k) {
    const PointwiseStep& s = steps[k];
    out << (k ? "; " : "") << "r" << n_inputs + static_cast<int64_t>(k) << " = ";
    if (s.op == pg::CONST) {
      out << (s.a >= 0 && static_cast<size_t>(s.a) < constants.size() ? constants[s.a] : 0.0);
      continue;
    }
    out << (s.op == pg::CAST ? dtype_name(s.dtype) : pg::op_name(s.op)) << "(";
    const int n = pg::arity(s.op);
    for (int j = 0; j < n; ++j) out << (j ? ", r" : "r") << (j == 0 ? s.a : j == 1 ? s.b : s.c);
    out << ")";
  }
  out << " -> (";
  for (size_t i = 0; i < outputs.size(); ++i) out << (i ? ", r" : "r") << outputs[i];
  out << ")";
  return out.str();
}

}  // namespace jit

namespace detail {
namespace {

using FusedOp = Operator<std::vector<Tensor>(TensorList, IntArrayRef)>;

std::vector<Tensor> fused_backend(const FusedOp& op, TensorList inputs, IntArrayRef flat) {
  const jit::PointwiseProgram program = jit::PointwiseProgram::decode(flat);
  KILN_CHECK_VALUE(!inputs.empty(), op.name(), ": a program needs at least one input (its ",
                   "inputs give the output's shape)");
  KILN_CHECK_VALUE(static_cast<int64_t>(inputs.size()) == program.n_inputs, op.name(),
                   ": the program reads ", program.n_inputs, " inputs, the call passes ",
                   inputs.size());
  DimVector sizes(inputs[0].sizes());
  const Device device = inputs[0].device();
  bool grad = false;
  std::vector<int32_t> in_dtypes;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    KILN_CHECK_VALUE(t.defined(), op.name(), ": input ", i, " is undefined");
    KILN_CHECK_VALUE(t.device() == device, op.name(), ": input ", i, " is on ", t.device(),
                     ", input 0 on ", device, "; move them to one device");
    sizes = broadcast_dims(sizes, t.sizes());
    grad = grad || t.requires_grad();
    in_dtypes.push_back(static_cast<int32_t>(t.dtype()));
  }
  KILN_CHECK_VALUE(!grad || !autograd::GradMode::is_enabled(), op.name(),
                   ": an input requires grad, and a pointwise program has no backward; run the ",
                   "unfused operators (kiln::jit::fuse_pointwise keeps them for grad mode) or ",
                   "call it under kiln::NoGradGuard");
  const std::vector<int64_t> flat_again = program.encode();
  pg::Program view;
  view.version = program.version;
  view.compute = static_cast<int32_t>(program.compute);
  view.n_inputs = program.n_inputs;
  view.n_steps = static_cast<int64_t>(program.steps.size());
  view.steps = flat_again.data() + 6;
  view.n_outputs = static_cast<int64_t>(program.outputs.size());
  view.outputs = view.steps + view.n_steps * pg::kStepFields;
  view.n_constants = static_cast<int64_t>(program.constants.size());
  view.constants = view.outputs + view.n_outputs;
  std::vector<int32_t> out_dtypes;
  for (int32_t r : program.outputs) {
    // the register's dtype; an invalid register is reported by validate below
    int32_t dtype = 0;
    if (r >= 0 && r < program.n_inputs) {
      dtype = in_dtypes[static_cast<size_t>(r)];
    } else if (r >= program.n_inputs &&
               static_cast<size_t>(r - program.n_inputs) < program.steps.size()) {
      dtype = static_cast<int32_t>(program.steps[static_cast<size_t>(r - program.n_inputs)].dtype);
    }
    out_dtypes.push_back(dtype);
  }
  const std::string error = pg::validate(view, in_dtypes.data(), out_dtypes.data());
  KILN_CHECK_VALUE(error.empty(), op.name(), ": invalid program on ", device, ": ", error);
  std::vector<Tensor> expanded;
  expanded.reserve(inputs.size());
  for (const Tensor& t : inputs) expanded.push_back(t.expand(sizes));
  std::vector<Tensor> outs;
  for (int32_t dtype : out_dtypes) {
    outs.push_back(empty_tensor(sizes, static_cast<ScalarType>(dtype), device));
  }
  int64_t numel = 1;
  for (int64_t s : sizes) numel *= s;  // the outputs exist: their size product fits
  if (numel == 0) return outs;
  std::vector<const Tensor*> in_ptrs, out_ptrs;
  for (const Tensor& t : expanded) in_ptrs.push_back(&t);
  for (const Tensor& t : outs) out_ptrs.push_back(&t);
  const std::vector<int64_t> steps(view.steps, view.steps + view.n_steps * pg::kStepFields);
  const std::vector<int64_t> outputs(view.outputs, view.outputs + view.n_outputs);
  const std::vector<int64_t> constants(view.constants, view.constants + view.n_constants);
  run_kernel_list(op, in_ptrs, out_ptrs,
                  Attrs()
                      .i64("version", program.version)
                      .i64("compute", static_cast<int64_t>(program.compute))
                      .list("steps", steps)
                      .list("outputs", outputs)
                      .list("constants", constants));
  return outs;
}

FusedOp fused_pointwise_op("fused_pointwise",
                           "fused_pointwise(Tensor[] inputs, int[] program) -> Tensor[]",
                           fused_backend);

const bool fused_pointwise_registered = [] {
  fused_pointwise_op.set_optional();
  return true;
}();

}  // namespace
}  // namespace detail

namespace jit {

std::vector<Tensor> run_pointwise_program(const std::vector<Tensor>& inputs,
                                          const PointwiseProgram& program) {
  const std::vector<int64_t> flat = program.encode();
  return kiln::detail::fused_pointwise_op(TensorList(inputs), IntArrayRef(flat));
}

bool has_fused_pointwise(DeviceType type) {
  return kiln::detail::fused_pointwise_op.has_plugin_kernel(type);
}

}  // namespace jit
}  // namespace kiln
