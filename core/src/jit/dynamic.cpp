// TraceOptions::dynamic: a graph is batch-polymorphic when a trace at another batch size gives
// the same graph but for the sizes of the batch: the same operators on the same values with the
// same arguments, the same parameters and constants.
#include "tracer.h"

#include <kiln/dispatch.h>

#include <sstream>

namespace kiln::jit::detail {
namespace {

std::string arguments_of(const Graph& g, const Node& n) {
  std::vector<std::string> names;
  for (int v : n.inputs) names.push_back(g.value_name(v));
  std::ostringstream out;
  out << (n.detach ? "detach" : n.call->op().name()) << "(";
  n.call->print_arguments(out, names);
  out << ")";
  return out.str();
}

[[noreturn]] void refuse(int64_t batch, const std::string& what) {
  throw ValueError(kiln::detail::str(
      "jit::trace: TraceOptions::dynamic: the graph depends on the batch size: ", what,
      " (traced at batch ", batch, " and ", batch + 1,
      "); write the batch as -1 in views and reshapes (x.view({-1, n}), flatten(1)), do not make "
      "tensors of the batch's size inside the function, or trace without dynamic"));
}

}  // namespace

void check_batch_polymorphic(const Graph& a, const Graph& b, int64_t batch) {
  if (a.nodes.size() != b.nodes.size()) {
    refuse(batch, kiln::detail::str("its node count changes (", a.nodes.size(), " and ",
                                    b.nodes.size(), ")"));
  }
  if (a.values.size() != b.values.size() || a.inputs != b.inputs || a.outputs != b.outputs) {
    refuse(batch, "its values change");
  }
  for (size_t v = 0; v < a.values.size(); ++v) {
    const Value& x = a.values[v];
    const Value& y = b.values[v];
    if (x.kind != y.kind || x.dtype != y.dtype) refuse(batch, "its values change");
    if ((x.kind == ValueKind::Parameter || x.kind == ValueKind::Constant) && x.sizes != y.sizes) {
      refuse(batch, kiln::detail::str("constant ", a.value_name(static_cast<int>(v)), " is ",
                                      IntArrayRef(x.sizes), " and ", IntArrayRef(y.sizes)));
    }
  }
  for (size_t i = 0; i < a.nodes.size(); ++i) {
    const Node& x = a.nodes[i];
    const Node& y = b.nodes[i];
    std::string sx = arguments_of(a, x), sy = arguments_of(b, y);
    if (sx != sy || x.inputs != y.inputs || x.outputs != y.outputs) {
      refuse(batch, kiln::detail::str("node ", i, " is kiln::", sx, " and kiln::", sy));
    }
  }
}

}  // namespace kiln::jit::detail
