// The rules every in-place operator follows, whatever its family.
//
// Note [Every in-place operator has an Autograd kernel]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// An operator whose schema marks its first argument `Tensor(a!)` writes it in place. Writing a
// tensor that is part of a graph without rebasing its history leaves gradients silently wrong
// (the old node would still send gradient through values that no longer exist), so:
// - every such operator gets, when it is declared, an Autograd kernel that refuses the call when
//   anything requires grad (Operator's constructor installs it: nothing to remember);
// - an operator with a derivative replaces it with one of the few rebasing kernels, each of which
//   checks (check_inplace: the leaf rule, views made without recording, views of leaves), runs
//   the operator below the Autograd layer and makes the new node self's grad_fn, rebasing the
//   base when self is a view (rebase_view, Note [In-place on views]):
//     family_inplace    (families.cpp) add_, mul_, exp_, ...: the functional formula, in place
//                                     when it allows (Note [In-place without a copy]);
//     inplace_kernel    (families.h)  clamp_, elu_, ...: the functional formula on a copy;
//     copy_autograd     (ops/copy.cpp) copy_: the gradient goes to the source;
//     overwrite_kernel  (below)       fill_, zero_, uniform_, normal_, random_: self's old value
//                                     gets a zero gradient, as PyTorch's FillBackward0;
// - every call, with or without grad, first passes check_inplace_target (from the dispatcher):
//   an inference tensor may only be written inside InferenceMode.
// tests/autograd/test_inplace_rules.cpp checks that every declared in-place operator has an
// Autograd kernel, and each kernel's gradients against PyTorch's.
#include "inplace.h"

#include "../tensor_internal.h"

#include <kiln/error.h>

#include <cctype>
#include <string>

namespace kiln {
namespace detail {

void check_inplace_target(const OperatorBase& op, const Tensor& self) {
  if (!self.defined() || !self.impl().inference || autograd::InferenceMode::is_enabled()) return;
  throw Error(str(op.name(), ": Inplace update to inference tensor outside InferenceMode is not ",
                  "allowed. You can make a clone to get a normal tensor before doing inplace ",
                  "update (the tensor, ", describe_tensor(self), ", was made in InferenceMode)."));
}

void throw_no_inplace_formula(const OperatorBase& op) {
  throw NotImplementedError(str(op.name(), ": this in-place operator has no derivative formula, ",
                                "so it cannot change a tensor that requires grad (or take one as ",
                                "an argument) while grad mode is on; use it under NoGradGuard, ",
                                "or on a tensor that does not require grad"));
}

}  // namespace detail

namespace autograd::detail {

std::string overwrite_node_name(const char* op_name) {
  std::string name(op_name);
  if (!name.empty() && name.back() == '_') name.pop_back();
  if (!name.empty()) name[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(name[0])));
  return name + "Backward0";
}

void record_overwrite(const char* op_name, const Tensor& self, const Tensor& view_base) {
  std::string name = overwrite_node_name(op_name);
  record(name.c_str(), {&self}, {&self}, [](FunctionNode&, const std::vector<Tensor>& g) {
    return std::vector<Tensor>{zeros_like(g[0])};
  });
  rebase_view(self, view_base);  // See Note [In-place on views]
}

}  // namespace autograd::detail
}  // namespace kiln
