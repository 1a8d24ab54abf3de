#include "function.h"

#include "../tensor_internal.h"

#include <kiln/custom_function.h>

#include <cxxabi.h>

#include <cstdlib>

namespace kiln::autograd {

using kiln::detail::str;

bool IValue::toBool() const {
  KILN_CHECK_TYPE(std::holds_alternative<bool>(v_), "IValue: not a bool");
  return std::get<bool>(v_);
}
int64_t IValue::toInt() const {
  KILN_CHECK_TYPE(std::holds_alternative<int64_t>(v_), "IValue: not an integer");
  return std::get<int64_t>(v_);
}
double IValue::toDouble() const {
  if (std::holds_alternative<int64_t>(v_)) return static_cast<double>(std::get<int64_t>(v_));
  KILN_CHECK_TYPE(std::holds_alternative<double>(v_), "IValue: not a number");
  return std::get<double>(v_);
}
const std::string& IValue::toStringRef() const {
  KILN_CHECK_TYPE(std::holds_alternative<std::string>(v_), "IValue: not a string");
  return std::get<std::string>(v_);
}
Tensor IValue::toTensor() const {
  KILN_CHECK_TYPE(std::holds_alternative<Tensor>(v_), "IValue: not a tensor");
  return std::get<Tensor>(v_);
}

// The node of a custom function: its saved variables and its user-written backward.
class CustomNode : public Node {
 public:
  CustomNode(std::string name, std::shared_ptr<AutogradContext> ctx, FunctionBase::Backward bw)
      : name_(std::move(name)), ctx_(std::move(ctx)), backward_(bw) {}

  std::string name() const override { return name_; }

  std::vector<Tensor> apply(std::vector<Tensor>&& grads) override {
    if (ctx_->materialize_grads_) {
      for (size_t i = 0; i < grads.size(); ++i) {
        if (grads[i].defined()) continue;
        const OutputMeta& m = output_meta()[i];
        grads[i] = zeros(m.sizes, TensorOptions().dtype(m.dtype).device(m.device));
      }
    }
    variable_list out = backward_(ctx_.get(), std::move(grads));
    KILN_CHECK(out.size() == next_edges().size(), "function ", name_, " returned an incorrect ",
               "number of gradients (expected ", next_edges().size(), ", got ", out.size(), ")");
    return out;
  }

  void release_variables() override {
    if (!saved_.empty()) released_ = true;
    saved_.clear();
  }

  void save(const std::vector<Tensor>& tensors, const variable_list& outputs) {
    for (const Tensor& t : tensors) {
      bool is_output = false;
      for (const Tensor& o : outputs) is_output = is_output || (t.defined() && o.is_same(t));
      saved_.emplace_back(t, is_output);
    }
  }

  variable_list unpack() {
    KILN_CHECK(!released_, "Trying to backward through the graph a second time (or directly ",
               "access saved tensors after they have already been freed): ", name_,
               ". Specify retain_graph=true if you need to backward through the graph a second ",
               "time.");
    variable_list out;
    for (const detail::SavedVariable& v : saved_)
      out.push_back(v.unpack(shared_from_this(), name_.c_str()));
    return out;
  }

 private:
  std::string name_;
  std::shared_ptr<AutogradContext> ctx_;
  FunctionBase::Backward backward_;
  std::vector<detail::SavedVariable> saved_;
  bool released_ = false;
};

void AutogradContext::save_for_backward(variable_list tensors) { to_save_ = std::move(tensors); }

variable_list AutogradContext::get_saved_variables() const {
  if (auto node = node_.lock()) return node->unpack();
  return to_save_;
}

void AutogradContext::mark_dirty(const variable_list& tensors) {
  for (const Tensor& t : tensors) dirty_.insert(&t.impl());
}

void AutogradContext::mark_non_differentiable(const variable_list& tensors) {
  for (const Tensor& t : tensors) non_differentiable_.insert(&t.impl());
}

bool AutogradContext::needs_input_grad(size_t i) const {
  return i < needs_input_grad_.size() && needs_input_grad_[i];
}

void FunctionBase::record(const char* name, const std::shared_ptr<AutogradContext>& ctx,
                          const variable_list& inputs, variable_list& outputs, Backward backward) {
  bool any = false;
  for (const Tensor& t : inputs) {
    bool needs = GradMode::is_enabled() && t.defined() && t.requires_grad();
    ctx->needs_input_grad_.push_back(needs);
    any = any || needs;
  }
  // a tensor forward changed in place (maybe through its data pointer): its version moves on, so
  // anything saved from it before is detected, as PyTorch's get_and_bump_dirty
  for (const Tensor& in : inputs) {
    if (in.defined() && ctx->dirty_.count(&in.impl())) in.storage()->bump_version();
  }
  // an input returned unchanged is returned as an alias, so its own history stays intact
  for (Tensor& out : outputs) {
    if (!out.defined() || ctx->dirty_.count(&out.impl())) continue;
    for (const Tensor& in : inputs) {
      if (in.defined() && in.is_same(out)) out = out.detach();
    }
  }
  if (!any) return;
  for (const Tensor& in : inputs) {
    if (in.defined() && ctx->dirty_.count(&in.impl())) detail::check_inplace(in, name);
  }
  auto node = std::make_shared<CustomNode>(name, ctx, backward);
  for (const Tensor& in : inputs) {
    node->add_next_edge(in.defined() && in.requires_grad() ? detail::gradient_edge(in) : Edge{});
  }
  for (Tensor& out : outputs) {
    if (!out.defined()) {
      node->add_output(zeros({}));
      continue;
    }
    if (ctx->non_differentiable_.count(&out.impl()) || !out.is_floating_point()) {
      node->add_output(out);
      continue;
    }
    detail::set_history(out, node);
  }
  node->save(ctx->to_save_, outputs);
  ctx->to_save_.clear();
  ctx->node_ = node;
}

namespace detail {
std::string demangled_name(const char* mangled) {
  int status = 0;
  char* name = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  std::string out = status == 0 && name ? name : mangled;
  std::free(name);
  auto colon = out.rfind("::");
  return colon == std::string::npos ? out : out.substr(colon + 2);
}
}  // namespace detail

}  // namespace kiln::autograd
