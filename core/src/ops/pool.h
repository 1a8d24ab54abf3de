// The N-d pooling composites behind nn::functional's pooling (ops/pool.cpp), for 1, 2 or 3
// spatial dimensions `dims`; `op` names the caller in errors ("max_pool2d").
#pragma once

#include <kiln/array_ref.h>
#include <kiln/tensor.h>

#include <optional>
#include <tuple>
#include <vector>

namespace kiln::detail {

// A sliding window: one value per spatial dimension each.
struct Sweep {
  DimVector kernel, stride, padding, dilation;
  bool ceil_mode = false;
};

// `v` as `dims` values: one value repeats, an empty list gives `fallback`.
DimVector expand_pool_arg(const char* op, const char* what, IntArrayRef v, int64_t dims,
                          IntArrayRef fallback = {});

// (values, indices) of the maximum of each window.
std::tuple<Tensor, Tensor> max_pool_nd(const char* op, const Tensor& input, int64_t dims,
                                       const Sweep& sweep);
// The mean of each window (dilation 1).
Tensor avg_pool_nd(const char* op, const Tensor& input, int64_t dims, const Sweep& sweep,
                   bool count_include_pad, std::optional<int64_t> divisor_override);
std::tuple<Tensor, Tensor> adaptive_max_pool_nd(
    const char* op, const Tensor& input, int64_t dims,
    const std::vector<std::optional<int64_t>>& output_size);
Tensor adaptive_avg_pool_nd(const char* op, const Tensor& input, int64_t dims,
                            const std::vector<std::optional<int64_t>>& output_size);
// See Note [Max pooling primitives] (ops/max_pool.cpp): the (values, indices) of max pooling
// x [N, C, H, W] to output planes [oH, oW] on the device's fused kernels, or undefined tensors
// where the device has none (the composite runs).
std::tuple<Tensor, Tensor> max_pool2d_primitive(const Tensor& x, const Sweep& sweep,
                                                IntArrayRef out_plane);
// input scattered to `indices` of zero planes; output_size: dims or dims + 2 values, or empty.
Tensor max_unpool_nd(const char* op, const Tensor& input, const Tensor& indices, int64_t dims,
                     const Sweep& sweep, IntArrayRef output_size);

}  // namespace kiln::detail
