// Note [Max pooling primitives]: max_pool2d and max_pool2d_backward are optional primitives (a
// CPU plugin runs them as direct loops) for [N, C, H, W] in any floating dtype. The forward gives
// PyTorch's values and int64 indices (the flat position in the input plane of each window's
// first maximum, or of its last NaN, as PyTorch's kernel); the backward adds each output's
// gradient at its index into a zero input plane. Where a device has both, max pooling in 2-D
// costs one pass over the input forward and one over the gradient backward, where the composite
// (Note [Pooling as a gather of windows]) gathers every window, reduces it and scatters back.
// The backward is linear in grad_output, and its own gradient gathers at the indices, so
// create_graph works through it.
#include "elementwise.h"
#include "pool.h"

#include "../autograd/function.h"

#include <kiln/autograd.h>
#include <kiln/dispatch.h>
#include <kiln/ops.h>

namespace kiln::detail {
namespace {

// (x, kernel, stride, padding, dilation, output plane [oH, oW]) -> (values, indices)
using MaxPoolOp = Operator<std::tuple<Tensor, Tensor>(const Tensor&, IntArrayRef, IntArrayRef,
                                                      IntArrayRef, IntArrayRef, IntArrayRef)>;
// (grad_output, indices, input sizes [N, C, H, W]) -> grad_input
using MaxPoolBackwardOp = Operator<Tensor(const Tensor&, const Tensor&, IntArrayRef)>;

std::tuple<Tensor, Tensor> max_pool_backend(const MaxPoolOp& op, const Tensor& input,
                                            IntArrayRef kernel, IntArrayRef stride,
                                            IntArrayRef padding, IntArrayRef dilation,
                                            IntArrayRef out_plane) {
  KILN_CHECK_VALUE(input.dim() == 4 && kernel.size() == 2 && stride.size() == 2 &&
                       padding.size() == 2 && dilation.size() == 2 && out_plane.size() == 2,
                   op.name(), ": expected a 4-D [N, C, H, W] input and two values of kernel, ",
                   "stride, padding, dilation and output size, but got input of size ",
                   input.sizes());
  KILN_CHECK_TYPE(input.is_floating_point(), op.name(), ": expected a floating point input, but ",
                  "got ", dtype_name(input.dtype()));
  const Tensor x = input.contiguous();
  const DimVector sizes{x.size(0), x.size(1), out_plane[0], out_plane[1]};
  Tensor values = empty_tensor(sizes, x.dtype(), x.device());
  Tensor indices = empty_tensor(sizes, kLong, x.device());
  if (values.numel() == 0) return {values, indices};
  run_kernel(op, {&x}, {&values, &indices},
             Attrs()
                 .list("kernel", kernel)
                 .list("stride", stride)
                 .list("padding", padding)
                 .list("dilation", dilation));
  return {values, indices};
}

Tensor max_pool_backward_backend(const MaxPoolBackwardOp& op, const Tensor& grad_output,
                                 const Tensor& indices, IntArrayRef input_sizes) {
  KILN_CHECK_VALUE(grad_output.dim() == 4 && input_sizes.size() == 4 &&
                       indices.sizes().equals(grad_output.sizes()),
                   op.name(), ": expected 4-D grad_output and indices of the same size and 4 ",
                   "input sizes, but got grad_output of size ", grad_output.sizes(),
                   " and indices of size ", indices.sizes());
  KILN_CHECK_TYPE(indices.dtype() == kLong, op.name(), ": expected int64 indices, but got ",
                  dtype_name(indices.dtype()));
  common_device(op.name(), {&grad_output, &indices});
  const Tensor g = grad_output.contiguous(), i = indices.contiguous();
  Tensor grad_input = empty_tensor(input_sizes, g.dtype(), g.device());
  if (grad_input.numel() == 0) return grad_input;
  if (g.numel() == 0) return grad_input.zero_();
  run_kernel(op, {&g, &i}, {&grad_input}, Attrs());
  return grad_input;
}

MaxPoolOp max_pool2d_op("max_pool2d",
                        "max_pool2d(Tensor input, int[2] kernel, int[2] stride, int[2] padding, "
                        "int[2] dilation, int[2] output_size) -> (Tensor, Tensor)",
                        max_pool_backend);
MaxPoolBackwardOp max_pool2d_backward_op(
    "max_pool2d_backward",
    "max_pool2d_backward(Tensor grad_output, Tensor indices, int[4] input_sizes) -> Tensor",
    max_pool_backward_backend);

// The gradient of max_pool2d_backward in grad_output: g gathered at the indices.
Tensor gather_at(const Tensor& g, const Tensor& indices) {
  const int64_t n = indices.size(0), c = indices.size(1);
  return gather(g.reshape({n, c, -1}), 2, indices.reshape({n, c, -1})).view(indices.sizes());
}

Tensor max_pool_backward_autograd(const MaxPoolBackwardOp& op, const Tensor& grad_output,
                                  const Tensor& indices, IntArrayRef input_sizes) {
  Tensor out;
  {
    ExcludeDispatchKeyGuard below(DispatchKey::Autograd);
    out = op(grad_output, indices, input_sizes);
  }
  autograd::detail::record_simple(
      "MaxPool2DWithIndicesBackwardBackward0", grad_output, out,
      [indices](const Tensor& g) { return gather_at(g, indices); }, /*view=*/false);
  return out;
}

std::tuple<Tensor, Tensor> max_pool_autograd(const MaxPoolOp& op, const Tensor& input,
                                             IntArrayRef kernel, IntArrayRef stride,
                                             IntArrayRef padding, IntArrayRef dilation,
                                             IntArrayRef out_plane) {
  Tensor values, indices;
  {
    ExcludeDispatchKeyGuard below(DispatchKey::Autograd);
    std::tie(values, indices) = op(input, kernel, stride, padding, dilation, out_plane);
  }
  DimVector sizes(input.sizes());
  autograd::detail::record_simple(
      "MaxPool2DWithIndicesBackward0", input, values,
      [indices, sizes](const Tensor& g) { return max_pool2d_backward_op(g, indices, sizes); },
      /*view=*/false);
  return {values, indices};
}

const bool max_pool_registered = [] {
  max_pool2d_op.set_optional();
  max_pool2d_backward_op.set_optional();
  max_pool2d_op.set_kernel(DispatchKey::Autograd, max_pool_autograd);
  max_pool2d_backward_op.set_kernel(DispatchKey::Autograd, max_pool_backward_autograd);
  return true;
}();

}  // namespace

std::tuple<Tensor, Tensor> max_pool2d_primitive(const Tensor& x, const Sweep& sweep,
                                                IntArrayRef out_plane) {
  const DeviceType type = x.device().type();
  if (x.dim() != 4 || sweep.kernel.size() != 2 || !x.is_floating_point() ||
      !max_pool2d_op.has_plugin_kernel(type) || !max_pool2d_backward_op.has_plugin_kernel(type)) {
    return {};
  }
  return max_pool2d_op(x, sweep.kernel, sweep.stride, sweep.padding, sweep.dilation, out_plane);
}

}  // namespace kiln::detail
