// Size arithmetic (Note [Checked sizes] in core/src/tensor_internal.h): sizes whose element or
// byte count, or whose contiguous strides, overflow int64 are a ValueError naming the operator
// and the sizes, never a too-small buffer, a wrapped numel or a std::length_error.
#include "tensor_test.h"

#include <kiln/sdk/kernel.hpp>
#include <kiln/storage.h>

#include <cstdint>
#include <limits>
#include <stdexcept>

using namespace kiln;

namespace {

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

}  // namespace

BOOST_AUTO_TEST_SUITE(sizes)

BOOST_AUTO_TEST_CASE(factories_refuse_byte_counts_that_overflow) {
  // (2^62 + 1) * 4 bytes wrapped to 4: the fill wrote past a 4-byte buffer
  CHECK_ERROR(ValueError, zeros({(int64_t{1} << 62) + 1}), "empty: sizes [4611686018427387905]",
              "float32", "too large", "the byte count would overflow int64");
  // 2^64 elements wrapped to a numel of 0
  CHECK_ERROR(ValueError, empty({int64_t{1} << 32, int64_t{1} << 32}),
              "sizes [4294967296, 4294967296]", "too large");
  CHECK_ERROR(ValueError, full({int64_t{1} << 61}, 1.0, kDouble), "[2305843009213693952]",
              "float64");
  CHECK_ERROR(ValueError, ones({3, -1}), "empty: negative dimension -1 in sizes [3, -1]");
  Storage* none = nullptr;
  CHECK_ERROR(ValueError, none = new Storage(Device(kCPU), std::numeric_limits<size_t>::max()),
              "allocate: 18446744073709551615 bytes on cpu exceed the largest allocation");
  delete none;
}

BOOST_AUTO_TEST_CASE(empty_tensors_whose_strides_would_overflow_are_refused) {
  // no elements, but the contiguous strides [2^124, 2^62, 1] do not fit
  CHECK_ERROR(ValueError, empty({0, int64_t{1} << 62, int64_t{1} << 62}),
              "[0, 4611686018427387904, 4611686018427387904]", "strides", "no elements");
  Tensor e = empty({0, int64_t{1} << 30, int64_t{1} << 30});
  BOOST_TEST(e.numel() == 0);
  BOOST_TEST(tensor_test::strides(e) == std::vector<int64_t>({int64_t{1} << 60, 1 << 30, 1}),
             boost::test_tools::per_element());
  CHECK_ERROR(ValueError, empty({0}).view({0, int64_t{1} << 62, int64_t{1} << 62}), "view: sizes",
              "strides");
  CHECK_ERROR(ValueError, empty({0}).reshape({int64_t{1} << 62, 0, int64_t{1} << 62}),
              "reshape: sizes", "strides");
}

BOOST_AUTO_TEST_CASE(ranges_with_huge_counts) {
  CHECK_ERROR(ValueError, arange(Scalar(0), Scalar(1e30)), "arange: the range 0 -> 1e+30",
              "more than 2^63 - 1");
  CHECK_ERROR(ValueError, arange(Scalar(0.0), Scalar(std::numeric_limits<double>::infinity())),
              "arange: unsupported range: 0 -> inf");
  CHECK_ERROR(ValueError, arange(Scalar(std::numeric_limits<int64_t>::min()), Scalar(kInt64Max)),
              "arange", "more than 2^63 - 1");
  CHECK_ERROR(ValueError, arange(Scalar(int64_t{1} << 61), kDouble), "arange: sizes", "too large");
  CHECK_ERROR(ValueError, linspace(0, 1, int64_t{1} << 62), "linspace: sizes [4611686018427387904]",
              "too large");
  // int64 bounds a whole range apart: counted and stepped exactly, not through a double
  Tensor a = arange(Scalar(int64_t{0}), Scalar(kInt64Max), Scalar(kInt64Max / 2));
  BOOST_TEST(a.numel() == 3);
  BOOST_TEST(a[2].item<int64_t>() == kInt64Max - 1);
  Tensor b = arange(Scalar(kInt64Max), Scalar(kInt64Max - 3), Scalar(int64_t{-1}));
  BOOST_TEST(b.numel() == 3);
  BOOST_TEST(b[2].item<int64_t>() == kInt64Max - 2);
}

BOOST_AUTO_TEST_CASE(views_check_their_size_products) {
  CHECK_ERROR(ValueError, empty({0}).view({int64_t{1} << 40, int64_t{1} << 40, 0}),
              "view: shape '[1099511627776, 1099511627776, 0]' is too large");
  CHECK_ERROR(ValueError, empty({0}).reshape({-1, int64_t{1} << 40, int64_t{1} << 40}), "reshape",
              "too large");
  CHECK_ERROR(ValueError, zeros({1}).expand({int64_t{1} << 40, int64_t{1} << 40}),
              "expand: sizes [1099511627776, 1099511627776]", "too large");
  CHECK_ERROR(ValueError, zeros({1}).expand({-2}), "expand: negative dimension -2");
  CHECK_ERROR(ValueError, zeros({1}).expand({2, 2}).repeat({int64_t{1} << 62, 4}),
              "repeat: repeats [4611686018427387904, 4]", "overflow int64 in dimension 0");
  CHECK_ERROR(ValueError, zeros({1}).expand({int64_t{1} << 31}).repeat({int64_t{1} << 31}),
              "repeat: sizes [4611686018427387904]", "too large");
  Tensor big = zeros({1}, kByte).expand({int64_t{1} << 62});
  CHECK_ERROR(ValueError, cat({big, big}), "cat(): the sizes in dimension 0",
              "add up to more than 2^63 - 1");
  // (1 + INT64_MAX) wrapped negative and passed the bound: a view of INT64_MAX elements
  CHECK_ERROR(ValueError, zeros({4}).narrow(0, 1, kInt64Max), "narrow", "exceeds dimension size");
  // the span of the first dimension wrapped negative and passed the capacity check
  CHECK_ERROR(ValueError, zeros({4}).as_strided({2, 2}, {kInt64Max, 1}, 0),
              "as_strided: setStorage: sizes [2, 2], strides [9223372036854775807, 1]",
              "need more elements than the storage holds (4)");
  CHECK_ERROR(ValueError, zeros({4}).as_strided({2}, {1}, -1), "negative storage offset -1");
  Tensor s = arange(4).slice(0, 1, 4, kInt64Max);  // (3 + step - 1) / step overflowed
  CHECK_VALUES(s, {1});
  CHECK_SIZES(arange(4).slice(0, 0, 4, 3), {2});
  BOOST_TEST(arange(4).slice(0, 0, 4, 3).stride(0) == 3);
}

BOOST_AUTO_TEST_CASE(convolution_sizes_are_checked) {
  Tensor x = ones({1, 2, 5, 5}), w = ones({2, 2, 3, 3});
  constexpr int64_t kHuge = int64_t{1} << 62;
  // 5 + 2 * 2^62 wrapped negative
  CHECK_ERROR(ValueError, conv2d(x, w, {}, 1, kHuge),
              "conv2d: input of size [1, 2, 5, 5] with padding (4611686018427387904, "
              "4611686018427387904), and weight of size [2, 2, 3, 3] with dilation (1, 1): the "
              "padded sizes overflow int64");
  CHECK_ERROR(ValueError, conv2d(x, w, {}, 1, 0, kHuge), "conv2d", "dilation (4611686018427387904",
              "overflow int64");
  // no output channels, so any groups divide them: 4 * 2^62 wrapped to 0
  CHECK_ERROR(ValueError, conv2d(ones({1, 0, 5, 5}), ones({0, 4, 3, 3}), {}, 1, 0, 1, kHuge),
              "conv2d: given groups=4611686018427387904 and weight of size [0, 4, 3, 3], the "
              "input channels (weight size 1 * groups) overflow int64");
  BOOST_TEST(conv2d(x, w, {}, 1, 1).sizes().vec() == std::vector<int64_t>({1, 2, 5, 5}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(from_blob_checks_the_extent) {
  float data[4] = {1, 2, 3, 4};
  CHECK_ERROR(ValueError, from_blob(data, {2, 2}, {kInt64Max, 1}),
              "from_blob: sizes [2, 2] and strides [9223372036854775807, 1] of float32",
              "more than 2^63 - 1 bytes");
  CHECK_ERROR(ValueError, from_blob(data, {int64_t{1} << 62}), "from_blob: sizes", "too large");
  CHECK_VALUES(from_blob(data, {2, 2}, {1, 2}), {1, 3, 2, 4});
  // 2 * 2^62 overflowed as the stride of the inserted dimension
  uint8_t bytes[1] = {7};
  Tensor wide = from_blob(bytes, {1, 2}, {1, int64_t{1} << 62}, kByte);
  BOOST_TEST(wide.unsqueeze(1).stride(1) == 1);
  BOOST_TEST(wide.unsqueeze(1).stride(0) == 1);
}

BOOST_AUTO_TEST_CASE(sdk_size_products_are_checked) {
  int64_t sizes[3] = {int64_t{1} << 32, int64_t{1} << 32, 0};
  int64_t strides[3] = {0, 0, 0};
  kiln_tensor t{nullptr, KILN_F32, 3, sizes, strides, {KILN_DEVICE_HOST, 0}};
  BOOST_CHECK_THROW(sdk::numel(t), std::overflow_error);
  int64_t out = 0;
  BOOST_TEST(!sdk::checked_mul(kInt64Max, 2, &out));
  BOOST_TEST(!sdk::checked_mul(std::numeric_limits<int64_t>::min(), -1, &out));
  BOOST_TEST(sdk::checked_mul(-(int64_t{1} << 31), int64_t{1} << 32, &out));
  BOOST_TEST(out == std::numeric_limits<int64_t>::min());
  // no elements: StridedLoop neither multiplies the strides nor runs
  int64_t empty_sizes[2] = {0, int64_t{1} << 40};
  int64_t huge_strides[2] = {int64_t{1} << 40, int64_t{1} << 61};
  kiln_tensor e{nullptr, KILN_F64, 2, empty_sizes, huge_strides, {KILN_DEVICE_HOST, 0}};
  sdk::StridedLoop<1> loop({&e});
  BOOST_TEST(loop.numel() == 0);
  BOOST_TEST(sdk::is_contiguous(e));
  int64_t one_sizes[2] = {2, 2};
  kiln_tensor wide{nullptr, KILN_F64, 2, one_sizes, huge_strides, {KILN_DEVICE_HOST, 0}};
  BOOST_CHECK_THROW(sdk::StridedLoop<1>({&wide}), std::overflow_error);
}

BOOST_AUTO_TEST_SUITE_END()
