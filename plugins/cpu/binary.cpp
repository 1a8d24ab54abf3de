// Binary elementwise kernels: the functors of kiln/sdk/pointwise.hpp (arithmetic where integers
// wrap, Python-style floor division and remainder, pow, NaN-propagating maximum/minimum, bitwise
// operators) over the loops of loops.hpp.
#include "arith.hpp"
#include "loops.hpp"
#include "registry.hpp"
#include "vecmath.hpp"

namespace kiln::cpu {
namespace {

namespace pw = sdk::pointwise;
using sdk::kernel;

// out = f(a, b) with a, b and out of dtype T.
template <class T, class F>
void binary_map(const Call& call, const F& f, int64_t grain = kGrain) {
  map<T, T, T>(f, call.output(0), {&call.input(0), &call.input(1)}, grain);
}

// out = Op(a, b) for the dtypes Op takes; an error only the data shows (integer division by
// zero) throws. Grain: kGrainHeavy for the loops that divide or call libm.
template <class Op, int64_t Grain = kGrain>
void binary_kernel(const Call& call) {
  visit<Op::dtypes>(call.output(0).dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    if constexpr (pw::can_fail_v<Op, C>) {
      auto f = [](C a, C b) {
        const pw::Error error = pw::error_of<Op>(a, b);
        if (error != pw::Error::none) [[unlikely]]
          pw::throw_if_error(error);
        return Op{}(a, b);
      };
      binary_map<T>(call, f, Grain);
    } else {
      binary_map<T>(
          call, [](C a, C b) { return Op{}(a, b); }, Grain);
    }
  });
}

// add: a + alpha * b; sub: a - alpha * b, which is add with -alpha. alpha 1 and -1 (the common
// cases) take the plain loops.
template <bool Subtract>
void add_sub_kernel(const Call& call) {
  constexpr Dtypes S = Subtract ? pw::Sub::dtypes : pw::Add::dtypes;
  visit<S>(call.output(0).dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    C alpha = call.has_attr(0) ? scalar_attr<T>(call.attr(0)) : C(1);
    if constexpr (Subtract) alpha = wrap_neg(alpha);
    if (alpha == C(1)) {
      binary_map<T>(call, [](C a, C b) { return pw::Add{}(a, b); });
    } else if (alpha == static_cast<C>(-1)) {
      binary_map<T>(call, [](C a, C b) { return pw::Sub{}(a, b); });
    } else {
      binary_map<T>(call, pw::AddScaled<C>{alpha});
    }
  });
}

// pw::Atan2 through vecmath's branch-free atan2 for float (and the 16-bit floats), which the
// loops vectorize; libm's for double.
struct VecAtan2 {
  static constexpr pw::Dtypes dtypes = pw::Atan2::dtypes;
  template <class C>
  [[gnu::always_inline]] C operator()(C y, C x) const {
    if constexpr (std::is_same_v<C, float>) {
      return vm::atan2(y, x);
    } else {
      return pw::Atan2{}(y, x);
    }
  }
};

}  // namespace

void register_binary(KernelTable& table) {
  table.add("add", kernel<add_sub_kernel<false>>);
  table.add("sub", kernel<add_sub_kernel<true>>);
  table.add("mul", kernel<binary_kernel<pw::Mul>>);
  table.add("div", kernel<binary_kernel<pw::Div>>);
  table.add("floor_divide", kernel<binary_kernel<pw::FloorDivide, kGrainHeavy>>);
  table.add("remainder", kernel<binary_kernel<pw::Remainder, kGrainHeavy>>);
  table.add("fmod", kernel<binary_kernel<pw::Fmod, kGrainHeavy>>);
  table.add("pow", kernel<binary_kernel<pw::Pow, kGrainHeavy>>);
  table.add("maximum", kernel<binary_kernel<pw::Maximum>>);
  table.add("minimum", kernel<binary_kernel<pw::Minimum>>);
  table.add("bitwise_and", kernel<binary_kernel<pw::BitwiseAnd>>);
  table.add("bitwise_or", kernel<binary_kernel<pw::BitwiseOr>>);
  table.add("bitwise_xor", kernel<binary_kernel<pw::BitwiseXor>>);
  table.add("atan2", kernel<binary_kernel<VecAtan2, kGrainHeavy>>);
  table.add("logaddexp", kernel<binary_kernel<pw::LogAddExp, kGrainHeavy>>);
  table.add("logaddexp2", kernel<binary_kernel<pw::LogAddExp2, kGrainHeavy>>);
  table.add("hypot", kernel<binary_kernel<pw::Hypot, kGrainHeavy>>);
  table.add("copysign", kernel<binary_kernel<pw::Copysign>>);
  table.add("xlogy", kernel<binary_kernel<pw::Xlogy, kGrainHeavy>>);
}

}  // namespace kiln::cpu
