// Factories: tensor() with dtype inference, from_blob aliasing, zeros/ones/full/empty/arange/
// linspace/eye, the random factories after manual_seed, the *_like forms and TensorOptions.
#include "tensor_test.h"

#include <cmath>

using namespace kiln;
using tensor_test::vals;

BOOST_AUTO_TEST_SUITE(factories)

BOOST_AUTO_TEST_CASE(tensor_infers_dtype_and_shape_from_values) {
  Tensor a = tensor(3);
  BOOST_TEST(a.dim() == 0);
  BOOST_TEST(a.dtype() == kLong);
  BOOST_TEST(a.item<int64_t>() == 3);
  BOOST_TEST(tensor(3.5).dtype() == kFloat);
  BOOST_TEST(tensor(true).dtype() == kBool);
  Tensor b = tensor({1, 2});
  BOOST_TEST(b.dtype() == kLong);
  CHECK_SIZES(b, {2});
  // as libtorch's: the values of a list have one C++ type
  CHECK_ERROR(TypeError, tensor({1.5, 2}),
              "same scalar type: Double, but got element of scalar "
              "type: Int");
  Tensor m = tensor({{1, 2}, {3, 4}}, kInt);
  BOOST_TEST(m.dtype() == kInt);
  CHECK_SIZES(m, {2, 2});
  CHECK_VALUES(m, {1, 2, 3, 4});
  Tensor bools = tensor({true, false, true});
  BOOST_TEST(bools.dtype() == kBool);
  CHECK_VALUES(bools, {1, 0, 1});
  Tensor nested = tensor({{{1.}, {2.}}, {{3.}, {4.}}});
  CHECK_SIZES(nested, {2, 2, 1});
  Tensor empty_list = tensor({});
  BOOST_TEST(empty_list.dtype() == kFloat);
  CHECK_SIZES(empty_list, {0});
  Tensor from_vector = tensor(std::vector<float>{0.5f, 1.5f});
  BOOST_TEST(from_vector.dtype() == kFloat);
  CHECK_VALUES(from_vector, {0.5, 1.5});
  Tensor d = tensor({1, 2}, TensorOptions().dtype(kDouble).requires_grad(true));
  BOOST_TEST(d.dtype() == kDouble);
  BOOST_TEST(d.requires_grad());
  CHECK_ERROR(ValueError, tensor({{1, 2}, {3}}),
              "Expected all sub-lists to have sizes: [2] (e.g. {1, 2}), but got sub-list {3} "
              "with sizes: [1]");
}

BOOST_AUTO_TEST_CASE(from_blob_aliases_the_callers_memory) {
  float data[6] = {1, 2, 3, 4, 5, 6};
  Tensor t = from_blob(data, {2, 3});
  BOOST_TEST(t.dtype() == kFloat);
  BOOST_TEST(t.data_ptr<float>() == data);
  data[4] = 50;
  BOOST_TEST(t[1][1].item<float>() == 50.0f);
  t[0].fill_(0);
  BOOST_TEST(data[0] == 0.0f);
  BOOST_TEST(data[2] == 0.0f);
  BOOST_TEST(data[3] == 4.0f);
  int64_t ints[6] = {0, 1, 2, 3, 4, 5};
  Tensor s = from_blob(ints, {3}, {2}, kLong);  // every other element
  CHECK_VALUES(s, {0, 2, 4});
  s.mul_(10);
  BOOST_TEST(ints[4] == 40);
  BOOST_TEST(ints[3] == 3);
}

BOOST_AUTO_TEST_CASE(filled_factories) {
  Tensor z = zeros({2, 3});
  BOOST_TEST(z.dtype() == kFloat);
  CHECK_VALUES(z, {0, 0, 0, 0, 0, 0});
  CHECK_VALUES(ones({2}, kInt), {1, 1});
  BOOST_TEST(ones({2}, kInt).dtype() == kInt);
  BOOST_TEST(full({2}, 7).dtype() == kLong);
  BOOST_TEST(full({2}, 7.5).dtype() == kFloat);
  BOOST_TEST(full({2}, true).dtype() == kBool);
  CHECK_VALUES(full({2, 2}, 7.5, kDouble), {7.5, 7.5, 7.5, 7.5});
  Tensor e = empty({3, 0, 2});
  BOOST_TEST(e.numel() == 0);
  CHECK_SIZES(e, {3, 0, 2});
  BOOST_TEST(empty({4}, kHalf).dtype() == kHalf);
  Tensor scalar = zeros({});
  BOOST_TEST(scalar.dim() == 0);
  BOOST_TEST(scalar.numel() == 1);
}

BOOST_AUTO_TEST_CASE(ranges) {
  Tensor a = arange(5);
  BOOST_TEST(a.dtype() == kLong);
  CHECK_VALUES(a, {0, 1, 2, 3, 4});
  // Scalar(...) spells out the overload: a bare number also converts to TensorOptions through
  // its DeviceType (int8_t) constructor, which makes arange(0, 1, 0.25) ambiguous
  Tensor f = arange(Scalar(0), Scalar(1), Scalar(0.25));
  BOOST_TEST(f.dtype() == kFloat);
  CHECK_VALUES(f, {0, 0.25, 0.5, 0.75});
  CHECK_VALUES(arange(Scalar(10), Scalar(0), Scalar(-3)), {10, 7, 4, 1});
  BOOST_TEST(arange(3, kDouble).dtype() == kDouble);
  BOOST_TEST(arange(Scalar(2), Scalar(2)).numel() == 0);
  Tensor l = linspace(0, 1, 5);
  BOOST_TEST(l.dtype() == kFloat);
  CHECK_VALUES(l, {0, 0.25, 0.5, 0.75, 1});
  CHECK_VALUES(linspace(-1, 1, 1), {-1});
  BOOST_TEST(linspace(0, 1, 0).numel() == 0);
  CHECK_VALUES(linspace(2, -2, 3, kDouble), {2, 0, -2});
  CHECK_VALUES(eye(3), {1, 0, 0, 0, 1, 0, 0, 0, 1});
  Tensor r = eye(2, 3, kInt);
  BOOST_TEST(r.dtype() == kInt);
  CHECK_SIZES(r, {2, 3});
  CHECK_VALUES(r, {1, 0, 0, 0, 1, 0});
  CHECK_ERROR(ValueError, arange(Scalar(0), Scalar(5), Scalar(0)), "step must be nonzero");
  CHECK_ERROR(ValueError, arange(Scalar(5), Scalar(0), Scalar(1)),
              "bound inconsistent with step sign");
}

BOOST_AUTO_TEST_CASE(random_factories_repeat_after_manual_seed) {
  manual_seed(42);
  Tensor a = rand({100});
  Tensor b = randn({100});
  Tensor c = randint(3, {100});
  manual_seed(42);
  BOOST_TEST(rand({100}).equal(a));
  BOOST_TEST(randn({100}).equal(b));
  BOOST_TEST(randint(3, {100}).equal(c));
  BOOST_TEST(!rand({100}).equal(a));  // the generator moved on
  manual_seed(43);
  BOOST_TEST(!rand({100}).equal(a));

  BOOST_TEST(a.dtype() == kFloat);
  BOOST_TEST((a >= 0).all().item<bool>());
  BOOST_TEST((a < 1).all().item<bool>());
  BOOST_TEST(c.dtype() == kLong);
  BOOST_TEST((c >= 0).all().item<bool>());
  BOOST_TEST((c < 3).all().item<bool>());
  BOOST_TEST(any(c == 0).item<bool>());
  BOOST_TEST(any(c == 2).item<bool>());
  manual_seed(7);
  Tensor r = randint(-5, 5, {1000}, kShort);
  BOOST_TEST(r.dtype() == kShort);
  BOOST_TEST(r.min().item<int64_t>() == -5);
  BOOST_TEST(r.max().item<int64_t>() == 4);
  Tensor n = randn({20000}, kDouble);
  BOOST_TEST(std::abs(n.mean().item<double>()) < 0.05);
  BOOST_TEST(std::abs(n.std().item<double>() - 1) < 0.05);
  Tensor u = rand({20000}, kDouble);
  BOOST_TEST(std::abs(u.mean().item<double>() - 0.5) < 0.02);
}

BOOST_AUTO_TEST_CASE(like_factories_follow_the_tensor_unless_told) {
  Tensor x = tensor({{1, 2, 3}, {4, 5, 6}}, kShort);
  Tensor z = zeros_like(x);
  BOOST_TEST(z.dtype() == kShort);
  CHECK_SIZES(z, {2, 3});
  CHECK_VALUES(ones_like(x, kDouble), {1, 1, 1, 1, 1, 1});
  BOOST_TEST(ones_like(x, kDouble).dtype() == kDouble);
  CHECK_VALUES(full_like(x, 9), {9, 9, 9, 9, 9, 9});
  BOOST_TEST(empty_like(x).sizes().vec() == x.sizes().vec());
  Tensor f = tensor({1., 2.});
  manual_seed(3);
  Tensor r = rand_like(f);
  BOOST_TEST(r.dtype() == kFloat);
  CHECK_SIZES(r, {2});
  BOOST_TEST(randn_like(f, kDouble).dtype() == kDouble);
  Tensor ri = randint_like(x, 0, 4);
  BOOST_TEST(ri.dtype() == kShort);
  BOOST_TEST((ri < 4).all().item<bool>());
  BOOST_TEST(zeros_like(tensor(1.0, kHalf)).dim() == 0);
}

BOOST_AUTO_TEST_CASE(tensor_options) {
  TensorOptions o = TensorOptions().dtype(kInt).device(Device(kCPU));
  BOOST_TEST(o.dtype_opt().value() == kInt);
  BOOST_TEST(o.device() == Device(kCPU));
  BOOST_TEST(!o.requires_grad());
  Tensor t = zeros({2}, o);
  BOOST_TEST(t.dtype() == kInt);
  BOOST_TEST(t.device() == Device("cpu"));
  BOOST_TEST(t.is_cpu());
  BOOST_TEST(!t.is_cuda());
  Tensor g = ones({2}, kiln::requires_grad());
  BOOST_TEST(g.requires_grad());
  BOOST_TEST(zeros({1}, kiln::dtype(kDouble)).dtype() == kDouble);
  BOOST_TEST(zeros({1}, kiln::device("cpu")).is_cpu());
  TensorOptions like = t.options();
  BOOST_TEST(like.dtype_opt().value() == kInt);
  BOOST_TEST(TensorOptions().dtype_or(kFloat) == kFloat);
  Tensor x = zeros({2});
  x.set_requires_grad(true);
  BOOST_TEST(x.requires_grad());
  x.requires_grad_(false);
  BOOST_TEST(!x.requires_grad());
  CHECK_ERROR(Error, zeros({2}, TensorOptions().dtype(kLong).requires_grad(true)),
              "only tensors of floating point dtype can require gradients");
}

BOOST_AUTO_TEST_SUITE_END()
