// avg_pool2d and avg_pool2d_backward, the optional pooling primitives (docs/primitives.md), on
// oneDNN's pooling primitive over contiguous NCHW operands in float32 and bfloat16. The right
// padding is what makes oneDNN's output size PyTorch's (ceil_mode adds to it); the core calls
// these only where oneDNN's divisor is PyTorch's (Note [Pooling as a gather of windows] has the
// composite the other cases run).
//
// max_pool2d and max_pool2d_backward (Note [Max pooling primitives] in core/src/ops/max_pool.cpp)
// are direct loops over contiguous NCHW planes in any floating dtype, the planes in parallel.
#include "loops.hpp"
#include "onednn.hpp"
#include "registry.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace kiln::cpu {
namespace {

using dnnl::memory;
using sdk::kernel;

struct PoolGeometry {
  memory::dims kernel, stride, pad_l, pad_r;
  dnnl::algorithm algo;
};

// Reads kernel, stride and padding (two values each) and include_pad; `in` and `out` are the
// input and output [N, C, H, W].
PoolGeometry pool_geometry(const sdk::Call& call, const kiln_tensor& in, const kiln_tensor& out) {
  if (in.ndim != 4 || out.ndim != 4) {
    throw std::invalid_argument(std::string(call.op()) + ": expected 4-D operands");
  }
  PoolGeometry g;
  for (int32_t a = 0; a < 3; ++a) {
    int32_t n = 0;
    const int64_t* v = call.attr_list(a, &n);
    if (n != 2) throw std::invalid_argument(std::string(call.op()) + ": expected 2 values");
    memory::dims& dst = a == 0 ? g.kernel : (a == 1 ? g.stride : g.pad_l);
    dst = {v[0], v[1]};
  }
  g.algo = call.attr_i64(3) != 0 ? dnnl::algorithm::pooling_avg_include_padding
                                 : dnnl::algorithm::pooling_avg_exclude_padding;
  for (int d = 0; d < 2; ++d) {
    g.pad_r.push_back((out.sizes[2 + d] - 1) * g.stride[d] + g.kernel[d] - in.sizes[2 + d] -
                      g.pad_l[d]);
  }
  return g;
}

memory::desc nchw(const kiln_tensor& t) {
  memory::data_type type = t.dtype == KILN_F32    ? memory::data_type::f32
                           : t.dtype == KILN_BF16 ? memory::data_type::bf16
                                                  : memory::data_type::undef;
  if (type == memory::data_type::undef) throw_unsupported(t.dtype);
  return memory::desc({t.sizes[0], t.sizes[1], t.sizes[2], t.sizes[3]}, type,
                      memory::format_tag::nchw);
}

// Runs the forward (x -> y) or the backward (gy -> gx) pass.
void run_pool(bool backward, const kiln_tensor& x, const kiln_tensor& y, const PoolGeometry& g) {
  const memory::desc xd = nchw(x), yd = nchw(y);
  dnnl::pooling_forward::primitive_desc fpd(
      dnnl::pooling_forward::desc(dnnl::prop_kind::forward_training, g.algo, xd, yd, g.stride,
                                  g.kernel, g.pad_l, g.pad_r),
      engine());
  thread_local dnnl::stream stream(engine());
  memory xm(xd, engine(), x.data), ym(yd, engine(), y.data);
  if (!backward) {
    dnnl::pooling_forward(fpd).execute(stream, {{DNNL_ARG_SRC, xm}, {DNNL_ARG_DST, ym}});
  } else {
    dnnl::pooling_backward::primitive_desc bpd(
        dnnl::pooling_backward::desc(g.algo, xd, yd, g.stride, g.kernel, g.pad_l, g.pad_r),
        engine(), fpd);
    dnnl::pooling_backward(bpd).execute(stream, {{DNNL_ARG_DIFF_DST, ym}, {DNNL_ARG_DIFF_SRC, xm}});
  }
  stream.wait();
}

void avg_pool2d_kernel(const sdk::Call& call) {
  const kiln_tensor& x = call.input(0);
  const kiln_tensor& y = call.output(0);
  run_pool(false, x, y, pool_geometry(call, x, y));
}

void avg_pool2d_backward_kernel(const sdk::Call& call) {
  const kiln_tensor& gy = call.input(0);
  const kiln_tensor& gx = call.output(0);
  run_pool(true, gx, gy, pool_geometry(call, gx, gy));
}

// One dimension of a max pooling window sweep: the first input coordinate of each output's window
// inside the input, and one past its last.
struct Taps {
  std::vector<int64_t> begin, end;
  int64_t step = 1;
};

Taps taps(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t pad, int64_t dil) {
  Taps t;
  t.step = dil;
  for (int64_t o = 0; o < out; ++o) {
    int64_t b = o * stride - pad;
    const int64_t e = std::min(b + (kernel - 1) * dil + 1, in);
    while (b < 0) b += dil;
    t.begin.push_back(b);
    t.end.push_back(std::max(b, e));
  }
  return t;
}

// One column tap of a row of max pooling windows: outputs [lo, hi) read row[ow * stride + off]
// (flat plane position base + ow * stride + off) and take it where it is larger or NaN.
// Branch-free, on restrict pointers, so that GCC vectorizes it or at least uses selects.
template <class T>
[[gnu::always_inline]] inline void max_tap_loop(const T* __restrict row,
                                                compute_t<T>* __restrict best,
                                                int64_t* __restrict where, int64_t lo, int64_t hi,
                                                int64_t stride, int64_t off, int64_t base) {
  using C = compute_t<T>;
  for (int64_t ow = lo; ow < hi; ++ow) {
    const int64_t w = ow * stride + off;
    const C v = static_cast<C>(row[w]);
    const C b = best[ow];
    const bool take = v > b || v != v;
    best[ow] = take ? v : b;
    where[ow] = take ? base + w : where[ow];
  }
}

// The same loop for AVX-512 (Note [AVX-512 clones of the elementwise loops] in loops.hpp).
template <class T>
KILN_CPU_AVX512 void max_tap_avx512(const T* row, compute_t<T>* best, int64_t* where, int64_t lo,
                                    int64_t hi, int64_t stride, int64_t off, int64_t base) {
  max_tap_loop<T>(row, best, where, lo, hi, stride, off, base);
}

template <class T>
void max_tap(const T* row, compute_t<T>* best, int64_t* where, int64_t lo, int64_t hi,
             int64_t stride, int64_t off, int64_t base) {
  if (has_avx512()) {
    max_tap_avx512<T>(row, best, where, lo, hi, stride, off, base);
  } else {
    max_tap_loop<T>(row, best, where, lo, hi, stride, off, base);
  }
}

// Inputs x [N, C, H, W]; outputs values and int64 indices [N, C, oH, oW]; attributes kernel,
// stride, padding, dilation (two values each). As PyTorch's kernel: the first maximum of each
// window, or its last NaN; the index is the flat position in the input plane.
void max_pool2d_kernel(const sdk::Call& call) {
  const kiln_tensor& x = call.input(0);
  const kiln_tensor& y = call.output(0);
  const kiln_tensor& idx = call.output(1);
  if (x.ndim != 4 || y.ndim != 4 || idx.ndim != 4 || idx.dtype != KILN_I64) {
    throw std::invalid_argument("max_pool2d: expected 4-D operands and int64 indices");
  }
  int64_t g[4][2];
  for (int32_t a = 0; a < 4; ++a) {
    int32_t n = 0;
    const int64_t* v = call.attr_list(a, &n);
    if (n != 2) throw std::invalid_argument("max_pool2d: expected 2 values per attribute");
    g[a][0] = v[0];
    g[a][1] = v[1];
  }
  const int64_t H = x.sizes[2], W = x.sizes[3], oH = y.sizes[2], oW = y.sizes[3];
  const Taps th = taps(H, oH, g[0][0], g[1][0], g[2][0], g[3][0]);
  const Taps tw = taps(W, oW, g[0][1], g[1][1], g[2][1], g[3][1]);
  const int64_t planes = x.sizes[0] * x.sizes[1];
  // the outputs [col_lo[kw], col_hi[kw]) whose window has column tap kw inside the input
  const int64_t kW = g[0][1], sW = g[1][1], pW = g[2][1], dW = g[3][1];
  std::vector<int64_t> col_lo(static_cast<size_t>(kW)), col_hi(static_cast<size_t>(kW));
  for (int64_t kw = 0; kw < kW; ++kw) {
    const int64_t off = kw * dW - pW;  // column of output ow: ow * sW + off
    col_lo[kw] = off >= 0 ? 0 : (-off + sW - 1) / sW;
    col_hi[kw] = W - off <= 0 ? 0 : std::min(oW, (W - off + sW - 1) / sW);
    col_hi[kw] = std::max(col_hi[kw], col_lo[kw]);
  }
  visit<Dtypes::floating>(x.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const T* in = static_cast<const T*>(x.data);
    T* out = static_cast<T*>(y.data);
    int64_t* at = static_cast<int64_t*>(idx.data);
    const int64_t grain = std::max<int64_t>(1, kGrain / std::max<int64_t>(1, oH * oW * 4));
    parallel_for(planes, grain, [&](int64_t begin, int64_t end) {
      // a row of outputs at a time, tap by tap in PyTorch's order (rows, then columns), each tap
      // a vectorizable pass over the outputs whose window holds it
      std::vector<C> best(static_cast<size_t>(oW));
      std::vector<int64_t> where(static_cast<size_t>(oW));
      for (int64_t p = begin; p < end; ++p) {
        const T* plane = in + p * H * W;
        for (int64_t oh = 0; oh < oH; ++oh) {
          const int64_t h0 = th.begin[oh], h1 = th.end[oh];
          for (int64_t ow = 0; ow < oW; ++ow) {
            best[ow] = -std::numeric_limits<C>::infinity();
            where[ow] = h0 * W + tw.begin[ow];
          }
          for (int64_t h = h0; h < h1; h += th.step) {
            const T* row = plane + h * W;
            for (int64_t kw = 0; kw < kW; ++kw) {
              const int64_t off = kw * dW - pW, lo = col_lo[kw], hi = col_hi[kw];
              max_tap<T>(row, best.data(), where.data(), lo, hi, sW, off, h * W);
            }
          }
          T* o = out + (p * oH + oh) * oW;
          int64_t* i = at + (p * oH + oh) * oW;
          for (int64_t ow = 0; ow < oW; ++ow) {
            o[ow] = static_cast<T>(best[ow]);
            i[ow] = where[ow];
          }
        }
      }
    });
  });
}

// Inputs grad_output and int64 indices [N, C, oH, oW]; output grad_x [N, C, H, W]: each output's
// gradient added at its index of a zero plane (in float for 16-bit floats, rounded once).
void max_pool2d_backward_kernel(const sdk::Call& call) {
  const kiln_tensor& gy = call.input(0);
  const kiln_tensor& idx = call.input(1);
  const kiln_tensor& gx = call.output(0);
  if (gy.ndim != 4 || idx.ndim != 4 || gx.ndim != 4 || idx.dtype != KILN_I64) {
    throw std::invalid_argument("max_pool2d_backward: expected 4-D operands and int64 indices");
  }
  const int64_t plane = gx.sizes[2] * gx.sizes[3], outputs = gy.sizes[2] * gy.sizes[3];
  const int64_t planes = gx.sizes[0] * gx.sizes[1];
  std::atomic<int64_t> bad{-1};
  visit<Dtypes::floating>(gx.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const T* g = static_cast<const T*>(gy.data);
    const int64_t* at = static_cast<const int64_t*>(idx.data);
    T* out = static_cast<T*>(gx.data);
    const int64_t grain = std::max<int64_t>(1, kGrain / std::max<int64_t>(1, plane + outputs));
    parallel_for(planes, grain, [&](int64_t begin, int64_t end) {
      std::vector<C> wide(std::is_same_v<C, T> ? 0 : static_cast<size_t>(plane));
      for (int64_t p = begin; p < end; ++p) {
        C* sum = wide.data();
        if constexpr (std::is_same_v<C, T>) sum = out + p * plane;
        std::fill(sum, sum + plane, C(0));
        const T* gp = g + p * outputs;
        const int64_t* ip = at + p * outputs;
        for (int64_t o = 0; o < outputs; ++o) {
          const int64_t k = ip[o];
          if (k < 0 || k >= plane) {
            bad.store(k);
            continue;
          }
          sum[k] += static_cast<C>(gp[o]);
        }
        if constexpr (!std::is_same_v<C, T>) {
          T* dst = out + p * plane;
          for (int64_t k = 0; k < plane; ++k) dst[k] = static_cast<T>(sum[k]);
        }
      }
    });
  });
  if (const int64_t k = bad.load(); k != -1) {
    throw std::out_of_range("index " + std::to_string(k) + " is out of bounds for an input plane " +
                            "of " + std::to_string(plane) + " elements");
  }
}

}  // namespace

void register_pool(KernelTable& table) {
  table.add("avg_pool2d", kernel<avg_pool2d_kernel>);
  table.add("avg_pool2d_backward", kernel<avg_pool2d_backward_kernel>);
  table.add("max_pool2d", kernel<max_pool2d_kernel>);
  table.add("max_pool2d_backward", kernel<max_pool2d_backward_kernel>);
}

}  // namespace kiln::cpu
