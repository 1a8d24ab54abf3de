// In-place operations on views of tensors that require grad, with PyTorch's semantics.
//
// Note [In-place on views]
// ~~~~~~~~~~~~~~~~~~~~~~~~
// A view shares its base's storage, so an in-place operation on the view changes the base too,
// and the base's gradient must see it. As PyTorch does, the base's history is rebased onto a
// CopySlices node whose inputs are the base's old history and the view's new one: its backward
// sends the gradient of the view's region to the in-place result and the rest to the old base.
// The view then becomes a view of the new base again (its gradient lands in its region of the
// base's gradient). Views of views rebase every level up to the root. The view operators record
// the tensor they view in the view's AutogradMeta (view_base, set by record_simple), which is
// how the base is found; the graph's nodes never hold it, so it closes no reference cycle. Other
// views of the same storage whose data changed since their node was made (in place through the base
// or another view) get a fresh view node of their base's current history when next used
// (refresh_view, from gradient_edge), as PyTorch regenerates them. Limits: the root's elements must
// not overlap in memory (no expanded base); an in-place change of a view of a leaf that requires
// grad is refused, as in PyTorch.
//
// Note [Views made without recording]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// A view of a tensor that requires grad, made while grad mode is off (NoGradGuard) or in
// InferenceMode, still views a tensor in the graph: as in PyTorch it requires grad, remembers its
// base and how it was made (AutogradMeta::creation_meta), has no grad_fn and passes no gradient.
// Changing it in place with grad mode on is refused (the change could not be recorded on the
// base), and so is asking for its history after its base (or another view) changed in place.
// Inside InferenceMode a view of a normal tensor is a normal tensor, not an inference tensor;
// a view of an inference tensor is one.
#include "function.h"

#include "../tensor_internal.h"

#include <kiln/error.h>

namespace kiln::autograd::detail {

using kiln::detail::str;

namespace {

[[noreturn]] void throw_view_rebase(const AutogradMeta& m, bool indirect, const char* op) {
  const char* what = indirect ? "its base or another view of its base has been" : "is being";
  const char* block = m.creation_meta == CreationMeta::InferenceMode ? "inference_mode" : "no_grad";
  std::string head = m.creation_meta == CreationMeta::InferenceMode
                         ? str("A view was created in inference mode and ", what,
                               " modified inplace in normal mode.")
                         : str("A view was created in no_grad mode and ", what,
                               " modified inplace with grad mode enabled.");
  throw Error(str(op != nullptr ? op : "", op != nullptr ? ": " : "", head,
                  " Given that this use case is ambiguous and error-prone, it is ",
                  "forbidden. You can clarify your code by moving both the view and the inplace ",
                  "either both inside the ", block, " block (if you don't want the inplace to ",
                  "be tracked) or both outside (if you want the inplace to be tracked)."));
}

}  // namespace

void note_unrecorded_view(const Tensor& base, const Tensor& view) {
  const bool inference = InferenceMode::is_enabled();
  if (!inference && !kiln::detail::local_dispatch_state().grad_mode_off) return;
  if (!base.requires_grad()) return;
  AutogradMeta& m = meta(view);
  m.creation_meta = inference ? CreationMeta::InferenceMode : CreationMeta::NoGradMode;
  m.creation_version = view._version();
  m.is_view = true;
  m.view_base = base;
  view.impl().requires_grad = true;
}

void check_view_creation(const Tensor& self, bool indirect, const char* op) {
  AutogradMeta* m = meta_if(self);
  if (m == nullptr || m->creation_meta == CreationMeta::Default || m->grad_fn) return;
  if (!indirect || m->creation_version != self._version()) throw_view_rebase(*m, indirect, op);
}

Tensor view_base_of(const Tensor& self) {
  AutogradMeta* m = meta_if(self);
  if (m == nullptr || !m->is_view) return Tensor();
  auto* node = dynamic_cast<FunctionNode*>(m->grad_fn.get());
  return node != nullptr && node->is_view_node ? m->view_base : Tensor();
}

void check_view_inplace(const Tensor& self, const char* op) {
  Tensor root = view_base_of(self);
  if (!root.defined()) {
    throw NotImplementedError(kiln::detail::str(
        op, ": in-place operations on this view of a tensor that requires grad are not "
            "supported; use the out-of-place form"));
  }
  for (Tensor up = view_base_of(root); up.defined(); up = view_base_of(root)) root = up;
  KILN_CHECK(!(root.is_leaf() && root.requires_grad()), op, ": a view of a leaf Variable that ",
             "requires grad is being used in an in-place operation.");
  for (int64_t d = 0; d < root.dim(); ++d) {
    KILN_CHECK(root.size(d) <= 1 || root.stride(d) > 0, op,
               ": in-place operations on views "
               "of tensors whose elements overlap in memory are not supported; got a base of "
               "sizes ",
               root.sizes(), " and strides ", root.strides());
  }
}

namespace {

// Where view's elements sit in base's row-major order, flattened (base may be a strided view
// itself): writes each base element's position into a scratch buffer laid out as base's storage
// span and reads it back through view's geometry.
Tensor view_index(const Tensor& view, const Tensor& base) {
  NoGradGuard no_grad;
  TensorOptions longs = TensorOptions(kLong).device(base.device());
  int64_t span = 1;
  for (int64_t d = 0; d < base.dim(); ++d) span += (base.size(d) - 1) * base.stride(d);
  Tensor positions = zeros({span}, longs);
  kiln::detail::make_view(positions, base.sizes(), base.strides(), 0)
      .copy_(arange(base.numel(), longs).view(base.sizes()));
  return kiln::detail::make_view(positions, view.sizes(), view.strides(),
                                 view.storage_offset() - base.storage_offset())
      .contiguous()
      .reshape({-1});
}

// Makes view's grad_fn a view node of base's current history: its gradient lands at `index` in
// a zero gradient of base.
void attach_view(const Tensor& view, const Tensor& base, const Tensor& index) {
  DimVector base_sizes(base.sizes());
  const int64_t base_numel = base.numel();
  auto node = record("AsStridedBackward", {&base}, {&view},
                     [index, base_sizes, base_numel](FunctionNode&, const std::vector<Tensor>& g) {
                       TensorOptions options = TensorOptions(g[0].dtype()).device(g[0].device());
                       Tensor grad =
                           index_add(zeros({base_numel}, options), 0, index, g[0].reshape({-1}));
                       return std::vector<Tensor>{grad.view(base_sizes)};
                     });
  if (node) {
    node->is_view_node = true;
    node->view_version = view._version();
    meta(view).is_view = true;
    meta(view).view_base = base;
  }
}

}  // namespace

void rebase_view(const Tensor& self, const Tensor& base) {
  if (!base.defined()) return;
  Tensor index = view_index(self, base);
  Tensor outside;  // 1 outside self's region of base
  {
    NoGradGuard no_grad;
    TensorOptions values = TensorOptions(base.dtype()).device(base.device());
    outside = ones({base.numel()}, values) -
              index_add(zeros({base.numel()}, values), 0, index, ones({index.numel()}, values));
    outside = outside.view(base.sizes());
  }
  Tensor base_of_base = view_base_of(base);  // before base's history changes
  DimVector view_sizes(self.sizes());
  record("CopySlices", {&base, &self}, {&base},
         [index, outside, view_sizes](FunctionNode& n, const std::vector<Tensor>& g) {
           std::vector<Tensor> out(2);
           if (n.needs_input_grad(0)) out[0] = g[0] * outside;
           if (n.needs_input_grad(1)) {
             out[1] = g[0].reshape({-1}).index_select(0, index).view(view_sizes);
           }
           return out;
         });
  attach_view(self, base, index);  // self is again a view of the new base
  rebase_view(base, base_of_base);
}

void refresh_view(const Tensor& view) {
  auto* node = dynamic_cast<FunctionNode*>(meta(view).grad_fn.get());
  if (node == nullptr || !node->is_view_node || node->view_version == view._version()) return;
  Tensor base = meta(view).view_base;  // a copy: attach_view replaces it
  attach_view(view, base, view_index(view, base));
}

}  // namespace kiln::autograd::detail
