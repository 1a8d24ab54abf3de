// Broadcasting: the shapes table, PyTorch's error message, and the examples of "Effective PyTorch"
// ("Broadcasting the good and the ugly", "Take advantage of the overloaded operators").
#include "tensor_test.h"

using namespace kiln;
using tensor_test::vals;

BOOST_AUTO_TEST_SUITE(broadcasting)

BOOST_AUTO_TEST_CASE(shapes_table) {
  struct Row {
    std::vector<int64_t> a, b, out;
  };
  const Row rows[] = {
      {{}, {}, {}},
      {{3}, {}, {3}},
      {{}, {2, 3}, {2, 3}},
      {{1}, {4}, {4}},
      {{3, 1}, {1, 4}, {3, 4}},
      {{3, 1}, {4}, {3, 4}},
      {{2, 3, 4}, {4}, {2, 3, 4}},
      {{2, 3, 4}, {3, 1}, {2, 3, 4}},
      {{5, 1, 4}, {3, 1}, {5, 3, 4}},
      {{8, 1, 6, 1}, {7, 1, 5}, {8, 7, 6, 5}},
      {{2, 1}, {2}, {2, 2}},
      {{0}, {1}, {0}},
      {{2, 0}, {1, 0}, {2, 0}},
      {{1, 1, 1}, {2}, {1, 1, 2}},
  };
  for (const Row& r : rows) {
    BOOST_TEST(broadcast_shapes(r.a, r.b) == r.out);
    BOOST_TEST(broadcast_shapes(r.b, r.a) == r.out);
    Tensor sum = zeros(r.a) + ones(r.b);
    BOOST_TEST(sum.sizes().vec() == r.out);
    BOOST_TEST(zeros(r.a).expand(r.out).sizes().vec() == r.out);
  }
}

BOOST_AUTO_TEST_CASE(mismatch_names_both_sizes_and_the_dimension) {
  CHECK_ERROR(ValueError, zeros({2, 3}) + zeros({2, 4}),
              "The size of tensor a (3) must match the size of tensor b (4) at non-singleton "
              "dimension 1");
  CHECK_ERROR(ValueError, zeros({3}) * zeros({4}),
              "The size of tensor a (3) must match the size of tensor b (4) at non-singleton "
              "dimension 0");
  CHECK_ERROR(ValueError, broadcast_shapes({4, 5, 2}, {3, 1}),
              "The size of tensor a (5) must match the size of tensor b (3) at non-singleton "
              "dimension 1");
  CHECK_ERROR(Error, where(zeros({2}, kBool), zeros({3}), zeros({2})), "must match");
  CHECK_ERROR(ValueError, zeros({3, 4}).expand({3, 5}),
              "the expanded size of the tensor (5) must match the existing size (4)");
}

BOOST_AUTO_TEST_CASE(the_good_a_column_broadcasts_across_columns) {
  Tensor a = tensor({{1., 2.}, {3., 4.}});
  Tensor b = tensor({{1.}, {2.}});
  Tensor c = a + b;
  CHECK_SIZES(c, {2, 2});
  CHECK_VALUES(c, {2, 3, 5, 6});
  BOOST_TEST(c.equal(a + b.repeat({1, 2})));
}

BOOST_AUTO_TEST_CASE(the_ugly_rank_mismatch_sums_to_12) {
  Tensor a = tensor({{1.}, {2.}});
  Tensor b = tensor({1., 2.});
  Tensor c = sum(a + b);
  BOOST_TEST(c.dim() == 0);
  BOOST_TEST(c.item<float>() == 12.0f);
  Tensor d = sum(a + b, 0);
  CHECK_SIZES(d, {2});
  CHECK_VALUES(d, {5, 7});
  CHECK_VALUES(a + b, {2, 3, 3, 4});
}

BOOST_AUTO_TEST_CASE(tiling_by_repeat_equals_broadcasting) {
  manual_seed(1);
  Tensor a = rand({5, 3, 5});
  Tensor b = rand({5, 1, 6});
  Tensor tiled = b.repeat({1, 3, 1});
  Tensor c = cat({a, tiled}, 2);
  CHECK_SIZES(c, {5, 3, 11});
  BOOST_TEST(c.narrow(2, 5, 6).equal(b.expand({5, 3, 6})));
  BOOST_TEST(c.narrow(2, 0, 5).equal(a));
}

BOOST_AUTO_TEST_CASE(row_sums_by_index_by_unbind_and_by_sum_agree) {
  manual_seed(2);
  Tensor x = rand({500, 10});
  Tensor z = zeros({10});
  for (int64_t i = 0; i < 500; ++i) z += x[i];
  Tensor y = zeros({10});
  for (const Tensor& row : unbind(x)) y += row;
  Tensor s = sum(x, 0);
  BOOST_TEST(z.allclose(s, 1e-5, 1e-4));
  BOOST_TEST(y.equal(z));
}

BOOST_AUTO_TEST_CASE(in_place_broadcasts_the_other_operand_only) {
  Tensor x = zeros({3, 4});
  x += tensor({1., 2., 3., 4.});
  CHECK_VALUES(x.select(0, 2), {1, 2, 3, 4});
  x -= tensor({{1.}, {2.}, {3.}});
  CHECK_VALUES(x.select(1, 0), {0, -1, -2});
  CHECK_ERROR(ValueError, zeros({4}) += zeros({3, 4}),
              "output with shape [4] doesn't match the broadcast shape [3, 4]");
}

BOOST_AUTO_TEST_CASE(overloaded_operators_match_the_functions) {
  Tensor x = tensor({-3., 1., 4.});
  Tensor y = tensor({2., 2., -3.});
  BOOST_TEST((-x).equal(neg(x)));
  BOOST_TEST((x + y).equal(add(x, y)));
  BOOST_TEST((x - y).equal(sub(x, y)));
  BOOST_TEST((x * y).equal(mul(x, y)));
  BOOST_TEST((x / y).equal(div(x, y)));
  BOOST_TEST((x % y).equal(remainder(x, y)));
  CHECK_VALUES(x % y, {1, 1, -2});
  CHECK_VALUES(floor_divide(x, y), {-2, 0, -2});
  BOOST_TEST(x.pow(y).equal(pow(x, y)));
  BOOST_TEST(x.matmul(y).equal(matmul(x, y)));
  BOOST_TEST((x > y).equal(gt(x, y)));
  BOOST_TEST((x >= y).equal(ge(x, y)));
  BOOST_TEST((x < y).equal(lt(x, y)));
  BOOST_TEST((x <= y).equal(le(x, y)));
  BOOST_TEST(x.abs().equal(abs(x)));
  Tensor p = tensor({true, false, true}), q = tensor({true, true, false});
  CHECK_VALUES(p & q, {1, 0, 0});
  CHECK_VALUES(p | q, {1, 1, 1});
  CHECK_VALUES(p ^ q, {0, 1, 1});
  CHECK_VALUES(~p, {0, 1, 0});
}

BOOST_AUTO_TEST_SUITE_END()
