// The graph section's records, one per line:
//   value <id> <kind> <dtype> <requires_grad> <has_initial> <wrapped> <ndim> <sizes...> <name>
//   input <id>
//   node <kind> <grad_enabled> <n_in> <ids...> <n_out> <ids...> <arguments>
//   output <id>
//   end
// kind: 0 input, 1 parameter, 2 constant, 3 intermediate; dtype: kiln's ScalarType code;
// strings (names, kinds, the arguments) as <length>:<bytes>; an id of -1 is an undefined tensor.
#include "graph_format.h"

#include "arguments.h"

#include <kiln/error.h>

namespace kiln::jit::detail {

std::string write_graph_text(const SavedGraph& g) {
  std::string out;
  auto line = [&](ArgWriter& w) {
    out += w.text;
    out += '\n';
  };
  for (size_t i = 0; i < g.values.size(); ++i) {
    const SavedValue& v = g.values[i];
    ArgWriter w;
    w.str("value");
    w.i64(static_cast<int64_t>(i));
    w.i64(v.kind);
    w.i64(v.dtype);
    w.i64(v.requires_grad);
    w.i64(v.has_initial);
    w.i64(v.wrapped);
    w.i64(static_cast<int64_t>(v.sizes.size()));
    for (int64_t s : v.sizes) w.i64(s);
    w.str(v.name);
    line(w);
  }
  for (int v : g.inputs) {
    ArgWriter w;
    w.str("input");
    w.i64(v);
    line(w);
  }
  for (const SavedNode& n : g.nodes) {
    ArgWriter w;
    w.str("node");
    w.str(n.kind);
    w.i64(n.grad_enabled);
    w.i64(static_cast<int64_t>(n.inputs.size()));
    for (int v : n.inputs) w.i64(v);
    w.i64(static_cast<int64_t>(n.outputs.size()));
    for (int v : n.outputs) w.i64(v);
    w.str(n.arguments);
    line(w);
  }
  for (int v : g.outputs) {
    ArgWriter w;
    w.str("output");
    w.i64(v);
    line(w);
  }
  ArgWriter w;
  w.str("end");
  line(w);
  return out;
}

SavedGraph parse_graph_text(const std::string& where, const std::string& text) {
  ArgReader in(where, text);
  SavedGraph g;
  std::vector<char> defined;
  auto value_id = [&](bool allow_undefined) -> int {
    int64_t v = in.i64();
    if (allow_undefined && v == -1) return -1;
    if (v < 0 || static_cast<uint64_t>(v) >= g.values.size()) {
      in.fail(kiln::detail::str("a value id in [", allow_undefined ? "-1" : "0", ", ",
                                g.values.size(), ") (values are declared before use)"));
    }
    return static_cast<int>(v);
  };
  enum { kValues, kInputs, kNodes, kOutputs } stage = kValues;
  for (;;) {
    std::string tag = in.str();
    if (tag == "value") {
      if (stage != kValues) in.fail("the values before the inputs, nodes and outputs");
      if (g.values.size() == kMaxGraphValues) in.fail("at most 2^20 values");
      if (in.i64() != static_cast<int64_t>(g.values.size())) {
        in.fail(kiln::detail::str("value id ", g.values.size(), " (ids count up from 0)"));
      }
      SavedValue v;
      v.kind = static_cast<int>(in.count(3));
      v.dtype = static_cast<int>(in.count(9));
      v.requires_grad = in.count(1) == 1;
      v.has_initial = in.count(1) == 1;
      v.wrapped = in.count(1) == 1;
      size_t ndim = in.count(kMaxDims);
      // Note [Checked sizes]: the product (each 0 counted as 1) times 8 bytes fits int64
      int64_t product = 1;
      for (size_t d = 0; d < ndim; ++d) {
        int64_t s = in.i64();
        if (s < 0) in.fail("a size >= 0");
        int64_t f = s == 0 ? 1 : s;
        if (product > (int64_t{1} << 59) / f) in.fail("sizes whose product fits 2^59 elements");
        product *= f;
        v.sizes.push_back(s);
      }
      v.name = in.str();
      if (v.name.size() > 4096) in.fail("a name of at most 4096 bytes");
      if ((v.has_initial || v.wrapped) && v.kind != 2) {
        in.fail("an initial value or a wrapped number on a constant only");
      }
      defined.push_back(v.kind != 3);
      g.values.push_back(std::move(v));
    } else if (tag == "input") {
      if (stage > kInputs) in.fail("the inputs before the nodes and outputs");
      stage = kInputs;
      int v = value_id(false);
      if (g.values[size_t(v)].kind != 0) in.fail("an input to be a value of kind 0 (input)");
      for (int u : g.inputs) {
        if (u == v) in.fail("each input once");
      }
      g.inputs.push_back(v);
    } else if (tag == "node") {
      if (stage > kNodes) in.fail("the nodes before the outputs");
      stage = kNodes;
      SavedNode n;
      n.kind = in.str();
      n.grad_enabled = in.count(1) == 1;
      size_t n_in = in.count(kMaxNodeOperands);
      for (size_t k = 0; k < n_in; ++k) {
        int v = value_id(true);
        if (v >= 0 && !defined[size_t(v)]) {
          in.fail(kiln::detail::str("an input of the node defined before it (value ", v,
                                    " is not)"));
        }
        n.inputs.push_back(v);
      }
      size_t n_out = in.count(kMaxNodeOperands);
      for (size_t k = 0; k < n_out; ++k) {
        int v = value_id(true);
        if (v >= 0 && (g.values[size_t(v)].kind != 3 || defined[size_t(v)])) {
          in.fail(kiln::detail::str("an output of the node that is an intermediate defined ",
                                    "nowhere else (value ", v, " is not)"));
        }
        if (v >= 0) defined[size_t(v)] = 1;
        n.outputs.push_back(v);
      }
      n.arguments = in.str();
      g.nodes.push_back(std::move(n));
    } else if (tag == "output") {
      stage = kOutputs;
      int v = value_id(false);
      if (!defined[size_t(v)]) in.fail(kiln::detail::str("an output that a node defines"));
      g.outputs.push_back(v);
    } else if (tag == "end") {
      break;
    } else {
      in.fail("a record: value, input, node, output or end");
    }
  }
  if (!in.at_end()) in.fail("nothing after the end record");
  size_t inputs = 0;
  for (const SavedValue& v : g.values) inputs += v.kind == 0;
  if (inputs != g.inputs.size()) in.fail("an input record for each value of kind 0");
  return g;
}

}  // namespace kiln::jit::detail
