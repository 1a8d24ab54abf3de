// Unary elementwise kernels: one functor per operator over the loops of loops.hpp.
#include "arith.hpp"
#include "loops.hpp"
#include "registry.hpp"

#include <cmath>

namespace kiln::cpu {
namespace {

using sdk::kernel;

// out = Op(x) for the dtypes in S, computed in compute_t<T>.
template <class Op, Dtypes S, int64_t Grain = kGrain>
void unary_kernel(const Call& call) {
  visit<S>(call.output(0).dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    map<T, T>([](compute_t<T> x) { return Op::apply(x); }, call.output(0), {&call.input(0)},
              Grain);
  });
}

// Floating-point only; these call libm, so they split across threads sooner.
template <class Op>
void unary_floating_kernel(const Call& call) {
  unary_kernel<Op, Dtypes::floating, kGrainHeavy>(call);
}

struct Neg {
  template <class C> static C apply(C x) { return wrap_neg(x); }
};

struct Abs {
  template <class C>
  static C apply(C x) {
    if constexpr (std::is_unsigned_v<C>) {
      return x;
    } else if constexpr (std::is_floating_point_v<C>) {
      return std::fabs(x);
    } else {
      return x < 0 ? wrap_neg(x) : x;  // abs(INT_MIN) wraps to INT_MIN, as in PyTorch
    }
  }
};

struct Sign {
  template <class C>
  static C apply(C x) {
    if constexpr (std::is_same_v<C, bool> || std::is_unsigned_v<C>) {
      return x > C(0) ? C(1) : C(0);
    } else if constexpr (std::is_floating_point_v<C>) {
      return x > 0 ? C(1) : (x < 0 ? C(-1) : C(0));  // NaN gives 0, as PyTorch
    } else {
      return static_cast<C>((x > 0) - (x < 0));
    }
  }
};

struct Relu {
  template <class C>
  static C apply(C x) {
    if constexpr (std::is_unsigned_v<C>) {
      return x;
    } else {
      return x < C(0) ? C(0) : x;  // NaN stays NaN
    }
  }
};

struct BitwiseNot {
  template <class C>
  static C apply(C x) {
    if constexpr (std::is_same_v<C, bool>) {
      return !x;
    } else {
      return static_cast<C>(~x);
    }
  }
};

struct Exp {
  template <class C> static C apply(C x) { return std::exp(x); }
};
struct Log {
  template <class C> static C apply(C x) { return std::log(x); }
};
struct Log1p {
  template <class C> static C apply(C x) { return std::log1p(x); }
};
struct Expm1 {
  template <class C> static C apply(C x) { return std::expm1(x); }
};
struct Sqrt {
  template <class C> static C apply(C x) { return std::sqrt(x); }
};
struct Rsqrt {
  template <class C> static C apply(C x) { return C(1) / std::sqrt(x); }
};
struct Sin {
  template <class C> static C apply(C x) { return std::sin(x); }
};
struct Cos {
  template <class C> static C apply(C x) { return std::cos(x); }
};
struct Tanh {
  template <class C> static C apply(C x) { return std::tanh(x); }
};
struct Sigmoid {
  // exp(-x) overflows to inf for very negative x, which gives the right limit 0; no NaN appears.
  template <class C> static C apply(C x) { return C(1) / (C(1) + std::exp(-x)); }
};

// logical_not: any input dtype, bool output.
void logical_not_kernel(const Call& call) {
  visit<Dtypes::all>(call.input(0).dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    map<bool, T>([](compute_t<T> x) { return !(x != compute_t<T>(0)); }, call.output(0),
                 {&call.input(0)});
  });
}

}  // namespace

void register_unary(KernelTable& table) {
  table.add("neg", kernel<unary_kernel<Neg, Dtypes::numeric>>);
  table.add("abs", kernel<unary_kernel<Abs, Dtypes::numeric>>);
  table.add("sign", kernel<unary_kernel<Sign, Dtypes::all>>);
  table.add("relu", kernel<unary_kernel<Relu, Dtypes::numeric>>);
  table.add("bitwise_not", kernel<unary_kernel<BitwiseNot, Dtypes::integral_bool>>);
  table.add("logical_not", kernel<logical_not_kernel>);
  table.add("exp", kernel<unary_floating_kernel<Exp>>);
  table.add("log", kernel<unary_floating_kernel<Log>>);
  table.add("log1p", kernel<unary_floating_kernel<Log1p>>);
  table.add("expm1", kernel<unary_floating_kernel<Expm1>>);
  table.add("sqrt", kernel<unary_floating_kernel<Sqrt>>);
  table.add("rsqrt", kernel<unary_floating_kernel<Rsqrt>>);
  table.add("sin", kernel<unary_floating_kernel<Sin>>);
  table.add("cos", kernel<unary_floating_kernel<Cos>>);
  table.add("tanh", kernel<unary_floating_kernel<Tanh>>);
  table.add("sigmoid", kernel<unary_floating_kernel<Sigmoid>>);
}

}  // namespace kiln::cpu
