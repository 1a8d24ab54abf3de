// Tensor's autograd methods.
#include "function.h"

#include "../tensor_internal.h"

#include <kiln/autograd.h>
#include <kiln/warning.h>

namespace kiln {

using autograd::detail::meta;
using autograd::detail::meta_if;

namespace {

// Why the last .grad() this thread read had no gradient, for the error of using it: an undefined
// tensor carries nothing, so the reason is kept beside it.
struct MissingGrad {
  bool set = false;
  DimVector sizes;
  ScalarType dtype = kFloat;
  enum class Why { NoRequiresGrad, NotLeaf, NotReached } why = Why::NotReached;
};
thread_local MissingGrad t_missing_grad;

void note_missing_grad(const Tensor& t) {
  MissingGrad& m = t_missing_grad;
  m.set = true;
  m.sizes = DimVector(t.sizes());
  m.dtype = t.dtype();
  if (!t.requires_grad()) {
    m.why = MissingGrad::Why::NoRequiresGrad;
  } else if (!t.is_leaf() && !t.retains_grad()) {
    m.why = MissingGrad::Why::NotLeaf;
  } else {
    m.why = MissingGrad::Why::NotReached;
  }
}

}  // namespace

void detail::throw_undefined_tensor() {
  std::string message = "undefined tensor: this Tensor has no value (default-constructed, or a "
                        "gradient that does not exist)";
  const MissingGrad& m = t_missing_grad;
  if (m.set) {
    const char* why = "";
    switch (m.why) {
      case MissingGrad::Why::NoRequiresGrad:
        why = "it does not require grad: call requires_grad_() on it (or make it with "
              "TensorOptions().requires_grad(true)) before the computation";
        break;
      case MissingGrad::Why::NotLeaf:
        why = "it is not a leaf: backward() fills .grad() of leaves only; call retain_grad() "
              "on it before backward() to keep its gradient";
        break;
      case MissingGrad::Why::NotReached:
        why = "no backward() has reached it yet (not called yet, the tensor is not part of the "
              "graph backward() ran on, or zero_grad() reset its gradient to undefined)";
        break;
    }
    message +=
        kiln::str(". If it came from .grad(): the last .grad() read on this thread without a ",
                  "gradient was of a ", dtype_name(m.dtype), IntArrayRef(m.sizes), " tensor, ",
                  "and ", why);
  }
  throw Error(message);
}

const Tensor& Tensor::grad() const {
  static const Tensor undefined;
  autograd::AutogradMeta* m = meta_if(*this);
  if (m != nullptr && m->grad.defined()) return m->grad;
  if (m != nullptr && m->grad_fn != nullptr && !m->retains_grad) {
    KILN_WARN("The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its ",
              ".grad attribute won't be populated during autograd::backward(). If you indeed ",
              "want the .grad field to be populated for a non-leaf Tensor, use .retain_grad() on ",
              "the non-leaf Tensor. If you access the non-leaf Tensor by mistake, make sure you ",
              "access the leaf Tensor instead.");
  }
  note_missing_grad(*this);
  return undefined;
}

Tensor& Tensor::mutable_grad() const { return meta(*this).grad; }

void Tensor::set_grad(const Tensor& grad) {
  if (grad.defined()) {
    KILN_CHECK_VALUE(grad.sizes().equals(sizes()), "set_grad: assigned grad has data of a ",
                     "different size (", grad.sizes(), " vs ", sizes(), ")");
    KILN_CHECK_TYPE(grad.dtype() == dtype(), "set_grad: assigned grad has data of a different ",
                    "type (", dtype_name(grad.dtype()), " vs ", dtype_name(dtype()), ")");
  }
  meta(*this).grad = grad;
}

void Tensor::backward(const Tensor& gradient, std::optional<bool> retain_graph, bool create_graph,
                      std::optional<TensorList> inputs) const {
  std::vector<Tensor> input_list;
  if (inputs) {
    KILN_CHECK_VALUE(!inputs->empty(), "backward: 'inputs' argument to backward() cannot be ",
                     "empty (pass std::nullopt for all the leaves)");
    input_list = inputs->vec();
  }
  autograd::backward({*this}, {gradient}, retain_graph, create_graph, input_list);
}

Tensor Tensor::detach() const {
  Tensor out = detail::make_view(*this, sizes(), strides(), storage_offset());
  out.impl().inference = impl().inference;
  out.impl().view = false;  // as in PyTorch, detach() shares storage but is not a view
  return out;
}

const Tensor& Tensor::detach_() const {
  if (autograd::AutogradMeta* m = meta_if(*this)) {
    m->grad_fn.reset();
    m->output_nr = 0;
    m->is_view = false;
    m->view_base = Tensor();
    m->creation_meta = autograd::CreationMeta::Default;
  }
  impl().requires_grad = false;
  return *this;
}

void Tensor::retain_grad() const {
  KILN_CHECK(requires_grad(), "retain_grad: can't retain_grad on Tensor that has ",
             "requires_grad=False");
  if (is_leaf() || retains_grad()) return;
  meta(*this).retains_grad = true;
  autograd::detail::hook_retained_grad(*this);
}

void autograd::detail::hook_retained_grad(const Tensor& t) {
  AutogradMeta* m = meta_if(t);
  if (m == nullptr || !m->retains_grad || m->grad_fn == nullptr) return;
  std::weak_ptr<TensorImpl> self = t.impl_ptr();
  const Node* node = m->grad_fn.get();
  m->grad_fn->add_output_hook(m->output_nr, [self, node](const Tensor& g) {
    if (auto impl = self.lock()) {
      Tensor t(impl);
      AutogradMeta& tm = meta(t);
      if (tm.grad_fn.get() == node) {  // not a version an in-place operation replaced
        tm.grad = tm.grad.defined() ? tm.grad + g.detach() : g.detach().clone();
      }
    }
    return Tensor();
  });
}

bool Tensor::retains_grad() const {
  autograd::AutogradMeta* m = meta_if(*this);
  return m != nullptr && m->retains_grad;
}

bool Tensor::is_leaf() const {
  autograd::AutogradMeta* m = meta_if(*this);
  return m == nullptr || m->grad_fn == nullptr;
}

const std::shared_ptr<autograd::Node>& Tensor::grad_fn() const {
  static const std::shared_ptr<autograd::Node> none;
  autograd::AutogradMeta* m = meta_if(*this);
  if (m == nullptr) return none;
  autograd::detail::check_view_creation(*this,
                                        /*indirect=*/true);  // Note [Views made without recording]
  return m->grad_fn;
}

uint32_t Tensor::output_nr() const {
  autograd::AutogradMeta* m = meta_if(*this);
  return m != nullptr ? m->output_nr : 0;
}

unsigned Tensor::register_hook(std::function<Tensor(const Tensor&)> hook) const {
  KILN_CHECK(requires_grad(), "register_hook: cannot register a hook on a tensor that doesn't ",
             "require gradient");
  autograd::AutogradMeta& m = meta(*this);
  if (m.grad_fn) {
    m.grad_fn->add_output_hook(m.output_nr, std::move(hook));
    return static_cast<unsigned>(m.grad_fn->output_hooks().size() - 1);
  }
  m.hooks.push_back(std::move(hook));
  return static_cast<unsigned>(m.hooks.size() - 1);
}

void Tensor::remove_hook(unsigned pos) const {
  autograd::AutogradMeta& m = meta(*this);
  const char* invalid = "remove_hook: Invalid index, no hook at position ";
  if (m.grad_fn) {
    const auto& hooks = m.grad_fn->output_hooks();
    KILN_CHECK_INDEX(pos < hooks.size() && hooks[pos].first == m.output_nr && hooks[pos].second,
                     invalid, pos, " (a hook's index is what register_hook returned for it)");
    m.grad_fn->remove_output_hook(pos);
    return;
  }
  KILN_CHECK_INDEX(pos < m.hooks.size() && m.hooks[pos], invalid, pos,
                   " (a hook's index is what register_hook returned for it)");
  m.hooks[pos] = nullptr;
}

unsigned autograd::register_post_accumulate_grad_hook(const Tensor& t,
                                                      std::function<void(const Tensor&)> hook) {
  KILN_CHECK(t.defined(), "register_post_accumulate_grad_hook: the tensor is undefined");
  KILN_CHECK(t.requires_grad(), "register_post_accumulate_grad_hook: cannot register a hook on a ",
             "tensor that doesn't require gradient");
  autograd::AutogradMeta& m = meta(t);
  KILN_CHECK(m.grad_fn == nullptr, "register_post_accumulate_grad_hook: post accumulate grad ",
             "hooks cannot be registered on non-leaf tensors (this one was made by ",
             m.grad_fn->name(), ")");
  KILN_CHECK(hook != nullptr, "register_post_accumulate_grad_hook: the hook is empty");
  m.post_accumulate_hooks.push_back(std::move(hook));
  return static_cast<unsigned>(m.post_accumulate_hooks.size() - 1);
}

void autograd::remove_post_accumulate_grad_hook(const Tensor& t, unsigned pos) {
  autograd::AutogradMeta* m = t.defined() ? meta_if(t) : nullptr;
  KILN_CHECK_INDEX(m != nullptr && pos < m->post_accumulate_hooks.size() &&
                       m->post_accumulate_hooks[pos],
                   "remove_post_accumulate_grad_hook: Invalid index, no hook at position ", pos,
                   " (a hook's index is what register_post_accumulate_grad_hook returned for it)");
  m->post_accumulate_hooks[pos] = nullptr;
}

}  // namespace kiln
