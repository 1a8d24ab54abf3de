// Graph capture and replay, as TorchScript's tracer (torch.jit.trace): run a function once on
// example inputs, record every operator it dispatches into a graph, optimize the graph, and
// replay it:
//
//   auto traced = kiln::jit::trace_module(model, {kiln::randn({64, 2})});
//   kiln::Tensor y = traced.forward(x);      // replays the graph; retraces for other shapes
//   std::cout << traced.graph().str();       // TorchScript-style IR dump
//
// Capture is the Observe dispatch layer (See Note [The Observe layer] in kiln/dispatch.h): the
// calls the traced function makes are recorded (not the ones they make in turn), after
// Autocast, so that its casts and the lower-precision operators it picks are in the graph.
// Control flow that depends on tensor values is frozen, as in TorchScript: a traced call that
// reads a value (item(), nonzero, a bool of a tensor, printing) warns once. See docs/graphs.md.
#pragma once

#include <kiln/export.h>
#include <kiln/jit/recorded_call.h>
#include <kiln/tensor.h>

#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

namespace kiln::jit {

enum class ValueKind { Input, Parameter, Constant, Intermediate };

// A value of the graph: a traced function's input, a parameter or buffer (referenced, not
// copied), a constant (a tensor the function captured, kept), or an operator's output.
struct Value {
  ValueKind kind = ValueKind::Intermediate;
  ScalarType dtype = kFloat;
  std::vector<int64_t> sizes;
  Device device = kCPU;
  Tensor tensor;     // Parameter and Constant: the tensor itself
  Tensor initial;    // a Constant the graph writes in place: its value before the first write
  std::string name;  // a parameter's name; empty otherwise
};

// An operator call: its recorded arguments, the values in its tensor slots (-1: an undefined
// tensor, left as recorded) and the values it returns.
struct Node {
  std::unique_ptr<detail::RecordedCall> call;
  std::vector<int> inputs;
  std::vector<int> outputs;
  std::vector<Tensor*> slots;  // into call's arguments, one per input
  bool grad_enabled = true;    // grad mode at trace time (a no_grad region of the function)
  bool detach = false;         // a detach() (not an operator in kiln): prints as kiln::detach
};

class KILN_API Graph {
 public:
  Graph() = default;
  Graph(Graph&&) = default;
  Graph& operator=(Graph&&) = default;

  std::vector<Value> values;
  std::vector<Node> nodes;
  std::vector<int> inputs;
  std::vector<int> outputs;

  // The graph in TorchScript's IR style:
  //   graph(%x : Float(2, 3, device=cpu),
  //         %weight : Float(4, 3, device=cpu) [parameter]):
  //     %2 : Float(2, 4, device=cpu) = linear(%x, %weight, %bias)
  //     return (%2)
  std::string str() const;
  // The name a value prints as ("%x", "%weight", "%5").
  std::string value_name(int v) const;
};

// The passes (also run by trace unless TraceOptions::optimize is false); each returns how many
// nodes it removed.
// Removes the nodes whose outputs nothing uses, but never one that writes in place or draws
// random numbers.
KILN_API int eliminate_dead_code(Graph& graph);
// Merges a node with an earlier one of the same operator, arguments and inputs (deterministic,
// not in place, no in-place call in between).
KILN_API int eliminate_common_subexpressions(Graph& graph);
// Runs the nodes whose tensor inputs are all constants (deterministic, not in place, inputs
// nothing writes) at optimization time; their outputs become constants.
KILN_API int fold_constants(Graph& graph);
// Fuses chains of pointwise nodes (same sizes, device and compute type; inputs may broadcast) into
// one node that runs a pointwise program through the optional primitive fused_pointwise
// (kiln/jit/fused_pointwise.h), on devices that have it; under grad it runs the original nodes.
// Returns how many nodes it removed (a group of k nodes removes k - 1). See docs/graphs.md.
KILN_API int fuse_pointwise(Graph& graph);

struct TraceOptions {
  // A call whose inputs differ from every trace's in shape, dtype or device (or whose module
  // mode or autocast state differs) traces again, and the graph is cached per signature; false:
  // such a call raises a kiln::ValueError.
  bool retrace = true;
  // Run dead-code elimination, common subexpressions, constant folding and (with `fuse`)
  // pointwise fusion on each trace.
  bool optimize = true;
  // With optimize: fuse chains of pointwise operators into one fused_pointwise call where the
  // device has that primitive (kiln::jit::fuse_pointwise); false keeps one node per operator.
  bool fuse = true;
  // Replay without grad from a plan (the kernels each node calls, argument blocks built once,
  // intermediates in buffers shared by liveness: docs/graphs.md, "Replay"); false: each node
  // runs its Backend kernel (shape rules, allocation) at every call.
  bool plan = true;
  // Keep dimension 0 of the inputs (the batch: every input of one or more dimensions has it)
  // symbolic: a call with another batch size replays the same graph without retracing. The
  // function is traced twice (at the example's batch and one more row; a module's running
  // statistics see both), and the option is refused with a kiln::ValueError naming the first
  // node whose arguments depend on the batch (a view or reshape with the batch written in: write
  // -1 or flatten instead, a factory of the batch's size). Replay plans again for each new batch
  // size. A saved graph keeps its traced batch.
  bool dynamic = false;
};

// What the plan of the most recent signature does (tests, kiln-graph).
struct ReplayStats {
  size_t nodes = 0;
  bool planned = false;     // a call without grad made the plan
  size_t fast_nodes = 0;    // nodes replayed from their captured kernels
  size_t shared_bytes = 0;  // the storages intermediates share, allocated once
};

using TraceableFunction = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

namespace detail {
struct TracedState;
}

// A traced function: replays its graph (the one of the inputs' signature). Without grad, the
// first call runs the Backend kernel of each node and learns the plugin kernels it calls; the
// next calls run those kernels straight (argument blocks built once, data pointers patched),
// intermediates in storages shared by liveness and allocated once, results in fresh storages
// (docs/graphs.md, "Replay"). Under grad mode (when an input or a parameter requires grad), or
// while a profile or another trace records, it dispatches each node instead, so that autograd
// records. Intermediates are released after their last use.
// Calls on one TracedFunction are serialized (a mutex); copies share the cache.
class KILN_API TracedFunction {
 public:
  TracedFunction() = default;
  std::vector<Tensor> operator()(const std::vector<Tensor>& inputs) const;
  // The first output of a call with one input.
  Tensor forward(const Tensor& input) const;
  // The graph of the most recent trace or call.
  const Graph& graph() const;
  // The same, for running passes on it (they remove nodes; the next call plans again). Not
  // while another thread calls this function.
  Graph& mutable_graph();
  // How many signatures have a graph (traces made).
  size_t num_traces() const;
  // The replay plan of the most recent signature's graph.
  ReplayStats replay_stats() const;

 protected:
  friend KILN_API TracedFunction trace(TraceableFunction fn, std::vector<Tensor> example_inputs,
                                       TraceOptions options);
  friend class TracedModule;
  friend KILN_API TracedFunction load(const std::string& path, Device device);
  std::shared_ptr<detail::TracedState> state_;
};

// Writes the graph of traced's most recent signature and its parameters' and constants' values
// to one safetensors file: the tensors as "v<id>", the graph as a versioned text in the
// metadata (docs/graphs.md, "Saved graphs"). Throws kiln::ValueError for a call whose arguments
// a saved graph cannot hold.
KILN_API void save(const TracedFunction& traced, const std::string& path);
// Loads a graph written by save, with its tensors on `device` (any device a plugin provides): a
// TracedFunction of that signature, which needs none of the code that was traced (operators
// are found by name). It does not retrace: a call with another signature raises. Every field of
// the file is checked; a damaged file, another format version or an unknown operator raises
// kiln::ValueError naming the file, the byte and what to do.
KILN_API TracedFunction load(const std::string& path, Device device = kCPU);

// Traces `fn` on example_inputs (it runs once, eagerly; its results are discarded).
KILN_API TracedFunction trace(TraceableFunction fn, std::vector<Tensor> example_inputs,
                              TraceOptions options = {});
// The same, for a function of one tensor returning one.
KILN_API TracedFunction trace(std::function<Tensor(const Tensor&)> fn, const Tensor& example_input,
                              TraceOptions options = {});

// A traced module: its parameters and buffers are the graph's parameters, referenced (an
// optimizer's updates are seen by the next call); the module's train/eval mode is part of the
// signature.
class KILN_API TracedModule : public TracedFunction {
 public:
  TracedModule() = default;
  TracedModule(TraceableFunction fn, std::vector<Tensor> example_inputs,
               std::unordered_map<const TensorImpl*, std::string> parameters,
               std::function<bool()> training, TraceOptions options);
};

// Traces `module->forward` (a ModuleHolder or a shared_ptr to a module) on 1 to 3 tensors.
template <class M>
TracedModule trace_module(M module, std::vector<Tensor> example_inputs, TraceOptions options = {}) {
  std::unordered_map<const TensorImpl*, std::string> parameters;
  for (const auto& item : module->named_parameters()) {
    parameters.emplace(item.value().impl_ptr().get(), item.key());
  }
  for (const auto& item : module->named_buffers()) {
    parameters.emplace(item.value().impl_ptr().get(), item.key());
  }
  TraceableFunction fn = [module](const std::vector<Tensor>& in) -> std::vector<Tensor> {
    auto out = [&] {
      switch (in.size()) {
        case 1:
          if constexpr (requires { module->forward(in[0]); }) return module->forward(in[0]);
          break;
        case 2:
          if constexpr (requires { module->forward(in[0], in[1]); }) {
            return module->forward(in[0], in[1]);
          }
          break;
        case 3:
          if constexpr (requires { module->forward(in[0], in[1], in[2]); }) {
            return module->forward(in[0], in[1], in[2]);
          }
          break;
        default: break;
      }
      throw ValueError(kiln::detail::str("trace_module: the module's forward does not take ",
                                         in.size(), " tensors"));
    }();
    if constexpr (std::is_same_v<std::decay_t<decltype(out)>, Tensor>) {
      return {out};
    } else {
      return std::vector<Tensor>(out.begin(), out.end());
    }
  };
  std::function<bool()> training = [module] { return module->is_training(); };
  return TracedModule(std::move(fn), std::move(example_inputs), std::move(parameters),
                      std::move(training), options);
}

}  // namespace kiln::jit
