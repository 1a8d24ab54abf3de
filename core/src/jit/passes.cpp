// The graph passes: dead-code elimination, common subexpressions, constant folding.
#include "passes.h"

#include <kiln/autograd.h>
#include <kiln/dispatch.h>

#include <map>
#include <sstream>
#include <string_view>

namespace kiln::jit {
namespace detail {

bool is_random(const OperatorBase& op) {
  std::string_view name = op.name();
  for (std::string_view word : {"rand", "uniform", "normal", "bernoulli", "dropout", "multinomial",
                                "exponential", "poisson", "cauchy", "geometric", "random"}) {
    if (name.find(word) != std::string_view::npos) return true;
  }
  return false;
}

bool has_effects(const OperatorBase& op) { return op.is_inplace() || is_random(op); }

std::vector<char> mutated_values(const Graph& graph) {
  // Values an in-place call may write: its target and everything the target was made from
  // (a view shares its base's memory), over-approximated by every value the target derives from.
  std::vector<std::vector<int>> made_from(graph.values.size());
  for (const Node& n : graph.nodes) {
    for (int out : n.outputs) {
      if (out < 0) continue;
      for (int in : n.inputs) {
        if (in >= 0) made_from[static_cast<size_t>(out)].push_back(in);
      }
    }
  }
  std::vector<char> mutated(graph.values.size(), 0);
  std::vector<int> work;
  for (const Node& n : graph.nodes) {
    if (n.call->op().is_inplace() && !n.inputs.empty() && n.inputs[0] >= 0) {
      work.push_back(n.inputs[0]);
    }
  }
  while (!work.empty()) {
    int v = work.back();
    work.pop_back();
    if (mutated[static_cast<size_t>(v)]) continue;
    mutated[static_cast<size_t>(v)] = 1;
    for (int from : made_from[static_cast<size_t>(v)]) work.push_back(from);
  }
  return mutated;
}

std::string cse_name(const Graph& graph, int v) {
  if (v >= 0) {
    const Value& value = graph.values[static_cast<size_t>(v)];
    // a one-element constant (a wrapped scalar) by its value: `x + 1` twice is the same call
    if (value.kind == ValueKind::Constant && value.tensor.numel() == 1) {
      std::ostringstream out;
      out.precision(17);
      out << "k" << dtype_name(value.dtype) << IntArrayRef(value.sizes) << value.device << "="
          << value.tensor.item().to<double>();
      return out.str();
    }
  }
  return "#" + std::to_string(v);
}

void remove_nodes(Graph& graph, const std::vector<char>& dead) {
  std::vector<Node> kept;
  kept.reserve(graph.nodes.size());
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    if (!dead[i]) kept.push_back(std::move(graph.nodes[i]));
  }
  graph.nodes = std::move(kept);
}

}  // namespace detail

int eliminate_dead_code(Graph& graph) {
  std::vector<char> live(graph.values.size(), 0);
  for (int v : graph.outputs) live[static_cast<size_t>(v)] = 1;
  std::vector<char> dead(graph.nodes.size(), 0);
  int removed = 0;
  for (size_t i = graph.nodes.size(); i-- > 0;) {
    const Node& n = graph.nodes[i];
    bool keep = detail::has_effects(n.call->op());
    for (int v : n.outputs) keep = keep || (v >= 0 && live[static_cast<size_t>(v)]);
    if (!keep) {
      dead[i] = 1;
      ++removed;
      continue;
    }
    for (int v : n.inputs) {
      if (v >= 0) live[static_cast<size_t>(v)] = 1;
    }
  }
  detail::remove_nodes(graph, dead);
  return removed;
}

int eliminate_common_subexpressions(Graph& graph) {
  // Only after the last in-place call: before it, a later write could reach one copy and not the
  // other.
  size_t start = 0;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    if (graph.nodes[i].call->op().is_inplace()) start = i + 1;
  }
  std::vector<int> replace(graph.values.size());
  for (size_t v = 0; v < replace.size(); ++v) replace[v] = static_cast<int>(v);
  std::map<std::string, size_t> seen;
  std::vector<char> dead(graph.nodes.size(), 0);
  int removed = 0;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    Node& n = graph.nodes[i];
    for (int& v : n.inputs) {
      if (v >= 0) v = replace[static_cast<size_t>(v)];
    }
    if (i < start || detail::has_effects(n.call->op())) continue;
    std::ostringstream key;
    key << static_cast<const void*>(&n.call->op()) << "|" << n.grad_enabled << "|";
    std::vector<std::string> names;
    for (int v : n.inputs) names.push_back(detail::cse_name(graph, v));
    n.call->print_arguments(key, names);
    auto [it, added] = seen.try_emplace(key.str(), i);
    if (added) continue;
    const Node& first = graph.nodes[it->second];
    if (first.outputs.size() != n.outputs.size()) continue;
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      if (n.outputs[k] >= 0) replace[static_cast<size_t>(n.outputs[k])] = first.outputs[k];
    }
    dead[i] = 1;
    ++removed;
  }
  for (int& v : graph.outputs) v = replace[static_cast<size_t>(v)];
  detail::remove_nodes(graph, dead);
  return removed;
}

int fold_constants(Graph& graph) {
  std::vector<char> mutated = detail::mutated_values(graph);
  std::vector<char> dead(graph.nodes.size(), 0);
  int removed = 0;
  autograd::NoGradGuard no_grad;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    Node& n = graph.nodes[i];
    if (detail::has_effects(n.call->op()) || n.outputs.empty()) continue;
    bool all_constant = false;
    for (int v : n.inputs) {
      if (v < 0) continue;
      const Value& value = graph.values[static_cast<size_t>(v)];
      if (value.kind != ValueKind::Constant || mutated[static_cast<size_t>(v)]) {
        all_constant = false;
        break;
      }
      all_constant = true;
    }
    if (!all_constant) continue;
    for (size_t k = 0; k < n.slots.size(); ++k) {
      if (n.inputs[k] >= 0) *n.slots[k] = graph.values[static_cast<size_t>(n.inputs[k])].tensor;
    }
    std::vector<Tensor> outs;
    n.call->run(/*dispatch=*/false, outs);
    for (size_t k = 0; k < n.slots.size(); ++k) {
      if (n.inputs[k] >= 0) *n.slots[k] = Tensor();
    }
    if (outs.size() != n.outputs.size()) continue;
    for (size_t k = 0; k < outs.size(); ++k) {
      int v = n.outputs[k];
      if (v < 0) continue;
      Value& value = graph.values[static_cast<size_t>(v)];
      value.kind = ValueKind::Constant;
      value.tensor = outs[k];
    }
    dead[i] = 1;
    ++removed;
  }
  detail::remove_nodes(graph, dead);
  return removed;
}

}  // namespace kiln::jit
