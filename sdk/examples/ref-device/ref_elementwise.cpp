// Elementwise primitives of the "ref" device as plain loops: fill_, copy_, unary and binary
// arithmetic, comparisons, where, and the random fills. The core has broadcast the inputs,
// converted them to the dtypes docs/primitives.md states and allocated the outputs.
#include "ref.hpp"

#include <kiln/sdk/philox.hpp>

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

namespace ref {
namespace {

using kiln::sdk::compute_t;
using kiln::sdk::is_floating_v;
using kiln::sdk::kernel;
using kiln::sdk::visit_dtype;

[[noreturn]] void unsupported(const Call& c, int32_t dtype) {
  throw std::invalid_argument(std::string("TypeError: ref's ") + c.op() + " does not take " +
                              kiln::sdk::dtype_name(dtype));
}

void fill(const Call& c) {
  const kiln_tensor& out = c.output(0);
  visit_dtype(out.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    auto value = c.attr_scalar<compute_t<T>>(0);
    for_each_element<1>({&out}, [&](char** p) { store<T>(p[0], value); });
  });
}

// Converts any dtype to any other: floating to integer truncates toward zero, to bool is != 0.
void copy(const Call& c) {
  const kiln_tensor& dst = c.output(0);
  const kiln_tensor& src = c.input(0);
  visit_dtype(src.dtype, [&](auto from) {
    using S = typename decltype(from)::type;
    visit_dtype(dst.dtype, [&](auto to) {
      using D = typename decltype(to)::type;
      for_each_element<2>({&dst, &src}, [&](char** p) {
        auto v = load<S>(p[1]);
        if constexpr (is_floating_v<S> && !is_floating_v<D> && !std::is_same_v<D, bool>) {
          store<D>(p[0], static_cast<int64_t>(v));  // narrow integers wrap, as on the CPU
        } else {
          store<D>(p[0], v);
        }
      });
    });
  });
}

template <class C>
bool is_negative(C x) {
  if constexpr (std::is_unsigned_v<C>) {
    return false;
  } else {
    return x < C(0);
  }
}

// out = f(x), computed in x's compute type; Floating: the operator takes floating dtypes only.
template <bool Floating, class F>
void unary(const Call& c, F f) {
  const kiln_tensor& out = c.output(0);
  const kiln_tensor& x = c.input(0);
  visit_dtype(out.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool> || (Floating && !is_floating_v<T>)) {
      unsupported(c, out.dtype);
    } else {
      using C = compute_t<T>;
      for_each_element<2>({&out, &x}, [&](char** p) { store<T>(p[0], C(f(load<T>(p[1])))); });
    }
  });
}

#define REF_UNARY(name, floating, expr)                                       \
  void name(const Call& c) {                                                  \
    unary<floating>(c, [](auto x) { return expr; });                          \
  }
REF_UNARY(neg, false, -x)
REF_UNARY(abs_, false, is_negative(x) ? -x : x)
REF_UNARY(relu, false, is_negative(x) ? decltype(x)(0) : x)  // NaN stays NaN
REF_UNARY(exp_, true, std::exp(x))
REF_UNARY(log_, true, std::log(x))
REF_UNARY(sqrt_, true, std::sqrt(x))
REF_UNARY(rsqrt, true, 1 / std::sqrt(x))
REF_UNARY(sin_, true, std::sin(x))
REF_UNARY(cos_, true, std::cos(x))
REF_UNARY(tanh_, true, std::tanh(x))
REF_UNARY(sigmoid, true, 1 / (1 + std::exp(-x)))
#undef REF_UNARY

// out = f(a, b) in the compute type of out's dtype; bool: g(a, b) on bools, when given.
template <bool Floating, class F>
void binary(const Call& c, F f) {
  const kiln_tensor& out = c.output(0);
  visit_dtype(out.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool> || (Floating && !is_floating_v<T>)) {
      unsupported(c, out.dtype);
    } else {
      using C = compute_t<T>;
      for_each_element<3>({&out, &c.input(0), &c.input(1)}, [&](char** p) {
        store<T>(p[0], C(f(load<T>(p[1]), load<T>(p[2]))));
      });
    }
  });
}

// add and sub: a + alpha * b, a - alpha * b; on bool, add is "or".
template <int Sign>
void add_sub(const Call& c) {
  if (c.output(0).dtype == KILN_BOOL && Sign > 0) {
    for_each_element<3>({&c.output(0), &c.input(0), &c.input(1)}, [&](char** p) {
      store<bool>(p[0], load<bool>(p[1]) || load<bool>(p[2]));
    });
    return;
  }
  visit_dtype(c.output(0).dtype, [&](auto tag) {
    using C = compute_t<typename decltype(tag)::type>;
    C alpha = c.attr_scalar<C>(0);
    binary<false>(c, [&](C a, C b) { return Sign > 0 ? a + alpha * b : a - alpha * b; });
  });
}

void mul(const Call& c) {
  if (c.output(0).dtype == KILN_BOOL) {
    for_each_element<3>({&c.output(0), &c.input(0), &c.input(1)}, [&](char** p) {
      store<bool>(p[0], load<bool>(p[1]) && load<bool>(p[2]));
    });
    return;
  }
  binary<false>(c, [](auto a, auto b) { return a * b; });
}

void div(const Call& c) {
  binary<true>(c, [](auto a, auto b) { return a / b; });
}

// maximum and minimum: NaN propagates.
template <bool Max>
void extreme(const Call& c) {
  if (c.output(0).dtype == KILN_BOOL) {  // max is "or", min is "and"
    for_each_element<3>({&c.output(0), &c.input(0), &c.input(1)}, [&](char** p) {
      bool a = load<bool>(p[1]), b = load<bool>(p[2]);
      store<bool>(p[0], Max ? a || b : a && b);
    });
    return;
  }
  binary<false>(c, [](auto a, auto b) {
    if constexpr (std::is_floating_point_v<decltype(a)>) {
      if (std::isnan(a) || std::isnan(b)) return a + b;
    }
    return Max ? (a < b ? b : a) : (b < a ? b : a);
  });
}

// eq, ne, lt, le, gt, ge: inputs of one (any) dtype, a bool output.
template <class F>
void compare(const Call& c, F f) {
  visit_dtype(c.input(0).dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    for_each_element<3>({&c.output(0), &c.input(0), &c.input(1)}, [&](char** p) {
      store<bool>(p[0], f(load<T>(p[1]), load<T>(p[2])));
    });
  });
}

void eq(const Call& c) { compare(c, [](auto a, auto b) { return a == b; }); }
void ne(const Call& c) { compare(c, [](auto a, auto b) { return a != b; }); }
void lt(const Call& c) { compare(c, [](auto a, auto b) { return a < b; }); }
void le(const Call& c) { compare(c, [](auto a, auto b) { return a <= b; }); }
void gt(const Call& c) { compare(c, [](auto a, auto b) { return a > b; }); }
void ge(const Call& c) { compare(c, [](auto a, auto b) { return a >= b; }); }

// where(cond, a, b): a where cond, else b.
void where(const Call& c) {
  const kiln_tensor& out = c.output(0);
  size_t item = kiln::sdk::dtype_size(out.dtype);
  for_each_element<4>({&out, &c.input(0), &c.input(1), &c.input(2)}, [&](char** p) {
    std::memcpy(p[0], load<bool>(p[1]) ? p[2] : p[3], item);
  });
}

// Element i (row-major) uses philox4x32(seed, offset + i): the same numbers as every device.
// See Note [Random numbers are a function of (seed, offset, index)] in kiln/sdk/philox.hpp.
template <class F>
void generate(const Call& c, F f) {
  const kiln_tensor& out = c.output(0);
  auto seed = static_cast<uint64_t>(c.attr_i64(0));
  auto counter = static_cast<uint64_t>(c.attr_i64(1));
  visit_dtype(out.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!is_floating_v<T>) {
      unsupported(c, out.dtype);
    } else {
      for_each_element<1>({&out}, [&](char** p) {
        store<T>(p[0], f(kiln::sdk::philox4x32(seed, counter++), tag));
      });
    }
  });
}

// uniform_(seed, offset, from, to): as many random bits as the dtype's mantissa holds.
void uniform(const Call& c) {
  double from = c.attr_scalar<double>(2), to = c.attr_scalar<double>(3);
  generate(c, [&](const std::array<uint32_t, 4>& w, auto tag) -> compute_t<
                                                                   typename decltype(tag)::type> {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, double>) {
      return kiln::sdk::uniform_double(w[0], w[1]) * (to - from) + from;
    } else {
      constexpr int kBits = std::is_same_v<T, kiln::sdk::BFloat16> ? 8
                            : std::is_same_v<T, kiln::sdk::Half>   ? 11
                                                                   : 24;
      float lo = static_cast<float>(from), range = static_cast<float>(to) - lo;
      float u = static_cast<float>(w[0] >> (32 - kBits)) * (1.0f / static_cast<float>(1u << kBits));
      return u * range + lo;
    }
  });
}

// normal_(seed, offset, mean, std): Box-Muller in double.
void normal(const Call& c) {
  double mean = c.attr_scalar<double>(2), stddev = c.attr_scalar<double>(3);
  generate(c, [&](const std::array<uint32_t, 4>& w, auto tag) {
    using C = compute_t<typename decltype(tag)::type>;
    return static_cast<C>(mean + stddev * kiln::sdk::normal_double(w[0], w[1], w[2], w[3]));
  });
}

}  // namespace

kiln_status register_elementwise(Register add) {
  struct Entry {
    const char* op;
    kiln_kernel_fn fn;
  };
  const Entry entries[] = {
      {"fill_", kernel<fill>},       {"copy_", kernel<copy>},         {"neg", kernel<neg>},
      {"abs", kernel<abs_>},         {"relu", kernel<relu>},          {"exp", kernel<exp_>},
      {"log", kernel<log_>},         {"sqrt", kernel<sqrt_>},         {"rsqrt", kernel<rsqrt>},
      {"sin", kernel<sin_>},         {"cos", kernel<cos_>},           {"tanh", kernel<tanh_>},
      {"sigmoid", kernel<sigmoid>},  {"add", kernel<add_sub<1>>},     {"sub", kernel<add_sub<-1>>},
      {"mul", kernel<mul>},          {"div", kernel<div>},            {"maximum", kernel<extreme<true>>},
      {"minimum", kernel<extreme<false>>},                            {"eq", kernel<eq>},
      {"ne", kernel<ne>},            {"lt", kernel<lt>},              {"le", kernel<le>},
      {"gt", kernel<gt>},            {"ge", kernel<ge>},              {"where", kernel<where>},
      {"uniform_", kernel<uniform>}, {"normal_", kernel<normal>},
  };
  for (const Entry& e : entries) {
    if (add(e.op, e.fn) != 0) return 1;
  }
  return 0;
}

}  // namespace ref
