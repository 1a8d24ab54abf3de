// The backward engine: walks the graph from the outputs' gradient edges in reverse creation
// order, on the calling thread, device-agnostic (every step is kiln operators). Grad mode and
// inference mode are in grad_mode.cpp.
#include "function.h"

#include "../tensor_internal.h"

#include <kiln/autograd.h>
#include <kiln/autograd/queue_callback.h>
#include <kiln/error.h>
#include <kiln/ops.h>
#include <kiln/warning.h>

#include <atomic>
#include <cstdlib>
#include <deque>
#include <execinfo.h>  // backtrace, for anomaly mode
#include <functional>
#include <mutex>
#include <queue>
#include <unordered_map>
#include <unordered_set>

namespace kiln::autograd {
namespace {

// Adds leaf gradients into .grad().
class AccumulateGrad : public Node {
 public:
  explicit AccumulateGrad(Tensor variable) : variable_(std::move(variable)) {
    add_output(variable_);
  }
  std::string name() const override { return "AccumulateGrad"; }

  std::vector<Tensor> apply(std::vector<Tensor>&& grads) override {
    Tensor g = grads.at(0);
    if (!g.defined()) return {};
    AutogradMeta& m = detail::meta(variable_);
    for (const Hook& hook : m.hooks) {
      if (!hook) continue;  // removed
      Tensor r = hook(g);
      if (r.defined()) g = r;
    }
    accumulate(m.grad, g);
    run_post_hooks(variable_);
    return {};
  }

  // The hooks of autograd::register_post_accumulate_grad_hook, in order (by index: a hook may
  // register another).
  static void run_post_hooks(const Tensor& variable) {
    AutogradMeta& m = detail::meta(variable);
    for (size_t i = 0; i < m.post_accumulate_hooks.size(); ++i) {
      auto hook = m.post_accumulate_hooks[i];
      if (hook) hook(variable);
    }
  }

  // grad += g; without create_graph the gradient is a plain tensor updated in place.
  static void accumulate(Tensor& grad, const Tensor& g) {
    if (GradMode::is_enabled()) {
      grad = grad.defined() ? grad + g : g;
      return;
    }
    if (!grad.defined()) {
      // the engine's buffer is ours alone; anything else (a user's gradient) is copied
      bool owned = g.impl_ptr().use_count() <= 2 && g.storage().use_count() == 1 &&
                   g.is_contiguous() && !g.requires_grad();
      grad = owned ? g.detach() : g.detach().clone();
    } else {
      grad.add_(g.detach());
    }
  }

 private:
  Tensor variable_;
};

struct GraphTask {
  bool keep_graph = false;
  std::unordered_map<Node*, int> dependencies;
  std::unordered_map<Node*, std::vector<Tensor>> buffers;
  // grad(): gradients to capture at (node, input_nr), and the nodes worth executing
  std::unordered_map<Node*, std::vector<std::pair<uint32_t, size_t>>> captures;
  std::vector<Tensor> captured;
  std::unordered_set<Node*> needed;
  bool capturing = false;
};

void add_to_buffer(std::vector<Tensor>& buffer, uint32_t index, const Tensor& g, size_t size) {
  if (buffer.size() < size) buffer.resize(size);
  buffer[index] = buffer[index].defined() ? buffer[index] + g : g;
}

void compute_dependencies(GraphTask& task, const std::vector<Node*>& roots) {
  std::vector<Node*> stack = roots;
  std::unordered_set<Node*> seen(roots.begin(), roots.end());
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    for (const Edge& e : n->next_edges()) {
      if (!e.is_valid()) continue;
      Node* next = e.function.get();
      ++task.dependencies[next];
      if (seen.insert(next).second) stack.push_back(next);
    }
  }
}

// Nodes from which a captured gradient is reachable (only they run in grad()).
bool mark_needed(GraphTask& task, Node* n, std::unordered_map<Node*, bool>& memo) {
  auto it = memo.find(n);
  if (it != memo.end()) return it->second;
  memo[n] = false;
  bool needed = false;
  for (const Edge& e : n->next_edges()) {
    if (!e.is_valid()) continue;
    bool child = task.captures.count(e.function.get()) != 0;
    child = mark_needed(task, e.function.get(), memo) || child;
    needed = needed || child;
  }
  memo[n] = needed;
  if (needed) task.needed.insert(n);
  return needed;
}

Tensor checked_gradient(const Node& from, size_t index, const Edge& edge, Tensor g) {
  const OutputMeta& m = edge.function->output_meta().at(edge.input_nr);
  if (!g.sizes().equals(m.sizes)) {
    throw Error(str("Function ", from.name(), " returned an invalid gradient at index ", index,
                    " - got ", g.sizes(), " but expected shape compatible with ",
                    IntArrayRef(m.sizes)));
  }
  if (g.dtype() != m.dtype) g = g.to(m.dtype);
  return g;
}

std::atomic<bool> g_anomaly_enabled{false};
std::atomic<bool> g_anomaly_check_nan{true};

// Anomaly mode's check of a node's results, as PyTorch's (engine.cpp, call_function).
void check_nan(const Node& n, const std::vector<Tensor>& outputs) {
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Tensor& g = outputs[i];
    if (!g.defined() || !g.is_floating_point()) continue;
    bool nan = false;
    {
      NoGradGuard no_grad;  // a check, not part of any graph
      nan = isnan(g).any().item<bool>();
    }
    if (nan) {
      throw Error(str("Function '", n.name(), "' returned nan values in its ", i, "th output."));
    }
  }
}

// Anomaly mode's record of where each node was made, as PyTorch's AnomalyMetadata: a backtrace
// taken when a node is created while anomaly mode is on, kept in a table beside the nodes, and
// printed in the warning before an error of its backward propagates. Costs
// nothing while anomaly mode is off: g_trace_count stays 0.
std::mutex g_trace_mutex;
std::unordered_map<const Node*, std::string> g_traces;
std::atomic<size_t> g_trace_count{0};

std::string current_backtrace() {
  void* frames[64];
  const int n = ::backtrace(frames, 64);
  std::string out;
  char** symbols = ::backtrace_symbols(frames, n);
  for (int i = 1; i < n; ++i) {  // frame 0 is this function
    out += str("  #", i - 1, " ", symbols != nullptr ? symbols[i] : "?", "\n");
  }
  std::free(symbols);
  return out;
}

void remember_forward(const Node* node) {
  std::string trace = current_backtrace();
  std::lock_guard<std::mutex> lock(g_trace_mutex);
  if (g_traces.insert_or_assign(node, std::move(trace)).second) g_trace_count.fetch_add(1);
}

void forget_forward(const Node* node) {
  if (g_trace_count.load(std::memory_order_relaxed) == 0) return;
  std::lock_guard<std::mutex> lock(g_trace_mutex);
  if (g_traces.erase(node) > 0) g_trace_count.fetch_sub(1);
}

[[noreturn]] void rethrow_with_forward_trace(const Node& n) {
  std::string trace;
  {
    std::lock_guard<std::mutex> lock(g_trace_mutex);
    if (auto it = g_traces.find(&n); it != g_traces.end()) trace = it->second;
  }
  if (trace.empty()) {
    KILN_WARN("Error detected in ", n.name(), ". No forward pass information available. Enable ",
              "detect anomaly during forward pass for more information.");
  } else {
    KILN_WARN("Error detected in ", n.name(), ". Traceback of forward call that caused the ",
              "error:\n", trace);
  }
  throw;
}

// A node's backward, with its result checked for NaN in anomaly mode.
std::vector<Tensor> apply_node(GraphTask& task, Node* n, std::vector<Tensor>&& grads) {
  std::vector<Tensor> outputs = n->apply(std::move(grads));
  if (!task.keep_graph) n->release_variables();
  if (AnomalyMode::is_enabled() && AnomalyMode::should_check_nan()) check_nan(*n, outputs);
  return outputs;
}

void execute(GraphTask& task, Node* n) {
  std::vector<Tensor> grads = std::move(task.buffers[n]);
  task.buffers.erase(n);
  grads.resize(n->output_meta().size());
  for (const auto& [output_nr, hook] : n->output_hooks()) {
    if (hook && output_nr < grads.size() && grads[output_nr].defined()) {
      Tensor r = hook(grads[output_nr]);
      if (r.defined()) grads[output_nr] = r;
    }
  }
  if (auto it = task.captures.find(n); it != task.captures.end()) {
    for (auto [input_nr, slot] : it->second) {
      if (input_nr < grads.size()) task.captured[slot] = grads[input_nr];
    }
  }
  if (task.capturing && task.needed.count(n) == 0) return;
  std::vector<Tensor> outputs;
  if (AnomalyMode::is_enabled()) {
    try {
      outputs = apply_node(task, n, std::move(grads));
    } catch (...) {
      rethrow_with_forward_trace(*n);
    }
  } else {
    outputs = apply_node(task, n, std::move(grads));
  }
  const std::vector<Edge>& edges = n->next_edges();
  for (size_t i = 0; i < edges.size() && i < outputs.size(); ++i) {
    if (!edges[i].is_valid() || !outputs[i].defined()) continue;
    Tensor g = checked_gradient(*n, i, edges[i], outputs[i]);
    Node* next = edges[i].function.get();
    add_to_buffer(task.buffers[next], edges[i].input_nr, g, next->output_meta().size());
  }
}

// queue_callback's queue: the depth of nested backward passes on this thread, and the callbacks
// of the outermost one.
thread_local int t_backward_depth = 0;
thread_local std::deque<std::function<void()>> t_callbacks;

struct BackwardScope {
  BackwardScope() { ++t_backward_depth; }
  ~BackwardScope() {
    if (--t_backward_depth == 0) t_callbacks.clear();  // after a failure: drop them
  }
  // Runs the callbacks queued during the outermost pass.
  void finish() {
    if (t_backward_depth != 1) return;
    while (!t_callbacks.empty()) {
      std::function<void()> f = std::move(t_callbacks.front());
      t_callbacks.pop_front();
      f();
    }
  }
};

void run(GraphTask& task, const std::vector<Edge>& roots, const std::vector<Tensor>& root_grads) {
  BackwardScope scope;
  std::vector<Node*> root_nodes;
  for (size_t i = 0; i < roots.size(); ++i) {
    Node* n = roots[i].function.get();
    add_to_buffer(task.buffers[n], roots[i].input_nr, root_grads[i], n->output_meta().size());
    root_nodes.push_back(n);
  }
  compute_dependencies(task, root_nodes);
  if (task.capturing) {
    std::unordered_map<Node*, bool> memo;
    for (Node* n : root_nodes) mark_needed(task, n, memo);
  }
  auto later_first = [](Node* a, Node* b) { return a->sequence_nr() < b->sequence_nr(); };
  std::priority_queue<Node*, std::vector<Node*>, decltype(later_first)> ready(later_first);
  std::unordered_set<Node*> queued;
  for (Node* n : root_nodes) {
    if (task.dependencies[n] == 0 && queued.insert(n).second) ready.push(n);
  }
  while (!ready.empty()) {
    Node* n = ready.top();
    ready.pop();
    execute(task, n);
    for (const Edge& e : n->next_edges()) {
      if (!e.is_valid()) continue;
      Node* next = e.function.get();
      if (--task.dependencies[next] == 0 && queued.insert(next).second) ready.push(next);
    }
  }
  scope.finish();
}

// The gradient edges of the outputs, and their initial gradients (1 for one-element outputs).
void collect_roots(const std::vector<Tensor>& outputs, const std::vector<Tensor>& grad_outputs,
                   std::vector<Edge>& roots, std::vector<Tensor>& grads) {
  KILN_CHECK_VALUE(grad_outputs.empty() || grad_outputs.size() == outputs.size(), "grad: got ",
                   outputs.size(), " outputs but ", grad_outputs.size(), " grad_outputs");
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Tensor& t = outputs[i];
    KILN_CHECK(t.requires_grad(), "element ", i, " of tensors does not require grad and does ",
               "not have a grad_fn");
    Tensor g = grad_outputs.empty() ? Tensor() : grad_outputs[i];
    if (!g.defined()) {
      KILN_CHECK(t.numel() == 1, "grad can be implicitly created only for scalar outputs (got ",
                 "a tensor of sizes ", t.sizes(), ")");
      g = ones_like(t);
    }
    KILN_CHECK_VALUE(g.sizes().equals(t.sizes()), "Mismatch in shape: grad_output[", i,
                     "] has a shape of ", g.sizes(), " and output[", i, "] has a shape of ",
                     t.sizes(), ".");
    roots.push_back(detail::gradient_edge(t));
    grads.push_back(g);
  }
}

}  // namespace

void queue_callback(std::function<void()> callback) {
  KILN_CHECK(t_backward_depth > 0, "queue_callback: no backward pass runs on this thread (call it ",
             "from a gradient hook)");
  t_callbacks.push_back(std::move(callback));
}

bool AnomalyMode::is_enabled() { return g_anomaly_enabled.load(std::memory_order_relaxed); }
bool AnomalyMode::should_check_nan() { return g_anomaly_check_nan.load(std::memory_order_relaxed); }
void AnomalyMode::set_enabled(bool enabled, bool check_nan) {
  g_anomaly_enabled.store(enabled, std::memory_order_relaxed);
  g_anomaly_check_nan.store(check_nan, std::memory_order_relaxed);
}

DetectAnomalyGuard::DetectAnomalyGuard(bool check_nan)
    : previous_enabled_(AnomalyMode::is_enabled()),
      previous_check_nan_(AnomalyMode::should_check_nan()) {
  AnomalyMode::set_enabled(true, check_nan);
}
DetectAnomalyGuard::~DetectAnomalyGuard() {
  AnomalyMode::set_enabled(previous_enabled_, previous_check_nan_);
}

Node::Node() {
  static std::atomic<uint64_t> next{0};
  sequence_nr_ = next.fetch_add(1, std::memory_order_relaxed);
  if (AnomalyMode::is_enabled()) remember_forward(this);
}
Node::~Node() { forget_forward(this); }

uint32_t Node::add_output(const Tensor& output) {
  OutputMeta m;
  m.sizes = DimVector(output.sizes());
  m.dtype = output.dtype();
  m.device = output.device();
  outputs_.push_back(std::move(m));
  return static_cast<uint32_t>(outputs_.size() - 1);
}

namespace detail {

AutogradMeta& meta(const Tensor& t) {
  TensorImpl& impl = t.impl();
  if (!impl.autograd) impl.autograd = std::make_shared<AutogradMeta>();
  return *impl.autograd;
}

AutogradMeta* meta_if(const Tensor& t) { return t.impl().autograd.get(); }

Edge gradient_edge(const Tensor& t) {
  AutogradMeta& m = meta(t);
  if (m.is_view && m.grad_fn) refresh_view(t);  // See Note [In-place on views]
  if (m.grad_fn) return Edge{m.grad_fn, m.output_nr};
  if (!t.requires_grad()) return Edge{};
  // a view made without recording: no gradient flows through it (See Note [Views made without
  // recording])
  if (m.creation_meta != CreationMeta::Default) return Edge{};
  std::shared_ptr<Node> acc = m.grad_accumulator.lock();
  if (!acc) {
    acc = std::make_shared<AccumulateGrad>(t);
    m.grad_accumulator = acc;
  }
  return Edge{acc, 0};
}

void set_history(const Tensor& t, const std::shared_ptr<Node>& node) {
  AutogradMeta& m = meta(t);
  m.grad_fn = node;
  m.output_nr = node->add_output(t);
  t.impl().requires_grad = true;
  if (m.retains_grad) detail::hook_retained_grad(t);  // an in-place change recorded on t
}

bool any_requires_grad(std::initializer_list<const Tensor*> tensors) {
  if (!GradMode::is_enabled()) return false;
  for (const Tensor* t : tensors) {
    if (t->defined() && t->requires_grad()) return true;
  }
  return false;
}

}  // namespace detail

void backward(const std::vector<Tensor>& tensors, const std::vector<Tensor>& grad_tensors,
              std::optional<bool> retain_graph, bool create_graph,
              const std::vector<Tensor>& inputs) {
  if (create_graph) {
    // as PyTorch's engine: the gradient's graph holds the leaf it is the gradient of
    KILN_WARN_ONCE("Using backward() with create_graph=True will create a reference cycle ",
                   "between the parameter and its gradient which can cause a memory leak. We ",
                   "recommend using autograd::grad when creating the graph to avoid this. If you ",
                   "have to use this function, make sure to reset the .grad fields of your ",
                   "parameters (p.mutable_grad() = Tensor()) after use to break the cycle and ",
                   "avoid the leak.");
  }
  if (!inputs.empty()) {
    std::vector<Tensor> grads =
        grad(tensors, inputs, grad_tensors, retain_graph, create_graph, /*allow_unused=*/true);
    AutoGradMode mode(create_graph);
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (!grads[i].defined()) continue;
      AccumulateGrad::accumulate(detail::meta(inputs[i]).grad, grads[i]);
      if (inputs[i].is_leaf()) AccumulateGrad::run_post_hooks(inputs[i]);
    }
    return;
  }
  std::vector<Edge> roots;
  std::vector<Tensor> grads;
  collect_roots(tensors, grad_tensors, roots, grads);
  GraphTask task;
  task.keep_graph = retain_graph.value_or(create_graph);
  AutoGradMode mode(create_graph);
  run(task, roots, grads);
}

std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs, std::optional<bool> retain_graph,
                         bool create_graph, bool allow_unused) {
  KILN_CHECK_VALUE(!inputs.empty(), "grad: grad requires non-empty inputs. Pass the tensors to ",
                   "differentiate with respect to (backward() fills .grad() of every leaf)");
  std::vector<Edge> roots;
  std::vector<Tensor> grads;
  collect_roots(outputs, grad_outputs, roots, grads);
  GraphTask task;
  task.keep_graph = retain_graph.value_or(create_graph);
  task.capturing = true;
  task.captured.resize(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    KILN_CHECK(inputs[i].requires_grad(), "grad: one of the differentiated Tensors (input ", i,
               ") does not require grad");
    Edge e = detail::gradient_edge(inputs[i]);
    task.captures[e.function.get()].emplace_back(e.input_nr, i);
  }
  {
    AutoGradMode mode(create_graph);
    run(task, roots, grads);
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    KILN_CHECK(allow_unused || task.captured[i].defined(), "grad: one of the differentiated ",
               "Tensors (input ", i, ") appears to not have been used in the graph. Set ",
               "allow_unused=True if this is the desired behavior.");
  }
  return task.captured;
}

}  // namespace kiln::autograd
