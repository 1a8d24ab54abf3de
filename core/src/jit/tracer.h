// The tracer: the state of one trace on its thread, filled by the Observe layer's calls.
#pragma once

#include <kiln/jit.h>

#include <unordered_map>
#include <unordered_set>

namespace kiln::detail {
// A host read of a tensor's values (host_bytes: item(), nonzero, ...) while a replay plan
// captures kernels (Note [Kernel capture], kernel_call.cpp): the node depends on values, so it
// does not run from its captured kernels. One relaxed load otherwise.
void note_host_read();
}  // namespace kiln::detail

namespace kiln::jit::detail {

struct Tracer {
  Graph graph;
  std::unordered_map<const TensorImpl*, int> value_of;  // the latest value of each tensor
  // the inputs and intermediates by storage, to find the value a detach() aliases
  std::unordered_map<const Storage*, std::vector<int>> by_storage;
  std::vector<char> read;  // per value: whether a recorded call has read it
  // constants (by tensor) written in place: their value before the first write
  std::unordered_map<const TensorImpl*, Tensor> initial;
  const std::unordered_map<const TensorImpl*, std::string>* parameters = nullptr;
  std::vector<Tensor> keep_alive;  // every tensor seen, so that no address is reused
  bool warned_value_read = false;
  bool warned_alias = false;

  // The value of a tensor an operator reads: known, or a new parameter or constant.
  int value_for(const Tensor& t);
  int add_value(const Tensor& t, ValueKind kind, std::string name = {});
  // A tensor with the storage and geometry of a traced value, made without an operator
  // (detach()): a detach node of that value; -1 when there is none.
  int detach_of(const Tensor& t);
};

// The trace running on this thread, or null.
Tracer* current_tracer();

// A traced call read a tensor's value on the host (item(), nonzero, printing, a bool of a
// tensor): warns once per trace that control flow depending on it is frozen. Costs a
// thread-local load when no trace runs.
void note_value_read(const char* what);

// The state of a TracedFunction that replays `graph` and does not retrace (jit::load).
std::shared_ptr<TracedState> loaded_state(Graph graph);

// A detach() node's call (a detach is not an operator).
std::unique_ptr<RecordedCall> make_detach_call();

// TraceOptions::dynamic (dynamic.cpp): throws a ValueError naming the first difference when
// `more`, traced at batch + 1, differs from `graph`, traced at batch, in anything but the
// batch's sizes (an operator, an argument, a constant's shape).
void check_batch_polymorphic(const Graph& graph, const Graph& more, int64_t batch);

// Runs fn on inputs while recording into a new graph.
Graph record(const TraceableFunction& fn, const std::vector<Tensor>& inputs,
             const std::unordered_map<const TensorImpl*, std::string>* parameters);

}  // namespace kiln::jit::detail
