// upsample_nearest (1-3 spatial dimensions) and upsample_bilinear2d: the optional resampling
// primitives (docs/primitives.md), with the source positions of kiln/sdk/resample.hpp. The input
// and the output are contiguous [N, C, d...]; each (plane, output row) is one task, rows run in
// parallel on TBB, and each row reads its input rows through the precomputed column taps.
#include "loops.hpp"
#include "registry.hpp"

#include <kiln/sdk/resample.hpp>

#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace kiln::cpu {
namespace {

using sdk::kernel;
namespace rs = sdk::resample;

// Sizes of contiguous [N, C, d...] as planes x depth x height x width (absent dimensions 1).
struct Volume {
  int64_t planes = 1, d = 1, h = 1, w = 1;
};

Volume volume_of(const kiln_tensor& t, const char* op) {
  if (t.ndim < 3 || t.ndim > 5) {
    throw std::invalid_argument(std::string(op) + ": expected 3 to 5 dimensions, got " +
                                std::to_string(t.ndim));
  }
  Volume v;
  v.planes = t.sizes[0] * t.sizes[1];
  int64_t* dims[3] = {&v.d, &v.h, &v.w};
  for (int32_t k = 2; k < t.ndim; ++k) *dims[3 - (t.ndim - k)] = t.sizes[k];
  return v;
}

// out[plane, od, oh, ow] = x[plane, src_d[od], src_h[oh], src_w[ow]]: rows of element copies.
template <class B>
void nearest_rows(const kiln_tensor& x, const kiln_tensor& out, const Volume& in, const Volume& o,
                  const std::vector<int64_t>* src) {
  const B* xp = static_cast<const B*>(x.data);
  B* op = static_cast<B*>(out.data);
  const int64_t rows = o.planes * o.d * o.h;
  const int64_t* sw = src[2].data();
  parallel_for(rows, std::max<int64_t>(1, kGrain / o.w), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t oh = r % o.h, od = (r / o.h) % o.d, p = r / (o.h * o.d);
      const B* row = xp + ((p * in.d + src[0][od]) * in.h + src[1][oh]) * in.w;
      B* dst = op + r * o.w;
      for (int64_t ow = 0; ow < o.w; ++ow) dst[ow] = row[sw[ow]];
    }
  });
}

void upsample_nearest_kernel(const sdk::Call& call) {
  const kiln_tensor& x = call.input(0);
  const kiln_tensor& out = call.output(0);
  const Volume in = volume_of(x, call.op()), o = volume_of(out, call.op());
  const double scale[3] = {call.attr_f64(0), call.attr_f64(1), call.attr_f64(2)};
  const bool exact = call.attr_i64(3) != 0;
  const int64_t in_size[3] = {in.d, in.h, in.w}, out_size[3] = {o.d, o.h, o.w};
  std::vector<int64_t> src[3];
  for (int k = 0; k < 3; ++k) {
    for (int64_t i = 0; i < out_size[k]; ++i) {
      src[k].push_back(rs::nearest_source(i, in_size[k], out_size[k], scale[k], exact));
    }
  }
  switch (sdk::dtype_size(x.dtype)) {
    case 1: nearest_rows<uint8_t>(x, out, in, o, src); break;
    case 2: nearest_rows<uint16_t>(x, out, in, o, src); break;
    case 4: nearest_rows<uint32_t>(x, out, in, o, src); break;
    case 8: nearest_rows<uint64_t>(x, out, in, o, src); break;
    default: throw_unsupported(x.dtype);
  }
}

// out[p, oh, ow] = wh0 (ww0 x[p, h0, w0] + ww1 x[p, h0, w1]) + wh1 (ww0 x[p, h1, w0] + ...),
// in the order of PyTorch's CPU kernel; 16-bit floats in float, rounded once.
template <class T>
void bilinear_rows(const kiln_tensor& x, const kiln_tensor& out, const Volume& in, const Volume& o,
                   bool align_corners, double scale_h, double scale_w) {
  using C = compute_t<T>;
  const C step_h = rs::linear_scale<C>(in.h, o.h, align_corners, scale_h);
  const C step_w = rs::linear_scale<C>(in.w, o.w, align_corners, scale_w);
  std::vector<rs::LinearTaps<C>> cols;
  for (int64_t ow = 0; ow < o.w; ++ow) {
    cols.push_back(rs::linear_taps<C>(step_w, ow, in.w, o.w, align_corners));
  }
  const T* xp = static_cast<const T*>(x.data);
  T* op = static_cast<T*>(out.data);
  parallel_for(o.planes * o.h, std::max<int64_t>(1, kGrain / (4 * o.w)), [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const int64_t oh = r % o.h, p = r / o.h;
      const rs::LinearTaps<C> t = rs::linear_taps<C>(step_h, oh, in.h, o.h, align_corners);
      const T* row0 = xp + (p * in.h + t.i0) * in.w;
      const T* row1 = xp + (p * in.h + t.i1) * in.w;
      T* dst = op + r * o.w;
      for (int64_t ow = 0; ow < o.w; ++ow) {
        const rs::LinearTaps<C>& c = cols[static_cast<size_t>(ow)];
        const C top = static_cast<C>(row0[c.i0]) * c.w0 + static_cast<C>(row0[c.i1]) * c.w1;
        const C bottom = static_cast<C>(row1[c.i0]) * c.w0 + static_cast<C>(row1[c.i1]) * c.w1;
        dst[ow] = static_cast<T>(top * t.w0 + bottom * t.w1);
      }
    }
  });
}

void upsample_bilinear2d_kernel(const sdk::Call& call) {
  const kiln_tensor& x = call.input(0);
  const kiln_tensor& out = call.output(0);
  if (x.ndim != 4 || out.ndim != 4) {
    throw std::invalid_argument("upsample_bilinear2d: expected 4-D input and output");
  }
  const Volume in = volume_of(x, call.op()), o = volume_of(out, call.op());
  const bool align_corners = call.attr_i64(0) != 0;
  const double scale_h = call.attr_f64(1), scale_w = call.attr_f64(2);
  visit<Dtypes::floating>(x.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    bilinear_rows<T>(x, out, in, o, align_corners, scale_h, scale_w);
  });
}

}  // namespace

void register_resample(KernelTable& table) {
  table.add("upsample_nearest", kernel<upsample_nearest_kernel>);
  table.add("upsample_bilinear2d", kernel<upsample_bilinear2d_kernel>);
}

}  // namespace kiln::cpu
