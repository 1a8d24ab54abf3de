// Type promotion: kiln::promote_types and kiln::result_type against PyTorch's tables
// (tests/golden/promotion_tables.txt), and the results of operators on mixed operands.
#include "tensor_test.h"

#include <fstream>
#include <sstream>

using namespace kiln;
using tensor_test::vals;

namespace {

ScalarType dtype_named(const std::string& name) {
  for (int i = 0; i < kNumScalarTypes; ++i) {
    auto d = static_cast<ScalarType>(i);
    if (name == dtype_name(d)) return d;
  }
  throw std::runtime_error("unknown dtype " + name);
}

Scalar number_of_kind(const std::string& kind) {
  if (kind == "bool") return Scalar(true);
  if (kind == "int") return Scalar(int64_t{3});
  return Scalar(2.5);
}

struct TableLine {
  std::string kind;
  std::vector<std::string> words;
};

std::vector<TableLine> promotion_table() {
  std::ifstream in(std::string(KILN_GOLDEN_DIR) + "/promotion_tables.txt");
  BOOST_REQUIRE_MESSAGE(in.good(), "cannot open promotion_tables.txt in " KILN_GOLDEN_DIR);
  std::vector<TableLine> lines;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    TableLine t;
    words >> t.kind;
    std::string w;
    while (words >> w) t.words.push_back(w);
    lines.push_back(t);
  }
  return lines;
}

Tensor of_dtype(ScalarType d, bool zero_dim) {
  return zero_dim ? ones({}, TensorOptions().dtype(d)) : ones({2}, TensorOptions().dtype(d));
}

}  // namespace

BOOST_AUTO_TEST_SUITE(promotion)

BOOST_AUTO_TEST_CASE(promote_types_matches_pytorch_for_all_100_pairs) {
  int pairs = 0;
  for (const TableLine& t : promotion_table()) {
    if (t.kind != "promote") continue;
    ScalarType a = dtype_named(t.words[0]), b = dtype_named(t.words[1]);
    ScalarType want = dtype_named(t.words[2]);
    BOOST_CHECK_MESSAGE(promote_types(a, b) == want,
                        "promote_types(" << a << ", " << b << ") = " << promote_types(a, b)
                                         << ", PyTorch: " << want);
    ++pairs;
  }
  BOOST_CHECK_EQUAL(pairs, 100);
}

BOOST_AUTO_TEST_CASE(result_type_of_dimensioned_and_zero_dim_tensors_matches_pytorch) {
  int checked = 0;
  for (const TableLine& t : promotion_table()) {
    if (t.kind != "dim_zerodim" && t.kind != "zerodim_dim") continue;
    bool first_zero = t.kind == "zerodim_dim";
    ScalarType a = dtype_named(t.words[0]), b = dtype_named(t.words[1]);
    ScalarType want = dtype_named(t.words[2]);
    ScalarType got = result_type(of_dtype(a, first_zero), of_dtype(b, !first_zero));
    BOOST_CHECK_MESSAGE(got == want,
                        t.kind << " " << a << " " << b << ": " << got << ", PyTorch: " << want);
    ++checked;
  }
  BOOST_CHECK_EQUAL(checked, 200);
}

BOOST_AUTO_TEST_CASE(result_type_with_numbers_matches_pytorch) {
  int checked = 0;
  for (const TableLine& t : promotion_table()) {
    if (t.kind != "dim_scalar" && t.kind != "zerodim_scalar") continue;
    ScalarType a = dtype_named(t.words[0]);
    ScalarType want = dtype_named(t.words[2]);
    Tensor operand = of_dtype(a, t.kind == "zerodim_scalar");
    ScalarType got = result_type(operand, number_of_kind(t.words[1]));
    BOOST_CHECK_MESSAGE(got == want, t.kind << " " << a << " " << t.words[1] << ": " << got
                                            << ", PyTorch: " << want);
    // and the operator's output has that dtype
    Tensor sum = add(operand, number_of_kind(t.words[1]));
    BOOST_CHECK_MESSAGE(sum.dtype() == want, "add(" << t.kind << " " << a << ", " << t.words[1]
                                                    << ") has dtype " << sum.dtype());
    ++checked;
  }
  BOOST_CHECK_EQUAL(checked, 60);
}

BOOST_AUTO_TEST_CASE(tensor_and_number_promote_by_category) {
  Tensor i64 = tensor({1, 2});
  Tensor r = i64 + 2.5;  // a floating number lifts an integer tensor to the default float
  BOOST_CHECK_EQUAL(r.dtype(), kFloat);
  CHECK_VALUES(r, {3.5, 4.5});

  Tensor u8 = tensor({1, 200}, kByte);
  Tensor w = u8 + 1000;  // same category: the tensor's dtype wins, the number wraps
  BOOST_CHECK_EQUAL(w.dtype(), kByte);
  CHECK_VALUES(w, {233, 176});

  Tensor i32 = tensor({1, 2}, kInt);
  BOOST_CHECK_EQUAL((i32 * true).dtype(), kInt);
  CHECK_VALUES(i32 * true, {1, 2});
  BOOST_CHECK_EQUAL((i32 * 2).dtype(), kInt);

  Tensor f16 = tensor({1.0, 2.0}, kHalf);
  BOOST_CHECK_EQUAL((f16 + 2.5).dtype(), kHalf);
  CHECK_VALUES(f16 + 2.5, {3.5, 4.5});
  BOOST_CHECK_EQUAL((f16 * 3).dtype(), kHalf);

  Tensor b = tensor({true, false});
  BOOST_CHECK_EQUAL((b + 1).dtype(), kLong);
  BOOST_CHECK_EQUAL((b + true).dtype(), kBool);
  BOOST_CHECK_EQUAL((b * 1.5).dtype(), kFloat);
  BOOST_CHECK_EQUAL((2 - i32).dtype(), kInt);
  CHECK_VALUES(2 - i32, {1, 0});
  BOOST_CHECK_EQUAL((1 / i32).dtype(), kFloat);  // true division
  CHECK_VALUES(1 / i32, {1, 0.5});
  BOOST_CHECK_EQUAL((i64 / 2).dtype(), kFloat);
}

BOOST_AUTO_TEST_CASE(zero_dim_tensors_join_dimensioned_ones_by_category) {
  Tensor i32 = tensor({1, 2}, kInt);
  Tensor i64_0 = tensor(5);  // 0-dim int64
  BOOST_CHECK_EQUAL(i64_0.dim(), 0);
  Tensor r = i32 + i64_0;
  BOOST_CHECK_EQUAL(r.dtype(), kInt);  // same category: the dimensioned tensor wins
  CHECK_VALUES(r, {6, 7});

  Tensor f32_0 = tensor(1.5);
  Tensor i64 = tensor({1, 2});
  BOOST_CHECK_EQUAL((f32_0 + i64).dtype(), kFloat);  // higher category: the 0-dim tensor counts
  CHECK_VALUES(f32_0 + i64, {2.5, 3.5});
  BOOST_CHECK_EQUAL((i64 * tensor(2.0, kDouble)).dtype(), kDouble);
  BOOST_CHECK_EQUAL((tensor({1.0}, kHalf) + tensor(2.0, kDouble)).dtype(), kHalf);

  // two 0-dim tensors promote normally; a number after them counts by category only
  BOOST_CHECK_EQUAL((tensor(1, kInt) + tensor(2)).dtype(), kLong);
  BOOST_CHECK_EQUAL((tensor(1, kInt) + 2.5).dtype(), kFloat);
  BOOST_CHECK_EQUAL((tensor(1.0, kHalf) + 2.5).dtype(), kHalf);
  BOOST_CHECK_EQUAL(result_type(tensor({1}, kChar), tensor({1}, kByte)), kShort);
  BOOST_CHECK_EQUAL(result_type(tensor({1.0}, kHalf), tensor({1.0}, kBFloat16)), kFloat);
}

BOOST_AUTO_TEST_CASE(mixed_dtype_operators_compute_in_the_promoted_dtype) {
  Tensor a = tensor({-7, 7}, kChar);
  Tensor b = tensor({2}, kByte);
  Tensor q = floor_divide(a, b);  // int8 with uint8 computes in int16
  BOOST_CHECK_EQUAL(q.dtype(), kShort);
  CHECK_VALUES(q, {-4, 3});
  Tensor c = tensor({1, 2}, kInt) < tensor({1.5, 1.5});
  BOOST_CHECK_EQUAL(c.dtype(), kBool);
  CHECK_VALUES(c, {1, 0});
  Tensor m = maximum(tensor({1, 5}, kShort), tensor({2.5, 2.5}, kHalf));
  BOOST_CHECK_EQUAL(m.dtype(), kHalf);
  CHECK_VALUES(m, {2.5, 5});
  Tensor w = where(tensor({true, false}), tensor({1, 2}, kInt), tensor({0.5}, kDouble));
  BOOST_CHECK_EQUAL(w.dtype(), kDouble);
  CHECK_VALUES(w, {1, 0.5});
  Tensor s = cat({tensor({1}, kInt), tensor({2.5}, kHalf)});
  BOOST_CHECK_EQUAL(s.dtype(), kHalf);
  CHECK_VALUES(s, {1, 2.5});
  BOOST_CHECK_EQUAL(sum(tensor({true, true, false})).dtype(), kLong);
  BOOST_CHECK_EQUAL(sum(tensor({true, true, false})).item<int64_t>(), 2);
  BOOST_CHECK_EQUAL(sum(tensor({100, 100}, kChar)).item<int64_t>(), 200);
  BOOST_CHECK_EQUAL(exp(tensor({0}, kInt)).dtype(), kFloat);
}

BOOST_AUTO_TEST_CASE(in_place_keeps_self_dtype_when_the_result_casts) {
  Tensor f = tensor({1.0, 2.0}, kHalf);
  f += tensor({0.5, 0.5}, kDouble);
  BOOST_CHECK_EQUAL(f.dtype(), kHalf);
  CHECK_VALUES(f, {1.5, 2.5});
  Tensor x = tensor({1.0, 2.0});
  x *= tensor({2, 3});
  BOOST_CHECK_EQUAL(x.dtype(), kFloat);
  CHECK_VALUES(x, {2, 6});
  Tensor i = tensor({1, 2}, kInt);
  i += tensor({5});  // int64 other, same category
  BOOST_CHECK_EQUAL(i.dtype(), kInt);
  CHECK_VALUES(i, {6, 7});
  Tensor bits = tensor({true, false});
  bits *= tensor({true, true});
  BOOST_CHECK_EQUAL(bits.dtype(), kBool);
  CHECK_VALUES(bits, {1, 0});
}

BOOST_AUTO_TEST_SUITE_END()
