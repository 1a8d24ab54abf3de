// The loops every CPU kernel plugs a functor into: a parallel range driver, an elementwise map over
// strided operands, and dtype dispatch restricted to the dtypes an operator accepts.
//
// Note [Elementwise loops on the CPU]
// map() walks its operands with kiln::sdk::StridedLoop, in runs along the merged innermost
// dimension. Each run takes one of these paths:
//   - contiguous: every operand steps by its element size; a plain indexed loop that GCC
//     vectorizes. `#pragma GCC ivdep` is sound for in-place calls because the output may only
//     alias an input element for element, which carries no dependence between iterations;
//   - binary with one broadcast operand (step 0): the scalar is hoisted and the loop is contiguous;
//   - 16-bit floats: operands are converted to float in chunks of kChunk, the functor runs on
//     float buffers (vectorized), and the result is rounded once when it is stored;
//   - otherwise an indexed loop with byte strides.
// Loops up to `grain` elements run on the calling thread with no allocation and no TBB dispatch,
// which keeps a 1-element call at a few nanoseconds; longer ones are split across TBB's threads.
#pragma once

#include <kiln/sdk/kernel.hpp>
#include <kiln/sdk/pointwise.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

namespace kiln::cpu {

using sdk::BFloat16;
using sdk::Call;
using sdk::compute_t;
using sdk::Half;
using sdk::is_floating_v;

template <class T>
constexpr bool is_16bit_float_v = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

// An unsigned integer type with the size of T, for copying elements without looking at them.
using sdk::pointwise::bits_t;

constexpr int64_t kGrain = 32768;      // elements below which a cheap loop stays on one thread
constexpr int64_t kGrainHeavy = 2048;  // the same for loops that call exp, sin, pow, ...
constexpr int64_t kChunk = 256;        // 16-bit floats are converted to float this many at a time

// A non-owning reference to a callable void(int64_t begin, int64_t end).
class RangeFn {
 public:
  template <class F>
  RangeFn(const F& f)  // NOLINT: implicit, like std::function_ref
      : object_(&f),
        call_([](const void* o, int64_t b, int64_t e) { (*static_cast<const F*>(o))(b, e); }) {}
  void operator()(int64_t begin, int64_t end) const { call_(object_, begin, end); }

 private:
  const void* object_;
  void (*call_)(const void*, int64_t, int64_t);
};

// Splits [0, n) across TBB's threads in ranges of at least `grain` (convert.cpp). The callable is
// type-erased so that TBB's templates are instantiated once, not once per kernel.
void parallel_for_tbb(int64_t n, int64_t grain, RangeFn f);

// Calls f(begin, end) over [0, n): on this thread up to `grain` elements, else across TBB's.
template <class F>
void parallel_for(int64_t n, int64_t grain, const F& f) {
  if (n <= 0) return;
  if (n <= grain) {
    f(int64_t{0}, n);
    return;
  }
  parallel_for_tbb(n, grain, RangeFn(f));
}

// ---- dtype dispatch -----------------------------------------------------------------------------

// The dtype sets operators take (numeric: all but bool), shared with the functors of
// kiln/sdk/pointwise.hpp.
using sdk::pointwise::Dtypes;

template <Dtypes S, class T>
constexpr bool in_set_v = sdk::pointwise::accepts_v<S, compute_t<T>>;

[[noreturn]] inline void throw_unsupported(int32_t dtype) {
  throw sdk::type_error(std::string("dtype ") + sdk::dtype_name(dtype) +
                        " is not supported by this kernel on cpu");
}

// Calls f(TypeTag<T>{}) for the dtypes in S; throws for the others without instantiating f.
template <Dtypes S, class F>
void visit(int32_t dtype, F&& f) {
  sdk::visit_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (in_set_v<S, T>) {
      f(tag);
    } else {
      throw_unsupported(dtype);
    }
  });
}

// ---- 16-bit float conversion in bulk (convert.cpp) ----------------------------------------------

// Contiguous float16 <-> float; uses F16C when the CPU has it.
void half_to_float(const Half* src, float* dst, int64_t n);
void float_to_half(const float* src, Half* dst, int64_t n);

// Contiguous bfloat16 <-> float, with the rounding of BFloat16's constructor (to nearest even,
// NaN stays NaN); written as integer arithmetic that GCC vectorizes, and compiled for AVX-512
// and AVX2 as well, chosen at run time (convert.cpp).
void bfloat16_to_float(const BFloat16* src, float* dst, int64_t n);
void float_to_bfloat16(const float* src, BFloat16* dst, int64_t n);

// dst[i] = compute_t<T>(element i of the run at src with byte step `step`).
template <class T>
inline void load_chunk(const char* src, int64_t step, int64_t n, compute_t<T>* dst) {
  if (step == static_cast<int64_t>(sizeof(T))) {
    const T* s = reinterpret_cast<const T*>(src);
    if constexpr (std::is_same_v<T, Half>) {
      half_to_float(s, dst, n);
    } else if constexpr (std::is_same_v<T, BFloat16>) {
      bfloat16_to_float(s, dst, n);
    } else {
      for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<compute_t<T>>(s[i]);
    }
    return;
  }
  if (step == 0) {  // a broadcast operand: convert once
    const compute_t<T> v = static_cast<compute_t<T>>(*reinterpret_cast<const T*>(src));
    for (int64_t i = 0; i < n; ++i) dst[i] = v;
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    dst[i] = static_cast<compute_t<T>>(*reinterpret_cast<const T*>(src + i * step));
  }
}

// Element i of the run at dst (byte step `step`) = T(src[i]), rounded once.
template <class T>
inline void store_chunk(char* dst, int64_t step, int64_t n, const compute_t<T>* src) {
  if (step == static_cast<int64_t>(sizeof(T))) {
    T* d = reinterpret_cast<T*>(dst);
    if constexpr (std::is_same_v<T, Half>) {
      float_to_half(src, d, n);
    } else if constexpr (std::is_same_v<T, BFloat16>) {
      float_to_bfloat16(src, d, n);
    } else {
      for (int64_t i = 0; i < n; ++i) d[i] = static_cast<T>(src[i]);
    }
    return;
  }
  for (int64_t i = 0; i < n; ++i) *reinterpret_cast<T*>(dst + i * step) = static_cast<T>(src[i]);
}

// A stack buffer that is not zeroed when constructed.
template <class T, int64_t Size = kChunk>
struct Buffer {
  Buffer() {}  // NOLINT: user-provided so that value-initialisation leaves v alone
  alignas(64) T v[Size];
};

// loop.run(0, numel, body), skipping run()'s index arithmetic when the whole loop is one run (a
// contiguous or single-element loop: the common case, and the one whose overhead shows).
template <int N, class F>
void run_all(const sdk::StridedLoop<N>& loop, const kiln_tensor* const (&ops)[N], const F& body) {
  const int64_t total = loop.numel();
  if (total > 0 && loop.inner_size() == total) {
    char* p[N];
    int64_t step[N];
    for (int k = 0; k < N; ++k) {
      p[k] = static_cast<char*>(ops[k]->data);
      step[k] = loop.inner_stride(k);
    }
    body(p, static_cast<const int64_t*>(step), total);
    return;
  }
  loop.run(0, total, body);
}

// n elements of T: on the stack up to Small, from the heap beyond.
template <class T, int64_t Small>
class Scratch {
 public:
  explicit Scratch(int64_t n) : heap_(n > Small ? new T[static_cast<size_t>(n)] : nullptr) {}
  T* get() { return heap_ ? heap_.get() : stack_.v; }

 private:
  Buffer<T, Small> stack_;
  std::unique_ptr<T[]> heap_;
};

// ---- elementwise map ----------------------------------------------------------------------------

// Note [AVX-512 clones of the elementwise loops]
// The plugin is built for baseline x86-64, where GCC vectorizes the contiguous loops 4 floats
// wide with SSE2. The contiguous loop (and the float loop of the 16-bit path) is also compiled a
// second time with the AVX-512 attribute, the functor inlined into it, and map_contiguous picks
// that copy when the CPU has AVX-512 (16 floats a step). The plugin compiles with
// -ffp-contract=off, so neither copy fuses a multiply and an add: both give the same bits.
#define KILN_CPU_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq")))

// True when the CPU has AVX-512 F, BW, VL and DQ (convert.cpp; checked once).
bool has_avx512();

namespace detail {

inline bool is_single_element(const kiln_tensor& t) {
  for (int32_t d = 0; d < t.ndim; ++d) {
    if (t.sizes[d] != 1) return false;
  }
  return true;
}

template <class Out, class... In, class F>
[[gnu::always_inline]] inline void contiguous_loop(const F& f, int64_t n, Out* out,
                                                   const In*... in) {
#if defined(__clang__)
#pragma clang loop vectorize(assume_safety)
#else
#pragma GCC ivdep
#endif
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<Out>(f(in[i]...));
}

// The same loop compiled for AVX-512. See Note [AVX-512 clones of the elementwise loops].
template <class Out, class... In, class F>
KILN_CPU_AVX512 void contiguous_loop_avx512(const F& f, int64_t n, Out* out, const In*... in) {
  contiguous_loop<Out, In...>(f, n, out, in...);
}

template <class Out, class... In, class F>
inline void map_contiguous(const F& f, int64_t n, Out* out, const In*... in) {
  if (has_avx512()) {
    contiguous_loop_avx512<Out, In...>(f, n, out, in...);
  } else {
    contiguous_loop<Out, In...>(f, n, out, in...);
  }
}

template <class Out, class... In, class F, size_t... I>
inline void map_strided(const F& f, char* const* p, const int64_t* step, int64_t n,
                        std::index_sequence<I...>) {
  for (int64_t i = 0; i < n; ++i) {
    *reinterpret_cast<Out*>(p[0] + i * step[0]) =
        static_cast<Out>(f(*reinterpret_cast<const In*>(p[I + 1] + i * step[I + 1])...));
  }
}

template <class Out, class... In, class F, size_t... I>
inline void map_chunked(const F& f, char* const* p, const int64_t* step, int64_t n,
                        std::index_sequence<I...>) {
  std::tuple<Buffer<compute_t<In>>...> in_buf;
  Buffer<compute_t<Out>> out_buf;
  for (int64_t off = 0; off < n; off += kChunk) {
    int64_t m = std::min(kChunk, n - off);
    (load_chunk<In>(p[I + 1] + off * step[I + 1], step[I + 1], m, std::get<I>(in_buf).v), ...);
    compute_t<Out>* o = out_buf.v;
    map_contiguous<compute_t<Out>, compute_t<In>...>(f, m, o, std::get<I>(in_buf).v...);
    store_chunk<Out>(p[0] + off * step[0], step[0], m, o);
  }
}

template <class Out, class... In, class F, size_t... I>
inline void map_run(const F& f, char* const* p, const int64_t* step, int64_t n,
                    std::index_sequence<I...> seq) {
  if constexpr (is_16bit_float_v<Out> || (is_16bit_float_v<In> || ...)) {
    map_chunked<Out, In...>(f, p, step, n, seq);
  } else {
    constexpr int64_t so = sizeof(Out);
    if (step[0] == so && ((step[I + 1] == static_cast<int64_t>(sizeof(In))) && ...)) {
      map_contiguous<Out, In...>(f, n, reinterpret_cast<Out*>(p[0]),
                                 reinterpret_cast<const In*>(p[I + 1])...);
      return;
    }
    if constexpr (sizeof...(In) == 2) {
      using A = std::tuple_element_t<0, std::tuple<In...>>;
      using B = std::tuple_element_t<1, std::tuple<In...>>;
      Out* out = reinterpret_cast<Out*>(p[0]);
      if (step[0] == so && step[1] == static_cast<int64_t>(sizeof(A)) && step[2] == 0) {
        const B b = *reinterpret_cast<const B*>(p[2]);
        auto g = [&f, b](A a) { return f(a, b); };
        map_contiguous<Out, A>(g, n, out, reinterpret_cast<const A*>(p[1]));
        return;
      }
      if (step[0] == so && step[1] == 0 && step[2] == static_cast<int64_t>(sizeof(B))) {
        const A a = *reinterpret_cast<const A*>(p[1]);
        auto g = [&f, a](B b) { return f(a, b); };
        map_contiguous<Out, B>(g, n, out, reinterpret_cast<const B*>(p[2]));
        return;
      }
    }
    if constexpr (sizeof...(In) >= 2) {
      // broadcast and strided operands mixed (where(cond, x, 0)): gathered a chunk at a time
      // into buffers, so the arithmetic itself runs vectorized over contiguous values
      map_chunked<Out, In...>(f, p, step, n, seq);
    } else {
      map_strided<Out, In...>(f, p, step, n, seq);
    }
  }
}

}  // namespace detail

// out = f(in...) elementwise. Out and In are the operands' C++ types; f takes and returns their
// compute types (float for the 16-bit floats). All operands have out's sizes (broadcast inputs
// have stride 0). See Note [Elementwise loops on the CPU].
template <class Out, class... In, class F>
void map(const F& f, const kiln_tensor& out,
         const std::array<const kiln_tensor*, sizeof...(In)>& in, int64_t grain = kGrain) {
  constexpr int N = 1 + sizeof...(In);
  auto run = [&]<size_t... I>(std::index_sequence<I...> seq) {
    const kiln_tensor* ops[N] = {&out, in[I]...};
    auto body = [&f, seq](char** p, const int64_t* step, int64_t n) {
      detail::map_run<Out, In...>(f, p, step, n, seq);
    };
    if (detail::is_single_element(out)) {  // a scalar: no loop to set up
      char* p[N] = {static_cast<char*>(out.data), static_cast<char*>(in[I]->data)...};
      const int64_t step[N] = {static_cast<int64_t>(sizeof(Out)),
                               static_cast<int64_t>(sizeof(In))...};
      body(p, step, 1);
      return;
    }
    sdk::StridedLoop<N> loop(ops);
    int64_t total = loop.numel();
    if (total <= grain) {
      run_all(loop, ops, body);
      return;
    }
    parallel_for(total, grain, [&](int64_t b, int64_t e) { loop.run(b, e, body); });
  };
  run(std::index_sequence_for<In...>{});
}

// Copies src into dst element for element (same dtype and sizes, any strides); memcpy per run
// where both are contiguous.
void copy_same_dtype(const kiln_tensor& dst, const kiln_tensor& src);

}  // namespace kiln::cpu
