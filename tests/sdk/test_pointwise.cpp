// The scalar formulas of kiln/sdk/pointwise.hpp on the host, against PyTorch's results for their
// edge cases (tests/golden/pointwise_cases.txt, written by tests/golden/make_pointwise_golden.py):
// integer wrap-around, floor division and remainder signs, integer pow, NaN and -0.0 through
// maximum/minimum, relu, sign and abs, the errors only the data shows.
#define BOOST_TEST_MODULE pointwise
#include <boost/test/unit_test.hpp>

#include <kiln/sdk/pointwise.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace pw = kiln::sdk::pointwise;

namespace {

// One line of the golden file: op, dtype, inputs, then PyTorch's output or error message.
struct Case {
  int line = 0;
  std::string op, dtype;
  std::vector<std::string> in;
  bool raises = false;
  std::string out;
};

std::vector<Case> read_cases() {
  const std::string path = std::string(KILN_GOLDEN_DIR) + "/pointwise_cases.txt";
  std::ifstream file(path);
  BOOST_REQUIRE_MESSAGE(file.is_open(), "cannot open " << path);
  std::vector<Case> cases;
  std::string text;
  for (int line = 1; std::getline(file, text); ++line) {
    if (text.empty() || text[0] == '#') continue;
    std::istringstream words(text);
    Case c;
    c.line = line;
    words >> c.op >> c.dtype;
    std::string w;
    while (words >> w && w != "=" && w != "!") c.in.push_back(w);
    c.raises = w == "!";
    std::getline(words >> std::ws, c.out);
    BOOST_REQUIRE_MESSAGE(!c.in.empty() && !c.out.empty(), path << ":" << line << ": malformed");
    cases.push_back(c);
  }
  return cases;
}

template <class C>
C parse(const std::string& s) {
  if constexpr (std::is_floating_point_v<C>) {
    return static_cast<C>(std::strtod(s.c_str(), nullptr));  // nan, inf, -0.0 included
  } else if constexpr (std::is_same_v<C, bool>) {
    return s == "1";
  } else if constexpr (std::is_unsigned_v<C>) {
    return static_cast<C>(std::stoull(s));
  } else {
    return static_cast<C>(std::stoll(s));
  }
}

// A scalar attribute as the core passes it: I64 for an integer text, F64 otherwise.
kiln_attr attr_of(const std::string& s) {
  kiln_attr a{};
  if (s.find_first_of(".ni") == std::string::npos) {
    a.kind = KILN_ATTR_I64;
    a.value.i = std::stoll(s);
  } else {
    a.kind = KILN_ATTR_F64;
    a.value.f = std::strtod(s.c_str(), nullptr);
  }
  return a;
}

std::string where(const Case& c) {
  return "pointwise_cases.txt:" + std::to_string(c.line) + " " + c.op + " " + c.dtype;
}

// Same value; for floating types NaN matches NaN and the sign of a zero counts.
template <class R>
void expect(const Case& c, R got) {
  const R want = parse<R>(c.out);
  if constexpr (std::is_floating_point_v<R>) {
    const bool same = std::isnan(want) ? std::isnan(got)
                                       : got == want && std::signbit(got) == std::signbit(want);
    BOOST_CHECK_MESSAGE(same, where(c) << ": got " << got << ", PyTorch " << c.out);
  } else {
    BOOST_CHECK_MESSAGE(got == want, where(c) << ": got " << +got << ", PyTorch " << c.out);
  }
}

// Runs op on the case's first one or two inputs (its arity) and compares with PyTorch's output,
// or checks that error() reports what PyTorch raises, with PyTorch's message.
template <class C, class Op>
void check(const Case& c, const Op& op) {
  if constexpr (!pw::accepts_v<Op::dtypes, C>) {
    BOOST_ERROR(where(c) << ": the functor does not take this dtype");
  } else if constexpr (std::is_invocable_v<const Op&, C>) {
    BOOST_CHECK_MESSAGE(!c.raises, where(c) << ": PyTorch raises " << c.out);
    if (!c.raises) expect(c, op(parse<C>(c.in.at(0))));
  } else {
    const C a = parse<C>(c.in.at(0)), b = parse<C>(c.in.at(1));
    pw::Error error = pw::Error::none;
    if constexpr (pw::can_fail_v<Op, C>) error = Op::error(a, b);
    if (!c.raises) {
      BOOST_CHECK_MESSAGE(error == pw::Error::none, where(c) << ": unexpected error");
      expect(c, op(a, b));
      return;
    }
    BOOST_CHECK_MESSAGE(error != pw::Error::none, where(c) << ": no error, PyTorch raises");
    try {
      pw::throw_if_error(error);
    } catch (const std::domain_error& e) {
      BOOST_CHECK_MESSAGE(e.what() == c.out, where(c) << ": message " << e.what());
    }
  }
}

// The functor the case names; false for an unknown name.
template <class C>
bool run(const Case& c) {
  const std::string& op = c.op;
  if (op == "neg") return check<C>(c, pw::Neg{}), true;
  if (op == "abs") return check<C>(c, pw::Abs{}), true;
  if (op == "sign") return check<C>(c, pw::Sign{}), true;
  if (op == "relu") return check<C>(c, pw::Relu{}), true;
  if (op == "bitwise_not") return check<C>(c, pw::BitwiseNot{}), true;
  if (op == "logical_not") return check<C>(c, pw::LogicalNot{}), true;
  if (op == "exp") return check<C>(c, pw::Exp{}), true;
  if (op == "log") return check<C>(c, pw::Log{}), true;
  if (op == "log1p") return check<C>(c, pw::Log1p{}), true;
  if (op == "expm1") return check<C>(c, pw::Expm1{}), true;
  if (op == "sqrt") return check<C>(c, pw::Sqrt{}), true;
  if (op == "rsqrt") return check<C>(c, pw::Rsqrt{}), true;
  if (op == "sin") return check<C>(c, pw::Sin{}), true;
  if (op == "cos") return check<C>(c, pw::Cos{}), true;
  if (op == "tanh") return check<C>(c, pw::Tanh{}), true;
  if (op == "sigmoid") return check<C>(c, pw::Sigmoid{}), true;
  if (op == "floor") return check<C>(c, pw::Floor{}), true;
  if (op == "ceil") return check<C>(c, pw::Ceil{}), true;
  if (op == "round") return check<C>(c, pw::Round{}), true;
  if (op == "trunc") return check<C>(c, pw::Trunc{}), true;
  if (op == "frac") return check<C>(c, pw::Frac{}), true;
  if (op == "reciprocal") return check<C>(c, pw::Reciprocal{}), true;
  if (op == "log2") return check<C>(c, pw::Log2{}), true;
  if (op == "log10") return check<C>(c, pw::Log10{}), true;
  if (op == "exp2") return check<C>(c, pw::Exp2{}), true;
  if (op == "tan") return check<C>(c, pw::Tan{}), true;
  if (op == "sinh") return check<C>(c, pw::Sinh{}), true;
  if (op == "cosh") return check<C>(c, pw::Cosh{}), true;
  if (op == "asin") return check<C>(c, pw::Asin{}), true;
  if (op == "acos") return check<C>(c, pw::Acos{}), true;
  if (op == "atan") return check<C>(c, pw::Atan{}), true;
  if (op == "asinh") return check<C>(c, pw::Asinh{}), true;
  if (op == "acosh") return check<C>(c, pw::Acosh{}), true;
  if (op == "atanh") return check<C>(c, pw::Atanh{}), true;
  if (op == "erf") return check<C>(c, pw::Erf{}), true;
  if (op == "erfc") return check<C>(c, pw::Erfc{}), true;
  if (op == "erfinv") return check<C>(c, pw::Erfinv{}), true;
  if (op == "silu") return check<C>(c, pw::Silu{}), true;
  if (op == "mish") return check<C>(c, pw::Mish{}), true;
  if constexpr (std::is_floating_point_v<C>) {  // inputs x, parameter
    if (op == "gelu") return check<C>(c, pw::Gelu<C>{parse<C>(c.in.at(1))}), true;
    if (op == "leaky_relu") return check<C>(c, pw::LeakyRelu<C>{parse<C>(c.in.at(1))}), true;
    if (op == "hardshrink") return check<C>(c, pw::Hardshrink<C>{parse<C>(c.in.at(1))}), true;
    if (op == "softshrink") return check<C>(c, pw::Softshrink<C>{parse<C>(c.in.at(1))}), true;
  }
  if (op == "mul") return check<C>(c, pw::Mul{}), true;
  if (op == "div") return check<C>(c, pw::Div{}), true;
  if (op == "floor_divide") return check<C>(c, pw::FloorDivide{}), true;
  if (op == "remainder") return check<C>(c, pw::Remainder{}), true;
  if (op == "fmod") return check<C>(c, pw::Fmod{}), true;
  if (op == "pow") return check<C>(c, pw::Pow{}), true;
  if (op == "maximum") return check<C>(c, pw::Maximum{}), true;
  if (op == "minimum") return check<C>(c, pw::Minimum{}), true;
  if (op == "bitwise_and") return check<C>(c, pw::BitwiseAnd{}), true;
  if (op == "bitwise_or") return check<C>(c, pw::BitwiseOr{}), true;
  if (op == "bitwise_xor") return check<C>(c, pw::BitwiseXor{}), true;
  if (op == "eq") return check<C>(c, pw::Eq{}), true;
  if (op == "ne") return check<C>(c, pw::Ne{}), true;
  if (op == "lt") return check<C>(c, pw::Lt{}), true;
  if (op == "le") return check<C>(c, pw::Le{}), true;
  if (op == "gt") return check<C>(c, pw::Gt{}), true;
  if (op == "ge") return check<C>(c, pw::Ge{}), true;
  if (op == "logical_and") return check<C>(c, pw::LogicalAnd{}), true;
  if (op == "logical_or") return check<C>(c, pw::LogicalOr{}), true;
  if (op == "logical_xor") return check<C>(c, pw::LogicalXor{}), true;
  if (op == "add" || op == "sub") {  // inputs a, b, alpha; sub is add with -alpha
    C alpha = parse<C>(c.in.at(2));
    if constexpr (!std::is_same_v<C, bool>) {
      if (op == "sub") alpha = pw::wrap_neg(alpha);
    }
    return check<C>(c, pw::AddScaled<C>{alpha}), true;
  }
  if (op == "clamp") {  // inputs x, min, max
    if constexpr (std::is_same_v<C, bool>) {
      return false;
    } else {
      const kiln_attr lo = attr_of(c.in.at(1)), hi = attr_of(c.in.at(2));
      const pw::Clamp<C> clamp{pw::clamp_bound<C>(&lo, pw::lowest_value<C>()),
                               pw::clamp_bound<C>(&hi, pw::highest_value<C>())};
      return check<C>(c, clamp), true;
    }
  }
  return false;
}

bool run_case(const Case& c) {
  if (c.dtype == "bool") return run<bool>(c);
  if (c.dtype == "uint8") return run<uint8_t>(c);
  if (c.dtype == "int8") return run<int8_t>(c);
  if (c.dtype == "int32") return run<int32_t>(c);
  if (c.dtype == "int64") return run<int64_t>(c);
  if (c.dtype == "float32") return run<float>(c);
  if (c.dtype == "float64") return run<double>(c);
  return false;
}

}  // namespace

BOOST_AUTO_TEST_CASE(every_functor_matches_pytorch_on_its_edge_cases) {
  const std::vector<Case> cases = read_cases();
  BOOST_TEST(cases.size() > 6000u);
  std::map<std::string, int> per_op;
  for (const Case& c : cases) {
    BOOST_CHECK_MESSAGE(run_case(c), where(c) << ": no functor for this op and dtype");
    ++per_op[c.op];
  }
  BOOST_TEST(per_op.size() == 66u);  // every operator of make_pointwise_golden.py
  BOOST_TEST(per_op["floor_divide"] > 100);
}

BOOST_AUTO_TEST_CASE(where_moves_bits_and_keeps_a_nan_payload) {
  const uint32_t payload = 0x7fc01234u;  // a quiet NaN with a payload
  float nan;
  std::memcpy(&nan, &payload, sizeof nan);
  const auto bits = [](float x) {
    uint32_t b;
    std::memcpy(&b, &x, sizeof b);
    return b;
  };
  BOOST_TEST(pw::Where{}(true, bits(nan), bits(1.0f)) == payload);
  BOOST_TEST(pw::Where{}(false, bits(nan), bits(-0.0f)) == bits(-0.0f));
  BOOST_TEST(pw::Where{}(true, uint8_t{7}, uint8_t{9}) == 7);
  BOOST_TEST(pw::Where{}(false, uint64_t{1} << 63, uint64_t{5}) == 5u);
}

BOOST_AUTO_TEST_CASE(errors_are_reported_only_for_integers) {
  BOOST_TEST(!(pw::can_fail_v<pw::FloorDivide, float>));
  BOOST_TEST((pw::can_fail_v<pw::FloorDivide, int8_t>));
  BOOST_TEST(!(pw::can_fail_v<pw::Pow, uint8_t>));  // no negative exponent to report
  BOOST_TEST(!(pw::can_fail_v<pw::Add, int32_t>));
  BOOST_TEST(pw::FloorDivide{}(int32_t{5}, int32_t{0}) == 0);  // total: the loop reports it
  BOOST_CHECK_NO_THROW(pw::throw_if_error(pw::Error::none));
  BOOST_CHECK_THROW(pw::throw_if_error(pw::Error::zero_division), std::domain_error);
}
