#include "function.h"

#include "../tensor_internal.h"

#include <kiln/error.h>

namespace kiln::autograd::detail {

using kiln::detail::str;

SavedVariable::SavedVariable(const Tensor& t, bool is_output) : is_output_(is_output) {
  if (!t.defined()) return;
  KILN_CHECK(!t.impl().inference || !t.requires_grad(), "Inference tensors cannot be saved for ",
             "backward. To work around you can make a clone to get a normal tensor and use it ",
             "in autograd.");
  data_ = t.detach();
  requires_grad_ = t.requires_grad();
  saved_version_ = t._version();
  if (AutogradMeta* m = meta_if(t)) {
    output_nr_ = m->output_nr;
    if (!is_output) grad_fn_ = m->grad_fn;
  }
  if (!is_output && t.requires_grad() && t.is_leaf()) leaf_ = t;
}

Tensor SavedVariable::unpack(const std::shared_ptr<Node>& owner, const char* node_name) const {
  if (!data_.defined()) return Tensor();
  if (data_._version() != saved_version_) {
    throw Error(str("one of the variables needed for gradient computation has been modified by ",
                    "an inplace operation: [", dtype_name(data_.dtype()), data_.sizes(),
                    "], which is ", is_output_ ? "output " : "input ", output_nr_, " of ",
                    node_name, ", is at version ", data_._version(), "; expected version ",
                    saved_version_, " instead."));
  }
  if (leaf_.defined()) return leaf_;
  if (!requires_grad_) return data_;
  // an alias of the data that carries its place in the graph, so create_graph works
  Tensor out =
      kiln::detail::make_view(data_, data_.sizes(), data_.strides(), data_.storage_offset());
  std::shared_ptr<Node> fn = is_output_ ? owner : grad_fn_;
  if (fn) {
    AutogradMeta& m = meta(out);
    m.grad_fn = fn;
    m.output_nr = output_nr_;
    out.impl().requires_grad = true;
  }
  return out;
}

FunctionNode::FunctionNode(std::string name, Formula formula)
    : name_(std::move(name)), formula_(std::move(formula)) {}

size_t FunctionNode::save(const Tensor& t, bool is_output) {
  saved_.emplace_back(t, is_output);
  return saved_.size() - 1;
}

Tensor FunctionNode::saved(size_t slot) {
  if (released_) {
    throw Error("Trying to backward through the graph a second time (or directly access saved "
                "tensors after they have already been freed). Saved intermediate values of the "
                "graph are freed when you call .backward() or autograd::grad(). Specify "
                "retain_graph=true if you need to backward through the graph a second time or "
                "if you need to access saved tensors after calling backward.");
  }
  return saved_.at(slot).unpack(shared_from_this(), name_.c_str());
}

std::vector<Tensor> FunctionNode::apply(std::vector<Tensor>&& grads) {
  // no gradient in, none out (as PyTorch's generated nodes): a custom function's backward that
  // returned none for an input leaves that input's .grad() undefined
  bool any = false;
  for (const Tensor& g : grads) any = any || g.defined();
  if (!any) return std::vector<Tensor>(next_edges().size());
  // a missing output gradient is zero
  for (size_t i = 0; i < grads.size(); ++i) {
    if (!grads[i].defined()) {
      const OutputMeta& m = output_meta()[i];
      grads[i] = zeros(m.sizes, TensorOptions().dtype(m.dtype).device(m.device));
    }
  }
  std::vector<Tensor> out = formula_(*this, grads);
  out.resize(next_edges().size());
  return out;
}

void FunctionNode::release_variables() {
  if (!saved_.empty()) released_ = true;
  saved_.clear();
}

std::shared_ptr<FunctionNode> record(const char* name, ArrayRef<const Tensor*> inputs,
                                     ArrayRef<const Tensor*> outputs,
                                     FunctionNode::Formula formula) {
  if (!GradMode::is_enabled()) return nullptr;
  bool any = false;
  for (const Tensor* t : inputs) any = any || (t->defined() && t->requires_grad());
  if (!any) return nullptr;
  auto node = std::make_shared<FunctionNode>(name, std::move(formula));
  for (const Tensor* t : inputs) {
    node->add_next_edge(t->defined() && t->requires_grad() ? gradient_edge(*t) : Edge{});
  }
  for (const Tensor* t : outputs) set_history(*t, node);
  return node;
}

void record_simple(const char* name, const Tensor& x, const Tensor& out,
                   std::function<Tensor(const Tensor& g)> gradient, bool view) {
  auto node = record(name, {&x}, {&out},
                     [gradient = std::move(gradient)](FunctionNode&, const std::vector<Tensor>& g) {
                       return std::vector<Tensor>{gradient(g[0])};
                     });
  if (node && view) {
    meta(out).is_view = true;
    meta(out).view_base = x;
    meta(out).creation_meta = CreationMeta::Default;  // recorded after all
    node->is_view_node = true;
    node->view_version = out._version();
  }
}

Tensor sum_to(const Tensor& grad, IntArrayRef sizes) {
  if (grad.sizes().equals(sizes)) return grad;
  int64_t lead = grad.dim() - static_cast<int64_t>(sizes.size());
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < grad.dim(); ++d) {
    if (d < lead || (sizes[d - lead] == 1 && grad.sizes()[d] != 1)) dims.push_back(d);
  }
  Tensor r = dims.empty() ? grad : sum(grad, dims, /*keepdim=*/true);
  return r.view(sizes);
}

void check_inplace(const Tensor& self, const char* op, bool rebases_views) {
  if (!GradMode::is_enabled() || !self.requires_grad()) return;
  check_view_creation(self, /*indirect=*/false, op);
  AutogradMeta* m = meta_if(self);
  KILN_CHECK(!self.is_leaf(), op, ": a leaf Variable that requires grad is being used in an ",
             "in-place operation.");
  if (m != nullptr && m->is_view && rebases_views) {
    check_view_inplace(self, op);
  } else if (m != nullptr && m->is_view) {
    throw NotImplementedError(str(op, ": in-place operations on a view of a tensor that ",
                                  "requires grad are not supported yet; use the out-of-place ",
                                  "form"));
  }
}

}  // namespace kiln::autograd::detail
