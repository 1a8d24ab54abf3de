// Reductions and matrix products of the "ref" device as plain loops: sum, prod, amax, amin, mm,
// bmm. A reduction's output has the input's rank with size 1 in each reduced dimension.
#include "ref.hpp"

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace ref {
namespace {

using kiln::sdk::compute_t;
using kiln::sdk::is_floating_v;
using kiln::sdk::kernel;
using kiln::sdk::visit_dtype;

// Calls f(input_element, output_index) for every element of x, where output_index is the
// row-major index of its element in `out` (x's sizes with the reduced dimensions at size 1).
template <class F>
void for_each_reduced(const kiln_tensor& x, const kiln_tensor& out, F&& f) {
  std::vector<int64_t> index(static_cast<size_t>(x.ndim), 0);
  int64_t n = kiln::sdk::numel(x);
  for (int64_t i = 0; i < n; ++i) {
    int64_t offset = 0, out_index = 0;
    for (int32_t d = 0; d < x.ndim; ++d) {
      offset += index[d] * x.strides[d];
      out_index = out_index * out.sizes[d] + (out.sizes[d] == 1 ? 0 : index[d]);
    }
    f(static_cast<const char*>(x.data) + offset * kiln::sdk::dtype_size(x.dtype), out_index);
    for (int32_t d = x.ndim - 1; d >= 0; --d) {  // next index, row-major
      if (++index[d] < x.sizes[d]) break;
      index[d] = 0;
    }
  }
}

// Writes values (row-major over out's sizes) into out.
template <class T, class A>
void write(const kiln_tensor& out, const std::vector<A>& values) {
  size_t i = 0;
  for_each_element<1>({&out}, [&](char** p) { store<T>(p[0], values[i++]); });
}

// sum and prod accumulate in double (floating) or int64 (integers).
template <bool Product>
void sum_prod(const Call& c) {
  const kiln_tensor& x = c.input(0);
  const kiln_tensor& out = c.output(0);
  visit_dtype(out.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = std::conditional_t<is_floating_v<T>, double, int64_t>;
    if constexpr (std::is_same_v<T, bool>) {
      throw kiln::sdk::type_error(std::string("ref's ") + c.op() + " takes no bool");
    } else {
      std::vector<A> acc(static_cast<size_t>(kiln::sdk::numel(out)), A(Product ? 1 : 0));
      for_each_reduced(x, out, [&](const char* p, int64_t o) {
        if (Product) {
          acc[o] *= static_cast<A>(load<T>(p));
        } else {
          acc[o] += static_cast<A>(load<T>(p));
        }
      });
      write<T>(out, acc);
    }
  });
}

// amax and amin: NaN propagates.
template <bool Max>
void extreme(const Call& c) {
  const kiln_tensor& x = c.input(0);
  const kiln_tensor& out = c.output(0);
  visit_dtype(out.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    std::vector<C> acc(static_cast<size_t>(kiln::sdk::numel(out)));
    std::vector<bool> seen(acc.size(), false);
    for_each_reduced(x, out, [&](const char* p, int64_t o) {
      C v = load<T>(p);
      bool nan = false;
      if constexpr (std::is_floating_point_v<C>) nan = std::isnan(acc[o]);
      if (!seen[o] || (!nan && (Max ? acc[o] < v : v < acc[o]))) acc[o] = v;
      if constexpr (std::is_floating_point_v<C>) {
        if (std::isnan(v)) acc[o] = v;
      }
      seen[o] = true;
    });
    write<T>(out, acc);
  });
}

// out[b] = a[b] @ w[b] over `batches` matrices; `batched` says whether dim 0 is the batch.
void matmul(const Call& c, bool batched) {
  const kiln_tensor& a = c.input(0);
  const kiln_tensor& b = c.input(1);
  const kiln_tensor& out = c.output(0);
  int32_t o = batched ? 1 : 0;
  int64_t batches = batched ? out.sizes[0] : 1;
  int64_t m = out.sizes[o], n = out.sizes[o + 1], k = a.sizes[o + 1];
  visit_dtype(out.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = std::conditional_t<is_floating_v<T>, double, int64_t>;
    if constexpr (std::is_same_v<T, bool>) {
      throw kiln::sdk::type_error(std::string("ref's ") + c.op() + " takes no bool");
    } else {
      const T* pa = static_cast<const T*>(a.data);
      const T* pb = static_cast<const T*>(b.data);
      T* po = static_cast<T*>(out.data);
      for (int64_t s = 0; s < batches; ++s) {
        const T* as = pa + (batched ? s * a.strides[0] : 0);
        const T* bs = pb + (batched ? s * b.strides[0] : 0);
        T* os = po + (batched ? s * out.strides[0] : 0);
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t j = 0; j < n; ++j) {
            A sum = 0;
            for (int64_t p = 0; p < k; ++p) {
              sum += static_cast<A>(
                         static_cast<compute_t<T>>(as[i * a.strides[o] + p * a.strides[o + 1]])) *
                     static_cast<A>(
                         static_cast<compute_t<T>>(bs[p * b.strides[o] + j * b.strides[o + 1]]));
            }
            store<T>(reinterpret_cast<char*>(os + i * out.strides[o] + j * out.strides[o + 1]),
                     static_cast<compute_t<T>>(sum));
          }
        }
      }
    }
  });
}

void mm(const Call& c) { matmul(c, false); }
void bmm(const Call& c) { matmul(c, true); }

}  // namespace

void register_reduce(kiln::sdk::KernelTable& table) {
  table.add("sum", kernel<sum_prod<false>>);
  table.add("prod", kernel<sum_prod<true>>);
  table.add("amax", kernel<extreme<true>>);
  table.add("amin", kernel<extreme<false>>);
  table.add("mm", kernel<mm>);
  table.add("bmm", kernel<bmm>);
}

}  // namespace ref
