// The fusion pass: chains of pointwise nodes become one node that runs a pointwise program
// (kiln/jit/fused_pointwise.h) through the optional primitive fused_pointwise. See "Fusion" in
// docs/graphs.md.
//
// Note [What fuses]
// A node is a candidate when its operator is one of the program's op table (a kiln operator with
// only tensor arguments, or add/sub with alpha 1, gelu, leaky_relu), it has a plugin kernel on
// its device (so that its unfused result is the functor the program runs), the device has
// fused_pointwise, and its dtypes fit one compute type (float32 for float16, bfloat16 and
// float32; float64; int64 for the integers; bool fits all). A candidate joins the group of one of
// its inputs' producers when the group has the same output sizes (inputs may broadcast), device,
// compute type and grad mode, and no node between the group's first node and it writes in place
// or reads a value of the group (the fused node takes the place of the group's last node). A
// value of the group read outside it (or returned) is an output of the fused node. Groups of one
// node stay unfused. A 0-dim constant (a wrapped scalar) becomes a CONST step.
#include "fuse_call.h"
#include "passes.h"

#include <kiln/autograd.h>
#include <kiln/dispatch.h>
#include <kiln/sdk/pointwise_program.hpp>

#include <map>
#include <sstream>
#include <unordered_map>

namespace kiln::jit {
namespace detail {
namespace {

namespace pg = kiln::sdk::program;

using AlphaOp = Operator<Tensor(const Tensor&, const Tensor&, const Scalar&)>;
using AlphaCall = TypedCall<AlphaOp, Tensor, const Tensor&, const Tensor&, const Scalar&>;
using ParamOp = Operator<Tensor(const Tensor&, const Scalar&)>;
using ParamCall = TypedCall<ParamOp, Tensor, const Tensor&, const Scalar&>;

const std::map<std::string, int32_t>& op_table() {
  static const std::map<std::string, int32_t> table = {{"neg", pg::NEG},
                                                       {"abs", pg::ABS},
                                                       {"relu", pg::RELU},
                                                       {"exp", pg::EXP},
                                                       {"log", pg::LOG},
                                                       {"tanh", pg::TANH},
                                                       {"sigmoid", pg::SIGMOID},
                                                       {"gelu", pg::GELU},
                                                       {"silu", pg::SILU},
                                                       {"sqrt", pg::SQRT},
                                                       {"rsqrt", pg::RSQRT},
                                                       {"reciprocal", pg::RECIPROCAL},
                                                       {"log1p", pg::LOG1P},
                                                       {"expm1", pg::EXPM1},
                                                       {"sin", pg::SIN},
                                                       {"cos", pg::COS},
                                                       {"erf", pg::ERF},
                                                       {"floor", pg::FLOOR},
                                                       {"ceil", pg::CEIL},
                                                       {"trunc", pg::TRUNC},
                                                       {"sign", pg::SIGN},
                                                       {"logical_not", pg::LOGICAL_NOT},
                                                       {"add", pg::ADD},
                                                       {"sub", pg::SUB},
                                                       {"mul", pg::MUL},
                                                       {"div", pg::DIV},
                                                       {"pow", pg::POW},
                                                       {"maximum", pg::MAXIMUM},
                                                       {"minimum", pg::MINIMUM},
                                                       {"leaky_relu", pg::LEAKY_RELU},
                                                       {"eq", pg::EQ},
                                                       {"ne", pg::NE},
                                                       {"lt", pg::LT},
                                                       {"le", pg::LE},
                                                       {"gt", pg::GT},
                                                       {"ge", pg::GE},
                                                       {"logical_and", pg::LOGICAL_AND},
                                                       {"logical_or", pg::LOGICAL_OR},
                                                       {"logical_xor", pg::LOGICAL_XOR},
                                                       {"where", pg::WHERE}};
  return table;
}

bool is_compare(int32_t op) { return op >= pg::EQ && op <= pg::LOGICAL_XOR; }

// The compute class of a dtype: 0 any (bool), else the program's compute type.
int compute_class(ScalarType t) {
  switch (t) {
    case kBool: return 0;
    case kHalf:
    case kBFloat16:
    case kFloat: return KILN_F32;
    case kDouble: return KILN_F64;
    case kByte:
    case kChar:
    case kShort:
    case kInt:
    case kLong: return KILN_I64;
    default: return -1;
  }
}

// What one candidate node computes.
struct Candidate {
  bool ok = false;
  int32_t op = 0;
  ScalarType compute = kFloat;  // the dtype the node computes in (its operands are cast to it)
  int cls = 0;                  // compute_class(compute), or the operands' for a comparison
  double param = 0;             // leaky_relu's slope
};

Candidate examine(const Graph& g, const Node& n) {
  Candidate c;
  if (n.detach || n.outputs.size() != 1 || n.outputs[0] < 0 || n.inputs.empty()) return c;
  const OperatorBase& op = n.call->op();
  if (op.is_inplace() || is_random(op)) return c;
  auto it = op_table().find(op.name());
  if (it == op_table().end()) return c;
  c.op = it->second;
  const Value& out = g.values[static_cast<size_t>(n.outputs[0])];
  const DeviceType type = out.device.type();
  if (!op.has_plugin_kernel(type) || !has_fused_pointwise(type)) return c;
  for (int v : n.inputs) {
    if (v < 0 || g.values[static_cast<size_t>(v)].device != out.device) return c;
  }
  // the non-tensor arguments: none, except alpha 1 of add and sub and the parameter of gelu and
  // leaky_relu
  if (c.op == pg::ADD || c.op == pg::SUB) {
    const auto* call = dynamic_cast<const AlphaCall*>(n.call.get());
    if (call == nullptr || std::get<2>(call->arguments()).to_double() != 1.0) return c;
  } else if (c.op == pg::GELU || c.op == pg::LEAKY_RELU) {
    const auto* call = dynamic_cast<const ParamCall*>(n.call.get());
    if (call == nullptr) return c;
    const double p = std::get<1>(call->arguments()).to_double();
    if (c.op == pg::GELU && p != 0.0) c.op = pg::GELU_TANH;
    c.param = p;
  } else {
    std::vector<std::string> names;
    std::string joined;
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      names.push_back("%" + std::to_string(k));
      joined += (k ? ", " : "") + names.back();
    }
    std::ostringstream printed;
    n.call->print_arguments(printed, names);
    if (printed.str() != joined) return c;
  }
  const int arity = pg::arity(c.op) - (c.op == pg::LEAKY_RELU ? 1 : 0);
  if (static_cast<int>(n.inputs.size()) != arity) return c;
  const ScalarType a = g.values[static_cast<size_t>(n.inputs[0])].dtype;
  if (is_compare(c.op)) {
    if (g.values[static_cast<size_t>(n.inputs[1])].dtype != a) return c;
    c.compute = a;
  } else if (c.op == pg::LOGICAL_NOT) {
    c.compute = a;
  } else {
    c.compute = out.dtype;
  }
  if (c.op == pg::WHERE && a != kBool) return c;
  c.cls = compute_class(c.compute);
  if (c.cls < 0 || compute_class(out.dtype) < 0) return c;
  if (c.cls == KILN_I64 && !pg::integer_op(c.op)) return c;
  // every operand loadable by a program of this class, and the output a register of it
  for (int v : n.inputs) {
    const int k = compute_class(g.values[static_cast<size_t>(v)].dtype);
    if (k < 0 || (c.cls == KILN_I64 && k != KILN_I64 && k != 0)) return c;
    if (c.cls == KILN_F32 && k == KILN_F64) return c;
  }
  const int out_cls = compute_class(out.dtype);
  if (out_cls != 0 && c.cls != 0 && out_cls != c.cls) return c;
  if (c.cls == 0) c.cls = out_cls;
  c.ok = true;
  return c;
}

struct Group {
  std::vector<size_t> members;  // node indexes, in order
  int cls = 0;
  std::vector<int64_t> sizes;
  Device device = kCPU;
  bool grad_enabled = true;
};

}  // namespace
}  // namespace detail

int fuse_pointwise(Graph& graph) {
  using namespace detail;
  const size_t n_nodes = graph.nodes.size();
  std::vector<Candidate> cand(n_nodes);
  for (size_t i = 0; i < n_nodes; ++i) cand[i] = examine(graph, graph.nodes[i]);
  std::vector<int> producer(graph.values.size(), -1);
  for (size_t i = 0; i < n_nodes; ++i) {
    for (int v : graph.nodes[i].outputs) {
      if (v >= 0) producer[static_cast<size_t>(v)] = static_cast<int>(i);
    }
  }
  std::vector<int> group_of(n_nodes, -1);
  std::vector<Group> groups;
  for (size_t i = 0; i < n_nodes; ++i) {
    if (!cand[i].ok) continue;
    const Node& n = graph.nodes[i];
    const Value& out = graph.values[static_cast<size_t>(n.outputs[0])];
    int joined = -1;
    // the groups of the inputs' producers, then the latest group (a node whose inputs come from
    // elsewhere joins it, so that parallel chains over one shape fuse too)
    std::vector<int> options;
    for (int v : n.inputs) {
      const int p = producer[static_cast<size_t>(v)];
      if (p >= 0 && group_of[static_cast<size_t>(p)] >= 0) {
        options.push_back(group_of[static_cast<size_t>(p)]);
      }
    }
    if (!groups.empty()) options.push_back(static_cast<int>(groups.size()) - 1);
    for (int gi : options) {
      Group& grp = groups[static_cast<size_t>(gi)];
      if (grp.sizes != out.sizes || grp.device != out.device ||
          grp.grad_enabled != n.grad_enabled ||
          (grp.cls != 0 && cand[i].cls != 0 && grp.cls != cand[i].cls)) {
        continue;
      }
      // nothing between the group's first node and this one writes in place, and nothing
      // outside the group there reads a value of the group
      bool safe = true;
      for (size_t j = grp.members.front() + 1; j < i && safe; ++j) {
        if (group_of[j] == gi) continue;
        const Node& m = graph.nodes[j];
        if (m.call->op().is_inplace()) safe = false;
        for (int u : m.inputs) {
          if (u >= 0 && producer[static_cast<size_t>(u)] >= 0 &&
              group_of[static_cast<size_t>(producer[static_cast<size_t>(u)])] == gi) {
            safe = false;
          }
        }
      }
      if (!safe) continue;
      joined = gi;
      break;
    }
    if (joined < 0) {
      joined = static_cast<int>(groups.size());
      Group grp;
      grp.cls = cand[i].cls;
      grp.sizes = out.sizes;
      grp.device = out.device;
      grp.grad_enabled = n.grad_enabled;
      groups.push_back(std::move(grp));
    }
    Group& grp = groups[static_cast<size_t>(joined)];
    grp.members.push_back(i);
    if (grp.cls == 0) grp.cls = cand[i].cls;
    group_of[i] = joined;
  }

  // which values are read outside their group (or returned)
  std::vector<char> used_outside(graph.values.size(), 0);
  for (int v : graph.outputs) used_outside[static_cast<size_t>(v)] = 1;
  for (size_t i = 0; i < n_nodes; ++i) {
    for (int v : graph.nodes[i].inputs) {
      if (v < 0) continue;
      const int p = producer[static_cast<size_t>(v)];
      if (p >= 0 && group_of[static_cast<size_t>(p)] != group_of[i]) {
        used_outside[static_cast<size_t>(v)] = 1;
      }
    }
  }
  const std::vector<char> mutated = mutated_values(graph);

  std::vector<char> dead(n_nodes, 0);
  std::vector<std::unique_ptr<RecordedCall>> replacement(n_nodes);
  std::vector<Node> fused_nodes(n_nodes);
  std::vector<char> has_fused(n_nodes, 0);
  int fused = 0;
  for (Group& grp : groups) {
    if (grp.members.size() < 2) continue;
    PointwiseProgram prog;
    prog.compute = grp.cls == KILN_F64   ? kDouble
                   : grp.cls == KILN_I64 ? kLong
                   : grp.cls == 0        ? kLong
                                         : kFloat;
    std::vector<char> in_group(graph.values.size(), 0);
    for (size_t m : grp.members) in_group[static_cast<size_t>(graph.nodes[m].outputs[0])] = 1;
    // external inputs, and 0-dim constants that become CONST steps
    std::vector<int> inputs;
    std::vector<std::pair<int, Tensor>> constants;
    std::unordered_map<int, int> reg;
    auto scalar_constant = [&](int v) {
      const Value& value = graph.values[static_cast<size_t>(v)];
      if (value.kind != ValueKind::Constant || mutated[static_cast<size_t>(v)] ||
          value.tensor.dim() != 0 || !value.tensor.defined()) {
        return false;
      }
      // a CONST step's dtype must be a register of the program's compute type
      const int k = compute_class(value.dtype);
      return k == 0 || k == grp.cls;
    };
    for (size_t m : grp.members) {
      for (int v : graph.nodes[m].inputs) {
        if (in_group[static_cast<size_t>(v)] || reg.count(v) || scalar_constant(v)) continue;
        reg[v] = static_cast<int>(inputs.size());
        inputs.push_back(v);
      }
    }
    if (inputs.empty() || inputs.size() > static_cast<size_t>(pg::kMaxInputs)) continue;
    prog.n_inputs = static_cast<int32_t>(inputs.size());
    auto add_step = [&](int32_t op, ScalarType dtype, int32_t a, int32_t b = -1, int32_t c = -1) {
      prog.steps.push_back({op, dtype, a, b, c});
      return prog.n_inputs + static_cast<int32_t>(prog.steps.size()) - 1;
    };
    std::map<std::pair<int, int>, int> cast_of;  // (register, dtype) -> register
    auto operand = [&](int v, ScalarType to, bool no_cast) {
      const Value& value = graph.values[static_cast<size_t>(v)];
      auto it = reg.find(v);
      int r;
      if (it != reg.end()) {
        r = it->second;
      } else {  // a scalar constant
        autograd::NoGradGuard no_grad;
        const double c = value.tensor.item().to<double>();
        prog.constants.push_back(c);
        r = add_step(pg::CONST, value.dtype, static_cast<int32_t>(prog.constants.size() - 1));
        reg[v] = r;
        bool known = false;
        for (const auto& [id, t] : constants) known = known || id == v;
        if (!known) constants.emplace_back(v, value.tensor);
      }
      if (no_cast || value.dtype == to || value.dtype == kBool) return r;
      auto key = std::make_pair(r, static_cast<int>(to));
      auto c = cast_of.find(key);
      if (c != cast_of.end()) return c->second;
      const int cast = add_step(pg::CAST, to, r);
      cast_of[key] = cast;
      return cast;
    };
    bool ok = true;
    for (size_t m : grp.members) {
      const Node& n = graph.nodes[m];
      const Candidate& c = cand[m];
      const ScalarType out_dtype = graph.values[static_cast<size_t>(n.outputs[0])].dtype;
      std::vector<int> ops;
      for (size_t k = 0; k < n.inputs.size(); ++k) {
        ops.push_back(operand(n.inputs[k], c.compute, c.op == pg::WHERE && k == 0));
      }
      if (c.op == pg::LEAKY_RELU) {
        prog.constants.push_back(c.param);
        const ScalarType slope_dtype = prog.compute == kDouble ? kDouble : kFloat;
        ops.push_back(add_step(pg::CONST, slope_dtype,
                               static_cast<int32_t>(prog.constants.size() - 1)));
      }
      while (ops.size() < 3) ops.push_back(-1);
      reg[n.outputs[0]] = add_step(c.op, out_dtype, ops[0], ops[1], ops[2]);
      ok = ok && compute_class(out_dtype) >= 0;
    }
    std::vector<int> outputs;
    for (size_t m : grp.members) {
      const int v = graph.nodes[m].outputs[0];
      if (used_outside[static_cast<size_t>(v)]) {
        outputs.push_back(v);
        prog.outputs.push_back(reg[v]);
      }
    }
    if (!ok || outputs.empty() || outputs.size() > static_cast<size_t>(pg::kMaxOutputs) ||
        prog.steps.size() > static_cast<size_t>(pg::kMaxSteps)) {
      continue;
    }
    // the fused node, at the place of the group's last node
    std::vector<Node> members;
    for (size_t m : grp.members) {
      members.push_back(std::move(graph.nodes[m]));
      dead[m] = 1;
    }
    Node node;
    node.grad_enabled = grp.grad_enabled;
    node.inputs = inputs;
    node.outputs = outputs;
    node.call = std::make_unique<FusedPointwiseCall>(fused, std::move(prog), std::move(members),
                                                     inputs, std::move(constants), outputs);
    node.slots = node.call->tensor_slots();
    const size_t last = grp.members.back();
    fused_nodes[last] = std::move(node);
    has_fused[last] = 1;
    dead[last] = 0;
    ++fused;
  }
  int removed = 0;
  for (size_t i = 0; i < n_nodes; ++i) {
    if (has_fused[i]) graph.nodes[i] = std::move(fused_nodes[i]);
    removed += dead[i];
  }
  remove_nodes(graph, dead);
  return removed;
}

}  // namespace kiln::jit
