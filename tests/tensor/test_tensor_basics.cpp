// Tensor basics: printing through operator<<, item, to(dtype), clone, copy_, data_ptr, sizes and
// strides, equal and allclose.
#include "tensor_test.h"

#include <cmath>
#include <limits>
#include <sstream>

using namespace kiln;
using tensor_test::vals;

namespace {

std::string printed(const Tensor& t) {
  std::ostringstream out;
  out << t;
  return out.str();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(basics)

// PyTorch 1.13's repr of the same tensors, with "torch." replaced by "kiln.".
BOOST_AUTO_TEST_CASE(printing_matches_pytorch) {
  BOOST_TEST(printed(tensor({{1., 2.}, {3., 4.}})) == "tensor([[1., 2.],\n        [3., 4.]])");
  BOOST_TEST(printed(tensor(3)) == "tensor(3)");
  BOOST_TEST(printed(tensor({1, 2}, kInt)) == "tensor([1, 2], dtype=kiln.int32)");
  BOOST_TEST(printed(tensor({true, false})) == "tensor([ True, False])");
  BOOST_TEST(printed(tensor(2.5, kDouble)) == "tensor(2.5000, dtype=kiln.float64)");
  BOOST_TEST(printed(tensor({1., 2.}, requires_grad())) == "tensor([1., 2.], requires_grad=True)");
  BOOST_TEST(printed(zeros({2, 0})) == "tensor([], size=(2, 0))");
  BOOST_TEST(printed(tensor({0.1, 1000.})) == "tensor([1.0000e-01, 1.0000e+03])");
  BOOST_TEST(printed(arange(6).view({2, 3}).t()) ==
             "tensor([[0, 3],\n        [1, 4],\n        [2, 5]])");
  BOOST_TEST(printed(tensor({1.5, 2.}, kHalf)) == "tensor([1.5000, 2.0000], dtype=kiln.float16)");
  BOOST_TEST(printed(tensor({{-1, 2}, {3, 4}}, kChar)) ==
             "tensor([[-1,  2],\n        [ 3,  4]], dtype=kiln.int8)");
  BOOST_TEST(tensor(3).str() == "tensor(3)");
  BOOST_TEST(Tensor().str() == "[ undefined tensor ]");
}

BOOST_AUTO_TEST_CASE(item_converts_one_element) {
  BOOST_TEST(tensor(2.5).item<float>() == 2.5f);
  BOOST_TEST(tensor(2.5).item<double>() == 2.5);
  BOOST_TEST(tensor(2.5).item<int64_t>() == 2);
  BOOST_TEST(tensor(-7, kChar).item<int>() == -7);
  BOOST_TEST(tensor(true).item<bool>());
  BOOST_TEST(tensor({{5}}).item<int64_t>() == 5);  // one element, any rank
  BOOST_TEST(tensor(1.5, kBFloat16).item<float>() == 1.5f);
  Scalar s = tensor(3).item();
  BOOST_TEST(s.is_integral(false));
  BOOST_TEST(s.to<int64_t>() == 3);
  BOOST_TEST(tensor(0.5).item().is_floating_point());
  BOOST_TEST(tensor(false).item().is_bool());
  BOOST_TEST(arange(10)[7].item<int64_t>() == 7);
  CHECK_ERROR(ValueError, tensor({1, 2}).item<int64_t>(),
              "a Tensor with 2 elements cannot be converted to Scalar");
  CHECK_ERROR(ValueError, zeros({0}).item<float>(), "a Tensor with 0 elements");
}

BOOST_AUTO_TEST_CASE(to_converts_dtype_and_returns_self_when_nothing_changes) {
  Tensor x = tensor({-1.75, 0.5, 2.5});
  Tensor i = x.to(kInt);
  BOOST_TEST(i.dtype() == kInt);
  CHECK_VALUES(i, {-1, 0, 2});  // truncation toward zero
  CHECK_VALUES(x.to(kBool), {1, 1, 1});
  CHECK_VALUES(tensor({0., -0., 0.25}).to(kBool), {0, 0, 1});
  CHECK_VALUES(tensor({300}).to(kByte), {44});  // integer narrowing wraps
  CHECK_VALUES(tensor({70000.}).to(kHalf), {std::numeric_limits<double>::infinity()});
  BOOST_TEST(x.to(kFloat).is_same(x));
  BOOST_TEST(!x.to(kFloat, /*copy=*/true).is_same_storage(x));
  BOOST_TEST(x.to(Device(kCPU)).is_same(x));
  BOOST_TEST(x.to(Device(kCPU), kDouble).dtype() == kDouble);
  BOOST_TEST(x.to(TensorOptions().dtype(kLong)).dtype() == kLong);
  BOOST_TEST(x.to(tensor({1}, kShort)).dtype() == kShort);
  BOOST_TEST(x.cpu().is_same(x));
}

BOOST_AUTO_TEST_CASE(clone_is_independent_and_contiguous) {
  Tensor x = arange(6, kFloat).view({2, 3}).t();
  Tensor c = x.clone();
  BOOST_TEST(c.is_contiguous());
  BOOST_TEST(c.equal(x));
  c.fill_(0);
  BOOST_TEST(x.sum().item<float>() == 15.0f);
  BOOST_TEST(kiln::clone(x).equal(x));
}

BOOST_AUTO_TEST_CASE(copy_broadcasts_and_converts) {
  Tensor dst = zeros({2, 3}, kInt);
  dst.copy_(tensor({1.9, -2.9, 3.0}));
  CHECK_VALUES(dst, {1, -2, 3, 1, -2, 3});
  Tensor f = zeros({3, 2}, kHalf);
  f.copy_(tensor({{1}, {2}, {3}}, kChar));
  CHECK_VALUES(f, {1, 1, 2, 2, 3, 3});
  Tensor b = zeros({2}, kBool);
  b.copy_(tensor({0.0, 0.5}));
  CHECK_VALUES(b, {0, 1});
  Tensor x = arange(6, kFloat).view({2, 3});
  x.t().copy_(tensor({{10., 11.}, {12., 13.}, {14., 15.}}));  // through a transposed view
  CHECK_VALUES(x, {10, 12, 14, 11, 13, 15});
  Tensor y = arange(5, kFloat);
  y.narrow(0, 1, 4).copy_(y.narrow(0, 0, 4));  // overlapping source and destination
  CHECK_VALUES(y, {0, 0, 1, 2, 3});
  CHECK_ERROR(ValueError, zeros({2}).copy_(zeros({3})),
              "The size of tensor a (2) must match the size of tensor b (3) at non-singleton "
              "dimension 0");
  CHECK_ERROR(ValueError, zeros({2}).copy_(zeros({2, 2})),
              "the source of shape [2, 2] cannot be broadcast to the destination's shape [2]");
}

BOOST_AUTO_TEST_CASE(data_ptr_checks_the_type) {
  Tensor x = tensor({1., 2.});
  float* p = x.data_ptr<float>();
  BOOST_TEST(p[1] == 2.0f);
  BOOST_TEST(x.data_ptr() == static_cast<void*>(p));
  BOOST_TEST(x[1].data_ptr<float>() == p + 1);
  CHECK_ERROR(TypeError, x.data_ptr<int64_t>(), "expected scalar type int64 but found float32");
  CHECK_ERROR(TypeError, tensor({1}).data_ptr<double>(),
              "expected scalar type float64 but found int64");
  BOOST_TEST(tensor({1}, kHalf).data_ptr<Half>() != nullptr);
}

BOOST_AUTO_TEST_CASE(sizes_strides_and_counts) {
  Tensor x = zeros({2, 3, 4}, kShort);
  BOOST_TEST(x.sizes().vec() == std::vector<int64_t>({2, 3, 4}));
  BOOST_TEST(x.strides().vec() == std::vector<int64_t>({12, 4, 1}));
  BOOST_TEST(x.numel() == 24);
  BOOST_TEST(x.dim() == 3);
  BOOST_TEST(x.ndimension() == 3);
  BOOST_TEST(x.size(-1) == 4);
  BOOST_TEST(x.size(0) == 2);
  BOOST_TEST(x.stride(1) == 4);
  BOOST_TEST(x.stride(-3) == 12);
  BOOST_TEST(x.element_size() == 2u);
  BOOST_TEST(x.nbytes() == 48u);
  BOOST_TEST(x.is_contiguous());
  BOOST_TEST(x.scalar_type() == kShort);
  BOOST_TEST(!x.is_floating_point());
  BOOST_TEST(x.storage_offset() == 0);
  BOOST_TEST(x.defined());
  BOOST_TEST(!Tensor().defined());
  Tensor t = x.transpose(0, 2);
  BOOST_TEST(!t.is_contiguous());
  BOOST_TEST(t.strides().vec() == std::vector<int64_t>({1, 4, 12}));
  Tensor s = tensor(1.0);
  BOOST_TEST(s.dim() == 0);
  BOOST_TEST(s.numel() == 1);
  BOOST_TEST(s.sizes().empty());
  BOOST_TEST(zeros({3, 1}).expand({3, 5}).is_contiguous() == false);
  BOOST_TEST(zeros({1, 4}).is_contiguous());
}

BOOST_AUTO_TEST_CASE(equal_and_allclose) {
  Tensor a = tensor({1., 2., 3.});
  BOOST_TEST(a.equal(tensor({1., 2., 3.})));
  BOOST_TEST(!a.equal(tensor({1., 2., 4.})));
  BOOST_TEST(!a.equal(tensor({1., 2.})));        // sizes differ
  BOOST_TEST(!a.equal(tensor({{1., 2., 3.}})));  // ranks differ
  BOOST_TEST(equal(zeros({0}), zeros({0})));
  BOOST_TEST(a.allclose(a + 1e-6));
  BOOST_TEST(!a.allclose(a + 1e-3));
  BOOST_TEST(a.allclose(a + 1e-3, /*rtol=*/0, /*atol=*/1e-2));
  BOOST_TEST(allclose(a * 1.001, a, /*rtol=*/1e-2));
  double nan = std::numeric_limits<double>::quiet_NaN();
  double inf = std::numeric_limits<double>::infinity();
  Tensor n = tensor({1.0, nan, inf});
  BOOST_TEST(!n.allclose(n));
  BOOST_TEST(n.allclose(n, 1e-5, 1e-8, /*equal_nan=*/true));
  BOOST_TEST(!n.equal(n));  // NaN is not equal to itself
  BOOST_TEST(!tensor({inf}).allclose(tensor({-inf})));
  CHECK_VALUES(isclose(tensor({1.0, 2.0}), tensor({1.0, 2.1})), {1, 0});
  CHECK_VALUES(isnan(n), {0, 1, 0});
  BOOST_TEST(tensor({1, 2}).equal(tensor({1, 2})));
}

BOOST_AUTO_TEST_CASE(scalar_operands_on_the_left) {
  Tensor x = tensor({1., 2., 4.});
  CHECK_VALUES(2 - x, {1, 0, -2});
  CHECK_VALUES(1 / x, {1, 0.5, 0.25});
  CHECK_VALUES(3 * x, {3, 6, 12});
  CHECK_VALUES(0.5 + x, {1.5, 2.5, 4.5});
  CHECK_VALUES(pow(2, x), {2, 4, 16});
  CHECK_VALUES(x.pow(2), {1, 4, 16});
  CHECK_VALUES(x.square(), {1, 4, 16});
  CHECK_VALUES(x == 2, {0, 1, 0});
  CHECK_VALUES(x != 2, {1, 0, 1});
}

BOOST_AUTO_TEST_SUITE_END()
