// TracedFunction and TracedModule: the graph cache per input signature, and replay.
#include "passes.h"
#include "plan.h"
#include "tracer.h"

#include <kiln/autograd.h>
#include <kiln/dispatch.h>
#include <kiln/ops.h>
#include <kiln/profiler.h>

#include <mutex>
#include <sstream>

namespace kiln::jit {
namespace detail {
namespace {

struct InputKey {
  ScalarType dtype;
  std::vector<int64_t> sizes;
  Device device;
  friend bool operator==(const InputKey&, const InputKey&) = default;
};

struct Signature {
  std::vector<InputKey> inputs;
  bool training = false;
  uint32_t autocast = 0;
  friend bool operator==(const Signature&, const Signature&) = default;
};

std::string describe(const Signature& s) {
  std::ostringstream out;
  out << "(";
  for (size_t i = 0; i < s.inputs.size(); ++i) {
    out << (i ? ", " : "") << dtype_name(s.inputs[i].dtype) << IntArrayRef(s.inputs[i].sizes)
        << " on " << s.inputs[i].device;
  }
  out << ")";
  if (s.training) out << " in training mode";
  if (s.autocast) out << " under autocast";
  return out.str();
}

}  // namespace

// One signature's graph and what replay needs besides it.
struct Entry {
  Signature signature;
  Graph graph;
  std::vector<std::vector<int>> release;  // per node: values dead after it
  std::vector<char> clone_each_call;      // per value: a constant an in-place call writes
  bool parameters_require_grad = false;
  size_t planned_nodes = 0;  // the node count the plan above was made for
  std::vector<int> held;     // the parameters and constants, set in env at each call
  std::vector<Tensor> env;
  // Note [Replay plan] (plan.cpp): made by the first call without grad, profile or trace
  std::unique_ptr<ReplayPlan> fast;
};

struct TracedState {
  std::mutex mutex;
  TraceableFunction fn;
  TraceOptions options;
  std::unordered_map<const TensorImpl*, std::string> parameters;
  std::function<bool()> training;
  std::vector<std::unique_ptr<Entry>> entries;
  Entry* last = nullptr;

  Signature signature_of(const std::vector<Tensor>& inputs) const {
    Signature s;
    for (const Tensor& t : inputs) {
      KILN_CHECK_VALUE(t.defined(), "jit: a traced function was called with an undefined input");
      s.inputs.push_back({t.dtype(), std::vector<int64_t>(t.sizes().begin(), t.sizes().end()),
                          t.device()});
      if (options.dynamic && t.dim() > 0) s.inputs.back().sizes[0] = -1;  // the batch
    }
    s.training = training ? training() : false;
    s.autocast = kiln::detail::local_dispatch_state().autocast_device_types;
    return s;
  }

  // TraceOptions::dynamic: the batch size (dimension 0) every input of a dimension or more shares.
  int64_t batch_of(const std::vector<Tensor>& inputs) const {
    int64_t batch = -1;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Tensor& t = inputs[i];
      if (!t.defined() || t.dim() == 0) continue;
      KILN_CHECK_VALUE(batch < 0 || t.size(0) == batch, "jit: TraceOptions::dynamic: input ", i,
                       " has ", t.size(0), " rows where the inputs before it have ", batch,
                       "; every input of one or more dimensions has the batch as dimension 0 ",
                       "(pass the others as parameters or constants)");
      batch = t.size(0);
    }
    KILN_CHECK_VALUE(batch > 0, "jit: TraceOptions::dynamic needs an input with a batch ",
                     "dimension of at least one row (got ", batch < 0 ? "no such input" : "0 rows",
                     ")");
    return batch;
  }

  // Whether inputs (with the module's mode and the autocast state) have signature s; allocates
  // nothing (the common call).
  bool same_signature(const Signature& s, const std::vector<Tensor>& inputs) const {
    if (s.inputs.size() != inputs.size()) return false;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Tensor& t = inputs[i];
      const InputKey& k = s.inputs[i];
      if (!t.defined() || t.dtype() != k.dtype || t.device() != k.device) return false;
      if (options.dynamic && !k.sizes.empty() && k.sizes[0] == -1) {
        if (t.dim() != static_cast<int64_t>(k.sizes.size()) ||
            !t.sizes().slice(1).equals(IntArrayRef(k.sizes).slice(1))) {
          return false;
        }
      } else if (t.sizes() != IntArrayRef(k.sizes)) {
        return false;
      }
    }
    return s.autocast == kiln::detail::local_dispatch_state().autocast_device_types &&
           s.training == (training ? training() : false);
  }

  // A loaded graph's entry: the signature of its inputs' values.
  Entry& add_loaded(Graph graph) {
    auto e = std::make_unique<Entry>();
    for (int v : graph.inputs) {
      const Value& value = graph.values[static_cast<size_t>(v)];
      e->signature.inputs.push_back({value.dtype, value.sizes, value.device});
    }
    e->graph = std::move(graph);
    plan(*e);
    entries.push_back(std::move(e));
    last = entries.back().get();
    return *last;
  }

  Entry& make_entry(const std::vector<Tensor>& inputs, Signature signature) {
    auto e = std::make_unique<Entry>();
    e->signature = std::move(signature);
    auto record_optimized = [&](const std::vector<Tensor>& in) {
      Graph g = record(fn, in, parameters.empty() ? nullptr : &parameters);
      if (options.optimize) {
        eliminate_common_subexpressions(g);
        fold_constants(g);
        eliminate_dead_code(g);
      }
      return g;
    };
    e->graph = record_optimized(inputs);
    if (options.dynamic) {
      // a second trace at batch + 1: the graph is batch-polymorphic when nothing but the
      // batch's sizes differ (dynamic.cpp)
      int64_t batch = batch_of(inputs);
      std::vector<Tensor> more;
      {
        autograd::NoGradGuard no_grad;
        for (const Tensor& t : inputs) {
          more.push_back(t.dim() > 0 ? kiln::cat({t, t.narrow(0, 0, 1)}, 0) : t);
        }
      }
      check_batch_polymorphic(e->graph, record_optimized(more), batch);
    }
    if (options.optimize && options.fuse) {
      fuse_pointwise(e->graph);  // after the batch check, which compares unfused graphs
    }
    plan(*e);
    entries.push_back(std::move(e));
    return *entries.back();
  }

  // What replay needs besides the graph: which constants to copy, whether parameters need
  // grad, and when each value dies.
  static void plan(Entry& entry) {
    Entry* e = &entry;
    Graph& g = e->graph;
    e->parameters_require_grad = false;
    std::vector<char> mutated = mutated_values(g);
    e->clone_each_call.assign(g.values.size(), 0);
    e->held.clear();
    e->fast.reset();
    for (size_t v = 0; v < g.values.size(); ++v) {
      const Value& value = g.values[v];
      if (value.kind == ValueKind::Parameter || value.kind == ValueKind::Constant) {
        e->held.push_back(static_cast<int>(v));
      }
      e->clone_each_call[v] = value.kind == ValueKind::Constant && mutated[v];
      if (value.kind == ValueKind::Parameter && value.tensor.requires_grad()) {
        e->parameters_require_grad = true;
      }
    }
    // Liveness: an input or intermediate is released after the last node that reads it.
    std::vector<int> last_use(g.values.size(), -1);
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      for (int v : g.nodes[i].inputs) {
        if (v >= 0) last_use[static_cast<size_t>(v)] = static_cast<int>(i);
      }
    }
    for (int v : g.outputs) last_use[static_cast<size_t>(v)] = -1;
    e->release.assign(g.nodes.size(), {});
    for (size_t v = 0; v < g.values.size(); ++v) {
      if (last_use[v] >= 0) e->release[static_cast<size_t>(last_use[v])].push_back(int(v));
    }
    e->planned_nodes = g.nodes.size();
  }

  std::vector<Tensor> replay(Entry& e, const std::vector<Tensor>& inputs) {
    Graph& g = e.graph;
    if (e.planned_nodes != g.nodes.size()) plan(e);  // a pass ran on mutable_graph()
    std::vector<Tensor>& env = e.env;
    env.resize(g.values.size());
    bool grad = false;
    for (size_t i = 0; i < inputs.size(); ++i) {
      env[static_cast<size_t>(g.inputs[i])] = inputs[i];
      grad = grad || inputs[i].requires_grad();
    }
    for (int v : e.held) {
      const Value& value = g.values[static_cast<size_t>(v)];
      if (!e.clone_each_call[static_cast<size_t>(v)]) {
        env[static_cast<size_t>(v)] = value.tensor;
      } else {
        autograd::NoGradGuard no_grad;
        env[static_cast<size_t>(v)] =
            (value.initial.defined() ? value.initial : value.tensor).clone();
      }
    }
    grad = (grad || e.parameters_require_grad) && autograd::GradMode::is_enabled();
    bool dispatch = grad || profiler::is_profiling() || current_tracer() != nullptr;
    // Note [Replay plan]: a call without dispatch runs the planned kernels; the first one plans
    ReplayPlan* fast = nullptr;
    ReplayPlan* planning = nullptr;
    if (!dispatch && e.fast != nullptr && !e.fast->matches(inputs) && options.dynamic) {
      e.fast.reset();  // another batch size: plan again (the plan's kernels have fixed sizes)
    }
    if (!dispatch && e.fast != nullptr && e.fast->matches(inputs)) {
      fast = e.fast.get();
    } else if (!dispatch && e.fast == nullptr && options.plan) {
      e.fast = std::make_unique<ReplayPlan>(g, inputs);
      planning = e.fast.get();
    }
    struct DropUnfinishedPlan {  // a planning run that throws leaves no plan
      Entry& e;
      ReplayPlan* planning;
      ~DropUnfinishedPlan() {
        if (planning != nullptr) e.fast.reset();
      }
    } drop{e, planning};
    // Autocast's decisions are in the graph already.
    ExcludeDispatchKeyGuard no_autocast(DispatchKey::Autocast);
    std::vector<Tensor> outs;
    struct ClearSlots {
      Node* node = nullptr;
      ReplayPlan* planning = nullptr;
      ~ClearSlots() {
        if (node == nullptr) return;
        if (planning != nullptr) planning->abort_node();
        for (size_t k = 0; k < node->slots.size(); ++k) {
          if (node->inputs[k] >= 0) *node->slots[k] = Tensor();
        }
      }
    };
    struct ClearEnv {
      std::vector<Tensor>& env;
      ~ClearEnv() {
        for (Tensor& t : env) t = Tensor();
      }
    } clear_env{env};
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      Node& n = g.nodes[i];
      if (fast != nullptr && fast->is_fast(i)) {
        fast->run_node(i, env);
      } else {
        ClearSlots clear{&n, planning};
        for (size_t k = 0; k < n.slots.size(); ++k) {
          if (n.inputs[k] >= 0) *n.slots[k] = env[static_cast<size_t>(n.inputs[k])];
        }
        outs.clear();
        if (planning != nullptr) planning->begin_node();
        if (grad && !n.grad_enabled) {
          autograd::NoGradGuard no_grad;  // the function ran this call without grad
          n.call->run(dispatch, outs);
        } else {
          n.call->run(dispatch, outs);
        }
        if (outs.size() != n.outputs.size()) {
          throw Error(kiln::detail::str("jit: replaying ", n.call->op().name(), " gave ",
                                        outs.size(), " tensors where the ", "trace recorded ",
                                        n.outputs.size(),
                                        "; the graph depends on values the trace ",
                                        "froze: call the function eagerly"));
        }
        if (planning != nullptr) planning->end_node(i, outs);
        for (size_t k = 0; k < outs.size(); ++k) {
          if (n.outputs[k] >= 0) env[static_cast<size_t>(n.outputs[k])] = std::move(outs[k]);
        }
      }
      for (int v : e.release[i]) env[static_cast<size_t>(v)] = Tensor();
    }
    if (planning != nullptr) {
      planning->finish();
      drop.planning = nullptr;
    }
    std::vector<Tensor> result;
    result.reserve(g.outputs.size());
    for (int v : g.outputs) result.push_back(env[static_cast<size_t>(v)]);
    return result;
  }

  std::vector<Tensor> call(const std::vector<Tensor>& inputs) {
    std::lock_guard<std::mutex> lock(mutex);
    if (options.dynamic) batch_of(inputs);
    if (last != nullptr && same_signature(last->signature, inputs)) return replay(*last, inputs);
    Signature s = signature_of(inputs);
    Entry* found = nullptr;
    for (size_t i = 0; found == nullptr && i < entries.size(); ++i) {
      if (entries[i]->signature == s) found = entries[i].get();
    }
    if (found == nullptr && !fn) {
      throw ValueError(kiln::detail::str(
          "jit: the loaded graph was saved for ", describe(entries.front()->signature),
          " but called with ", describe(s),
          "; a loaded graph does not retrace: call it with inputs of the saved signature, or "
          "trace and save the function for these inputs"));
    }
    if (found == nullptr) {
      KILN_CHECK_VALUE(options.retrace || entries.empty(), "jit: the function was traced for ",
                       describe(entries.empty() ? s : entries.front()->signature),
                       " but called with ", describe(s),
                       "; trace it for these inputs, or keep TraceOptions::retrace (the default) "
                       "to retrace per signature");
      found = &make_entry(inputs, std::move(s));
    }
    last = found;
    return replay(*found, inputs);
  }
};

}  // namespace detail

std::vector<Tensor> TracedFunction::operator()(const std::vector<Tensor>& inputs) const {
  KILN_CHECK(state_ != nullptr, "jit: calling an empty TracedFunction; make it with jit::trace");
  return state_->call(inputs);
}

Tensor TracedFunction::forward(const Tensor& input) const {
  std::vector<Tensor> out = (*this)({input});
  KILN_CHECK_VALUE(!out.empty(), "jit: forward: the traced function returns no tensor");
  return out[0];
}

const Graph& TracedFunction::graph() const {
  KILN_CHECK(state_ != nullptr && state_->last != nullptr,
             "jit: graph(): an empty TracedFunction has no graph");
  return state_->last->graph;
}

Graph& TracedFunction::mutable_graph() {
  KILN_CHECK(state_ != nullptr && state_->last != nullptr,
             "jit: mutable_graph(): an empty TracedFunction has no graph");
  return state_->last->graph;
}

size_t TracedFunction::num_traces() const { return state_ ? state_->entries.size() : 0; }

ReplayStats TracedFunction::replay_stats() const {
  KILN_CHECK(state_ != nullptr && state_->last != nullptr,
             "jit: replay_stats(): an empty TracedFunction has no graph");
  std::lock_guard<std::mutex> lock(state_->mutex);
  const detail::Entry& e = *state_->last;
  ReplayStats stats;
  stats.nodes = e.graph.nodes.size();
  if (e.fast != nullptr && e.planned_nodes == e.graph.nodes.size()) {
    stats.planned = true;
    stats.fast_nodes = e.fast->num_fast();
    stats.shared_bytes = e.fast->pooled_bytes();
  }
  return stats;
}

namespace {

std::shared_ptr<detail::TracedState> make_state(
    TraceableFunction fn, const std::vector<Tensor>& example_inputs,
    std::unordered_map<const TensorImpl*, std::string> parameters, std::function<bool()> training,
    TraceOptions options) {
  auto state = std::make_shared<detail::TracedState>();
  state->fn = std::move(fn);
  state->options = options;
  state->parameters = std::move(parameters);
  state->training = std::move(training);
  detail::Signature s = state->signature_of(example_inputs);
  state->last = &state->make_entry(example_inputs, std::move(s));
  return state;
}

}  // namespace

namespace detail {
std::shared_ptr<TracedState> loaded_state(Graph graph) {
  auto state = std::make_shared<TracedState>();
  state->options.retrace = false;
  state->add_loaded(std::move(graph));
  return state;
}
}  // namespace detail

TracedFunction trace(TraceableFunction fn, std::vector<Tensor> example_inputs,
                     TraceOptions options) {
  KILN_CHECK_VALUE(fn != nullptr, "jit::trace: the function is empty");
  TracedFunction traced;
  traced.state_ = make_state(std::move(fn), example_inputs, {}, nullptr, options);
  return traced;
}

TracedFunction trace(std::function<Tensor(const Tensor&)> fn, const Tensor& example_input,
                     TraceOptions options) {
  KILN_CHECK_VALUE(fn != nullptr, "jit::trace: the function is empty");
  return trace(
      [fn = std::move(fn)](const std::vector<Tensor>& in) -> std::vector<Tensor> {
        KILN_CHECK_VALUE(in.size() == 1, "jit: the traced function takes one tensor, got ",
                         in.size());
        return {fn(in[0])};
      },
      std::vector<Tensor>{example_input}, options);
}

TracedModule::TracedModule(TraceableFunction fn, std::vector<Tensor> example_inputs,
                           std::unordered_map<const TensorImpl*, std::string> parameters,
                           std::function<bool()> training, TraceOptions options) {
  state_ = make_state(std::move(fn), example_inputs, std::move(parameters), std::move(training),
                      options);
}

}  // namespace kiln::jit
