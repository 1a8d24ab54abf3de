// 2-D convolution on the CPU: conv.cpp runs oneDNN (float32, bfloat16) and falls back to the
// direct loops of conv_ref.cpp for the other floating dtypes and for anything oneDNN refuses.
#pragma once

#include "loops.hpp"

namespace kiln::cpu {

// The attributes of conv2d and its backward primitives (docs/primitives.md).
struct ConvGeometry {
  int64_t stride[2], padding[2], dilation[2], groups;
};

// Reads stride, padding, dilation (two values each) and groups from a call's attributes.
ConvGeometry conv_geometry(const Call& call);

// y = conv(x, w) + b; b may be null. Any floating dtype, any strides.
void conv2d_ref(const kiln_tensor& x, const kiln_tensor& w, const kiln_tensor* b,
                const kiln_tensor& y, const ConvGeometry& g);
// gx = the gradient of x from gy and w.
void conv2d_backward_input_ref(const kiln_tensor& gy, const kiln_tensor& w, const kiln_tensor& gx,
                               const ConvGeometry& g);
// gw = the gradient of w from gy and x.
void conv2d_backward_weight_ref(const kiln_tensor& gy, const kiln_tensor& x, const kiln_tensor& gw,
                                const ConvGeometry& g);

}  // namespace kiln::cpu
