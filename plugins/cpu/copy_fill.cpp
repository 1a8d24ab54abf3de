// fill_ and copy_ (with every dtype conversion).
#include "arith.hpp"
#include "loops.hpp"
#include "registry.hpp"

#include <cstring>

namespace kiln::cpu {
namespace {

using sdk::kernel;

// out = value everywhere; the value is converted to the dtype once and stored as bits.
void fill_kernel(const Call& call) {
  visit<Dtypes::all>(call.output(0).dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using B = bits_t<T>;
    T value = static_cast<T>(scalar_attr<T>(call.attr(0)));
    B bits;
    std::memcpy(&bits, &value, sizeof(B));
    map<B>([bits] { return bits; }, call.output(0), {});
  });
}

// dst = convert(src), see convert() in arith.hpp for the rules.
template <class D>
void copy_to(const kiln_tensor& dst, const kiln_tensor& src) {
  visit<Dtypes::all>(src.dtype, [&](auto tag) {
    using S = typename decltype(tag)::type;
    map<D, S>([](compute_t<S> x) { return convert<D>(x); }, dst, {&src});
  });
}

void copy_kernel(const Call& call) {
  const kiln_tensor& dst = call.output(0);
  const kiln_tensor& src = call.input(0);
  if (dst.dtype == src.dtype) {
    copy_same_dtype(dst, src);
    return;
  }
  visit<Dtypes::all>(dst.dtype, [&](auto tag) { copy_to<typename decltype(tag)::type>(dst, src); });
}

}  // namespace

void register_copy_fill(KernelTable& table) {
  table.add("fill_", kernel<fill_kernel>);
  table.add("copy_", kernel<copy_kernel>);
}

}  // namespace kiln::cpu
