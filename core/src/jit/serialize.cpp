// kiln::jit::save and load: a graph and its tensors in one safetensors file. The tensors of the
// parameters and constants are "v<id>" (a constant written in place also "v<id>.initial"); the
// graph is the text of graph_format.h in the metadata under "kiln.graph", its format version
// under "kiln.graph.version". See docs/graphs.md, "Saved graphs".
#include "arguments.h"
#include "fuse_call.h"
#include "graph_format.h"

#include "../tensor_internal.h"
#include "tracer.h"

#include <kiln/autograd.h>
#include <kiln/dispatch.h>
#include <kiln/jit.h>

#include <string>

namespace kiln::jit {
namespace detail {
namespace {

std::string tensor_key(size_t v) { return "v" + std::to_string(v); }

// A bool tensor is stored as U8: a constant the graph fills in place may start as any bytes
// (an empty() the graph writes), which safetensors' BOOL refuses.
Tensor file_tensor(const Tensor& t) {
  autograd::NoGradGuard no_grad;
  if (t.dtype() != kBool) return t.detach();
  Tensor c = t.contiguous();
  return kiln::detail::make_tensor(c.storage(), c.sizes(), c.strides(), c.storage_offset(), kByte);
}

}  // namespace

Graph build_graph(const std::string& path, const SavedGraph& saved, const NamedTensors& tensors,
                  Device device) {
  auto fail = [&](const std::string& where, const std::string& what) -> void {
    throw ValueError(kiln::detail::str("jit::load: ", path, ", ", where, ": ", what));
  };
  auto find_tensor = [&](const std::string& key) -> const Tensor* {
    for (const auto& [name, t] : tensors) {
      if (name == key) return &t;
    }
    return nullptr;
  };
  Graph g;
  for (size_t i = 0; i < saved.values.size(); ++i) {
    const SavedValue& s = saved.values[i];
    Value v;
    v.kind = static_cast<ValueKind>(s.kind);
    v.dtype = static_cast<ScalarType>(s.dtype);
    v.sizes = s.sizes;
    v.device = device;
    v.name = s.name;
    if (v.kind == ValueKind::Parameter || v.kind == ValueKind::Constant) {
      for (int initial = 0; initial <= (s.has_initial ? 1 : 0); ++initial) {
        std::string key = tensor_key(i) + (initial ? ".initial" : "");
        const Tensor* t = find_tensor(key);
        if (t == nullptr) {
          fail("value " + std::to_string(i),
               "the file has no tensor '" + key + "' for it; the file is incomplete: save again");
        }
        ScalarType stored = v.dtype == kBool ? kByte : v.dtype;
        if (t->dtype() != stored || t->sizes() != IntArrayRef(v.sizes)) {
          fail("tensor '" + key + "'",
               kiln::detail::str("it is ", dtype_name(t->dtype()), t->sizes(),
                                 " where the graph declares ", dtype_name(stored),
                                 IntArrayRef(v.sizes), "; the file is damaged: save again"));
        }
        Tensor on_device = v.dtype == kBool ? t->ne(0).to(device) : t->to(device);
        if (initial) {
          v.initial = on_device;
        } else {
          if (s.requires_grad && v.kind == ValueKind::Parameter) {
            KILN_CHECK_VALUE(is_floating_point(v.dtype), "jit::load: ", path, ", value ", i,
                             ": a parameter that requires grad must be floating point (it is ",
                             dtype_name(v.dtype), "); the file is damaged: save again");
            on_device.requires_grad_(true);
          }
          if (s.wrapped) {
            KILN_CHECK_VALUE(v.sizes.empty(), "jit::load: ", path, ", value ", i,
                             ": a wrapped number must have no dimensions; the file is damaged: "
                             "save again");
            on_device.impl().wrapped_number = true;
          }
          v.tensor = on_device;
        }
      }
    } else if (s.requires_grad || s.has_initial) {
      fail("value " + std::to_string(i), "only parameters and constants hold tensors");
    }
    g.values.push_back(std::move(v));
  }
  g.inputs = saved.inputs;
  g.outputs = saved.outputs;
  for (size_t i = 0; i < saved.nodes.size(); ++i) {
    const SavedNode& s = saved.nodes[i];
    std::string where = "node " + std::to_string(i) + " (" + s.kind + ")";
    Node n;
    n.grad_enabled = s.grad_enabled;
    ArgReader args(path + ", " + where + " arguments", s.arguments);
    if (s.kind == "detach") {
      n.call = make_detach_call();
      n.detach = true;
    } else if (CallLoader loader = find_call_loader(s.kind)) {
      n.call = loader(args);
    } else if (const OperatorBase* op = find_operator(s.kind)) {
      n.call = make_call(*op, args);
      if (n.call == nullptr) {
        fail(where, "the operator's signature is none that jit::load knows (a kiln bug: add it "
                    "to core/src/jit/serialize_calls.cpp)");
      }
    } else {
      fail(where, "unknown operator '" + s.kind +
                      "': the file was saved by a kiln with operators this one lacks, or a "
                      "plugin that registers it is not loaded; load it with that kiln");
    }
    if (n.call == nullptr) fail(where, "its loader made no call");
    if (!args.at_end()) args.fail("the end of the arguments");
    n.slots = n.call->tensor_slots();
    if (n.slots.size() != s.inputs.size()) {
      fail(where, kiln::detail::str("the call has ", n.slots.size(), " tensor arguments where ",
                                    "the node lists ", s.inputs.size(),
                                    "; the file is damaged: save again"));
    }
    n.inputs = s.inputs;
    n.outputs = s.outputs;
    g.nodes.push_back(std::move(n));
  }
  return g;
}

}  // namespace detail

void save(const TracedFunction& traced, const std::string& path) {
  const Graph& g = traced.graph();
  detail::SavedGraph saved;
  NamedTensors tensors;
  for (size_t i = 0; i < g.values.size(); ++i) {
    const Value& v = g.values[i];
    detail::SavedValue s;
    s.kind = static_cast<int>(v.kind);
    s.dtype = static_cast<int>(v.dtype);
    s.sizes = v.sizes;
    s.name = v.name;
    if (v.kind == ValueKind::Parameter || v.kind == ValueKind::Constant) {
      s.requires_grad = v.tensor.requires_grad();
      s.wrapped = v.tensor.impl().wrapped_number;
      tensors.emplace_back(detail::tensor_key(i), detail::file_tensor(v.tensor));
      if (v.initial.defined()) {
        s.has_initial = true;
        tensors.emplace_back(detail::tensor_key(i) + ".initial", detail::file_tensor(v.initial));
      }
    }
    saved.values.push_back(std::move(s));
  }
  saved.inputs = g.inputs;
  saved.outputs = g.outputs;
  // a fused group is saved as the nodes it keeps (load fuses again where the device can)
  std::vector<const Node*> nodes;
  for (const Node& n : g.nodes) {
    if (const auto* fused = dynamic_cast<const detail::FusedPointwiseCall*>(n.call.get())) {
      for (const Node& inner : fused->unfused_nodes()) nodes.push_back(&inner);
    } else {
      nodes.push_back(&n);
    }
  }
  for (const Node* node : nodes) {
    const Node& n = *node;
    detail::SavedNode s;
    s.grad_enabled = n.grad_enabled;
    s.inputs = n.inputs;
    s.outputs = n.outputs;
    detail::ArgWriter w;
    if (n.detach) {
      s.kind = "detach";
    } else if (const auto* savable = dynamic_cast<const detail::SavableCall*>(n.call.get())) {
      s.kind = savable->kind();
      savable->write_arguments(w);
    } else {
      s.kind = n.call->op().name();
      KILN_CHECK_VALUE(detail::write_call_arguments(*n.call, w), "jit::save: ", path,
                       ": the call of ", s.kind, " is of a kind that a saved graph cannot hold ",
                       "(a kiln bug: add its signature to core/src/jit/serialize_calls.cpp)");
    }
    s.arguments = std::move(w.text);
    saved.nodes.push_back(std::move(s));
  }
  SafetensorsMetadata metadata;
  metadata[detail::kGraphVersionKey] = std::to_string(detail::kGraphFormatVersion);
  metadata[detail::kGraphMetadataKey] = detail::write_graph_text(saved);
  kiln::save(tensors, path, metadata);
}

TracedFunction load(const std::string& path, Device device) {
  SafetensorsContents contents = load_safetensors(path);
  auto version = contents.metadata.find(detail::kGraphVersionKey);
  auto text = contents.metadata.find(detail::kGraphMetadataKey);
  KILN_CHECK_VALUE(version != contents.metadata.end() && text != contents.metadata.end(),
                   "jit::load: ", path, ": the metadata has no '", detail::kGraphMetadataKey,
                   "' and '", detail::kGraphVersionKey, "': the file is a safetensors file but ",
                   "not a saved graph; write one with kiln::jit::save");
  KILN_CHECK_VALUE(version->second == std::to_string(detail::kGraphFormatVersion),
                   "jit::load: ", path, ", field '", detail::kGraphVersionKey,
                   "': graph format version '", version->second.substr(0, 32),
                   "', this kiln reads version ", detail::kGraphFormatVersion,
                   ": load it with the kiln that saved it, or save it again with this one");
  detail::SavedGraph saved =
      detail::parse_graph_text(path + ", field '" + detail::kGraphMetadataKey + "'", text->second);
  Graph graph = detail::build_graph(path, saved, contents.tensors, device);
  fuse_pointwise(graph);
  TracedFunction traced;
  traced.state_ = detail::loaded_state(std::move(graph));
  return traced;
}

}  // namespace kiln::jit
