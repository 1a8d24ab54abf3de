// Comparisons (eq ne lt le gt ge), logical (logical_and/or/xor) and bitwise (bitwise_and/or/xor)
// operators. Inputs come from a coarse grid so that equal values occur.
#include "conformance.h"

#include <cmath>
#include <cstdint>

namespace conformance {
namespace {

using namespace kiln;

using BinaryFn = Tensor (*)(const Tensor&, const Tensor&);
using ScalarFn = Tensor (*)(const Tensor&, const Scalar&);
using RefFn = double (*)(double, double);

bool truth(double x) { return x != 0; }  // NaN is true

// `<name>`: [3, 4] with [4] on a grid of halves; `<name>_scalar`: [3, 4] with a number.
void comparison(const std::string& name, BinaryFn fn, ScalarFn scalar_fn, RefFn ref) {
  add_case({.name = name,
            .op = name,
            .dtypes = kAll,
            .inputs =
                [](ScalarType d) {
                  double step = is_floating_point(d) ? 0.5 : 1;
                  return Args{sample_grid({3, 4}, d, -2, 2, step, 1),
                              sample_grid({4}, d, -2, 2, step, 2)};
                },
            .run = [fn](const Args& a) { return Outputs{fn(a.t(0), a.t(1))}; },
            .reference = ref_binary(ref),
            .out_dtype = bool_dtype});
  add_case({.name = name + "_scalar",
            .op = name,
            .dtypes = kAll,
            .inputs =
                [](ScalarType d) {
                  Args args{sample_grid({3, 4}, d, 0, 3, 1, 3)};
                  args.scalars.push_back(d == kBool ? Scalar(true) : Scalar(int64_t{1}));
                  return args;
                },
            .run = [scalar_fn](const Args& a) { return Outputs{scalar_fn(a.t(0), a.s(0))}; },
            .reference =
                [ref](const Args& a, ScalarType d) {
                  Args b = a;
                  b.tensors.push_back(values({}, {a.s(0).to_double()}, kDouble));
                  return ref_binary(ref)(b, d);
                },
            .out_dtype = bool_dtype});
}

Case& binary(const std::string& name, std::vector<ScalarType> dtypes, BinaryFn fn, RefFn ref,
             double lo, double hi, OutDtypeFn out) {
  return add_case({.name = name,
                   .op = name,
                   .dtypes = std::move(dtypes),
                   .inputs =
                       [lo, hi](ScalarType d) {
                         return Args{sample_grid({2, 3, 4}, d, lo, hi, 1, 4),
                                     sample_grid({3, 1}, d, lo, hi, 1, 5)};
                       },
                   .run = [fn](const Args& a) { return Outputs{fn(a.t(0), a.t(1))}; },
                   .reference = ref_binary(ref),
                   .out_dtype = std::move(out)});
}

double bits(double a, double b, int which) {
  auto x = static_cast<int64_t>(a), y = static_cast<int64_t>(b);
  return static_cast<double>(which == 0 ? (x & y) : (which == 1 ? (x | y) : (x ^ y)));
}

}  // namespace

void register_compare_cases() {
  comparison(
      "eq", [](const Tensor& a, const Tensor& b) { return a == b; },
      [](const Tensor& a, const Scalar& b) { return kiln::eq(a, b); },
      [](double a, double b) { return double(a == b); });
  comparison(
      "ne", [](const Tensor& a, const Tensor& b) { return a != b; },
      [](const Tensor& a, const Scalar& b) { return kiln::ne(a, b); },
      [](double a, double b) { return double(a != b); });
  comparison(
      "lt", [](const Tensor& a, const Tensor& b) { return a < b; },
      [](const Tensor& a, const Scalar& b) { return a < b; },
      [](double a, double b) { return double(a < b); });
  comparison(
      "le", [](const Tensor& a, const Tensor& b) { return kiln::le(a, b); },
      [](const Tensor& a, const Scalar& b) { return a <= b; },
      [](double a, double b) { return double(a <= b); });
  comparison(
      "gt", [](const Tensor& a, const Tensor& b) { return a > b; },
      [](const Tensor& a, const Scalar& b) { return kiln::gt(a, b); },
      [](double a, double b) { return double(a > b); });
  comparison(
      "ge", [](const Tensor& a, const Tensor& b) { return a.ge(b); },
      [](const Tensor& a, const Scalar& b) { return a >= b; },
      [](double a, double b) { return double(a >= b); });

  binary(
      "logical_and", kAll, kiln::logical_and,
      [](double a, double b) { return double(truth(a) && truth(b)); }, -1, 1, bool_dtype);
  binary(
      "logical_or", kAll, kiln::logical_or,
      [](double a, double b) { return double(truth(a) || truth(b)); }, -1, 1, bool_dtype);
  binary(
      "logical_xor", kAll, kiln::logical_xor,
      [](double a, double b) { return double(truth(a) != truth(b)); }, -1, 1, bool_dtype);
  binary(
      "bitwise_and", kIntegralBool, [](const Tensor& a, const Tensor& b) { return a & b; },
      [](double a, double b) { return bits(a, b, 0); }, -100, 100, same_dtype);
  binary(
      "bitwise_or", kIntegralBool, [](const Tensor& a, const Tensor& b) { return a | b; },
      [](double a, double b) { return bits(a, b, 1); }, -100, 100, same_dtype);
  binary(
      "bitwise_xor", kIntegralBool, [](const Tensor& a, const Tensor& b) { return a ^ b; },
      [](double a, double b) { return bits(a, b, 2); }, -100, 100, same_dtype);
  binary(
      "bitwise_and_wide", {kByte, kShort, kInt, kLong}, kiln::bitwise_and,
      [](double a, double b) { return bits(a, b, 0); }, 0, 255, same_dtype)
      .op = "bitwise_and";

  // PyTorch's outputs: NaN, mixed dtypes, numbers
  for (const char* op : {"eq", "ne", "lt", "le", "gt", "ge"}) {
    const std::string name = op;
    BinaryFn fn = name == "eq"   ? BinaryFn(kiln::eq)
                  : name == "ne" ? BinaryFn(kiln::ne)
                  : name == "lt" ? BinaryFn(kiln::lt)
                  : name == "le" ? BinaryFn(kiln::le)
                  : name == "gt" ? BinaryFn(kiln::gt)
                                 : BinaryFn(kiln::ge);
    ScalarFn sfn = name == "eq"   ? ScalarFn(kiln::eq)
                   : name == "ne" ? ScalarFn(kiln::ne)
                   : name == "lt" ? ScalarFn(kiln::lt)
                   : name == "le" ? ScalarFn(kiln::le)
                   : name == "gt" ? ScalarFn(kiln::gt)
                                  : ScalarFn(kiln::ge);
    add_golden(name, name, [fn](const Args& a) { return Outputs{fn(a.t(0), a.t(1))}; });
    add_golden(name + "_scalar", name,
               [sfn](const Args& a) { return Outputs{sfn(a.t(0), a.s(0))}; });
  }
  add_golden("logical_and", "logical_and",
             [](const Args& a) { return Outputs{logical_and(a.t(0), a.t(1))}; });
  add_golden("logical_or", "logical_or",
             [](const Args& a) { return Outputs{logical_or(a.t(0), a.t(1))}; });
  add_golden("logical_xor", "logical_xor",
             [](const Args& a) { return Outputs{logical_xor(a.t(0), a.t(1))}; });
  add_golden("bitwise_and", "bitwise_and",
             [](const Args& a) { return Outputs{bitwise_and(a.t(0), a.t(1))}; });
  add_golden("bitwise_or", "bitwise_or",
             [](const Args& a) { return Outputs{bitwise_or(a.t(0), a.t(1))}; });
  add_golden("bitwise_xor", "bitwise_xor",
             [](const Args& a) { return Outputs{bitwise_xor(a.t(0), a.t(1))}; });
}

}  // namespace conformance
