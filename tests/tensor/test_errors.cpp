// Every user error path: the exception's kiln type and its text (PyTorch's where kiln follows it).
#include "tensor_test.h"

#include <cmath>
#include <type_traits>

using namespace kiln;

BOOST_AUTO_TEST_SUITE(errors)

static_assert(std::is_base_of_v<Error, IndexError>);
static_assert(std::is_base_of_v<Error, ValueError>);
static_assert(std::is_base_of_v<Error, TypeError>);
static_assert(std::is_base_of_v<Error, NotImplementedError>);
static_assert(std::is_base_of_v<std::runtime_error, Error>);

BOOST_AUTO_TEST_CASE(exception_types_are_kiln_errors) {
  try {
    zeros({2, 3}).sum(2);
    BOOST_ERROR("no exception");
  } catch (const Error& e) {  // catchable as the base
    BOOST_TEST(dynamic_cast<const IndexError*>(&e) != nullptr);
  }
}

BOOST_AUTO_TEST_CASE(shape_mismatch) {
  CHECK_ERROR(ValueError, zeros({2, 3}) + zeros({2, 4}),
              "The size of tensor a (3) must match the size of tensor b (4) at non-singleton "
              "dimension 1");
  CHECK_ERROR(ValueError, zeros({6}).view({4}), "shape '[4]' is invalid for input of size 6");
  CHECK_ERROR(ValueError, zeros({6}).reshape({-1, -1}), "only one dimension can be inferred");
  CHECK_ERROR(ValueError, cat({zeros({2, 3}), zeros({2, 4})}),
              "Sizes of tensors must match except in dimension 0");
  CHECK_ERROR(ValueError, cat({zeros({2}), zeros({2, 2})}),
              "Tensors must have same number of dimensions");
  CHECK_ERROR(ValueError, stack({zeros({2}), zeros({3})}),
              "stack expects each tensor to be equal size");
  CHECK_ERROR(ValueError, zeros({2, 3}).permute({0}), "number of dims don't match in permute");
  CHECK_ERROR(ValueError, zeros({2}).repeat({}), "number of repeat dims (0) can not be smaller");
  CHECK_ERROR(ValueError, masked_fill(zeros({2}), zeros({3, 2}, kBool), 1), "does not broadcast");
}

BOOST_AUTO_TEST_CASE(dimension_out_of_range) {
  CHECK_ERROR(IndexError, zeros({2, 3}).sum(2),
              "imension out of range (expected to be in range of [-2, 1], but got 2)");
  CHECK_ERROR(IndexError, zeros({2, 3}).sum(-3),
              "imension out of range (expected to be in range of [-2, 1], but got -3)");
  CHECK_ERROR(IndexError, zeros({2, 3}).size(2), "but got 2");
  CHECK_ERROR(IndexError, zeros({2, 3}).transpose(0, 5), "[-2, 1], but got 5");
  CHECK_ERROR(IndexError, zeros({2, 3}).unsqueeze(3), "[-3, 2], but got 3");
  CHECK_ERROR(IndexError, zeros({2, 3}).select(2, 0), "but got 2");
  CHECK_ERROR(IndexError, max(zeros({4}), 1), "[-1, 0], but got 1");
  CHECK_ERROR(IndexError, cat({zeros({2})}, 1), "[-1, 0], but got 1");
  CHECK_ERROR(IndexError, zeros({2}).select(0, 2), "index 2 out of range");
  CHECK_ERROR(IndexError, zeros({2, 3})[-3], "index -3 out of range");
  CHECK_ERROR(IndexError, tensor(1.0).select(0, 0), "cannot be applied to a 0-dim tensor");
  CHECK_ERROR(IndexError, tensor(1.0).unbind(), "tensor has no dimensions");
  CHECK_ERROR(IndexError, zeros({0, 3}).amax({0}),
              "Expected reduction dim 0 to have non-zero size");
  CHECK_ERROR(IndexError, max(zeros({0})), "Expected reduction dim to be specified");
  CHECK_ERROR(IndexError, zeros({3}).narrow(0, 4, 1), "start (4) out of range");
  CHECK_ERROR(ValueError, zeros({3}).narrow(0, 1, 3), "exceeds dimension size");
  CHECK_ERROR(ValueError, zeros({2, 2}).sum({0, 0}), "appears multiple times");
}

BOOST_AUTO_TEST_CASE(view_incompatible_with_strides) {
  CHECK_ERROR(ValueError, zeros({2, 3}).t().view({6}),
              "view size is not compatible with input tensor's size and stride");
  CHECK_ERROR(ValueError, zeros({4, 4}).slice(0, 0, std::nullopt, 2).view({8}),
              "Use .reshape(...) instead.");
  CHECK_ERROR(ValueError, zeros({2, 3, 4}).t(), "t(): expects a tensor with <= 2 dimensions");
}

BOOST_AUTO_TEST_CASE(bool_arithmetic) {
  Tensor b = tensor({true, false});
  CHECK_ERROR(TypeError, b - b,
              "ubtraction, the `-` operator, with two bool tensors is not supported. Use the `^` "
              "or `logical_xor()` operator instead.");
  CHECK_ERROR(TypeError, -b,
              "egation, the `-` operator, on a bool tensor is not supported. If you are trying to "
              "invert a mask, use the `~` or `logical_not()` operator instead.");
  CHECK_ERROR(TypeError, b.neg_(), "egation, the `-` operator, on a bool tensor");
  CHECK_ERROR(TypeError, floor_divide(b, b), "bool");
  CHECK_ERROR(TypeError, bitwise_and(tensor({1.0}), tensor({1.0})),
              "only integral and bool tensors are supported");
  CHECK_ERROR(TypeError, ~tensor({1.0}), "only integral and bool tensors are supported");
  CHECK_ERROR(TypeError, mm(zeros({2, 2}, kBool), zeros({2, 2}, kBool)), "bool");
}

BOOST_AUTO_TEST_CASE(integer_division_by_zero) {
  Tensor x = tensor({1, 2, 3});
  CHECK_ERROR(Error, floor_divide(x, 0), "ZeroDivisionError");
  CHECK_ERROR(Error, floor_divide(x, tensor({1, 0, 1})), "ZeroDivisionError");
  CHECK_ERROR(Error, x % 0, "ZeroDivisionError");
  CHECK_ERROR(Error, fmod(tensor({1}, kByte), 0), "ZeroDivisionError");
  // true division of integers is floating: no error
  Tensor q = x / 0;
  BOOST_TEST(q.dtype() == kFloat);
  BOOST_TEST(std::isinf(q[0].item<float>()));
  CHECK_ERROR(Error, pow(tensor({2, 3}), -1),
              "Integers to negative integer powers are not allowed.");
}

BOOST_AUTO_TEST_CASE(matrix_product_shapes) {
  CHECK_ERROR(ValueError, mm(zeros({2, 3}), zeros({4, 5})),
              "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)");
  CHECK_ERROR(ValueError, matmul(zeros({2, 3}), zeros({4, 5})),
              "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)");
  CHECK_ERROR(ValueError, matmul(zeros({2, 2, 3}), zeros({2, 4, 5})), "cannot be multiplied");
  CHECK_ERROR(ValueError, matmul(zeros({3}), zeros({4})), "inconsistent tensor size");
  CHECK_ERROR(ValueError, matmul(tensor(1.0), zeros({2})),
              "both arguments to matmul need to be at least 1D");
  CHECK_ERROR(ValueError, mm(zeros({2}), zeros({2, 2})), "expected 2-D tensors");
  CHECK_ERROR(ValueError, bmm(zeros({2, 2, 3}), zeros({3, 3, 2})), "batch sizes differ");
  CHECK_ERROR(ValueError, bmm(zeros({2, 2, 3}), zeros({2, 4, 2})),
              "expected size 3 for dimension 1");
  CHECK_ERROR(TypeError, mm(zeros({2, 2}), zeros({2, 2}, kDouble)),
              "expected mat1 and mat2 to have the same dtype");
}

BOOST_AUTO_TEST_CASE(index_out_of_range) {
  Tensor x = arange(3, kFloat);
  CHECK_ERROR(IndexError, gather(x, 0, tensor({5})),
              "index 5 is out of bounds for dimension 0 with size 3");
  CHECK_ERROR(IndexError, index_select(x, 0, tensor({5})),
              "index 5 is out of bounds for dimension 0 with size 3");
  CHECK_ERROR(IndexError, index_select(x, 0, tensor({-4})), "out of bounds");
  CHECK_ERROR(TypeError, gather(x, 0, tensor({0}, kInt)), "Expected dtype int64 for index");
  CHECK_ERROR(ValueError, index_select(zeros({2, 2}), 0, zeros({1, 1}, kLong)),
              "Index is supposed to be a vector");
  CHECK_ERROR(ValueError, one_hot(tensor({-1, 0})), "Class values must be non-negative");
  CHECK_ERROR(ValueError, one_hot(tensor({3}), 2), "Class values must be smaller than num_classes");
  CHECK_ERROR(TypeError, one_hot(tensor({1}, kInt)), "one_hot is only applicable to index tensor");
}

BOOST_AUTO_TEST_CASE(in_place_result_that_cannot_be_cast) {
  Tensor i = tensor({1, 2});
  CHECK_ERROR(TypeError, i += 1.5,
              "result type Float can't be cast to the desired output type Long");
  CHECK_ERROR(TypeError, i.add_(tensor({0.5, 0.5})),
              "result type Float can't be cast to the desired output type Long");
  CHECK_ERROR(TypeError, i.div_(2),
              "result type Float can't be cast to the desired output type Long");
  CHECK_ERROR(TypeError, tensor({1}, kInt).exp_(),
              "result type Float can't be cast to the desired output type Int");
  CHECK_ERROR(TypeError, tensor({true}).add_(tensor({1}, kByte)),
              "result type Byte can't be cast to the desired output type Bool");
  CHECK_ERROR(TypeError, tensor({1}, kShort).mul_(tensor({1.0}, kHalf)),
              "result type Half can't be cast to the desired output type Short");
  CHECK_ERROR(TypeError, i.add_(1, 0.5), "alpha must not be a floating point number");
}

BOOST_AUTO_TEST_CASE(in_place_on_an_expanded_tensor) {
  Tensor e = zeros({1}).expand({3});
  const char* text = "unsupported operation: more than one element of the written-to tensor refers "
                     "to a single memory location. Please clone() the tensor before performing the "
                     "operation.";
  CHECK_ERROR(ValueError, e += 1, text);
  CHECK_ERROR(ValueError, e.mul_(tensor({1., 2., 3.})), text);
  CHECK_ERROR(ValueError, e.fill_(2), text);
  CHECK_ERROR(ValueError, e.copy_(tensor({1., 2., 3.})), text);
  CHECK_ERROR(ValueError, e.exp_(), text);
  CHECK_ERROR(ValueError, e.masked_fill_(tensor({true, false, true}), 1), text);
  Tensor ok = zeros({1}).expand({3}).clone();
  ok += 1;
  CHECK_VALUES(ok, {1, 1, 1});
}

BOOST_AUTO_TEST_CASE(scalars_and_grads) {
  CHECK_ERROR(ValueError, tensor({1., 2.}).item<float>(),
              "a Tensor with 2 elements cannot be converted to Scalar");
  CHECK_ERROR(Error, tensor({1, 2}).requires_grad_(),
              "only tensors of floating point dtype can require gradients");
  CHECK_ERROR(Error, tensor({true}).set_requires_grad(true), "(got bool)");
  BOOST_CHECK_NO_THROW(tensor({1, 2}).requires_grad_(false));
  CHECK_ERROR(Error, Tensor().dim(), "undefined tensor");
  CHECK_ERROR(TypeError, mean(tensor({1, 2})), "mean(): could not infer output dtype");
  CHECK_ERROR(TypeError, var(tensor({1, 2})), "only floating point dtypes are supported");
  CHECK_ERROR(TypeError, norm(tensor({1, 2})), "expected a floating point tensor");
  CHECK_ERROR(TypeError, where(tensor({1, 0}), zeros({2}), zeros({2})),
              "expected condition to be a bool tensor");
  CHECK_ERROR(TypeError, masked_fill(zeros({2}), tensor({1, 0}), 1), "expected a bool mask");
  CHECK_ERROR(ValueError, clamp(zeros({2}), std::nullopt, std::nullopt),
              "at least one of 'min' or 'max'");
  CHECK_ERROR(ValueError, randint(3, 3, {2}), "expects 'from' to be less than 'to'");
  CHECK_ERROR(TypeError, rand({2}, kInt), "expects a floating point tensor");
  CHECK_ERROR(ValueError, zeros({-1}), "negative dimension -1");
}

BOOST_AUTO_TEST_CASE(unknown_and_missing_devices) {
  CHECK_ERROR(ValueError, Device("cuda:x"), "invalid device string 'cuda:x'");
  CHECK_ERROR(ValueError, Device(":0"), "invalid device string");
  CHECK_ERROR(ValueError, Device("Not A Device"), "invalid device type");
  BOOST_TEST(Device("cuda:1").index() == 1);
  BOOST_TEST(Device("cuda:1").is_cuda());
  BOOST_TEST(Device("cpu") == Device(kCPU, 0));
  BOOST_TEST(Device("cuda:1").str() == "cuda:1");
  // a well-formed name no plugin provides
  CHECK_ERROR(Error, zeros({2}, Device("nosuchdevice")),
              "device type 'nosuchdevice' is not provided by any loaded plugin");
  if (!is_available(kCUDA)) {
    CHECK_ERROR(Error, zeros({2}, Device("cuda:3")),
                "device type 'cuda' is not provided by any loaded plugin");
    CHECK_ERROR(Error, tensor({1.0}).to(Device("cuda:3")),
                "'cuda' is not provided by any loaded plugin");
  }
  CHECK_ERROR(Error, zeros({2}, Device("cpu:3")), "device cpu:3 does not exist");
  BOOST_TEST(!kiln::devices().empty());
  BOOST_TEST(kiln::devices()[0] == Device(kCPU));
  BOOST_TEST(is_available(kCPU));
}

BOOST_AUTO_TEST_SUITE_END()
