// Helpers the graph passes and replay share.
#pragma once

#include <kiln/jit.h>

#include <string>
#include <vector>

namespace kiln::jit::detail {

// An operator that draws random numbers (never merged, folded or removed).
bool is_random(const OperatorBase& op);
// In place or random: a call that must run even when nothing uses its outputs.
bool has_effects(const OperatorBase& op);
// Per value: whether an in-place call may write it (it, or a value made from it, is a target).
std::vector<char> mutated_values(const Graph& graph);
// How common-subexpression keys name value v: by id, a one-element constant by its value.
std::string cse_name(const Graph& graph, int v);
// Removes the nodes marked dead.
void remove_nodes(Graph& graph, const std::vector<char>& dead);

}  // namespace kiln::jit::detail
