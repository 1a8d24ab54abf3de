// Elementwise primitives of the "ref" device as plain loops: fill_, copy_, unary and binary
// arithmetic, comparisons and where (the scalar formulas of kiln/sdk/pointwise.hpp, which every
// device shares), and the random fills. The core has broadcast the inputs,
// converted them to the dtypes docs/primitives.md states and allocated the outputs.
#include "ref.hpp"

#include <kiln/sdk/philox.hpp>
#include <kiln/sdk/pointwise.hpp>

#include <stdexcept>
#include <string>

namespace ref {
namespace {

namespace pw = kiln::sdk::pointwise;
using kiln::sdk::compute_t;
using kiln::sdk::is_floating_v;
using kiln::sdk::kernel;
using kiln::sdk::visit_dtype;

[[noreturn]] void unsupported(const Call& c, int32_t dtype) {
  throw kiln::sdk::type_error(std::string("ref's ") + c.op() + " does not take " +
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

// out = Op(x) in x's compute type, for the dtypes Op takes (kiln/sdk/pointwise.hpp); out has x's
// dtype, or bool for the operators that return bool.
template <class Op>
void unary(const Call& c) {
  const kiln_tensor& out = c.output(0);
  const kiln_tensor& x = c.input(0);
  visit_dtype(x.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    if constexpr (pw::accepts_v<Op::dtypes, C>) {
      using Out = std::conditional_t<std::is_same_v<decltype(Op{}(C{})), bool>, bool, T>;
      for_each_element<2>({&out, &x}, [&](char** p) { store<Out>(p[0], Op{}(load<T>(p[1]))); });
    } else {
      unsupported(c, x.dtype);
    }
  });
}

// out = op(a, b) in the compute type of a and b, for the dtypes Op takes; out has their dtype, or
// bool for comparisons. An error only the data shows (integer division by zero) throws.
template <class Op>
void binary_with(const Call& c, const Op& op) {
  visit_dtype(c.input(0).dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    if constexpr (pw::accepts_v<Op::dtypes, C>) {
      using Out = std::conditional_t<std::is_same_v<decltype(op(C{}, C{})), bool>, bool, T>;
      for_each_element<3>({&c.output(0), &c.input(0), &c.input(1)}, [&](char** p) {
        const C a = load<T>(p[1]), b = load<T>(p[2]);
        if constexpr (pw::can_fail_v<Op, C>) pw::throw_if_error(pw::error_of<Op>(a, b));
        store<Out>(p[0], op(a, b));
      });
    } else {
      unsupported(c, c.input(0).dtype);
    }
  });
}

template <class Op>
void binary(const Call& c) {
  binary_with(c, Op{});
}

// add and sub: a + alpha * b and a - alpha * b, which is add with -alpha.
template <bool Subtract>
void add_sub(const Call& c) {
  constexpr pw::Dtypes kDtypes = Subtract ? pw::Sub::dtypes : pw::Add::dtypes;
  visit_dtype(c.output(0).dtype, [&](auto tag) {
    using C = compute_t<typename decltype(tag)::type>;
    if constexpr (pw::accepts_v<kDtypes, C>) {
      C alpha = c.has_attr(0) ? c.attr_scalar<C>(0) : C(1);
      if constexpr (Subtract) alpha = pw::wrap_neg(alpha);
      binary_with(c, pw::AddScaled<C>{alpha});
    } else {
      unsupported(c, c.output(0).dtype);
    }
  });
}

// where(cond, a, b): a where cond, else b, moved as bits.
void where(const Call& c) {
  const kiln_tensor& out = c.output(0);
  visit_dtype(out.dtype, [&](auto tag) {
    using B = pw::bits_t<typename decltype(tag)::type>;
    for_each_element<4>({&out, &c.input(0), &c.input(1), &c.input(2)}, [&](char** p) {
      store<B>(p[0], pw::Where{}(load<bool>(p[1]), load<B>(p[2]), load<B>(p[3])));
    });
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
  generate(c,
           [&](const std::array<uint32_t, 4>& w,
               auto tag) -> compute_t<typename decltype(tag)::type> {
             using T = typename decltype(tag)::type;
             if constexpr (std::is_same_v<T, double>) {
               return kiln::sdk::uniform_double(w[0], w[1]) * (to - from) + from;
             } else {
               constexpr int kBits = std::is_same_v<T, kiln::sdk::BFloat16> ? 8
                                     : std::is_same_v<T, kiln::sdk::Half>   ? 11
                                                                            : 24;
               float lo = static_cast<float>(from), range = static_cast<float>(to) - lo;
               float u = static_cast<float>(w[0] >> (32 - kBits)) *
                         (1.0f / static_cast<float>(1u << kBits));
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

void register_elementwise(kiln::sdk::KernelTable& table) {
  struct Entry {
    const char* op;
    kiln_kernel_fn fn;
  };
  const Entry entries[] = {
      {"fill_", kernel<fill>},
      {"copy_", kernel<copy>},
      {"neg", kernel<unary<pw::Neg>>},
      {"abs", kernel<unary<pw::Abs>>},
      {"relu", kernel<unary<pw::Relu>>},
      {"exp", kernel<unary<pw::Exp>>},
      {"log", kernel<unary<pw::Log>>},
      {"sqrt", kernel<unary<pw::Sqrt>>},
      {"rsqrt", kernel<unary<pw::Rsqrt>>},
      {"sin", kernel<unary<pw::Sin>>},
      {"cos", kernel<unary<pw::Cos>>},
      {"tanh", kernel<unary<pw::Tanh>>},
      {"sigmoid", kernel<unary<pw::Sigmoid>>},
      {"add", kernel<add_sub<false>>},
      {"sub", kernel<add_sub<true>>},
      {"mul", kernel<binary<pw::Mul>>},
      {"div", kernel<binary<pw::Div>>},
      {"maximum", kernel<binary<pw::Maximum>>},
      {"minimum", kernel<binary<pw::Minimum>>},
      {"eq", kernel<binary<pw::Eq>>},
      {"ne", kernel<binary<pw::Ne>>},
      {"lt", kernel<binary<pw::Lt>>},
      {"le", kernel<binary<pw::Le>>},
      {"gt", kernel<binary<pw::Gt>>},
      {"ge", kernel<binary<pw::Ge>>},
      {"where", kernel<where>},
      {"uniform_", kernel<uniform>},
      {"normal_", kernel<normal>},
  };
  for (const Entry& e : entries) table.add(e.op, e.fn);
}

}  // namespace ref
