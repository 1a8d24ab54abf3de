// The error paths of the scans (cumsum, cumprod) and of the rearranging operators (flip, roll,
// rot90, movedim, split_with_sizes, tensor_split, repeat_interleave): kiln's type and
// PyTorch's text.
#include "tensor_test.h"

using namespace kiln;

BOOST_AUTO_TEST_SUITE(scan_rearrange_errors)

BOOST_AUTO_TEST_CASE(scans) {
  CHECK_ERROR(IndexError, cumsum(zeros({2, 3}), 2),
              "cumsum: dimension out of range (expected to be in range of [-2, 1], but got 2)");
  CHECK_ERROR(IndexError, cumprod(zeros({2, 3}), -3), "cumprod: dimension out of range");
  CHECK_ERROR(TypeError, cumsum(zeros({2}), 0, kBool), "cumsum");
  // dtypes: integers and bool give int64, the dtype argument wins
  BOOST_TEST(cumsum(ones({3}, kBool), 0).dtype() == kLong);
  BOOST_TEST(cumprod(ones({3}, kInt), 0).dtype() == kLong);
  BOOST_TEST(cumsum(ones({3}, kInt), 0, kInt).dtype() == kInt);
  BOOST_TEST(cumsum(ones({3}), 0, kDouble).dtype() == kDouble);
}

BOOST_AUTO_TEST_CASE(rearranging) {
  Tensor x = zeros({2, 3});
  CHECK_ERROR(Error, flip(x, {0, -2}), "flip: dim 0 appears multiple times in the list of dims");
  CHECK_ERROR(IndexError, flip(x, {2}), "flip: dimension out of range");
  CHECK_ERROR(Error, fliplr(zeros({3})), "fliplr: input tensor must be at least 2-dimensional");
  CHECK_ERROR(Error, roll(x, {1, 2}), "shifts and dimensions must align. shifts: 2, dims: 0");
  CHECK_ERROR(Error, roll(x, {1}, {0, 1}), "shifts and dimensions must align. shifts: 1, dims: 2");
  CHECK_ERROR(Error, rot90(x, 1, {0}), "expected total rotation dims == 2, but got dims = 1");
  CHECK_ERROR(Error, rot90(x, 1, {0, -2}), "expected rotation dims to be different");
  CHECK_ERROR(Error, rot90(zeros({3}), 1, {0, 1}), "expected total dims >= 2");
  CHECK_ERROR(Error, movedim(x, {0, 1}, {1}), "movedim: Invalid source or destination dims");
  CHECK_ERROR(Error, movedim(x, {0, 0}, {0, 1}), "movedim: repeated dim in `source` ([0, 0])");
  CHECK_ERROR(Error, movedim(x, {0, 1}, {1, -1}), "repeated dim in `destination`");
  CHECK_ERROR(Error, split_with_sizes(x, {1, 1}, 1),
              "split_with_sizes expects split_sizes to "
              "sum exactly to 3");
  CHECK_ERROR(Error, split_with_sizes(x, {4, -1}, 1), "non-negative entries");
  CHECK_ERROR(Error, tensor_split(x, 0, 1), "number of sections must be larger than 0, got 0");
  CHECK_ERROR(Error, tensor_split(zeros({}), 2), "expected at least a 1-dimensional tensor");
  CHECK_ERROR(Error, repeat_interleave(x, -1, 0), "repeats can not be negative");
  // 0-dim and empty tensors pass through
  BOOST_TEST(flip(full({}, 2.0), {0}).item<double>() == 2.0);
  BOOST_TEST(roll(zeros({0, 3}), {1}, {0}).numel() == 0);
  BOOST_TEST(cumsum(zeros({2, 0}), 1).sizes() == IntArrayRef({2, 0}));
  BOOST_TEST(cumsum(full({}, 3.0), 0).item<double>() == 3.0);
}

BOOST_AUTO_TEST_SUITE_END()
