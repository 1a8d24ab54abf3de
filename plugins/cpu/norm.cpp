// batch_norm_train and batch_norm_backward: batch normalization over the batch's statistics as
// two fused kernels, and channel_affine (with running statistics: one pass instead of three)
// (docs/primitives.md, "Optional primitives"), where core's composite makes about ten passes over a
// full-size tensor forward and twenty backward.
//
// The operands are contiguous [N, C, S...]: channel c is N runs of S elements. Channels are
// independent and run in parallel on TBB. Each kernel reads a channel's runs a few times in a
// row (statistics, then the output), which for the common sizes stays in the core's cache.
// Sums accumulate in float for a chunk of up to kChunk values and in double across chunks
// (double throughout for float64); 16-bit values are converted a chunk at a time.
#include "loops.hpp"
#include "registry.hpp"

#include <cmath>
#include <string>

namespace kiln::cpu {
namespace {

using sdk::kernel;

// Channel c of a contiguous [N, C, S] tensor: its N runs of `run` elements.
struct Channel {
  int64_t batch, channels, run;

  template <class T>
  T* at(void* data, int64_t n, int64_t c) const {
    return static_cast<T*>(data) + (n * channels + c) * run;
  }
  template <class T>
  const T* at(const void* data, int64_t n, int64_t c) const {
    return static_cast<const T*>(data) + (n * channels + c) * run;
  }
};

// Calls f(values, count) for the elements of channel c in chunks of at most kChunk, converted
// to compute_t<T>; several tensors of the same shape are read in step.
template <class T, size_t K, class F>
void for_chunks(const Channel& ch, int64_t c, const std::array<const void*, K>& data, F f) {
  using C = compute_t<T>;
  for (int64_t n = 0; n < ch.batch; ++n) {
    std::array<const T*, K> p;
    for (size_t k = 0; k < K; ++k) p[k] = ch.at<T>(data[k], n, c);
    for (int64_t off = 0; off < ch.run; off += kChunk) {
      const int64_t m = std::min(kChunk, ch.run - off);
      if constexpr (std::is_same_v<C, T>) {
        std::array<const C*, K> v;
        for (size_t k = 0; k < K; ++k) v[k] = p[k] + off;
        f(v, m, n, off);
      } else {
        Buffer<C> buf[K];
        std::array<const C*, K> v;
        for (size_t k = 0; k < K; ++k) {
          load_chunk<T>(reinterpret_cast<const char*>(p[k] + off), sizeof(T), m, buf[k].v);
          v[k] = buf[k].v;
        }
        f(v, m, n, off);
      }
    }
  }
}

// Element i of run n of channel c of `out` from values[0, m) at `off` (rounded once).
template <class T>
void store(const Channel& ch, void* out, int64_t n, int64_t c, int64_t off, int64_t m,
           const compute_t<T>* values) {
  store_chunk<T>(reinterpret_cast<char*>(ch.at<T>(out, n, c) + off), sizeof(T), m, values);
}

// The accumulation type of the statistics (and of weight, bias, mean, var): double for float64.
template <class T>
using acc_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

// ---- the arithmetic on one chunk --------------------------------------------------------------
// Written for C = float or double with kLanes partial sums, so that the compiler vectorizes the
// reductions without reassociating on its own; the float versions are compiled for AVX-512,
// AVX2 and baseline x86-64, chosen by the loader (target_clones).

constexpr int kLanes = 16;

template <class C>
[[gnu::always_inline]] inline C lanes_total(const C (&acc)[kLanes]) {
  C s = 0;
  for (int j = 0; j < kLanes; ++j) s += acc[j];
  return s;
}

// sum of x, and sum of (x - mean)^2
template <class C>
[[gnu::always_inline]] inline C sum_of(const C* x, int64_t n) {
  C acc[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) acc[j] += x[i + j];
  }
  C s = lanes_total(acc);
  for (; i < n; ++i) s += x[i];
  return s;
}

template <class C>
[[gnu::always_inline]] inline C squares_of(const C* x, int64_t n, C mean) {
  C acc[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) acc[j] += (x[i + j] - mean) * (x[i + j] - mean);
  }
  C s = lanes_total(acc);
  for (; i < n; ++i) s += (x[i] - mean) * (x[i] - mean);
  return s;
}

// out = relu?((x - mean) * scale + shift); NaN stays NaN
template <class C>
[[gnu::always_inline]] inline void normalize(const C* x, C* out, int64_t n, C mean, C scale,
                                             C shift, bool relu) {
  for (int64_t i = 0; i < n; ++i) out[i] = (x[i] - mean) * scale + shift;
  if (relu) {
    for (int64_t i = 0; i < n; ++i) out[i] = out[i] < C(0) ? C(0) : out[i];
  }
}

// The gradient reaching the normalization: g, or g where y > 0 after a fused relu.
template <class C>
[[gnu::always_inline]] inline C gate(C g, C y, bool relu) {
  return relu && !(y > C(0)) ? C(0) : g;
}

// sums[0] += sum of g', sums[1] += sum of g' * (x - mean)
template <class C>
[[gnu::always_inline]] inline void gradient_sums(const C* g, const C* x, const C* y, int64_t n,
                                                 C mean, bool relu, C* sums) {
  C sg[kLanes] = {}, sgx[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) {
      C gi = gate(g[i + j], y[i + j], relu);
      sg[j] += gi;
      sgx[j] += gi * (x[i + j] - mean);
    }
  }
  C a = lanes_total(sg), b = lanes_total(sgx);
  for (; i < n; ++i) {
    C gi = gate(g[i], y[i], relu);
    a += gi;
    b += gi * (x[i] - mean);
  }
  sums[0] = a;
  sums[1] = b;
}

// out = a * (g' - gm - (x - mean) * k)
template <class C>
[[gnu::always_inline]] inline void input_gradient(const C* g, const C* x, const C* y, C* out,
                                                  int64_t n, C mean, C a, C gm, C k, bool relu) {
  for (int64_t i = 0; i < n; ++i) out[i] = a * (gate(g[i], y[i], relu) - gm - (x[i] - mean) * k);
}

#define KILN_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
KILN_CLONES float sum_f(const float* x, int64_t n) { return sum_of(x, n); }
KILN_CLONES float squares_f(const float* x, int64_t n, float mean) {
  return squares_of(x, n, mean);
}
KILN_CLONES void normalize_f(const float* x, float* out, int64_t n, float mean, float scale,
                             float shift, bool relu) {
  normalize(x, out, n, mean, scale, shift, relu);
}
KILN_CLONES void gradient_sums_f(const float* g, const float* x, const float* y, int64_t n,
                                 float mean, bool relu, float* sums) {
  gradient_sums(g, x, y, n, mean, relu, sums);
}
KILN_CLONES void input_gradient_f(const float* g, const float* x, const float* y, float* out,
                                  int64_t n, float mean, float a, float gm, float k, bool relu) {
  input_gradient(g, x, y, out, n, mean, a, gm, k, relu);
}
#undef KILN_CLONES

// The chunk functions for C: the float clones, or the templates for double.
template <class C>
struct Chunk {
  static C sum(const C* x, int64_t n) { return sum_of(x, n); }
  static C squares(const C* x, int64_t n, C mean) { return squares_of(x, n, mean); }
  static void norm(const C* x, C* out, int64_t n, C mean, C scale, C shift, bool relu) {
    normalize(x, out, n, mean, scale, shift, relu);
  }
  static void sums(const C* g, const C* x, const C* y, int64_t n, C mean, bool relu, C* s) {
    gradient_sums(g, x, y, n, mean, relu, s);
  }
  static void grad(const C* g, const C* x, const C* y, C* out, int64_t n, C mean, C a, C gm, C k,
                   bool relu) {
    input_gradient(g, x, y, out, n, mean, a, gm, k, relu);
  }
};
template <>
struct Chunk<float> {
  static constexpr auto sum = sum_f;
  static constexpr auto squares = squares_f;
  static constexpr auto norm = normalize_f;
  static constexpr auto sums = gradient_sums_f;
  static constexpr auto grad = input_gradient_f;
};

void check_layout(const Call& call, const char* what, const kiln_tensor& t,
                  const kiln_tensor& like) {
  bool ok = t.ndim == like.ndim && t.dtype == like.dtype;
  int64_t expect = 1;
  for (int32_t d = t.ndim - 1; ok && d >= 0; --d) {
    ok = t.sizes[d] == like.sizes[d] && (t.sizes[d] == 1 || t.strides[d] == expect);
    expect *= t.sizes[d];
  }
  if (!ok) {
    throw std::invalid_argument(std::string(call.op()) + ": " + what + " must be contiguous " +
                                "with the input's sizes and dtype");
  }
}

void check_vector(const Call& call, const char* what, const kiln_tensor& t, int64_t channels,
                  int32_t dtype) {
  if (t.ndim != 1 || t.sizes[0] != channels || (channels > 1 && t.strides[0] != 1) ||
      t.dtype != dtype) {
    throw std::invalid_argument(std::string(call.op()) + ": " + what + " must be a dense " +
                                sdk::dtype_name(dtype) + " vector of " + std::to_string(channels) +
                                " elements");
  }
}

Channel channel_view(const kiln_tensor& x) {
  int64_t run = 1;
  for (int32_t d = 2; d < x.ndim; ++d) run *= x.sizes[d];
  return {x.sizes[0], x.sizes[1], run};
}

// The number of channels per TBB task: enough that a task has some 32K elements.
int64_t channel_grain(const Channel& ch) {
  return std::max<int64_t>(1, kGrain / std::max<int64_t>(1, ch.batch * ch.run));
}

// Inputs x, weight, bias; outputs out, mean, var (biased); attributes eps, relu.
void batch_norm_train_kernel(const Call& call) {
  const kiln_tensor& x = call.input(0);
  if (x.ndim < 2) throw std::invalid_argument("batch_norm_train: the input must be [N, C, ...]");
  const Channel ch = channel_view(x);
  check_layout(call, "the input", x, x);
  check_layout(call, "the output", call.output(0), x);
  const int32_t acc = x.dtype == KILN_F64 ? KILN_F64 : KILN_F32;
  check_vector(call, "the weight", call.input(1), ch.channels, acc);
  check_vector(call, "the bias", call.input(2), ch.channels, acc);
  check_vector(call, "the mean", call.output(1), ch.channels, acc);
  check_vector(call, "the variance", call.output(2), ch.channels, acc);
  const double eps = call.attr_f64(0);
  const bool relu = call.attr_i64(1) != 0;
  const double count = static_cast<double>(ch.batch * ch.run);
  visit<Dtypes::floating>(x.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    using A = acc_t<T>;
    const A* weight = static_cast<const A*>(call.input(1).data);
    const A* bias = static_cast<const A*>(call.input(2).data);
    A* mean_out = static_cast<A*>(call.output(1).data);
    A* var_out = static_cast<A*>(call.output(2).data);
    void* out = call.output(0).data;
    const std::array<const void*, 1> in = {x.data};
    parallel_for(ch.channels, channel_grain(ch), [&](int64_t begin, int64_t end) {
      Buffer<C> result;
      for (int64_t c = begin; c < end; ++c) {
        double sum = 0;
        for_chunks<T>(ch, c, in, [&](const auto& v, int64_t m, int64_t, int64_t) {
          sum += Chunk<C>::sum(v[0], m);
        });
        const double mean = sum / count;
        const C cm = static_cast<C>(mean);
        double squares = 0;
        for_chunks<T>(ch, c, in, [&](const auto& v, int64_t m, int64_t, int64_t) {
          squares += Chunk<C>::squares(v[0], m, cm);
        });
        const double var = squares / count;
        const C scale = static_cast<C>(static_cast<double>(weight[c]) / std::sqrt(var + eps));
        const C shift = static_cast<C>(bias[c]);
        for_chunks<T>(ch, c, in, [&](const auto& v, int64_t m, int64_t n, int64_t off) {
          Chunk<C>::norm(v[0], result.v, m, cm, scale, shift, relu);
          store<T>(ch, out, n, c, off, m, result.v);
        });
        mean_out[c] = static_cast<A>(mean);
        var_out[c] = static_cast<A>(var);
      }
    });
  });
}

// Inputs x, scale [C], shift [C]; output out = x * scale + shift per channel, then max(out, 0)
// when the attribute relu is 1 (batch normalization with running statistics).
void channel_affine_kernel(const Call& call) {
  const kiln_tensor& x = call.input(0);
  if (x.ndim < 2) throw std::invalid_argument("channel_affine: the input must be [N, C, ...]");
  const Channel ch = channel_view(x);
  check_layout(call, "the input", x, x);
  check_layout(call, "the output", call.output(0), x);
  const int32_t acc = x.dtype == KILN_F64 ? KILN_F64 : KILN_F32;
  check_vector(call, "the scale", call.input(1), ch.channels, acc);
  check_vector(call, "the shift", call.input(2), ch.channels, acc);
  const bool relu = call.attr_i64(0) != 0;
  visit<Dtypes::floating>(x.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    using A = acc_t<T>;
    const A* scale = static_cast<const A*>(call.input(1).data);
    const A* shift = static_cast<const A*>(call.input(2).data);
    void* out = call.output(0).data;
    const std::array<const void*, 1> in = {x.data};
    parallel_for(ch.channels, channel_grain(ch), [&](int64_t begin, int64_t end) {
      Buffer<C> result;
      for (int64_t c = begin; c < end; ++c) {
        const C a = static_cast<C>(scale[c]), b = static_cast<C>(shift[c]);
        // (x - 0) * a + b: x * a + b to the bit
        for_chunks<T>(ch, c, in, [&](const auto& v, int64_t m, int64_t n, int64_t off) {
          Chunk<C>::norm(v[0], result.v, m, C(0), a, b, relu);
          store<T>(ch, out, n, c, off, m, result.v);
        });
      }
    });
  });
}

// Inputs grad_out, x, mean, invstd, weight (and out, for relu); outputs grad_x, grad_weight,
// grad_bias; attribute relu.
void batch_norm_backward_kernel(const Call& call) {
  const kiln_tensor& gy = call.input(0);
  const kiln_tensor& x = call.input(1);
  if (x.ndim < 2) {
    throw std::invalid_argument("batch_norm_backward: the input must be [N, C, ...]");
  }
  const bool relu = call.attr_i64(0) != 0;
  if (call.num_inputs() != (relu ? 6 : 5)) {
    throw std::invalid_argument("batch_norm_backward: expected " + std::to_string(relu ? 6 : 5) +
                                " inputs");
  }
  const Channel ch = channel_view(x);
  check_layout(call, "the input", x, x);
  check_layout(call, "grad_out", gy, x);
  check_layout(call, "grad_x", call.output(0), x);
  if (relu) check_layout(call, "the output", call.input(5), x);
  const int32_t acc = x.dtype == KILN_F64 ? KILN_F64 : KILN_F32;
  check_vector(call, "the mean", call.input(2), ch.channels, acc);
  check_vector(call, "invstd", call.input(3), ch.channels, acc);
  check_vector(call, "the weight", call.input(4), ch.channels, acc);
  check_vector(call, "grad_weight", call.output(1), ch.channels, acc);
  check_vector(call, "grad_bias", call.output(2), ch.channels, acc);
  const double count = static_cast<double>(ch.batch * ch.run);
  visit<Dtypes::floating>(x.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    using A = acc_t<T>;
    const A* mean = static_cast<const A*>(call.input(2).data);
    const A* invstd = static_cast<const A*>(call.input(3).data);
    const A* weight = static_cast<const A*>(call.input(4).data);
    A* grad_weight = static_cast<A*>(call.output(1).data);
    A* grad_bias = static_cast<A*>(call.output(2).data);
    void* gx = call.output(0).data;
    // relu: the gradient passes where the output is positive (PyTorch's threshold_backward)
    const std::array<const void*, 3> in = {gy.data, x.data, relu ? call.input(5).data : x.data};
    parallel_for(ch.channels, channel_grain(ch), [&](int64_t begin, int64_t end) {
      Buffer<C> result;
      for (int64_t c = begin; c < end; ++c) {
        const C cm = static_cast<C>(mean[c]);
        double sum_g = 0, sum_gx = 0;
        for_chunks<T>(ch, c, in, [&](const auto& v, int64_t m, int64_t, int64_t) {
          C s[2];
          Chunk<C>::sums(v[0], v[1], v[2], m, cm, relu, s);
          sum_g += s[0];
          sum_gx += s[1];
        });
        const double inv = invstd[c];
        grad_bias[c] = static_cast<A>(sum_g);
        grad_weight[c] = static_cast<A>(sum_gx * inv);
        // grad_x = weight * invstd * (g - mean(g) - (x - mean) * invstd^2 * mean(g * (x - mean)))
        const C a = static_cast<C>(static_cast<double>(weight[c]) * inv);
        const C gm = static_cast<C>(sum_g / count);
        const C k = static_cast<C>(sum_gx / count * inv * inv);
        for_chunks<T>(ch, c, in, [&](const auto& v, int64_t m, int64_t n, int64_t off) {
          Chunk<C>::grad(v[0], v[1], v[2], result.v, m, cm, a, gm, k, relu);
          store<T>(ch, gx, n, c, off, m, result.v);
        });
      }
    });
  });
}

}  // namespace

void register_norm(KernelTable& table) {
  table.add("batch_norm_train", kernel<batch_norm_train_kernel>);
  table.add("batch_norm_backward", kernel<batch_norm_backward_kernel>);
  table.add("channel_affine", kernel<channel_affine_kernel>);
}

}  // namespace kiln::cpu
