// cumsum and cumprod: inclusive scans along `dim` of a contiguous x into a contiguous out of the
// same dtype. x is seen as [outer, length, inner]; each task scans one outer slice for a block of
// inner columns, keeping one running value per column, so every read walks memory forward.
// Running values are as PyTorch's CPU kernel keeps them: double for float32 and float64, float
// for the 16-bit floats, and wrapping 64-bit integers for the integers.
#include "loops.hpp"
#include "registry.hpp"

#include <stdexcept>
#include <string>
#include <vector>

namespace kiln::cpu {
namespace {

using sdk::kernel;

constexpr int64_t kBlock = 256;  // inner columns scanned together by one task

template <class T>
using run_t = std::conditional_t<is_floating_v<T>,
                                 std::conditional_t<(sizeof(T) >= 4), double, float>, uint64_t>;

template <class T>
run_t<T> load(T v) {
  if constexpr (is_floating_v<T>) {
    return static_cast<run_t<T>>(static_cast<compute_t<T>>(v));
  } else {
    return static_cast<run_t<T>>(static_cast<int64_t>(v));  // sign-extend, then wrap
  }
}

template <class T, bool Product>
void scan(const T* x, T* out, int64_t outer, int64_t length, int64_t inner) {
  using R = run_t<T>;
  if (inner == 1) {  // the scanned dim is the innermost: one running value per line
    parallel_for(outer, std::max<int64_t>(1, kGrain / std::max<int64_t>(length, 1)),
                 [&](int64_t begin, int64_t end) {
                   for (int64_t o = begin; o < end; ++o) {
                     R run = R(Product ? 1 : 0);
                     const T* src = x + o * length;
                     T* dst = out + o * length;
                     for (int64_t i = 0; i < length; ++i) {
                       run = Product ? R(run * load(src[i])) : R(run + load(src[i]));
                       dst[i] = static_cast<T>(static_cast<compute_t<T>>(run));
                     }
                   }
                 });
    return;
  }
  const int64_t blocks = (inner + kBlock - 1) / kBlock;
  // tasks of about kGrain elements: many short lines go to one task
  const int64_t task_size = std::max<int64_t>(length * std::min(kBlock, inner), 1);
  parallel_for(outer * blocks, std::max<int64_t>(1, kGrain / task_size),
               [&](int64_t begin, int64_t end) {
                 R run[kBlock];
                 for (int64_t task = begin; task < end; ++task) {
                   const int64_t o = task / blocks;
                   const int64_t c0 = (task % blocks) * kBlock;
                   const int64_t w = std::min(kBlock, inner - c0);
                   for (int64_t j = 0; j < w; ++j) run[j] = R(Product ? 1 : 0);
                   const int64_t base = o * length * inner + c0;
                   for (int64_t i = 0; i < length; ++i) {
                     const T* src = x + base + i * inner;
                     T* dst = out + base + i * inner;
                     for (int64_t j = 0; j < w; ++j) {
                       const R v = load(src[j]);
                       run[j] = Product ? R(run[j] * v) : R(run[j] + v);
                       dst[j] = static_cast<T>(static_cast<compute_t<T>>(run[j]));
                     }
                   }
                 }
               });
}

template <bool Product>
void scan_kernel(const Call& call) {
  const kiln_tensor& x = call.input(0);
  const kiln_tensor& out = call.output(0);
  const char* name = Product ? "cumprod" : "cumsum";
  if (x.dtype != out.dtype || x.ndim != out.ndim || !sdk::is_contiguous(x) ||
      !sdk::is_contiguous(out)) {
    throw std::invalid_argument(std::string(name) +
                                ": x and out must be contiguous, of one dtype and rank");
  }
  const int64_t dim = call.attr_i64(0);
  if (dim < 0 || dim >= std::max<int64_t>(x.ndim, 1)) {
    throw std::out_of_range(std::string(name) + ": dim " + std::to_string(dim) +
                            " is out of range for a tensor of " + std::to_string(x.ndim) +
                            " dimensions");
  }
  int64_t outer = 1, length = 1, inner = 1;
  for (int32_t d = 0; d < x.ndim; ++d) {
    if (x.sizes[d] != out.sizes[d]) {
      throw std::invalid_argument(std::string(name) + ": x and out differ in size in dimension " +
                                  std::to_string(d));
    }
    (d < dim ? outer : d == dim ? length : inner) *= x.sizes[d];
  }
  if (outer * length * inner == 0) return;
  visit<Dtypes::numeric>(x.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    scan<T, Product>(static_cast<const T*>(x.data), static_cast<T*>(out.data), outer, length,
                     inner);
  });
}

}  // namespace

void register_scan(KernelTable& table) {
  table.add("cumsum", kernel<scan_kernel<false>>);
  table.add("cumprod", kernel<scan_kernel<true>>);
}

}  // namespace kiln::cpu
