// libtorch's API shapes that code ported by renaming torch to kiln relies on: const in-place
// methods, data()/set_data, layout, kiln::tensor's dtype rules, assignment through views, the
// default dtype, random_, binary max/min, resize_ and the softmax forms. Expected behaviour is
// PyTorch 1.13's (each case says what torch does).
#include "tensor_test.h"

#include <cmath>
#include <sstream>

using namespace kiln;
using kiln::indexing::Slice;

namespace {

// Sets the default dtype for a scope (libtorch's tests have AutoDefaultDtypeMode).
struct DefaultDtype {
  explicit DefaultDtype(ScalarType t) : previous(get_default_dtype()) {
    set_default_dtype(scalarTypeToTypeMeta(t));
  }
  ~DefaultDtype() { set_default_dtype(previous); }
  TypeMeta previous;
};

}  // namespace

BOOST_AUTO_TEST_SUITE(libtorch_shapes)

BOOST_AUTO_TEST_CASE(inplace_methods_are_const_and_return_self) {
  const Tensor x = ones({3});
  const Tensor& r = x.mul_(2).add_(1);
  BOOST_TEST(&r == &x);
  CHECK_VALUES(x, {3, 3, 3});
  BOOST_TEST(x._version() == 2u);
  Tensor w = ones({2}, requires_grad());
  (w * w).sum().backward();
  w.grad().zero_();  // libtorch's idiom: grad() is const
  CHECK_VALUES(w.grad(), {0, 0});
  w.mutable_grad().fill_(4);
  CHECK_VALUES(w.grad(), {4, 4});
  const Tensor leaf = zeros({2});
  leaf.requires_grad_();
  BOOST_TEST(leaf.requires_grad());
}

BOOST_AUTO_TEST_CASE(data_is_an_untracked_leaf_sharing_storage) {
  Tensor x = ones({3}, requires_grad());
  Tensor y = x * 2;
  Tensor d = y.data();
  BOOST_TEST(d.is_leaf());
  BOOST_TEST(!d.requires_grad());
  BOOST_TEST(d.data_ptr() == y.data_ptr());
  BOOST_TEST(equal(d, y));
  BOOST_TEST(!d.impl().view);
  // the libtorch optimizer idiom: update the parameter's data without recording
  x.data().sub_(0.5);
  CHECK_VALUES(x, {0.5, 0.5, 0.5});
  BOOST_TEST(x.is_leaf());
}

BOOST_AUTO_TEST_CASE(set_data_swaps_the_data_and_keeps_the_autograd_identity) {
  Tensor x = randn({5});
  Tensor y = randn({5});
  BOOST_TEST(!equal(x, y));
  x.set_data(y);
  BOOST_TEST(equal(x, y));
  BOOST_TEST(x.data_ptr<float>() == y.data_ptr<float>());
  // a leaf that requires grad keeps requiring grad and gets gradients of its new shape and dtype
  Tensor w = ones({2}, requires_grad());
  (w * 3).sum().backward();
  CHECK_VALUES(w.grad(), {3, 3});
  w.set_data(zeros({3}, kDouble));
  BOOST_TEST(w.requires_grad());
  BOOST_TEST(w.is_leaf());
  BOOST_TEST(w.dtype() == kDouble);
  w.mutable_grad() = Tensor();
  (w * 2).sum().backward();
  BOOST_TEST(w.grad().dtype() == kDouble);
  CHECK_VALUES(w.grad(), {2, 2, 2});
}

BOOST_AUTO_TEST_CASE(layout_is_strided) {
  Tensor x = empty({3, 4});
  BOOST_TEST((x.layout() == kStrided));
  BOOST_TEST((x.to(kInt).layout() == kStrided));
  BOOST_TEST((TensorOptions().layout(kStrided).layout() == kStrided));
  BOOST_TEST((tensor({1.1, 2.2}, dtype(kInt)).layout() == kStrided));
}

// torch::tensor's rules (PyTorch 1.13): int and int64_t give int64, float and double the default
// dtype, other types their own; mixed lists are refused.
BOOST_AUTO_TEST_CASE(tensor_infers_libtorchs_dtypes) {
  BOOST_TEST(tensor(123).dtype() == kLong);
  BOOST_TEST(tensor(123.456f).dtype() == kFloat);
  BOOST_TEST(tensor(true).dtype() == kBool);
  BOOST_TEST(tensor(std::vector<int>{1, 2, 3}).dtype() == kLong);
  BOOST_TEST(tensor(ArrayRef<int>({1, 2, 3})).dtype() == kLong);
  BOOST_TEST(tensor(std::vector<int64_t>{1, 2}).dtype() == kLong);
  BOOST_TEST(tensor(std::vector<int16_t>{1, 2}).dtype() == kShort);
  BOOST_TEST(tensor(std::vector<uint8_t>{1, 2}).dtype() == kByte);
  BOOST_TEST(tensor(std::vector<double>{1.5, 2.25}).dtype() == kFloat);
  BOOST_TEST(tensor({{true, false}}).dtype() == kBool);
  CHECK_VALUES(tensor(std::vector<double>{1.5, 2.25, 3.125}), {1.5, 2.25, 3.125});
  CHECK_SIZES(tensor({{{}, {}}}), {1, 2, 0});
  CHECK_ERROR(TypeError, tensor({{{1, 2.0}, {1, 2.0}}}),
              "Expected all elements of the tensor to have the same scalar type: Int, but got "
              "element of scalar type: Double");
  CHECK_ERROR(TypeError, tensor({{{true}, {2}}}),
              "Expected all elements of the tensor to have the same scalar type: Bool, but got "
              "element of scalar type: Int");
  CHECK_ERROR(ValueError, tensor({{{2, 3, 4}, {{5, 6}, {7}}}}),
              "Expected all sub-lists to have sizes: [2] (e.g. {5, 6}), but got sub-list {7} "
              "with sizes: [1]");
  std::ostringstream printed;
  printed << detail::TensorDataContainer({{{1.1, 2.2}}, {{3.3, 4.4}}});
  BOOST_TEST(printed.str() == "{{{1.1, 2.2}}, {{3.3, 4.4}}}");
}

BOOST_AUTO_TEST_CASE(default_dtype_is_settable_and_used) {
  BOOST_TEST((get_default_dtype() == kFloat));
  {
    DefaultDtype mode(kDouble);
    BOOST_TEST(typeMetaToScalarType(get_default_dtype()) == kDouble);
    BOOST_TEST(tensor({1.5, 2.25}).dtype() == kDouble);
    BOOST_TEST(tensor(123.456f).dtype() == kDouble);
    BOOST_TEST(tensor({}).dtype() == kDouble);
    BOOST_TEST(zeros({2}).dtype() == kDouble);
    BOOST_TEST(rand({2}).dtype() == kDouble);
    BOOST_TEST(arange(0., 5).dtype() == kDouble);
    BOOST_TEST(arange(0, 5).dtype() == kLong);
    BOOST_TEST((ones({2}, kInt) * 1.5).dtype() == kDouble);  // a float number promotes to it
    BOOST_TEST(sqrt(ones({2}, kInt)).dtype() == kDouble);
  }
  BOOST_TEST(zeros({2}).dtype() == kFloat);
  CHECK_ERROR(TypeError, set_default_dtype(scalarTypeToTypeMeta(kInt)),
              "only floating-point types are supported as the default type");
  BOOST_TEST(TypeMeta::Make<double>().itemsize() == 8u);
}

BOOST_AUTO_TEST_CASE(assigning_to_a_view_writes_through) {
  Tensor expected = empty({2, 2}, kBool);
  expected[0][0] = true;
  expected[0][1] = false;
  expected[1] = tensor({true, true});
  CHECK_VALUES(expected, {1, 0, 1, 1});
  Tensor x = zeros({2, 3});
  x[1] = 7;
  x.index({Slice(), 0}) = tensor({1.0f, 2.0f});
  CHECK_VALUES(x, {1, 0, 0, 2, 7, 7});
  BOOST_TEST(x._version() == 2u);
  Tensor a = ones({2});
  Tensor b = a;  // a named tensor rebinds: no write
  b = zeros({2});
  CHECK_VALUES(a, {1, 1});
}

BOOST_AUTO_TEST_CASE(random_forms) {
  manual_seed(0);
  Tensor f = empty({2000}).random_();
  BOOST_TEST(f.min().item<double>() >= 0.0);
  BOOST_TEST(f.max().item<double>() <= std::ldexp(1.0, 24));
  BOOST_TEST(f.max().item<double>() > std::ldexp(1.0, 23));  // spreads over [0, 2^24]
  BOOST_TEST(equal(f, f.floor_divide(ones({1}))));           // integers
  Tensor b = empty({2000}, kByte).random_();
  BOOST_TEST(b.max().item<int64_t>() > 200);
  Tensor r = empty({1000}, kLong).random_(3, 7);
  BOOST_TEST(r.min().item<int64_t>() == 3);
  BOOST_TEST(r.max().item<int64_t>() == 6);
  Tensor c = empty({1000}, kChar).random_(-5, std::nullopt);
  BOOST_TEST(c.min().item<int64_t>() == -5);
  BOOST_TEST(c.max().item<int64_t>() > 100);  // up to 127
  CHECK_ERROR(ValueError, empty({2}, kChar).random_(200, std::nullopt),
              "expects 'from' to be less than or equal to 127");
}

BOOST_AUTO_TEST_CASE(binary_max_and_min_are_maximum_and_minimum) {
  Tensor a = tensor({1.0, 5.0, std::nan("")});
  Tensor b = tensor({3.0, 2.0, 0.0});
  BOOST_TEST(equal(isnan(max(a, b)), tensor({false, false, true})));
  CHECK_VALUES(max(a, b).index({Slice(0, 2)}), {3, 5});
  CHECK_VALUES(min(a, b).index({Slice(0, 2)}), {1, 2});
  CHECK_VALUES(a.index({Slice(0, 2)}).max(b.index({Slice(0, 2)})), {3, 5});
  BOOST_TEST(max(a.index({Slice(0, 2)})).item<double>() == 5.0);  // the reduction stays
}

// PyTorch 1.13: resize_ keeps the storage while it is large enough (strides become contiguous
// unless the sizes do not change), grows it keeping the old elements, does not bump the
// version, and refuses tensors that require grad and storage it cannot own.
BOOST_AUTO_TEST_CASE(resize_follows_pytorch) {
  Tensor a = arange(6.);
  a.resize_({2, 2});
  CHECK_SIZES(a, {2, 2});
  BOOST_TEST(tensor_test::strides(a) == std::vector<int64_t>({2, 1}));
  CHECK_VALUES(a, {0, 1, 2, 3});
  BOOST_TEST(a._version() == 0u);
  a.resize_({3, 3});
  CHECK_VALUES(a.flatten().index({Slice(0, 6)}), {0, 1, 2, 3, 4, 5});
  BOOST_TEST(a.storage()->nbytes() >= 36u);
  Tensor base = arange(10.);
  Tensor v = base.index({Slice(2, 4)});
  v.resize_({3});
  CHECK_VALUES(v, {2, 3, 4});
  v.resize_({20});  // grows the storage base shares
  BOOST_TEST(v.storage_offset() == 2);
  BOOST_TEST(base.is_same_storage(v));
  CHECK_VALUES(base, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  Tensor t = arange(6.).view({2, 3}).t();
  t.resize_({3, 2});  // same sizes: strides kept
  BOOST_TEST(tensor_test::strides(t) == std::vector<int64_t>({1, 3}));
  Tensor x = zeros({3}, requires_grad());
  CHECK_ERROR(Error, x.resize_({2}), "cannot resize variables that require grad");
  {
    NoGradGuard no_grad;
    CHECK_ERROR(Error, x.resize_({2}), "cannot resize variables that require grad");
  }
  CHECK_ERROR(Error, (x * 2).resize_({2}), "cannot resize variables that require grad");
  float data[3] = {1, 2, 3};
  Tensor blob = from_blob(data, {3});
  CHECK_ERROR(Error, blob.resize_({10}), "Trying to resize storage that is not resizable");
  blob.resize_({2});
  CHECK_VALUES(blob, {1, 2});
  CHECK_ERROR(ValueError, zeros({2}).resize_({-1}), "negative dimension");
}

BOOST_AUTO_TEST_CASE(softmax_free_functions_and_methods) {
  Tensor x = tensor({{1.0, 2.0, 3.0}, {1000.0, 0.0, -1.0}});
  Tensor s = softmax(x, 1);
  BOOST_TEST(allclose(s, nn::functional::softmax(x, 1)));
  BOOST_TEST(allclose(x.softmax(-1), s));
  BOOST_TEST(allclose(x.log_softmax(1), log_softmax(x, 1)));
  BOOST_TEST(allclose(log_softmax(x, 1).exp(), s));
  // PyTorch 1.13: torch.softmax(torch.tensor([1., 2., 3.]), 0)
  BOOST_TEST(allclose(softmax(tensor({1.0, 2.0, 3.0}), 0),
                      tensor({0.09003057, 0.24472847, 0.66524096}), 1e-6, 1e-7));
  BOOST_TEST(softmax(ones({2}, kInt), 0, kDouble).dtype() == kDouble);
}

BOOST_AUTO_TEST_SUITE_END()
