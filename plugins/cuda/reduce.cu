// Reductions: sum, prod, amax, amin, all, any over a list of dimensions, and max_dim/min_dim
// (values and first indices) over one. One kernel shape for all: a block reduces one output
// element (threads stride over the reduced elements, then warp shuffles and one shared-memory
// step); when there are few outputs and many elements each, several blocks share an output and a
// second launch combines their partial results.
#include "loops.cuh"

#include <limits>

namespace kiln::cuda {
namespace {

using sdk::Call;
using sdk::kernel;

// Offsets (in elements) of the input and output at an output index o and a reduced index r.
struct ReducePlan {
  int nk = 0, nr = 0;
  int64_t kept_size[kMaxDims], kept_in[kMaxDims], kept_out[kMaxDims];  // innermost first
  int64_t red_size[kMaxDims], red_in[kMaxDims];
  int64_t n_out = 1, n_red = 1;

  ReducePlan(const kiln_tensor& in, const kiln_tensor& out, const int64_t* dims, int32_t n_dims) {
    if (in.ndim > kMaxDims) {
      throw sdk::not_implemented("cuda: more than " + std::to_string(kMaxDims) + " dimensions");
    }
    for (int32_t d = in.ndim - 1; d >= 0; --d) {
      bool reduced = false;
      for (int32_t j = 0; j < n_dims; ++j) reduced = reduced || dims[j] == d;
      if (reduced) {
        red_size[nr] = in.sizes[d];
        red_in[nr++] = in.strides[d];
        n_red *= in.sizes[d];
      } else {
        kept_size[nk] = in.sizes[d];
        kept_in[nk] = in.strides[d];
        kept_out[nk++] = out.strides[d];
        n_out *= in.sizes[d];
      }
    }
  }
  __device__ void at_output(int64_t o, int64_t& in_off, int64_t& out_off) const {
    in_off = out_off = 0;
    for (int d = 0; d < nk; ++d) {
      int64_t i = o % kept_size[d];
      o /= kept_size[d];
      in_off += i * kept_in[d];
      out_off += i * kept_out[d];
    }
  }
  __device__ int64_t at_reduced(int64_t r) const {
    int64_t off = 0;
    for (int d = 0; d < nr; ++d) {
      off += (r % red_size[d]) * red_in[d];
      r /= red_size[d];
    }
    return off;
  }
};

template <class A>
__device__ __forceinline__ A shfl_down(A v, int delta) {
  if constexpr (sizeof(A) < 4) return A(__shfl_down_sync(0xffffffffu, int(v), delta));
  else return __shfl_down_sync(0xffffffffu, v, delta);
}

// The value-and-index pair of max_dim/min_dim.
template <class A>
struct Arg {
  A v;
  int64_t i;
};
template <class A>
__device__ __forceinline__ Arg<A> shfl_down(Arg<A> a, int delta) {
  return {shfl_down(a.v, delta), shfl_down(a.i, delta)};
}

// The block's combined value, in thread 0. Every thread of the block calls it.
template <class Op, class A>
__device__ A block_reduce(A v, const Op& op) {
  __shared__ A warp_values[32];
  for (int d = 16; d > 0; d >>= 1) v = op.combine(v, shfl_down(v, d));
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  __syncthreads();  // warp_values may still be read by the previous call
  if (lane == 0) warp_values[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < int(blockDim.x / 32) ? warp_values[lane] : op.identity();
    for (int d = 16; d > 0; d >>= 1) v = op.combine(v, shfl_down(v, d));
  }
  return v;
}

// Reduces input elements (In = T) or, in the second pass, partial results (In = Op::acc).
// In the first pass blockIdx.y is the part of the reduced elements this block takes, of `parts`
// (= gridDim.y); the second pass (gridDim.y = 1) combines the `parts` partial results per output.
template <class T, class Op, class In>
__global__ void reduce_kernel(const In* in, ReducePlan plan, Op op, T* out, int64_t* out_index,
                              typename Op::acc* partial, int64_t parts, bool first_pass) {
  using A = typename Op::acc;
  const int64_t part = blockIdx.y;
  const int64_t n_red = first_pass ? plan.n_red : parts;
  const int64_t per_part = first_pass ? (n_red + parts - 1) / parts : n_red;
  const int64_t begin = first_pass ? part * per_part : 0;
  const int64_t end = begin + per_part < n_red ? begin + per_part : n_red;
  for (int64_t o = blockIdx.x; o < plan.n_out; o += gridDim.x) {
    int64_t in_off, out_off;
    plan.at_output(o, in_off, out_off);
    A acc = op.identity();
    for (int64_t r = begin + threadIdx.x; r < end; r += blockDim.x) {
      if constexpr (std::is_same_v<In, A>) {
        acc = op.combine(acc, in[o * n_red + r]);  // partials: [n_out, parts]
      } else {
        acc = op.combine(acc, op.load(in[in_off + plan.at_reduced(r)], r));
      }
    }
    acc = block_reduce(acc, op);
    if (threadIdx.x != 0) continue;
    if (first_pass && parts > 1) partial[o * parts + part] = acc;
    else op.store(out, out_index, out_off, acc);
  }
}

template <class T>
using sum_t =
    std::conditional_t<is_float_v<T>, std::conditional_t<std::is_same_v<T, double>, double, float>,
                       int64_t>;

template <class T, bool Product>
struct SumOp {
  using acc = sum_t<T>;
  __device__ acc identity() const { return acc(Product ? 1 : 0); }
  __device__ acc load(T x, int64_t) const { return acc(to_acc(x)); }
  __device__ acc combine(acc a, acc b) const { return Product ? a * b : a + b; }
  __device__ void store(T* out, int64_t*, int64_t off, acc a) const { out[off] = from_acc<T>(a); }
};

template <class T, bool Max>
struct ExtremeOp {  // NaN propagates
  using acc = acc_t<T>;
  __device__ acc identity() const {
    if constexpr (std::is_floating_point_v<acc>) {
      return Max ? -std::numeric_limits<acc>::infinity() : std::numeric_limits<acc>::infinity();
    } else {
      return Max ? std::numeric_limits<acc>::lowest() : std::numeric_limits<acc>::max();
    }
  }
  __device__ acc load(T x, int64_t) const { return to_acc(x); }
  __device__ acc combine(acc a, acc b) const {
    if (a != a) return a;
    if (b != b) return b;
    return (Max ? b > a : b < a) ? b : a;
  }
  __device__ void store(T* out, int64_t*, int64_t off, acc a) const { out[off] = from_acc<T>(a); }
};

template <class T, bool Max>
struct ArgOp {  // the first index of the extreme; NaN counts as the extreme
  using acc = Arg<acc_t<T>>;
  __device__ acc identity() const { return {ExtremeOp<T, Max>().identity(), -1}; }
  __device__ acc load(T x, int64_t r) const { return {to_acc(x), r}; }
  __device__ acc combine(acc a, acc b) const {
    if (a.i < 0) return b;
    if (b.i < 0) return a;
    const bool a_nan = a.v != a.v, b_nan = b.v != b.v;
    if (a_nan || b_nan) return a_nan && (!b_nan || a.i < b.i) ? a : b;
    if (a.v == b.v) return a.i < b.i ? a : b;
    return (Max ? b.v > a.v : b.v < a.v) ? b : a;
  }
  __device__ void store(T* out, int64_t* index, int64_t off, acc a) const {
    out[off] = from_acc<T>(a.v);
    index[off] = a.i < 0 ? 0 : a.i;
  }
};

template <bool All>
struct LogicalOp {
  using acc = bool;
  __device__ acc identity() const { return All; }
  __device__ acc load(bool x, int64_t) const { return x; }
  __device__ acc combine(acc a, acc b) const { return All ? a && b : a || b; }
  __device__ void store(bool* out, int64_t*, int64_t off, acc a) const { out[off] = a; }
};

template <class T, class Op>
void launch_reduce(const Call& call, const ReducePlan& plan, Op op, int64_t* out_index,
                   bool may_split) {
  const kiln_tensor& in = call.input(0);
  const kiln_tensor& out = call.output(0);
  if (plan.n_out == 0) return;
  cudaStream_t stream = stream_of(call);
  int threads = 32;
  while (threads < kThreads && threads < plan.n_red) threads *= 2;
  // Several blocks per output when the outputs alone would leave the GPU idle: about 1024
  // blocks in all, each with at least 4096 elements.
  int64_t parts = 1;
  if (may_split && plan.n_out < 1024 && plan.n_red > 8192) {
    parts = std::min<int64_t>((1024 + plan.n_out - 1) / plan.n_out, (plan.n_red + 4095) / 4096);
  }
  const unsigned grid_x = static_cast<unsigned>(std::min<int64_t>(plan.n_out, 65535));
  T* out_data = static_cast<T*>(out.data);
  if (parts == 1) {
    reduce_kernel<T, Op, T><<<dim3(grid_x, 1), threads, 0, stream>>>(static_cast<const T*>(in.data),
                                                                     plan, op, out_data, out_index,
                                                                     nullptr, 1, true);
    KILN_CUDA_CHECK(cudaGetLastError());
    return;
  }
  using A = typename Op::acc;
  DeviceBuffer partial(in.device.index, sizeof(A) * plan.n_out * parts);
  A* p = static_cast<A*>(partial.get());
  reduce_kernel<T, Op, T><<<dim3(grid_x, static_cast<unsigned>(parts)), threads, 0, stream>>>(
      static_cast<const T*>(in.data), plan, op, out_data, out_index, p, parts, true);
  KILN_CUDA_CHECK(cudaGetLastError());
  int threads2 = 32;
  while (threads2 < kThreads && threads2 < parts) threads2 *= 2;
  reduce_kernel<T, Op, A><<<dim3(grid_x, 1), threads2, 0, stream>>>(p, plan, op, out_data,
                                                                    out_index, nullptr, parts,
                                                                    false);
  KILN_CUDA_CHECK(cudaGetLastError());
}

ReducePlan plan_of(const Call& call) {
  int32_t n = 0;
  const int64_t* dims = call.attr_list(0, &n);
  return ReducePlan(call.input(0), call.output(0), dims, n);
}

template <bool Product>
void sum_kernel(const Call& call) {
  visit_dtype(call.output(0).dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) {
      throw sdk::type_error(std::string(call.op()) + " on cuda does not take bool");
    } else {
      launch_reduce<T>(call, plan_of(call), SumOp<T, Product>{}, nullptr, true);
    }
  });
}

template <bool Max>
void extreme_kernel(const Call& call) {
  visit_dtype(call.output(0).dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_reduce<T>(call, plan_of(call), ExtremeOp<T, Max>{}, nullptr, true);
  });
}

template <bool All>
void logical_kernel(const Call& call) {
  launch_reduce<bool>(call, plan_of(call), LogicalOp<All>{}, nullptr, true);
}

template <bool Max>
void arg_kernel(const Call& call) {
  const kiln_tensor& values = call.output(0);
  const kiln_tensor& indices = call.output(1);
  for (int32_t d = 0; d < values.ndim; ++d) {
    if (values.sizes[d] != 1 && values.strides[d] != indices.strides[d]) {
      throw sdk::not_implemented(std::string(call.op()) +
                                 " on cuda needs values and indices with the same strides");
    }
  }
  const int64_t dim = call.attr_i64(0);
  ReducePlan plan(call.input(0), values, &dim, 1);
  visit_dtype(values.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    // one block per output: the index pairs are combined in one pass
    launch_reduce<T>(call, plan, ArgOp<T, Max>{}, static_cast<int64_t*>(indices.data), false);
  });
}

}  // namespace

void register_reduce(KernelTable& t) {
  t.add("sum", kernel<sum_kernel<false>>);
  t.add("prod", kernel<sum_kernel<true>>);
  t.add("amax", kernel<extreme_kernel<true>>);
  t.add("amin", kernel<extreme_kernel<false>>);
  t.add("all", kernel<logical_kernel<true>>);
  t.add("any", kernel<logical_kernel<false>>);
  t.add("max_dim", kernel<arg_kernel<true>>);
  t.add("min_dim", kernel<arg_kernel<false>>);
}

}  // namespace kiln::cuda
