// Building blocks of backward formulas: SavedVariable (a tensor saved for backward, with the
// version check that detects in-place changes) and FunctionNode (a Node whose backward is a
// lambda over kiln operators). Operators attach their formula next to their declaration with
// record() — see Note [Gradients next to operators].
#pragma once

#include <kiln/autograd.h>
#include <kiln/ops.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace kiln::autograd::detail {

// A tensor saved in a node. Outputs of the node itself are saved without their grad_fn (which
// would be a reference cycle) and get it back, weakly, when unpacked.
class SavedVariable {
 public:
  SavedVariable() = default;
  SavedVariable(const Tensor& t, bool is_output);
  // The saved tensor; throws if it was changed in place since it was saved.
  Tensor unpack(const std::shared_ptr<Node>& owner, const char* node_name) const;
  bool defined() const { return data_.defined(); }

 private:
  Tensor data_;  // shares storage, no autograd state
  bool is_output_ = false;
  bool requires_grad_ = false;
  uint32_t output_nr_ = 0;
  uint32_t saved_version_ = 0;
  std::shared_ptr<Node> grad_fn_;           // inputs only (outputs: the owner)
  std::shared_ptr<Node> grad_accumulator_;  // leaf inputs
  Tensor leaf_;  // a leaf input itself, so its gradient flows to the same accumulator
};

// A Node whose backward is `formula(node, grads)`, written in kiln operators.
class FunctionNode : public Node {
 public:
  using Formula =
      std::function<std::vector<Tensor>(FunctionNode& node, const std::vector<Tensor>& grads)>;
  FunctionNode(std::string name, Formula formula);

  std::string name() const override { return name_; }
  std::vector<Tensor> apply(std::vector<Tensor>&& grads) override;
  void release_variables() override;

  // Saves t (an input, or an output when is_output) and returns its slot.
  size_t save(const Tensor& t, bool is_output = false);
  // The tensor saved in `slot`.
  Tensor saved(size_t slot);
  // Whether the gradient of forward input i is needed (its edge is valid).
  bool needs_input_grad(size_t i) const {
    return i < next_edges().size() && next_edges()[i].is_valid();
  }

  // For the node of a view operator: set, with the storage version when the node became the
  // view's grad_fn (the base itself is AutogradMeta::view_base of the view; see Note [In-place
  // on views]).
  bool is_view_node = false;
  uint32_t view_version = 0;

 private:
  std::string name_;
  Formula formula_;
  std::vector<SavedVariable> saved_;
  bool released_ = false;
};

// Records a FunctionNode for an operator call: inputs are the differentiable tensor arguments
// (undefined ones allowed), outputs the results. Does nothing when no input requires grad or
// grad mode is off; returns the node (null if nothing was recorded).
std::shared_ptr<FunctionNode> record(const char* name, ArrayRef<const Tensor*> inputs,
                                     ArrayRef<const Tensor*> outputs,
                                     FunctionNode::Formula formula);

// Records a node for a one-input, one-output operator whose input gradient is gradient(g).
// view: out is a view of x (in-place changes of it are refused while it requires grad).
void record_simple(const char* name, const Tensor& x, const Tensor& out,
                   std::function<Tensor(const Tensor& g)> gradient, bool view);

// grad summed down to `sizes` (undoing broadcasting), as PyTorch's sum_to.
Tensor sum_to(const Tensor& grad, IntArrayRef sizes);

// Rebases self's history on an in-place operation: checks the leaf rule, then makes the new
// node self's grad_fn. Call before the in-place kernel runs (check) and after (rebase).
// rebases_views: the caller calls rebase_view afterwards, so views of tensors that require grad
// are accepted (otherwise refused with NotImplementedError).
void check_inplace(const Tensor& self, const char* op, bool rebases_views = false);

// See Note [In-place on views] (inplace_view.cpp).
// The tensor that self views when self is a view of a tensor that requires grad (its grad_fn is
// still the view operator's node); undefined otherwise. Read it before the history changes.
Tensor view_base_of(const Tensor& self);
// Throws unless an in-place operation on the view self can be rebased onto its base.
void check_view_inplace(const Tensor& self, const char* op);
// After an in-place operation gave the view self (of base, from view_base_of) its new grad_fn:
// rebases base's history onto a CopySlices node and makes self a view of the new base, up to
// the root of a chain of views. Does nothing when base is undefined.
void rebase_view(const Tensor& self, const Tensor& base);
// When t retains its gradient (Tensor::retain_grad), hooks t's current grad_fn output to fill
// t.grad(); the hook left on an earlier grad_fn (before an in-place change) goes quiet, as in
// PyTorch, where the retained gradient is always that of the tensor's latest version.
void hook_retained_grad(const Tensor& t);
// See Note [Views made without recording] (inplace_view.cpp). Called by the view operators'
// backends: makes view (of base) inherit base's inference flag and, when grad mode is off and
// base requires grad, records how it was made.
void note_unrecorded_view(const Tensor& base, const Tensor& view);
// Throws PyTorch's error for such a view: changed in place itself by op (indirect false), or
// its history asked for after its storage changed in place (indirect true).
void check_view_creation(const Tensor& self, bool indirect, const char* op = nullptr);
// Regenerates the history of a view whose storage changed in place since its grad_fn was made
// (through its base or another view), as a view of its base's current history.
void refresh_view(const Tensor& view);

}  // namespace kiln::autograd::detail
