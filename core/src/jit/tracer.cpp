// Recording a trace: the Observe layer hands each call of the traced function to
// add_recorded_call, which maps its tensors to graph values by identity.
#include "tracer.h"

#include "passes.h"

#include <kiln/autograd.h>
#include <kiln/dispatch.h>
#include <kiln/warning.h>

namespace kiln::jit::detail {

Tracer* current_tracer() {
  return static_cast<Tracer*>(kiln::detail::local_dispatch_state().tracer);
}

int Tracer::add_value(const Tensor& t, ValueKind kind, std::string name) {
  Value v;
  v.kind = kind;
  v.dtype = t.dtype();
  v.sizes.assign(t.sizes().begin(), t.sizes().end());
  v.device = t.device();
  v.name = std::move(name);
  if (kind == ValueKind::Parameter || kind == ValueKind::Constant) v.tensor = t;
  int id = static_cast<int>(graph.values.size());
  graph.values.push_back(std::move(v));
  value_of[t.impl_ptr().get()] = id;
  keep_alive.push_back(t);
  if (kind == ValueKind::Input || kind == ValueKind::Intermediate) {
    by_storage[t.storage().get()].push_back(id);
  }
  read.push_back(0);
  return id;
}

namespace {

// A detach() of a traced value: kiln's detach is not an operator (it makes an alias without
// history), so the tracer records it as this call. It names itself after the view operator it
// is closest to (a same-geometry alias, never in place, deterministic); the graph prints it as
// detach.
class DetachCall final : public RecordedCall {
 public:
  DetachCall() : view_(*find_operator("view")) {}
  const OperatorBase& op() const override { return view_; }
  std::vector<Tensor*> tensor_slots() override { return {&input_}; }
  void run(bool, std::vector<Tensor>& outputs) override { outputs.push_back(input_.detach()); }
  void print_arguments(std::ostream& out, const std::vector<std::string>& names) const override {
    out << (names.empty() ? "?" : names[0]);
  }
  std::unique_ptr<RecordedCall> clone() const override {
    return std::make_unique<DetachCall>(*this);
  }

 private:
  const OperatorBase& view_;
  Tensor input_;
};

}  // namespace

std::unique_ptr<RecordedCall> make_detach_call() { return std::make_unique<DetachCall>(); }

int Tracer::detach_of(const Tensor& t) {
  auto it = by_storage.find(t.storage().get());
  if (it == by_storage.end()) return -1;
  for (size_t i = it->second.size(); i-- > 0;) {
    int v = it->second[i];
    const Tensor& s = keep_alive[static_cast<size_t>(v)];
    if (s.dtype() == t.dtype() && s.sizes() == t.sizes() && s.strides() == t.strides() &&
        s.storage_offset() == t.storage_offset()) {
      Node node;
      node.grad_enabled = false;
      node.call = std::make_unique<DetachCall>();
      node.slots = node.call->tensor_slots();
      node.inputs.push_back(v);
      read[static_cast<size_t>(v)] = 1;
      node.outputs.push_back(add_value(t, ValueKind::Intermediate));
      node.detach = true;
      graph.nodes.push_back(std::move(node));
      return graph.nodes.back().outputs[0];
    }
  }
  return -1;
}

int Tracer::value_for(const Tensor& t) {
  auto it = value_of.find(t.impl_ptr().get());
  if (it != value_of.end()) return it->second;
  if (parameters != nullptr) {
    auto p = parameters->find(t.impl_ptr().get());
    if (p != parameters->end()) return add_value(t, ValueKind::Parameter, p->second);
  }
  if (t.requires_grad() && t.is_leaf()) {
    return add_value(t, ValueKind::Parameter, "param" + std::to_string(graph.values.size()));
  }
  int detached = detach_of(t);
  if (detached >= 0) return detached;
  if (!warned_alias && by_storage.count(t.storage().get()) != 0) {
    warned_alias = true;
    KILN_WARN("jit::trace: the traced function uses a tensor that shares memory with a traced ",
              "value but was not made by an operator (detach(), a tensor made from its data); ",
              "the graph keeps it as a constant with the values of the trace, so a replay with ",
              "other inputs does not recompute it");
  }
  return add_value(t, ValueKind::Constant);
}

void before_inplace_call(RecordedCall& call) {
  Tracer* tr = current_tracer();
  if (tr == nullptr) return;
  std::vector<Tensor*> slots = call.tensor_slots();
  if (slots.empty() || !slots[0]->defined()) return;
  const Tensor& target = *slots[0];
  // the constant whose memory the call writes: the target itself when the graph does not know
  // it (it becomes a constant), or a constant of the same storage (the target is its view)
  Tensor constant;
  auto known = tr->value_of.find(target.impl_ptr().get());
  if (known == tr->value_of.end()) {
    bool parameter =
        (tr->parameters != nullptr && tr->parameters->count(target.impl_ptr().get())) ||
        (target.requires_grad() && target.is_leaf());
    if (!parameter && tr->by_storage.count(target.storage().get()) == 0) constant = target;
  }
  if (!constant.defined()) {
    for (const Value& v : tr->graph.values) {
      if (v.kind == ValueKind::Constant && v.tensor.storage() == target.storage()) {
        constant = v.tensor;
        break;
      }
    }
  }
  if (!constant.defined() || tr->initial.count(constant.impl_ptr().get())) return;
  autograd::NoGradGuard no_grad;
  tr->initial.emplace(constant.impl_ptr().get(), constant.clone());
}

void note_value_read(const char* what) {
  Tracer* tr = current_tracer();
  if (tr == nullptr || tr->warned_value_read) return;
  tr->warned_value_read = true;
  KILN_WARN("jit::trace: the traced function reads a tensor's value (", what,
            "); control flow or shapes that depend on it are frozen in the graph: a replay with ",
            "other values runs the same operators (as torch.jit.trace)");
}

void add_recorded_call(std::unique_ptr<RecordedCall> call, std::vector<Tensor> outputs,
                       bool returns_value) {
  Tracer* tr = current_tracer();
  if (tr == nullptr) return;
  if (returns_value) note_value_read(call->op().name());
  Node node;
  node.grad_enabled = !kiln::detail::local_dispatch_state().grad_mode_off;
  node.slots = call->tensor_slots();
  for (Tensor* slot : node.slots) {
    node.inputs.push_back(slot->defined() ? tr->value_for(*slot) : -1);
  }
  // An in-place call that fills a constant nothing has read yet, from constants (the fill_ of
  // a wrapped scalar, of kiln::zeros): the constant holds the result already; no node.
  const OperatorBase& op = call->op();
  if (op.is_inplace() && !is_random(op) && !node.inputs.empty() && node.inputs[0] >= 0 &&
      outputs.size() == 1 && outputs[0].is_same(*node.slots[0])) {
    bool fresh = !tr->read[static_cast<size_t>(node.inputs[0])];
    for (int v : node.inputs) {
      fresh = fresh &&
              (v < 0 || tr->graph.values[static_cast<size_t>(v)].kind == ValueKind::Constant);
    }
    if (fresh) {
      // the constant's value is the one after this call: a later write starts from it
      tr->initial.erase(node.slots[0]->impl_ptr().get());
      return;
    }
  }
  for (int v : node.inputs) {
    if (v >= 0) tr->read[static_cast<size_t>(v)] = 1;
  }
  for (const Tensor& out : outputs) {
    node.outputs.push_back(out.defined() ? tr->add_value(out, ValueKind::Intermediate) : -1);
  }
  node.call = std::move(call);
  tr->graph.nodes.push_back(std::move(node));
}

namespace {

// Sets this thread's tracer and the Observe key for a scope.
class TraceScope {
 public:
  explicit TraceScope(Tracer* tracer) : include_(DispatchKey::Observe) {
    kiln::detail::LocalDispatchState& s = kiln::detail::local_dispatch_state();
    saved_tracer_ = s.tracer;
    saved_depth_ = s.trace_depth;
    s.tracer = tracer;
    s.trace_depth = s.observe_depth;
  }
  ~TraceScope() {
    kiln::detail::LocalDispatchState& s = kiln::detail::local_dispatch_state();
    s.tracer = saved_tracer_;
    s.trace_depth = saved_depth_;
  }
  TraceScope(const TraceScope&) = delete;
  TraceScope& operator=(const TraceScope&) = delete;

 private:
  IncludeDispatchKeyGuard include_;
  void* saved_tracer_;
  int saved_depth_;
};

}  // namespace

Graph record(const TraceableFunction& fn, const std::vector<Tensor>& inputs,
             const std::unordered_map<const TensorImpl*, std::string>* parameters) {
  Tracer tr;
  tr.parameters = parameters;
  for (size_t i = 0; i < inputs.size(); ++i) {
    KILN_CHECK_VALUE(inputs[i].defined(), "jit::trace: example input ", i, " is undefined");
    int id = tr.add_value(inputs[i], ValueKind::Input, "input" + std::to_string(i));
    tr.graph.inputs.push_back(id);
  }
  std::vector<Tensor> outputs;
  {
    TraceScope scope(&tr);
    outputs = fn(inputs);
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    KILN_CHECK_VALUE(outputs[i].defined(), "jit::trace: output ", i,
                     " of the traced function is undefined");
    tr.graph.outputs.push_back(tr.value_for(outputs[i]));
  }
  for (Value& v : tr.graph.values) {
    if (v.kind != ValueKind::Constant) continue;
    auto it = tr.initial.find(v.tensor.impl_ptr().get());
    if (it != tr.initial.end()) v.initial = it->second;
  }
  // The recorded calls keep their constants' and parameters' tensors in the values; the slots
  // are filled at each replay.
  for (Node& n : tr.graph.nodes) {
    for (size_t k = 0; k < n.slots.size(); ++k) {
      if (n.inputs[k] >= 0) *n.slots[k] = Tensor();
    }
  }
  return std::move(tr.graph);
}

}  // namespace kiln::jit::detail
