// The pooling functions of nn::functional and their modules: thin forms over the N-d composites
// of ops/pool.h, and lp_pool through avg_pool.
#include "../ops/pool.h"

#include <kiln/nn/modules/pooling.h>
#include <kiln/ops.h>

namespace kiln::nn::functional {
namespace {

using kiln::detail::Sweep;

template <size_t D>
DimVector list(const ExpandingArray<D>& a) {
  return DimVector(a.ref());
}

template <size_t D>
Sweep max_sweep(const MaxPoolOptions<D>& o) {
  return {list(o.kernel_size()), list(o.stride()), list(o.padding()), list(o.dilation()),
          o.ceil_mode()};
}

template <size_t D>
Sweep avg_sweep(const AvgPoolOptions<D>& o) {
  return {list(o.kernel_size()), list(o.stride()), list(o.padding()), DimVector(D, 1),
          o.ceil_mode()};
}

template <class Sizes, size_t D>
std::vector<std::optional<int64_t>> optional_sizes(const Sizes& sizes) {
  std::vector<std::optional<int64_t>> out;
  for (size_t d = 0; d < D; ++d) out.push_back(sizes[d]);
  return out;
}

template <size_t D>
Tensor max_unpool(const char* op, const Tensor& input, const Tensor& indices,
                  const MaxUnpoolFuncOptions<D>& o) {
  Sweep sweep{list(o.kernel_size()), list(o.stride()), list(o.padding()), DimVector(D, 1)};
  std::vector<int64_t> size = o.output_size().value_or(std::vector<int64_t>{});
  return kiln::detail::max_unpool_nd(op, input, indices, D, sweep, size);
}

// PyTorch's formula: (sign(s) * relu(|s|) * kernel volume)^(1/p) for s the average of x^p.
template <size_t D>
Tensor lp_pool(const Tensor& input, const LPPoolOptions<D>& o) {
  AvgPoolOptions<D> avg(o.kernel_size());
  avg.stride(o.stride()).ceil_mode(o.ceil_mode());
  Tensor s = kiln::detail::avg_pool_nd(D == 1 ? "lp_pool1d" : "lp_pool2d",
                                       kiln::pow(input, o.norm_type()), D, avg_sweep(avg), true,
                                       std::nullopt);
  double volume = 1;
  for (size_t d = 0; d < D; ++d) volume *= static_cast<double>(o.kernel_size()[d]);
  return kiln::pow(kiln::sign(s) * kiln::relu(kiln::abs(s)) * volume, 1.0 / o.norm_type());
}

}  // namespace

Tensor max_pool1d(const Tensor& input, const MaxPool1dFuncOptions& options) {
  return std::get<0>(max_pool1d_with_indices(input, options));
}
Tensor max_pool2d(const Tensor& input, const MaxPool2dFuncOptions& options) {
  return std::get<0>(max_pool2d_with_indices(input, options));
}
Tensor max_pool3d(const Tensor& input, const MaxPool3dFuncOptions& options) {
  return std::get<0>(max_pool3d_with_indices(input, options));
}
std::tuple<Tensor, Tensor> max_pool1d_with_indices(const Tensor& input,
                                                   const MaxPool1dFuncOptions& options) {
  return kiln::detail::max_pool_nd("max_pool1d", input, 1, max_sweep(options));
}
std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input,
                                                   const MaxPool2dFuncOptions& options) {
  return kiln::detail::max_pool_nd("max_pool2d", input, 2, max_sweep(options));
}
std::tuple<Tensor, Tensor> max_pool3d_with_indices(const Tensor& input,
                                                   const MaxPool3dFuncOptions& options) {
  return kiln::detail::max_pool_nd("max_pool3d", input, 3, max_sweep(options));
}

Tensor avg_pool1d(const Tensor& input, const AvgPool1dFuncOptions& o) {
  return kiln::detail::avg_pool_nd("avg_pool1d", input, 1, avg_sweep(o), o.count_include_pad(),
                                   o.divisor_override());
}
Tensor avg_pool2d(const Tensor& input, const AvgPool2dFuncOptions& o) {
  return kiln::detail::avg_pool_nd("avg_pool2d", input, 2, avg_sweep(o), o.count_include_pad(),
                                   o.divisor_override());
}
Tensor avg_pool3d(const Tensor& input, const AvgPool3dFuncOptions& o) {
  return kiln::detail::avg_pool_nd("avg_pool3d", input, 3, avg_sweep(o), o.count_include_pad(),
                                   o.divisor_override());
}

std::tuple<Tensor, Tensor> adaptive_max_pool1d_with_indices(const Tensor& input,
                                                            const AdaptiveMaxPool1dFuncOptions& o) {
  return kiln::detail::adaptive_max_pool_nd("adaptive_max_pool1d", input, 1,
                                            optional_sizes<ExpandingArray<1>, 1>(o.output_size()));
}
std::tuple<Tensor, Tensor> adaptive_max_pool2d_with_indices(const Tensor& input,
                                                            const AdaptiveMaxPool2dFuncOptions& o) {
  return kiln::detail::adaptive_max_pool_nd(
      "adaptive_max_pool2d", input, 2,
      optional_sizes<ExpandingArrayWithOptional<2>, 2>(o.output_size()));
}
std::tuple<Tensor, Tensor> adaptive_max_pool3d_with_indices(const Tensor& input,
                                                            const AdaptiveMaxPool3dFuncOptions& o) {
  return kiln::detail::adaptive_max_pool_nd(
      "adaptive_max_pool3d", input, 3,
      optional_sizes<ExpandingArrayWithOptional<3>, 3>(o.output_size()));
}
Tensor adaptive_max_pool1d(const Tensor& input, const AdaptiveMaxPool1dFuncOptions& o) {
  return std::get<0>(adaptive_max_pool1d_with_indices(input, o));
}
Tensor adaptive_max_pool2d(const Tensor& input, const AdaptiveMaxPool2dFuncOptions& o) {
  return std::get<0>(adaptive_max_pool2d_with_indices(input, o));
}
Tensor adaptive_max_pool3d(const Tensor& input, const AdaptiveMaxPool3dFuncOptions& o) {
  return std::get<0>(adaptive_max_pool3d_with_indices(input, o));
}
Tensor adaptive_avg_pool1d(const Tensor& input, const AdaptiveAvgPool1dFuncOptions& o) {
  return kiln::detail::adaptive_avg_pool_nd("adaptive_avg_pool1d", input, 1,
                                            optional_sizes<ExpandingArray<1>, 1>(o.output_size()));
}
Tensor adaptive_avg_pool2d(const Tensor& input, const AdaptiveAvgPool2dFuncOptions& o) {
  return kiln::detail::adaptive_avg_pool_nd(
      "adaptive_avg_pool2d", input, 2,
      optional_sizes<ExpandingArrayWithOptional<2>, 2>(o.output_size()));
}
Tensor adaptive_avg_pool3d(const Tensor& input, const AdaptiveAvgPool3dFuncOptions& o) {
  return kiln::detail::adaptive_avg_pool_nd(
      "adaptive_avg_pool3d", input, 3,
      optional_sizes<ExpandingArrayWithOptional<3>, 3>(o.output_size()));
}

Tensor max_unpool1d(const Tensor& input, const Tensor& indices,
                    const MaxUnpool1dFuncOptions& options) {
  return max_unpool("max_unpool1d", input, indices, options);
}
Tensor max_unpool2d(const Tensor& input, const Tensor& indices,
                    const MaxUnpool2dFuncOptions& options) {
  return max_unpool("max_unpool2d", input, indices, options);
}
Tensor max_unpool3d(const Tensor& input, const Tensor& indices,
                    const MaxUnpool3dFuncOptions& options) {
  return max_unpool("max_unpool3d", input, indices, options);
}

Tensor lp_pool1d(const Tensor& input, const LPPool1dFuncOptions& options) {
  return lp_pool(input, options);
}
Tensor lp_pool2d(const Tensor& input, const LPPool2dFuncOptions& options) {
  return lp_pool(input, options);
}

}  // namespace kiln::nn::functional

// --- ATen's positional forms -----------------------------------------------------------------
namespace kiln {
namespace {

using kiln::detail::expand_pool_arg;
using kiln::detail::Sweep;

Sweep sweep(const char* op, int64_t dims, IntArrayRef kernel, IntArrayRef stride,
            IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  DimVector k = expand_pool_arg(op, "kernel_size", kernel, dims);
  return {k, expand_pool_arg(op, "stride", stride, dims, k),
          expand_pool_arg(op, "padding", padding, dims),
          expand_pool_arg(op, "dilation", dilation, dims), ceil_mode};
}

std::vector<std::optional<int64_t>> sizes(const char* op, int64_t dims, IntArrayRef output) {
  DimVector s = expand_pool_arg(op, "output_size", output, dims);
  return std::vector<std::optional<int64_t>>(s.begin(), s.end());
}

}  // namespace

Tensor max_pool1d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride,
                  IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  Sweep s = sweep("max_pool1d", 1, kernel_size, stride, padding, dilation, ceil_mode);
  return std::get<0>(detail::max_pool_nd("max_pool1d", input, 1, s));
}
Tensor max_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride,
                  IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  Sweep s = sweep("max_pool2d", 2, kernel_size, stride, padding, dilation, ceil_mode);
  return std::get<0>(detail::max_pool_nd("max_pool2d", input, 2, s));
}
Tensor max_pool3d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride,
                  IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  Sweep s = sweep("max_pool3d", 3, kernel_size, stride, padding, dilation, ceil_mode);
  return std::get<0>(detail::max_pool_nd("max_pool3d", input, 3, s));
}
Tensor avg_pool1d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride,
                  IntArrayRef padding, bool ceil_mode, bool count_include_pad) {
  Sweep s = sweep("avg_pool1d", 1, kernel_size, stride, padding, 1, ceil_mode);
  return detail::avg_pool_nd("avg_pool1d", input, 1, s, count_include_pad, std::nullopt);
}
Tensor avg_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride,
                  IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                  std::optional<int64_t> divisor_override) {
  Sweep s = sweep("avg_pool2d", 2, kernel_size, stride, padding, 1, ceil_mode);
  return detail::avg_pool_nd("avg_pool2d", input, 2, s, count_include_pad, divisor_override);
}
Tensor avg_pool3d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride,
                  IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                  std::optional<int64_t> divisor_override) {
  Sweep s = sweep("avg_pool3d", 3, kernel_size, stride, padding, 1, ceil_mode);
  return detail::avg_pool_nd("avg_pool3d", input, 3, s, count_include_pad, divisor_override);
}
Tensor adaptive_avg_pool1d(const Tensor& input, IntArrayRef output_size) {
  const char* op = "adaptive_avg_pool1d";
  return detail::adaptive_avg_pool_nd(op, input, 1, sizes(op, 1, output_size));
}
Tensor adaptive_avg_pool2d(const Tensor& input, IntArrayRef output_size) {
  const char* op = "adaptive_avg_pool2d";
  return detail::adaptive_avg_pool_nd(op, input, 2, sizes(op, 2, output_size));
}
Tensor adaptive_avg_pool3d(const Tensor& input, IntArrayRef output_size) {
  const char* op = "adaptive_avg_pool3d";
  return detail::adaptive_avg_pool_nd(op, input, 3, sizes(op, 3, output_size));
}
std::tuple<Tensor, Tensor> adaptive_max_pool1d(const Tensor& input, IntArrayRef output_size) {
  const char* op = "adaptive_max_pool1d";
  return detail::adaptive_max_pool_nd(op, input, 1, sizes(op, 1, output_size));
}
std::tuple<Tensor, Tensor> adaptive_max_pool2d(const Tensor& input, IntArrayRef output_size) {
  const char* op = "adaptive_max_pool2d";
  return detail::adaptive_max_pool_nd(op, input, 2, sizes(op, 2, output_size));
}
std::tuple<Tensor, Tensor> adaptive_max_pool3d(const Tensor& input, IntArrayRef output_size) {
  const char* op = "adaptive_max_pool3d";
  return detail::adaptive_max_pool_nd(op, input, 3, sizes(op, 3, output_size));
}

}  // namespace kiln

// --- modules -------------------------------------------------------------------------------------
namespace kiln::nn {

namespace F = functional;

Tensor MaxPool1dImpl::forward(const Tensor& input) { return F::max_pool1d(input, options); }
Tensor MaxPool2dImpl::forward(const Tensor& input) { return F::max_pool2d(input, options); }
Tensor MaxPool3dImpl::forward(const Tensor& input) { return F::max_pool3d(input, options); }
std::tuple<Tensor, Tensor> MaxPool1dImpl::forward_with_indices(const Tensor& input) {
  return F::max_pool1d_with_indices(input, options);
}
std::tuple<Tensor, Tensor> MaxPool2dImpl::forward_with_indices(const Tensor& input) {
  return F::max_pool2d_with_indices(input, options);
}
std::tuple<Tensor, Tensor> MaxPool3dImpl::forward_with_indices(const Tensor& input) {
  return F::max_pool3d_with_indices(input, options);
}

Tensor AvgPool1dImpl::forward(const Tensor& input) { return F::avg_pool1d(input, options); }
Tensor AvgPool2dImpl::forward(const Tensor& input) { return F::avg_pool2d(input, options); }
Tensor AvgPool3dImpl::forward(const Tensor& input) { return F::avg_pool3d(input, options); }

Tensor AdaptiveMaxPool1dImpl::forward(const Tensor& input) {
  return F::adaptive_max_pool1d(input, options);
}
Tensor AdaptiveMaxPool2dImpl::forward(const Tensor& input) {
  return F::adaptive_max_pool2d(input, options);
}
Tensor AdaptiveMaxPool3dImpl::forward(const Tensor& input) {
  return F::adaptive_max_pool3d(input, options);
}
std::tuple<Tensor, Tensor> AdaptiveMaxPool1dImpl::forward_with_indices(const Tensor& input) {
  return F::adaptive_max_pool1d_with_indices(input, options);
}
std::tuple<Tensor, Tensor> AdaptiveMaxPool2dImpl::forward_with_indices(const Tensor& input) {
  return F::adaptive_max_pool2d_with_indices(input, options);
}
std::tuple<Tensor, Tensor> AdaptiveMaxPool3dImpl::forward_with_indices(const Tensor& input) {
  return F::adaptive_max_pool3d_with_indices(input, options);
}
Tensor AdaptiveAvgPool1dImpl::forward(const Tensor& input) {
  return F::adaptive_avg_pool1d(input, options);
}
Tensor AdaptiveAvgPool2dImpl::forward(const Tensor& input) {
  return F::adaptive_avg_pool2d(input, options);
}
Tensor AdaptiveAvgPool3dImpl::forward(const Tensor& input) {
  return F::adaptive_avg_pool3d(input, options);
}

namespace {
template <size_t D>
F::MaxUnpoolFuncOptions<D> unpool_options(const MaxUnpoolOptions<D>& o,
                                          const std::optional<std::vector<int64_t>>& size) {
  return F::MaxUnpoolFuncOptions<D>(o.kernel_size())
      .stride(o.stride())
      .padding(o.padding())
      .output_size(size);
}
}  // namespace

Tensor MaxUnpool1dImpl::forward(const Tensor& input, const Tensor& indices,
                                const std::optional<std::vector<int64_t>>& output_size) {
  return F::max_unpool1d(input, indices, unpool_options(options, output_size));
}
Tensor MaxUnpool2dImpl::forward(const Tensor& input, const Tensor& indices,
                                const std::optional<std::vector<int64_t>>& output_size) {
  return F::max_unpool2d(input, indices, unpool_options(options, output_size));
}
Tensor MaxUnpool3dImpl::forward(const Tensor& input, const Tensor& indices,
                                const std::optional<std::vector<int64_t>>& output_size) {
  return F::max_unpool3d(input, indices, unpool_options(options, output_size));
}

Tensor LPPool1dImpl::forward(const Tensor& input) { return F::lp_pool1d(input, options); }
Tensor LPPool2dImpl::forward(const Tensor& input) { return F::lp_pool2d(input, options); }

}  // namespace kiln::nn
