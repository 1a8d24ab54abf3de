// sort, topk, cummax and cummin along one dimension of a contiguous x into contiguous outputs
// (values of x's dtype, int64 indices). x is seen as [outer, n, inner]; each of the outer * inner
// lines is one task, lines spread over TBB's threads.
//
// Elements become order-preserving integer keys (kiln/sdk/sort_key.hpp), so every dtype sorts
// as unsigned integers in PyTorch's order (See Note [Sort order] in core/src/ops/sort.cpp). With
// 32-bit keys (all dtypes but the 64-bit ones) a line of n < 2^32 packs each element as
// key << 32 | position into one uint64: an LSD radix sort on the key half is stable, and topk
// compares single integers. 64-bit keys sort (key, position) pairs with std::sort.
#include "arith.hpp"
#include "loops.hpp"
#include "registry.hpp"

#include <kiln/sdk/sort_key.hpp>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

namespace kiln::cpu {
namespace {

using sdk::kernel;
using sdk::sort_key;
using sdk::sort_key_t;

struct Lines {
  int64_t outer = 1, n = 1, inner = 1;
  int64_t count() const { return outer * inner; }
  int64_t base(int64_t line, int64_t len) const {  // first element of a line of `len`
    return line / inner * len * inner + line % inner;
  }
};

// x, values and indices as [outer, n, inner] (values and indices with `out_n` along dim).
Lines check_lines(const Call& call, const char* name, int64_t dim, int64_t out_n) {
  const kiln_tensor& x = call.input(0);
  const kiln_tensor& values = call.output(0);
  const kiln_tensor& indices = call.output(1);
  if (values.dtype != x.dtype || indices.dtype != KILN_I64 || values.ndim != x.ndim ||
      indices.ndim != x.ndim || !sdk::is_contiguous(x) || !sdk::is_contiguous(values) ||
      !sdk::is_contiguous(indices)) {
    throw std::invalid_argument(std::string(name) +
                                ": x, values (x's dtype) and indices (int64) must be contiguous "
                                "and of one rank");
  }
  if (dim < 0 || dim >= x.ndim) {
    throw std::out_of_range(std::string(name) + ": dim " + std::to_string(dim) +
                            " is out of range for a tensor of " + std::to_string(x.ndim) +
                            " dimensions");
  }
  Lines l;
  for (int32_t d = 0; d < x.ndim; ++d) {
    int64_t want = d == dim ? out_n : x.sizes[d];
    if (values.sizes[d] != want || indices.sizes[d] != want) {
      throw std::invalid_argument(std::string(name) +
                                  ": outputs have the wrong size in dimension " +
                                  std::to_string(d));
    }
    (d < dim ? l.outer : d == dim ? l.n : l.inner) *= x.sizes[d];
  }
  if (l.n > static_cast<int64_t>(0xffffffffu)) {
    throw std::length_error(std::string(name) + ": lines of 2^32 elements or more along dim are "
                                                "not supported on cpu");
  }
  return l;
}

constexpr uint64_t kLow = 0xffffffffu;
constexpr int64_t kTopkBlock = 64;  // values topk's heap path screens at a time

template <class K>
struct Wide {  // a 64-bit key and its position
  K key;
  int64_t pos;
};

// The sort key of an item: the upper half of a packed one, the key of a wide one.
inline uint64_t key_of(uint64_t packed) { return packed >> 32; }
template <class K>
uint64_t key_of(const Wide<K>& w) {
  return w.key;
}

// Sorts n items by key, stably (LSD radix, 8 bits a pass, Bytes passes; a pass whose digit is
// the same for every item is skipped, as the upper bytes of small integers are). The result is
// in `a`.
template <int Bytes, class Item>
void radix_sort(Item* a, Item* tmp, int64_t n) {
  int64_t count[Bytes][256] = {};
  for (int64_t j = 0; j < n; ++j) {
    const uint64_t v = key_of(a[j]);
    for (int b = 0; b < Bytes; ++b) ++count[b][(v >> (8 * b)) & 0xff];
  }
  Item* src = a;
  Item* dst = tmp;
  for (int pass = 0; pass < Bytes; ++pass) {
    const int shift = 8 * pass;
    int64_t* c = count[pass];
    if (c[(key_of(src[0]) >> shift) & 0xff] == n) continue;
    int64_t sum = 0;
    for (int b = 0; b < 256; ++b) {
      const int64_t k = c[b];
      c[b] = sum;
      sum += k;
    }
    for (int64_t j = 0; j < n; ++j) {
      const Item v = src[j];
      dst[c[(key_of(v) >> shift) & 0xff]++] = v;
    }
    std::swap(src, dst);
  }
  if (src != a) std::copy(src, src + n, a);
}

template <class T>
void sort_lines(const Lines& l, const T* x, T* values, int64_t* indices, bool descending) {
  using C = compute_t<T>;
  using K = sort_key_t<C>;
  const int64_t n = l.n, inner = l.inner;
  const int64_t grain = std::max<int64_t>(1, kGrain / (8 * n));
  parallel_for(l.count(), grain, [&](int64_t begin, int64_t end) {
    constexpr bool packed = sizeof(K) == 4;
    std::vector<std::conditional_t<packed, uint64_t, Wide<K>>> items(n), tmp(n);
    for (int64_t line = begin; line < end; ++line) {
      const int64_t base = l.base(line, n);
      const T* in = x + base;
      for (int64_t j = 0; j < n; ++j) {
        K key = sort_key(static_cast<C>(in[j * inner]));
        if (descending) key = ~key;
        if constexpr (packed) {
          items[j] = uint64_t{key} << 32 | static_cast<uint64_t>(j);
        } else {
          items[j] = {key, j};
        }
      }
      if constexpr (packed) {
        if (n <= 64) {
          std::sort(items.begin(), items.end());
        } else {
          radix_sort<4>(items.data(), tmp.data(), n);
        }
      } else {
        if (n <= 64) {
          std::sort(items.begin(), items.end(), [](const Wide<K>& a, const Wide<K>& b) {
            return a.key < b.key || (a.key == b.key && a.pos < b.pos);
          });
        } else {
          radix_sort<8>(items.data(), tmp.data(), n);
        }
      }
      for (int64_t j = 0; j < n; ++j) {
        int64_t pos;
        if constexpr (packed) {
          pos = static_cast<int64_t>(items[j] & kLow);
        } else {
          pos = items[j].pos;
        }
        values[base + j * inner] = in[pos * inner];
        indices[base + j * inner] = pos;
      }
    }
  });
}

// The k best of a line of n: the largest keys (after the caller's flip for smallest), the lower
// position among equal keys; written best first.
template <class T>
void topk_lines(const Lines& l, int64_t k, const T* x, T* values, int64_t* indices, bool largest) {
  using C = compute_t<T>;
  using K = sort_key_t<C>;
  constexpr bool packed = sizeof(K) == 4;
  using Item = std::conditional_t<packed, uint64_t, Wide<K>>;
  auto better = [](const Item& a, const Item& b) {
    if constexpr (packed) {
      return a > b;
    } else {
      return a.key > b.key || (a.key == b.key && a.pos < b.pos);
    }
  };
  auto make = [largest](C v, int64_t j) {
    K key = sort_key(v);
    if (!largest) key = ~key;
    if constexpr (packed) {
      return uint64_t{key} << 32 | (kLow - static_cast<uint64_t>(j));
    } else {
      return Wide<K>{key, j};
    }
  };
  auto position = [](const Item& item) {
    if constexpr (packed) {
      return static_cast<int64_t>(kLow - (item & kLow));
    } else {
      return item.pos;
    }
  };
  const int64_t n = l.n, inner = l.inner;
  const bool use_heap = k * 8 <= n;
  parallel_for(l.count(), std::max<int64_t>(1, kGrain / (2 * n)), [&](int64_t begin, int64_t end) {
    std::vector<Item> items(use_heap ? k : n);
    for (int64_t line = begin; line < end; ++line) {
      const T* in = x + l.base(line, n);
      if (use_heap) {  // keep the k best seen; the heap's top is the worst of them
        for (int64_t j = 0; j < k; ++j) items[j] = make(static_cast<C>(in[j * inner]), j);
        std::make_heap(items.begin(), items.end(), better);
        // a block of values is looked at one by one only when one of them may beat the worst
        // kept (`may_beat` is a superset of `better`: equal values come later, so they lose)
        C worst = static_cast<C>(in[position(items[0]) * inner]);
        auto may_beat = [largest](C v, C w) {
          const bool v_nan = is_nan(v), w_nan = is_nan(w);  // no && and ||: see reduce_arg.cpp
          if (largest) return (v > w) | (v_nan & !w_nan);
          return (v < w) | (!v_nan & w_nan);
        };
        for (int64_t j0 = k; j0 < n; j0 += kTopkBlock) {
          const int64_t j1 = std::min(n, j0 + kTopkBlock);
          bool any = false;
          for (int64_t j = j0; j < j1; ++j) any |= may_beat(static_cast<C>(in[j * inner]), worst);
          if (!any) continue;
          for (int64_t j = j0; j < j1; ++j) {
            const Item item = make(static_cast<C>(in[j * inner]), j);
            if (!better(item, items[0])) continue;
            std::pop_heap(items.begin(), items.end(), better);
            items[k - 1] = item;
            std::push_heap(items.begin(), items.end(), better);
          }
          worst = static_cast<C>(in[position(items[0]) * inner]);
        }
        std::sort_heap(items.begin(), items.end(), better);
      } else {
        for (int64_t j = 0; j < n; ++j) items[j] = make(static_cast<C>(in[j * inner]), j);
        if (k < n) std::nth_element(items.begin(), items.begin() + (k - 1), items.end(), better);
        std::sort(items.begin(), items.begin() + k, better);
      }
      const int64_t out = l.base(line, k);
      for (int64_t t = 0; t < k; ++t) {
        const int64_t pos = position(items[t]);
        values[out + t * inner] = in[pos * inner];
        indices[out + t * inner] = pos;
      }
    }
  });
}

// The running extreme and the last position where it was reached; a NaN always takes over
// (PyTorch's cummax_cummin_helper).
template <class T, bool Max>
void cum_extreme_lines(const Lines& l, const T* x, T* values, int64_t* indices) {
  using C = compute_t<T>;
  const int64_t n = l.n, inner = l.inner;
  parallel_for(l.count(), std::max<int64_t>(1, kGrain / n), [&](int64_t begin, int64_t end) {
    for (int64_t line = begin; line < end; ++line) {
      const int64_t base = l.base(line, n);
      C best = static_cast<C>(x[base]);
      int64_t at = 0;
      for (int64_t j = 0; j < n; ++j) {
        const C v = static_cast<C>(x[base + j * inner]);
        const bool takes = Max ? v >= best : v <= best;
        if (is_nan(v) || (!is_nan(best) && takes)) {
          best = v;
          at = j;
        }
        values[base + j * inner] = x[base + at * inner];
        indices[base + j * inner] = at;
      }
    }
  });
}

void sort_kernel(const Call& call) {
  const int64_t dim = call.attr_i64(0);
  const bool descending = call.attr_bool(1);
  const Lines l = check_lines(call, "sort", dim, call.input(0).sizes[dim]);
  if (l.count() * l.n == 0) return;
  visit<Dtypes::all>(call.input(0).dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    sort_lines<T>(l, static_cast<const T*>(call.input(0).data),
                  static_cast<T*>(call.output(0).data), static_cast<int64_t*>(call.output(1).data),
                  descending);
  });
}

void topk_kernel(const Call& call) {
  const int64_t k = call.attr_i64(0);
  const int64_t dim = call.attr_i64(1);
  const bool largest = call.attr_bool(2);
  const kiln_tensor& x = call.input(0);
  if (dim < 0 || dim >= x.ndim || k < 0 || k > x.sizes[dim]) {
    throw std::out_of_range("topk: k " + std::to_string(k) + " or dim " + std::to_string(dim) +
                            " out of range");
  }
  const Lines l = check_lines(call, "topk", dim, k);
  if (l.count() * k == 0) return;
  visit<Dtypes::all>(x.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    topk_lines<T>(l, k, static_cast<const T*>(x.data), static_cast<T*>(call.output(0).data),
                  static_cast<int64_t*>(call.output(1).data), largest);
  });
}

template <bool Max>
void cum_extreme_kernel(const Call& call) {
  const int64_t dim = call.attr_i64(0);
  const char* name = Max ? "cummax" : "cummin";
  const Lines l = check_lines(call, name, dim, call.input(0).sizes[dim]);
  if (l.count() * l.n == 0) return;
  visit<Dtypes::all>(call.input(0).dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    cum_extreme_lines<T, Max>(l, static_cast<const T*>(call.input(0).data),
                              static_cast<T*>(call.output(0).data),
                              static_cast<int64_t*>(call.output(1).data));
  });
}

}  // namespace

void register_sort(KernelTable& table) {
  table.add("sort", kernel<sort_kernel>);
  table.add("topk", kernel<topk_kernel>);
  table.add("cummax", kernel<cum_extreme_kernel<true>>);
  table.add("cummin", kernel<cum_extreme_kernel<false>>);
}

}  // namespace kiln::cpu
