// See Note [Every in-place operator has an Autograd kernel] (inplace.cpp).
#pragma once

#include "function.h"

#include <kiln/dispatch.h>

#include <string>

namespace kiln::autograd::detail {

// "FillBackward0" for "fill_": the node name PyTorch gives an operator's derivative.
std::string overwrite_node_name(const char* op_name);

// After an operator overwrote self with values that depend on no differentiable input: records
// a node whose gradient for self's old value is zero and rebases view_base (from view_base_of,
// read before the write) when self is a view.
void record_overwrite(const char* op_name, const Tensor& self, const Tensor& view_base);

// The Autograd kernel of fill_, uniform_, normal_, random_ (see the Note).
template <class Op, class... Rest>
Tensor overwrite_kernel(const Op& op, const Tensor& self, Rest... rest) {
  bool record = GradMode::is_enabled() && self.requires_grad();
  if (record) check_inplace(self, op.name(), /*rebases_views=*/true);
  Tensor view_base = record ? view_base_of(self) : Tensor();
  {
    ExcludeDispatchKeyGuard below(DispatchKey::Autograd);
    op(self, rest...);
  }
  if (record) record_overwrite(op.name(), self, view_base);
  return self;
}

}  // namespace kiln::autograd::detail
