// In-place forms: Tensor methods (add_, mul_, ..., clamp_, masked_fill_) and the compound
// assignment operators. Each case checks that the result is written into self (same handle,
// same memory), including on the transposed and strided layouts where self is a view.
#include "conformance.h"

#include <cmath>

namespace conformance {
namespace {

using namespace kiln;

// Runs f on self (tensor 0) and checks it wrote in place.
Outputs in_place(const Args& a, const std::function<const Tensor&(Tensor&)>& f) {
  Tensor self = a.t(0);
  void* data = self.data_ptr();
  std::vector<int64_t> strides = self.strides().vec();
  const Tensor& result = f(self);
  require(&result == &self, "the in-place call returned another tensor than self");
  require(self.data_ptr() == data, "the in-place call moved self's data");
  require(self.strides().vec() == strides, "the in-place call changed self's strides");
  return {self};
}

struct Spec {
  std::string name, op;
  std::vector<ScalarType> dtypes;
  double lo, hi;                     // self's values
  double other_lo, other_hi;         // other's values ([3, 1] or [4]) when binary
  std::vector<int64_t> other_sizes;  // empty: unary
  std::function<const Tensor&(Tensor&, const Args&)> fn;
  ReferenceFn reference;
  bool other_nonzero = false;
};

void register_spec(const Spec& s) {
  add_case({.name = s.name,
            .op = s.op,
            .dtypes = s.dtypes,
            .inputs =
                [s](ScalarType d) {
                  Args a{sample({3, 4}, d, s.lo, s.hi, 11)};
                  if (!s.other_sizes.empty()) {
                    a.tensors.push_back(s.other_nonzero
                                            ? sample_nonzero(s.other_sizes, d, s.other_lo,
                                                             s.other_hi, 0.5, 12)
                                            : sample(s.other_sizes, d, s.other_lo, s.other_hi, 12));
                  }
                  return a;
                },
            .run =
                [fn = s.fn](const Args& a) {
                  return in_place(a, [&](Tensor& self) -> const Tensor& { return fn(self, a); });
                },
            .reference = s.reference});
}

ReferenceFn unary_ref(double (*f)(double)) { return ref_unary(f); }

}  // namespace

void register_inplace_cases() {
  using A = const Args&;
  const Spec specs[] = {
      {"add_",
       "add_",
       kAll,
       -5,
       5,
       -5,
       5,
       {4},
       [](Tensor& x, A a) -> const Tensor& { return x.add_(a.t(1)); },
       ref_binary([](double x, double y) { return x + y; })},
      {"add_alpha_",
       "add_",
       kNumeric,
       0,
       5,
       0,
       5,
       {3, 1},
       [](Tensor& x, A a) -> const Tensor& { return x.add_(a.t(1), 3); },
       ref_binary([](double x, double y) { return x + 3 * y; })},
      {"add_scalar_",
       "add_",
       kNumeric,
       0,
       5,
       0,
       0,
       {},
       [](Tensor& x, A) -> const Tensor& { return x.add_(2); },
       unary_ref([](double x) { return x + 2; })},
      {"sub_",
       "sub_",
       kNumeric,
       5,
       10,
       0,
       5,
       {4},
       [](Tensor& x, A a) -> const Tensor& { return x.sub_(a.t(1)); },
       ref_binary([](double x, double y) { return x - y; })},
      {"sub_scalar_",
       "sub_",
       kNumeric,
       5,
       10,
       0,
       0,
       {},
       [](Tensor& x, A) -> const Tensor& { return x.sub_(3); },
       unary_ref([](double x) { return x - 3; })},
      {"mul_",
       "mul_",
       kAll,
       -5,
       5,
       -5,
       5,
       {3, 1},
       [](Tensor& x, A a) -> const Tensor& { return x.mul_(a.t(1)); },
       ref_binary([](double x, double y) { return x * y; })},
      {"mul_scalar_",
       "mul_",
       kNumeric,
       -5,
       5,
       0,
       0,
       {},
       [](Tensor& x, A) -> const Tensor& { return x.mul_(3); },
       unary_ref([](double x) { return x * 3; })},
      {"div_",
       "div_",
       kFloating,
       -5,
       5,
       -5,
       5,
       {4},
       [](Tensor& x, A a) -> const Tensor& { return x.div_(a.t(1)); },
       ref_binary([](double x, double y) { return x / y; }),
       true},
      {"div_scalar_",
       "div_",
       kFloating,
       -5,
       5,
       0,
       0,
       {},
       [](Tensor& x, A) -> const Tensor& { return x.div_(4); },
       unary_ref([](double x) { return x / 4; })},
      {"pow_",
       "pow_",
       kNumeric,
       0,
       3,
       0,
       0,
       {},
       [](Tensor& x, A) -> const Tensor& { return x.pow_(2); },
       unary_ref([](double x) { return x * x; })},
      {"neg_",
       "neg_",
       kSigned,
       -5,
       5,
       0,
       0,
       {},
       [](Tensor& x, A) -> const Tensor& { return x.neg_(); },
       unary_ref([](double x) { return -x; })},
      {"abs_",
       "abs_",
       kNumeric,
       -5,
       5,
       0,
       0,
       {},
       [](Tensor& x, A) -> const Tensor& { return x.abs_(); },
       unary_ref([](double x) { return std::abs(x); })},
      {"exp_",
       "exp_",
       kFloating,
       -3,
       3,
       0,
       0,
       {},
       [](Tensor& x, A) -> const Tensor& { return x.exp_(); },
       unary_ref([](double x) { return std::exp(x); })},
      {"log_",
       "log_",
       kFloating,
       0.1,
       5,
       0,
       0,
       {},
       [](Tensor& x, A) -> const Tensor& { return x.log_(); },
       unary_ref([](double x) { return std::log(x); })},
      {"sqrt_",
       "sqrt_",
       kFloating,
       0,
       9,
       0,
       0,
       {},
       [](Tensor& x, A) -> const Tensor& { return x.sqrt_(); },
       unary_ref([](double x) { return std::sqrt(x); })},
      {"relu_",
       "relu_",
       kNumeric,
       -5,
       5,
       0,
       0,
       {},
       [](Tensor& x, A) -> const Tensor& { return x.relu_(); },
       unary_ref([](double x) { return x > 0 ? x : 0; })},
      {"sigmoid_",
       "sigmoid_",
       kFloating,
       -5,
       5,
       0,
       0,
       {},
       [](Tensor& x, A) -> const Tensor& { return x.sigmoid_(); },
       unary_ref([](double x) { return 1 / (1 + std::exp(-x)); })},
      {"tanh_",
       "tanh_",
       kFloating,
       -3,
       3,
       0,
       0,
       {},
       [](Tensor& x, A) -> const Tensor& { return x.tanh_(); },
       unary_ref([](double x) { return std::tanh(x); })},
      {"clamp_",
       "clamp_",
       kNumeric,
       -6,
       6,
       0,
       0,
       {},
       [](Tensor& x, A) -> const Tensor& { return x.clamp_(1, 4); },
       unary_ref([](double x) { return std::min(std::max(x, 1.0), 4.0); })},
      {"masked_fill_",
       "masked_fill_",
       kAll,
       -5,
       5,
       0,
       0,
       {},
       [](Tensor& x, A) -> const Tensor& { return x.masked_fill_(x > 0, 1); },
       unary_ref([](double x) { return x > 0 ? 1 : x; })},
      {"operator_add_assign",
       "operator+=",
       kAll,
       -5,
       5,
       -5,
       5,
       {3, 4},
       [](Tensor& x, A a) -> const Tensor& { return x += a.t(1); },
       ref_binary([](double x, double y) { return x + y; })},
      {"operator_sub_assign",
       "operator-=",
       kNumeric,
       5,
       10,
       0,
       5,
       {4},
       [](Tensor& x, A a) -> const Tensor& { return x -= a.t(1); },
       ref_binary([](double x, double y) { return x - y; })},
      {"operator_mul_assign",
       "operator*=",
       kAll,
       -5,
       5,
       -5,
       5,
       {3, 1},
       [](Tensor& x, A a) -> const Tensor& { return x *= a.t(1); },
       ref_binary([](double x, double y) { return x * y; })},
      {"operator_div_assign",
       "operator/=",
       kFloating,
       -5,
       5,
       -5,
       5,
       {4},
       [](Tensor& x, A a) -> const Tensor& { return x /= a.t(1); },
       ref_binary([](double x, double y) { return x / y; }),
       true},
      {"operator_scalar_assign",
       "operator+=",
       kFloating,
       -5,
       5,
       0,
       0,
       {},
       [](Tensor& x, A) -> const Tensor& {
         x += 1;
         x -= 0.5;
         x *= 2;
         return x /= 4;
       },
       unary_ref([](double x) { return (x + 0.5) * 2 / 4; })},
  };
  for (const Spec& s : specs) register_spec(s);

  // self keeps its dtype when other is wider (computed wide, rounded into self)
  add_case({.name = "add_wider_other_",
            .op = "add_",
            .dtypes = {kHalf, kBFloat16, kFloat},
            .inputs =
                [](ScalarType d) {
                  return Args{sample({3, 4}, d, -2, 2, 13), sample({4}, kDouble, -2, 2, 14)};
                },
            .run =
                [](const Args& a) {
                  return in_place(a,
                                  [&](Tensor& self) -> const Tensor& { return self.add_(a.t(1)); });
                },
            .reference = ref_binary([](double x, double y) { return x + y; })});
  add_case({.name = "mul_int_other_",
            .op = "mul_",
            .dtypes = kFloating,
            .inputs =
                [](ScalarType d) {
                  return Args{sample({3, 4}, d, -2, 2, 15), sample({3, 1}, kLong, -3, 3, 16)};
                },
            .run =
                [](const Args& a) {
                  return in_place(a,
                                  [&](Tensor& self) -> const Tensor& { return self.mul_(a.t(1)); });
                },
            .reference = ref_binary([](double x, double y) { return x * y; })});
  // `x[i] += y` writes through the view x[i] (the rvalue operator)
  add_case({.name = "operator_add_assign_view",
            .op = "operator+=",
            .dtypes = kNumeric,
            .inputs =
                [](ScalarType d) {
                  return Args{sample({3, 4}, d, 0, 5, 17), sample({4}, d, 0, 5, 18)};
                },
            .run =
                [](const Args& a) {
                  Tensor x = a.t(0);
                  x[1] += a.t(1);
                  x.select(1, 2) *= a.t(1).narrow(0, 0, 3);
                  return Outputs{x};
                },
            .reference =
                [](const Args& a, ScalarType) {
                  Tensor x = host_double(a.t(0));
                  Tensor y = host_double(a.t(1));
                  double* px = x.data_ptr<double>();
                  const double* py = y.data_ptr<double>();
                  for (int j = 0; j < 4; ++j) px[4 + j] += py[j];
                  for (int i = 0; i < 3; ++i) px[i * 4 + 2] *= py[i];
                  return Outputs{x};
                }});
}

}  // namespace conformance
