// Pooling over 1, 2 or 3 spatial dimensions: max, average, adaptive max and average, LP, and max
// unpooling. All are composites (See Note [Pooling as a gather of windows]); average pooling in
// 2-D also has optional primitives (See Note [Pooling primitives]), and so has max pooling in
// 2-D (Note [Max pooling primitives] in max_pool.cpp).
//
// Note [Pooling as a gather of windows]: from the geometry alone, the host lists the flat input
// position of every tap of every window ([outputs, taps], int64). A tap in the padding, or past
// the end of a shorter adaptive window, points one past the plane, at a sentinel appended to each
// plane (-inf for a max, 0 for a sum). index_select gathers the windows as [N, C, outputs * taps]
// and a max or a sum over the taps pools them. index_select's gradient is index_add and max's
// goes to the element it picked (the first maximum, as PyTorch's pooling), so every pooling
// differentiates, twice too, on every device, with no kernel of its own. The map costs
// outputs * taps host integers per call. Windows that tile the input (2x2 with stride 2, an
// adaptive pooling to a divisor of the size) are a permuted view of it instead of a gather.
//
// Note [Pooling dtype]: pooling runs in its input's dtype, also under autocast, as PyTorch's
// (its sums would otherwise follow the sum's float32 policy): each composite excludes the
// Autocast layer.
#include "pool.h"

#include "elementwise.h"

#include "../autograd/function.h"

#include <kiln/autograd.h>
#include <kiln/dispatch.h>
#include <kiln/ops.h>

#include <limits>
#include <sstream>
#include <vector>

namespace kiln::detail {
namespace {

constexpr int64_t kOutside = -1;

// One spatial dimension of a window map: for each output, the input coordinate of each of its
// `taps` taps (kOutside in the padding), and the factor it contributes to an average's divisor.
struct Axis {
  int64_t in = 0, out = 0, taps = 0;
  std::vector<int64_t> coord;   // [out * taps]
  std::vector<double> divisor;  // [out]
};

std::string join(IntArrayRef v, const char* sep = ", ") {
  std::ostringstream s;
  for (size_t i = 0; i < v.size(); ++i) s << (i ? sep : "") << v[i];
  return s.str();
}

int64_t checked_mul(const char* op, int64_t a, int64_t b, const char* what) {
  int64_t r = 0;
  KILN_CHECK_VALUE(!__builtin_mul_overflow(a, b, &r), op, ": ", what, " (", a, " * ", b,
                   ") overflows int64");
  return r;
}

// input [N, C, d...] or [C, d...] with `dims` spatial dimensions as [N, C, d...].
Tensor batched(const char* op, const Tensor& input, int64_t dims) {
  KILN_CHECK_VALUE(input.dim() == dims + 1 || input.dim() == dims + 2, op, ": expected a ",
                   dims + 1, "-D (unbatched) or ", dims + 2, "-D (batched) input, but got input ",
                   "of size ", input.sizes());
  KILN_CHECK_TYPE(input.is_floating_point(), op, ": expected a floating point input, but got ",
                  dtype_name(input.dtype()));
  Tensor x = input.dim() == dims + 1 ? input.unsqueeze(0) : input;
  for (int64_t d = 1; d < x.dim(); ++d) {
    KILN_CHECK_VALUE(x.size(d) > 0, op, ": expected an input with non-zero sizes except the ",
                     "batch, but got input of size ", input.sizes());
  }
  return x;
}

// PyTorch's output size of a pooling window sweep, overflow-checked.
int64_t pooled_size(const char* op, int64_t in, int64_t k, int64_t s, int64_t p, int64_t d,
                    bool ceil_mode) {
  int64_t span = 0, n = 0;
  bool overflow = __builtin_mul_overflow(d, k - 1, &span) || __builtin_mul_overflow(p, 2, &n) ||
                  __builtin_add_overflow(n, in, &n) || __builtin_sub_overflow(n, span + 1, &n) ||
                  (ceil_mode && __builtin_add_overflow(n, s - 1, &n));
  KILN_CHECK_VALUE(!overflow, op, ": input size ", in, " with padding ", p, ", kernel size ", k,
                   " and dilation ", d, " overflows int64");
  int64_t out = (n >= 0 ? n / s : -((-n + s - 1) / s)) + 1;  // rounds toward -infinity
  // the last window must start inside the input or its left padding
  if (ceil_mode && (out - 1) * s >= in + p) --out;
  return out;
}

// Checks a sweep and returns its axes; `include_pad` picks an average's divisor.
std::vector<Axis> sweep_axes(const char* op, const Tensor& x, const Sweep& w, bool include_pad) {
  const int64_t dims = x.dim() - 2;
  for (int64_t d = 0; d < dims; ++d) {
    KILN_CHECK_VALUE(w.kernel[d] > 0, op, ": kernel size should be greater than zero, but got ",
                     "kernel_size=[", join(w.kernel), "]");
    KILN_CHECK_VALUE(w.stride[d] > 0, op, ": stride should be greater than zero, but got ",
                     "stride=[", join(w.stride), "]");
    KILN_CHECK_VALUE(w.dilation[d] > 0, op, ": dilation should be greater than zero, but got ",
                     "dilation=[", join(w.dilation), "]");
    KILN_CHECK_VALUE(w.padding[d] >= 0 && w.padding[d] <= w.kernel[d] / 2, op, ": pad should ",
                     "be at least 0 and at most half of kernel size, but got padding=[",
                     join(w.padding), "] for kernel_size=[", join(w.kernel), "]");
  }
  std::vector<Axis> axes(static_cast<size_t>(dims));
  DimVector out;
  for (int64_t d = 0; d < dims; ++d) {
    out.push_back(pooled_size(op, x.size(d + 2), w.kernel[d], w.stride[d], w.padding[d],
                              w.dilation[d], w.ceil_mode));
  }
  for (int64_t d = 0; d < dims; ++d) {
    KILN_CHECK_VALUE(out[d] > 0, op, ": given input of size ", x.sizes(), ", kernel_size=[",
                     join(w.kernel), "], stride=[", join(w.stride), "], padding=[", join(w.padding),
                     "] and dilation=[", join(w.dilation), "], the calculated ", "output size (",
                     join(out, "x"), ") is too small: use a smaller kernel or ",
                     "dilation, or more padding");
    Axis& a = axes[static_cast<size_t>(d)];
    a.in = x.size(d + 2);
    a.out = out[d];
    a.taps = w.kernel[d];
    const int64_t pad = w.padding[d];
    for (int64_t o = 0; o < a.out; ++o) {
      const int64_t start = o * w.stride[d] - pad;
      int64_t inside = 0;
      for (int64_t t = 0; t < a.taps; ++t) {
        int64_t c = start + t * w.dilation[d];
        bool in_range = c >= 0 && c < a.in;
        inside += in_range;
        a.coord.push_back(in_range ? c : kOutside);
      }
      // the window within the padded input (dilation is 1 for averages)
      int64_t padded = std::min(start + w.kernel[d], a.in + pad) - start;
      a.divisor.push_back(static_cast<double>(include_pad ? padded : inside));
    }
  }
  return axes;
}

// Axes of an adaptive pooling to `output_size` (absent: the input's size).
std::vector<Axis> adaptive_axes(const char* op, const Tensor& x,
                                const std::vector<std::optional<int64_t>>& output_size) {
  const int64_t dims = x.dim() - 2;
  std::vector<Axis> axes(static_cast<size_t>(dims));
  for (int64_t d = 0; d < dims; ++d) {
    Axis& a = axes[static_cast<size_t>(d)];
    a.in = x.size(d + 2);
    a.out = output_size[static_cast<size_t>(d)].value_or(a.in);
    KILN_CHECK_VALUE(a.out > 0, op, ": expected positive output sizes, but got output_size ", a.out,
                     " for dimension ", d, " of input of size ", x.sizes());
    checked_mul(op, a.out + 1, a.in, "the output size times the input size");
    for (int64_t o = 0; o < a.out; ++o) {
      int64_t start = o * a.in / a.out, end = ((o + 1) * a.in + a.out - 1) / a.out;
      a.taps = std::max(a.taps, end - start);
    }
    for (int64_t o = 0; o < a.out; ++o) {
      int64_t start = o * a.in / a.out, end = ((o + 1) * a.in + a.out - 1) / a.out;
      for (int64_t t = 0; t < a.taps; ++t)
        a.coord.push_back(start + t < end ? start + t : kOutside);
      a.divisor.push_back(static_cast<double>(end - start));
    }
  }
  return axes;
}

// The flat window map of the axes (See Note [Pooling as a gather of windows]).
struct WindowMap {
  DimVector out;  // spatial output sizes
  int64_t outputs = 1, taps = 1, plane = 1;
  std::vector<int64_t> index;   // [outputs * taps] into the plane, `plane` for the sentinel
  std::vector<double> divisor;  // [outputs]
  bool sentinel = false;        // whether a tap points at the sentinel
  DimVector tile;               // the kernel when the windows tile the input, else empty
};

WindowMap window_map(const char* op, const std::vector<Axis>& axes) {
  WindowMap m;
  for (const Axis& a : axes) {
    m.out.push_back(a.out);
    m.outputs = checked_mul(op, m.outputs, a.out, "the number of outputs");
    m.taps = checked_mul(op, m.taps, a.taps, "the number of window taps");
    m.plane = checked_mul(op, m.plane, a.in, "the input plane's size");
  }
  const int64_t total = checked_mul(op, m.outputs, m.taps, "outputs times window taps");
  m.index.resize(static_cast<size_t>(total));
  m.divisor.assign(static_cast<size_t>(m.outputs), 1.0);
  const size_t dims = axes.size();
  for (int64_t o = 0; o < m.outputs; ++o) {
    int64_t oi[3] = {0, 0, 0}, rest = o;
    for (size_t d = dims; d-- > 0;) {
      oi[d] = rest % axes[d].out;
      rest /= axes[d].out;
      m.divisor[static_cast<size_t>(o)] *= axes[d].divisor[static_cast<size_t>(oi[d])];
    }
    for (int64_t t = 0; t < m.taps; ++t) {
      int64_t ti[3] = {0, 0, 0}, r = t;
      for (size_t d = dims; d-- > 0;) {
        ti[d] = r % axes[d].taps;
        r /= axes[d].taps;
      }
      int64_t pos = 0;
      bool inside = true;
      for (size_t d = 0; d < dims; ++d) {
        int64_t c = axes[d].coord[static_cast<size_t>(oi[d] * axes[d].taps + ti[d])];
        inside = inside && c != kOutside;
        pos = pos * axes[d].in + c;
      }
      m.index[static_cast<size_t>(o * m.taps + t)] = inside ? pos : m.plane;
      m.sentinel = m.sentinel || !inside;
    }
  }
  return m;
}

Tensor host_long(const std::vector<int64_t>& v, Device device) {
  Tensor h = from_blob(const_cast<int64_t*>(v.data()), {static_cast<int64_t>(v.size())}, kLong);
  return h.to(device, kLong, /*copy=*/true);
}

// x [N, C, d...] cropped to whole tiles and viewed as [N, C, out0, k0, out1, k1, ...] (the
// windows when they tile the input).
Tensor tile_view(const Tensor& x, const WindowMap& m) {
  Tensor t = x;
  DimVector view{x.size(0), x.size(1)};
  for (size_t d = 0; d < m.tile.size(); ++d) {
    t = t.narrow(static_cast<int64_t>(d) + 2, 0, m.out[d] * m.tile[d]);
    view.push_back(m.out[d]);
    view.push_back(m.tile[d]);
  }
  return t.reshape(view);
}

// x [N, C, d...] gathered into windows [N, C, outputs, taps], the sentinel `fill` outside.
// Windows that tile the input are tile_view permuted to [N, C, out..., k...] and copied: the
// same outputs and taps in the same order.
Tensor windows(const Tensor& x, const WindowMap& m, double fill) {
  const int64_t n = x.size(0), c = x.size(1);
  if (!m.tile.empty()) {
    const int64_t dims = static_cast<int64_t>(m.tile.size());
    DimVector order{0, 1};
    for (int64_t d = 0; d < dims; ++d) order.push_back(2 + 2 * d);
    for (int64_t d = 0; d < dims; ++d) order.push_back(3 + 2 * d);
    return tile_view(x, m).permute(order).reshape({n, c, m.outputs, m.taps});
  }
  Tensor padded = x.reshape({n, c, m.plane});
  if (m.sentinel) {
    Tensor sentinel = full({n, c, 1}, fill, TensorOptions(x.dtype()).device(x.device()));
    padded = cat({padded, sentinel}, 2);
  }
  return index_select(padded, 2, host_long(m.index, x.device())).view({n, c, m.outputs, m.taps});
}

// Whether the windows of a sweep tile the input: stride the kernel, no padding, no dilation,
// and no window past the end.
bool tiles(const Tensor& x, const Sweep& w) {
  for (size_t d = 0; d < w.kernel.size(); ++d) {
    const int64_t in = x.size(static_cast<int64_t>(d) + 2);
    if (w.stride[d] != w.kernel[d] || w.padding[d] != 0 || w.dilation[d] != 1) return false;
    if (w.ceil_mode && in % w.kernel[d] != 0) return false;
  }
  return true;
}

// The kernel when adaptive windows tile the input (each size a multiple of its output's).
DimVector adaptive_tile(const std::vector<Axis>& axes) {
  DimVector tile;
  for (const Axis& a : axes) {
    if (a.in % a.out != 0) return {};
    tile.push_back(a.in / a.out);
  }
  return tile;
}

DimVector output_sizes(const Tensor& x, const WindowMap& m) {
  DimVector sizes{x.size(0), x.size(1)};
  for (int64_t s : m.out) sizes.push_back(s);
  return sizes;
}

Tensor unbatch(const Tensor& out, const Tensor& input, int64_t dims) {
  return input.dim() == dims + 1 ? out.squeeze(0) : out;
}

std::tuple<Tensor, Tensor> max_of_windows(const Tensor& input, const Tensor& x, const WindowMap& m,
                                          int64_t dims) {
  auto [values, which] = max(windows(x, m, -std::numeric_limits<double>::infinity()), 3);
  DimVector sizes = output_sizes(x, m);
  // the tap each maximum came from, as its flat position in the input plane
  Tensor first_tap = arange(m.outputs, TensorOptions(kLong).device(x.device())) * m.taps;
  Tensor at = index_select(host_long(m.index, x.device()), 0, (which + first_tap).reshape({-1}));
  return {unbatch(values.view(sizes), input, dims), unbatch(at.view(sizes), input, dims)};
}

Tensor mean_of_windows(const Tensor& input, const Tensor& x, const WindowMap& m, int64_t dims,
                       std::optional<int64_t> divisor_override) {
  std::vector<double> divisor = m.divisor;
  if (divisor_override) divisor.assign(divisor.size(), static_cast<double>(*divisor_override));
  Tensor d = from_blob(divisor.data(), {m.outputs}, kDouble).to(x.device(), kFloat, true);
  // 16-bit inputs sum in float32 and round once, as PyTorch's kernels
  bool narrow = x.dtype() == kHalf || x.dtype() == kBFloat16;
  std::optional<ScalarType> wide = narrow ? std::optional<ScalarType>(kFloat) : std::nullopt;
  Tensor s;
  if (m.tile.empty()) {
    s = sum(windows(x, m, 0.0), {3}, false, wide);
  } else {  // tiles: summed in place over their kernel dimensions
    DimVector taps;
    for (size_t d = 0; d < m.tile.size(); ++d) taps.push_back(3 + 2 * static_cast<int64_t>(d));
    s = sum(tile_view(x, m), taps, false, wide).reshape({x.size(0), x.size(1), m.outputs});
  }
  Tensor out = (s / d.to(s.dtype())).to(x.dtype());
  return unbatch(out.view(output_sizes(x, m)), input, dims);
}

// Note [Pooling primitives]: avg_pool2d and avg_pool2d_backward are optional primitives (a CPU
// plugin runs them on oneDNN) for float32 and bfloat16 [N, C, H, W] where the device has both,
// no divisor_override is given, and the right padding oneDNN needs is at least 0 and, with
// count_include_pad, at most the left one (the divisor would then count it, where PyTorch's
// stops at the padded input). The gradient of each is the other (both are linear), so
// create_graph works; every other case runs the composite.
// (x or grad_output, kernel, stride, padding, sizes of the result, count_include_pad)
using AvgPoolOp =
    Operator<Tensor(const Tensor&, IntArrayRef, IntArrayRef, IntArrayRef, IntArrayRef, bool)>;

Attrs pool_attrs(IntArrayRef kernel, IntArrayRef stride, IntArrayRef padding, bool include_pad) {
  return Attrs()
      .list("kernel", kernel)
      .list("stride", stride)
      .list("padding", padding)
      .i64("include_pad", include_pad ? 1 : 0);
}

Tensor avg_pool_backend(const AvgPoolOp& op, const Tensor& input, IntArrayRef kernel,
                        IntArrayRef stride, IntArrayRef padding, IntArrayRef result_sizes,
                        bool include_pad) {
  KILN_CHECK_VALUE(input.dim() == 4 && result_sizes.size() == 4 && kernel.size() == 2 &&
                       stride.size() == 2 && padding.size() == 2,
                   op.name(), ": expected 4-D [N, C, H, W] operands and two values of kernel, ",
                   "stride and padding, but got ", input.sizes(), " to ", result_sizes);
  KILN_CHECK_TYPE(input.dtype() == kFloat || input.dtype() == kBFloat16, op.name(),
                  ": expected float32 or bfloat16, but got ", dtype_name(input.dtype()));
  const Tensor x = input.contiguous();
  Tensor out = empty_tensor(result_sizes, x.dtype(), x.device());
  if (out.numel() == 0 || x.numel() == 0) return out.zero_();
  run_kernel(op, {&x}, {&out}, pool_attrs(kernel, stride, padding, include_pad));
  return out;
}

AvgPoolOp avg_pool2d_op("avg_pool2d",
                        "avg_pool2d(Tensor input, int[2] kernel, int[2] stride, int[2] padding, "
                        "int[4] output_sizes, bool count_include_pad) -> Tensor",
                        avg_pool_backend);
AvgPoolOp avg_pool2d_backward_op(
    "avg_pool2d_backward",
    "avg_pool2d_backward(Tensor grad_output, int[2] kernel, int[2] stride, int[2] padding, "
    "int[4] input_sizes, bool count_include_pad) -> Tensor",
    avg_pool_backend);

// Records the other operator of the pair as the gradient of out = op(input, ...).
Tensor avg_pool_autograd(const AvgPoolOp& op, const Tensor& input, IntArrayRef kernel,
                         IntArrayRef stride, IntArrayRef padding, IntArrayRef result_sizes,
                         bool include_pad) {
  Tensor out;
  {
    ExcludeDispatchKeyGuard below(DispatchKey::Autograd);
    out = op(input, kernel, stride, padding, result_sizes, include_pad);
  }
  const bool forward = &op == &avg_pool2d_op;
  const AvgPoolOp* other = forward ? &avg_pool2d_backward_op : &avg_pool2d_op;
  DimVector k(kernel), s(stride), p(padding), sizes(input.sizes());
  autograd::detail::record(forward ? "AvgPool2DBackward0" : "AvgPool2DBackwardBackward0", {&input},
                           {&out},
                           [other, k, s, p, sizes, include_pad](autograd::detail::FunctionNode&,
                                                                const std::vector<Tensor>& g) {
                             return std::vector<Tensor>{
                                 (*other)(g[0], k, s, p, sizes, include_pad)};
                           });
  return out;
}

const bool avg_pool_registered = [] {
  avg_pool2d_op.set_optional();
  avg_pool2d_backward_op.set_optional();
  avg_pool2d_op.set_kernel(DispatchKey::Autograd, avg_pool_autograd);
  avg_pool2d_backward_op.set_kernel(DispatchKey::Autograd, avg_pool_autograd);
  return true;
}();

// See Note [Pooling primitives]: avg_pool2d_op's output for x [N, C, H, W], or undefined where
// the composite runs.
Tensor avg_pool2d_primitive(const Tensor& x, const std::vector<Axis>& axes, const Sweep& w,
                            bool include_pad, std::optional<int64_t> divisor_override) {
  const DeviceType type = x.device().type();
  if (axes.size() != 2 || divisor_override || (x.dtype() != kFloat && x.dtype() != kBFloat16) ||
      !avg_pool2d_op.has_plugin_kernel(type) || !avg_pool2d_backward_op.has_plugin_kernel(type)) {
    return Tensor();
  }
  for (size_t d = 0; d < 2; ++d) {
    // oneDNN's right padding: negative where the last rows are not read
    const int64_t right = (axes[d].out - 1) * w.stride[d] + w.kernel[d] - axes[d].in - w.padding[d];
    if (right < 0 || (include_pad && right > w.padding[d])) return Tensor();
  }
  return avg_pool2d_op(x, w.kernel, w.stride, w.padding,
                       {x.size(0), x.size(1), axes[0].out, axes[1].out}, include_pad);
}

}  // namespace

DimVector expand_pool_arg(const char* op, const char* what, IntArrayRef v, int64_t dims,
                          IntArrayRef fallback) {
  if (v.empty() && !fallback.empty()) return DimVector(fallback);
  KILN_CHECK_VALUE(v.size() == 1 || static_cast<int64_t>(v.size()) == dims, op, ": expected ", what,
                   " to be a single integer or a list of ", dims, " integers, but got [", join(v),
                   "]");
  DimVector out;
  for (int64_t d = 0; d < dims; ++d) out.push_back(v.size() == 1 ? v[0] : v[d]);
  return out;
}

std::tuple<Tensor, Tensor> max_pool_nd(const char* op, const Tensor& input, int64_t dims,
                                       const Sweep& sweep) {
  ExcludeDispatchKeyGuard no_autocast(DispatchKey::Autocast);  // See Note [Pooling dtype]
  Tensor x = batched(op, input, dims);
  std::vector<Axis> axes = sweep_axes(op, x, sweep, false);
  if (dims == 2) {
    auto [values, indices] = max_pool2d_primitive(x, sweep, {axes[0].out, axes[1].out});
    if (values.defined()) return {unbatch(values, input, dims), unbatch(indices, input, dims)};
  }
  WindowMap m = window_map(op, axes);
  if (tiles(x, sweep)) m.tile = sweep.kernel;
  return max_of_windows(input, x, m, dims);
}

Tensor avg_pool_nd(const char* op, const Tensor& input, int64_t dims, const Sweep& sweep,
                   bool count_include_pad, std::optional<int64_t> divisor_override) {
  ExcludeDispatchKeyGuard no_autocast(DispatchKey::Autocast);  // See Note [Pooling dtype]
  Tensor x = batched(op, input, dims);
  KILN_CHECK_VALUE(!divisor_override || *divisor_override != 0, op, ": divisor must be not ",
                   "zero");
  std::vector<Axis> axes = sweep_axes(op, x, sweep, count_include_pad);
  Tensor fast = avg_pool2d_primitive(x, axes, sweep, count_include_pad, divisor_override);
  if (fast.defined()) return unbatch(fast, input, dims);
  WindowMap m = window_map(op, axes);
  if (tiles(x, sweep)) m.tile = sweep.kernel;
  return mean_of_windows(input, x, m, dims, divisor_override);
}

std::tuple<Tensor, Tensor> adaptive_max_pool_nd(
    const char* op, const Tensor& input, int64_t dims,
    const std::vector<std::optional<int64_t>>& output_size) {
  ExcludeDispatchKeyGuard no_autocast(DispatchKey::Autocast);  // See Note [Pooling dtype]
  Tensor x = batched(op, input, dims);
  std::vector<Axis> axes = adaptive_axes(op, x, output_size);
  WindowMap m = window_map(op, axes);
  m.tile = adaptive_tile(axes);
  return max_of_windows(input, x, m, dims);
}

Tensor adaptive_avg_pool_nd(const char* op, const Tensor& input, int64_t dims,
                            const std::vector<std::optional<int64_t>>& output_size) {
  ExcludeDispatchKeyGuard no_autocast(DispatchKey::Autocast);  // See Note [Pooling dtype]
  Tensor x = batched(op, input, dims);
  std::vector<Axis> axes = adaptive_axes(op, x, output_size);
  WindowMap m = window_map(op, axes);
  m.tile = adaptive_tile(axes);
  return mean_of_windows(input, x, m, dims, std::nullopt);
}

// PyTorch's max_unpool: values written (not added) at their indices. Indices repeat where
// pooling windows overlapped, always with the same value: the repeats are added and their excess
// taken back outside the graph, so the gradient of every input element is the output's gradient
// at its index, as PyTorch's.
Tensor max_unpool_nd(const char* op, const Tensor& input, const Tensor& indices, int64_t dims,
                     const Sweep& sweep, IntArrayRef output_size) {
  ExcludeDispatchKeyGuard no_autocast(DispatchKey::Autocast);  // See Note [Pooling dtype]
  Tensor x = batched(op, input, dims);
  KILN_CHECK_TYPE(indices.dtype() == kLong, op, ": expected indices of dtype int64, but got ",
                  dtype_name(indices.dtype()));
  KILN_CHECK_VALUE(indices.sizes().equals(input.sizes()), op, ": expected indices of the ",
                   "input's size ", input.sizes(), ", but got ", indices.sizes());
  const size_t given = output_size.size();
  KILN_CHECK_VALUE(given == 0 || given == static_cast<size_t>(dims) ||
                       given == static_cast<size_t>(dims + 2),
                   op, ": output_size must have ", dims, " or ", dims + 2, " elements, but got [",
                   join(output_size), "]");
  DimVector out;
  int64_t plane = 1;
  for (int64_t d = 0; d < dims; ++d) {
    int64_t size = 0;
    bool overflow = __builtin_mul_overflow(x.size(d + 2) - 1, sweep.stride[d], &size) ||
                    __builtin_sub_overflow(size, 2 * sweep.padding[d], &size) ||
                    __builtin_add_overflow(size, sweep.kernel[d], &size);
    KILN_CHECK_VALUE(!overflow, op, ": the output size of input ", input.sizes(),
                     " overflows int64");
    if (given != 0) {
      int64_t want = output_size[given - static_cast<size_t>(dims) + static_cast<size_t>(d)];
      int64_t low = size - sweep.stride[d], high = size + sweep.stride[d];
      KILN_CHECK_VALUE(low < want && want < high, op, ": invalid output_size [", join(output_size),
                       "] (dim ", d, " must be between ", low, " and ", high, ")");
      size = want;
    }
    KILN_CHECK_VALUE(size > 0, op, ": given input of size ", input.sizes(), ", kernel_size=[",
                     join(sweep.kernel), "], stride=[", join(sweep.stride), "] and padding=[",
                     join(sweep.padding), "], the output size ", size, " of dimension ", d,
                     " is too small");
    out.push_back(size);
    plane = checked_mul(op, plane, size, "the output plane's size");
  }
  const int64_t n = x.size(0), c = x.size(1);
  Tensor index = (input.dim() == dims + 1 ? indices.unsqueeze(0) : indices).reshape({n, c, -1});
  // the indices are checked on the host, which also finds the repeats
  Tensor host = index.to(Device(kCPU), kLong, /*copy=*/true).contiguous();
  const int64_t per_plane = index.size(2);
  const int64_t* v = host.data_ptr<int64_t>();
  std::vector<int64_t> seen(static_cast<size_t>(plane), -1);
  std::vector<double> repeat(static_cast<size_t>(host.numel()), 0.0);
  bool repeats = false;
  for (int64_t p = 0; p < n * c; ++p) {
    for (int64_t i = p * per_plane; i < (p + 1) * per_plane; ++i) {
      KILN_CHECK_INDEX(v[i] >= 0 && v[i] < plane, op, ": found an invalid max index ", v[i],
                       " (output planes are of size ", join(out, "x"), "): the indices must ",
                       "come from max pooling with the same kernel_size, stride and padding");
      int64_t& last = seen[static_cast<size_t>(v[i])];
      if (last == p) {
        repeat[static_cast<size_t>(i)] = 1.0;
        repeats = true;
      }
      last = p;
    }
  }
  TensorOptions options = TensorOptions(x.dtype()).device(x.device());
  Tensor src = x.reshape({n, c, -1});
  Tensor result = scatter_add(zeros({n, c, plane}, options), 2, index, src);
  if (repeats) {
    Tensor excess;
    {
      NoGradGuard no_grad;
      Tensor mask = from_blob(repeat.data(), index.sizes(), kDouble).to(x.device(), x.dtype());
      excess = scatter_add(zeros({n, c, plane}, options), 2, index, src * mask);
    }
    result = result - excess;
  }
  DimVector sizes{n, c};
  for (int64_t s : out) sizes.push_back(s);
  return unbatch(result.view(sizes), input, dims);
}

}  // namespace kiln::detail
