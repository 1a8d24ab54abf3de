// upsample_nearest (1-3 spatial dimensions) and upsample_bilinear2d on the GPU: one thread per
// output element of contiguous [N, C, d...], its source positions from kiln/sdk/resample.hpp
// (the formulas the CPU plugin and the core's composite use), 16-bit floats in float.
#include "loops.cuh"

#include <kiln/sdk/resample.hpp>

namespace kiln::cuda {
namespace {

using sdk::Call;
using sdk::kernel;
namespace rs = sdk::resample;

// Sizes of contiguous [N, C, d...] as planes x depth x height x width (absent dimensions 1).
struct Volume {
  int64_t planes = 1, d = 1, h = 1, w = 1;
};

Volume volume_of(const kiln_tensor& t) {
  if (t.ndim < 3 || t.ndim > 5) {
    throw std::invalid_argument("cuda: resampling expects 3 to 5 dimensions, got " +
                                std::to_string(t.ndim));
  }
  Volume v;
  v.planes = t.sizes[0] * t.sizes[1];
  int64_t* dims[3] = {&v.d, &v.h, &v.w};
  for (int32_t k = 2; k < t.ndim; ++k) *dims[3 - (t.ndim - k)] = t.sizes[k];
  return v;
}

struct NearestParams {
  Volume in, out;
  double scale_d, scale_h, scale_w;
  bool exact;
};

template <class U>
__global__ void nearest_kernel(int64_t n, NearestParams p, const U* x, U* y) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    const int64_t ow = i % p.out.w, oh = (i / p.out.w) % p.out.h;
    const int64_t od = (i / (p.out.w * p.out.h)) % p.out.d;
    const int64_t plane = i / (p.out.w * p.out.h * p.out.d);
    const int64_t sd = rs::nearest_source(od, p.in.d, p.out.d, p.scale_d, p.exact);
    const int64_t sh = rs::nearest_source(oh, p.in.h, p.out.h, p.scale_h, p.exact);
    const int64_t sw = rs::nearest_source(ow, p.in.w, p.out.w, p.scale_w, p.exact);
    y[i] = x[((plane * p.in.d + sd) * p.in.h + sh) * p.in.w + sw];
  }
}

void upsample_nearest_kernel(const Call& call) {
  const kiln_tensor& x = call.input(0);
  const kiln_tensor& out = call.output(0);
  NearestParams p{volume_of(x),     volume_of(out),   call.attr_f64(0),
                  call.attr_f64(1), call.attr_f64(2), call.attr_i64(3) != 0};
  const int64_t n = sdk::numel(out);
  if (n == 0) return;
  cudaStream_t stream = stream_of(call);
  auto launch = [&](auto tag) {
    using U = typename decltype(tag)::type;
    nearest_kernel<U><<<blocks_for(n, 1), kThreads, 0, stream>>>(n, p,
                                                                 static_cast<const U*>(x.data),
                                                                 static_cast<U*>(out.data));
  };
  switch (sdk::dtype_size(x.dtype)) {
    case 1: launch(sdk::TypeTag<uint8_t>{}); break;
    case 2: launch(sdk::TypeTag<uint16_t>{}); break;
    case 4: launch(sdk::TypeTag<uint32_t>{}); break;
    default: launch(sdk::TypeTag<uint64_t>{}); break;
  }
  KILN_CUDA_CHECK(cudaGetLastError());
}

template <class T>
__global__ void bilinear_kernel(int64_t n, Volume in, Volume o, bool align_corners, acc_t<T> step_h,
                                acc_t<T> step_w, const T* x, T* y) {
  using A = acc_t<T>;
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    const int64_t ow = i % o.w, oh = (i / o.w) % o.h, plane = i / (o.w * o.h);
    const rs::LinearTaps<A> r = rs::linear_taps<A>(step_h, oh, in.h, o.h, align_corners);
    const rs::LinearTaps<A> c = rs::linear_taps<A>(step_w, ow, in.w, o.w, align_corners);
    const T* row0 = x + (plane * in.h + r.i0) * in.w;
    const T* row1 = x + (plane * in.h + r.i1) * in.w;
    const A top = to_acc(row0[c.i0]) * c.w0 + to_acc(row0[c.i1]) * c.w1;
    const A bottom = to_acc(row1[c.i0]) * c.w0 + to_acc(row1[c.i1]) * c.w1;
    y[i] = from_acc<T>(top * r.w0 + bottom * r.w1);
  }
}

void upsample_bilinear2d_kernel(const Call& call) {
  const kiln_tensor& x = call.input(0);
  const kiln_tensor& out = call.output(0);
  if (x.ndim != 4 || out.ndim != 4) {
    throw std::invalid_argument("upsample_bilinear2d: expected 4-D input and output");
  }
  const Volume in = volume_of(x), o = volume_of(out);
  const bool align_corners = call.attr_i64(0) != 0;
  const double scale_h = call.attr_f64(1), scale_w = call.attr_f64(2);
  const int64_t n = sdk::numel(out);
  if (n == 0) return;
  cudaStream_t stream = stream_of(call);
  visit_dtype(x.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_float_v<T>) {
      using A = acc_t<T>;
      bilinear_kernel<T><<<blocks_for(n, 1), kThreads, 0, stream>>>(
          n, in, o, align_corners, rs::linear_scale<A>(in.h, o.h, align_corners, scale_h),
          rs::linear_scale<A>(in.w, o.w, align_corners, scale_w), static_cast<const T*>(x.data),
          static_cast<T*>(out.data));
    } else {
      throw sdk::type_error(std::string("upsample_bilinear2d: dtype ") + sdk::dtype_name(x.dtype) +
                            " is not supported on cuda");
    }
  });
  KILN_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void register_resample(KernelTable& table) {
  table.add("upsample_nearest", kernel<upsample_nearest_kernel>);
  table.add("upsample_bilinear2d", kernel<upsample_bilinear2d_kernel>);
}

}  // namespace kiln::cuda
