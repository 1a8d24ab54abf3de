// FusedPointwiseCall: a fused group's node (fuse_call.h).
#include "fuse_call.h"

#include "tracer.h"

#include <kiln/autograd.h>
#include <kiln/dispatch.h>

#include <unordered_map>

namespace kiln::jit::detail {

FusedPointwiseCall::FusedPointwiseCall(int group, PointwiseProgram program, std::vector<Node> nodes,
                                       std::vector<int> input_values,
                                       std::vector<std::pair<int, Tensor>> constants,
                                       std::vector<int> output_values)
    : group_(group),
      program_(std::move(program)),
      flat_(program_.encode()),
      inputs_(input_values.size()),
      nodes_(std::move(nodes)),
      input_values_(std::move(input_values)),
      constants_(std::move(constants)),
      output_values_(std::move(output_values)) {}

const OperatorBase& FusedPointwiseCall::op() const {
  static const OperatorBase& fused = *find_operator("fused_pointwise");
  return fused;
}

std::vector<Tensor*> FusedPointwiseCall::tensor_slots() {
  std::vector<Tensor*> out;
  for (Tensor& t : inputs_) out.push_back(&t);
  return out;
}

void FusedPointwiseCall::run(bool dispatch, std::vector<Tensor>& outputs) {
  bool grad = false;
  if (autograd::GradMode::is_enabled()) {
    for (const Tensor& t : inputs_) grad = grad || (t.defined() && t.requires_grad());
  }
  if (grad) {
    run_unfused(outputs);
    return;
  }
  (void)dispatch;  // the program's operator is called through the dispatcher either way
  std::vector<Tensor> outs = run_pointwise_program(inputs_, program_);
  for (Tensor& t : outs) outputs.push_back(std::move(t));
}

void FusedPointwiseCall::run_unfused(std::vector<Tensor>& outputs) {
  std::unordered_map<int, Tensor> env;
  for (size_t i = 0; i < input_values_.size(); ++i) env[input_values_[i]] = inputs_[i];
  for (const auto& [v, t] : constants_) env[v] = t;
  std::vector<Tensor> outs;
  for (Node& n : nodes_) {
    for (size_t k = 0; k < n.slots.size(); ++k) {
      if (n.inputs[k] >= 0) *n.slots[k] = env.at(n.inputs[k]);
    }
    outs.clear();
    try {
      n.call->run(/*dispatch=*/true, outs);
    } catch (...) {
      for (size_t k = 0; k < n.slots.size(); ++k) *n.slots[k] = Tensor();
      throw;
    }
    for (size_t k = 0; k < n.slots.size(); ++k) *n.slots[k] = Tensor();
    for (size_t k = 0; k < outs.size() && k < n.outputs.size(); ++k) {
      if (n.outputs[k] >= 0) env[n.outputs[k]] = std::move(outs[k]);
    }
  }
  for (int v : output_values_) outputs.push_back(env.at(v));
}

void FusedPointwiseCall::print_arguments(std::ostream& out,
                                         const std::vector<std::string>& slot_names) const {
  out << "group=" << group_ << "; ";
  for (size_t i = 0; i < slot_names.size(); ++i) {
    out << (i ? ", " : "") << "r" << i << "=" << slot_names[i];
  }
  out << "; " << program_.str();
}

std::unique_ptr<RecordedCall> FusedPointwiseCall::clone() const {
  std::vector<Node> nodes;
  for (const Node& n : nodes_) {
    Node c;
    c.call = n.call->clone();
    c.inputs = n.inputs;
    c.outputs = n.outputs;
    c.slots = c.call->tensor_slots();
    c.grad_enabled = n.grad_enabled;
    c.detach = n.detach;
    nodes.push_back(std::move(c));
  }
  auto copy = std::make_unique<FusedPointwiseCall>(group_, program_, std::move(nodes),
                                                   input_values_, constants_, output_values_);
  copy->inputs_ = inputs_;
  return copy;
}

}  // namespace kiln::jit::detail
