// sgn_, deg2rad_ and rad2deg_ (Tensor methods; deg2rad_ and rad2deg_ also functions, as
// at::deg2rad_): equal to the out-of-place forms (whose numbers are PyTorch's, conformance cases
// sgn, deg2rad and rad2deg), values PyTorch 1.13 gives, and PyTorch's in-place rules.
#include "check_error.h"

#include <kiln/kiln.h>

#include <boost/test/unit_test.hpp>

#include <cmath>
#include <limits>

using kiln::Tensor;

BOOST_AUTO_TEST_SUITE(angle_inplace)

BOOST_AUTO_TEST_CASE(equal_the_out_of_place_forms) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (kiln::ScalarType dtype : {kiln::kDouble, kiln::kFloat, kiln::kHalf, kiln::kBFloat16}) {
    BOOST_TEST_CONTEXT(kiln::dtype_name(dtype)) {
      Tensor x = kiln::tensor({-360.0, -3.0, -0.0, 0.0, 1.5, 45.0, 180.0, inf, nan}).to(dtype);
      Tensor y = x.clone();
      BOOST_CHECK(y.deg2rad_().is_same(y));
      BOOST_CHECK(kiln::allclose(y, kiln::deg2rad(x), 0, 0, /*equal_nan=*/true));
      y = x.clone();
      BOOST_CHECK(y.rad2deg_().is_same(y));
      BOOST_CHECK(kiln::allclose(y, kiln::rad2deg(x), 0, 0, /*equal_nan=*/true));
      y = x.clone();
      BOOST_CHECK(y.sgn_().is_same(y));
      BOOST_CHECK(kiln::allclose(y, kiln::sgn(x), 0, 0, /*equal_nan=*/true));
      y = x.clone();
      BOOST_CHECK(kiln::deg2rad_(y).is_same(y));
      BOOST_CHECK(kiln::allclose(y, kiln::deg2rad(x), 0, 0, /*equal_nan=*/true));
      y = x.clone();
      BOOST_CHECK(kiln::rad2deg_(y).is_same(y));
      BOOST_CHECK(kiln::allclose(y, kiln::rad2deg(x), 0, 0, /*equal_nan=*/true));
    }
  }
  // PyTorch 1.13: torch.tensor([1.5, -2., 0.], dtype=torch.float16).rad2deg_() is
  // [85.9375, -114.5625, 0.]; .sgn_() of int64 [1, -2, 0] is [1, -1, 0], of bool unchanged
  Tensor h = kiln::tensor({1.5, -2.0, 0.0}).to(kiln::kHalf);
  h.rad2deg_();
  BOOST_CHECK(h.equal(kiln::tensor({85.9375, -114.5625, 0.0}).to(kiln::kHalf)));
  Tensor i = kiln::tensor({1, -2, 0}, kiln::kLong);
  i.sgn_();
  BOOST_CHECK(i.dtype() == kiln::kLong);
  BOOST_CHECK(i.equal(kiln::tensor({1, -1, 0}, kiln::kLong)));
  Tensor b = kiln::tensor({1, 0}, kiln::kLong).to(kiln::kBool);
  Tensor b_before = b.clone();
  b.sgn_();
  BOOST_CHECK(b.equal(b_before));
}

BOOST_AUTO_TEST_CASE(inplace_rules) {
  // PyTorch: "result type Float can't be cast to the desired output type Long"
  Tensor i = kiln::tensor({1, -2, 0}, kiln::kLong);
  CHECK_ERROR(kiln::TypeError, i.deg2rad_(),
              "deg2rad_: result type Float can't be cast to the desired output type Long");
  CHECK_ERROR(kiln::TypeError, i.rad2deg_(),
              "rad2deg_: result type Float can't be cast to the desired output type Long");
  CHECK_ERROR(kiln::TypeError, kiln::tensor({1, 0}, kiln::kLong).to(kiln::kBool).deg2rad_(),
              "result type Float can't be cast to the desired output type Bool");
  BOOST_CHECK(i.equal(kiln::tensor({1, -2, 0}, kiln::kLong)));
  // a leaf requiring grad refuses; a non-leaf records the gradient (pi / 180 each)
  Tensor leaf = kiln::tensor({1.0, 2.0}).requires_grad_();
  CHECK_ERROR(kiln::Error, leaf.deg2rad_(), "in-place");
  Tensor y = leaf * 1;
  y.deg2rad_();
  y.sum().backward();
  BOOST_CHECK(kiln::allclose(leaf.grad(), kiln::full({2}, M_PI / 180)));
  Tensor z = leaf * 1;
  z.sgn_();
  leaf.grad().zero_();
  z.sum().backward();
  BOOST_CHECK(kiln::allclose(leaf.grad(), kiln::zeros({2})));
  // an expanded self is refused, as PyTorch's in-place operators
  CHECK_ERROR(kiln::Error, kiln::ones({1}).expand({3}).rad2deg_(), "rad2deg_");
}

BOOST_AUTO_TEST_SUITE_END()
