// Padding and resampling modules and functions (their values are PyTorch's in the conformance
// suite, tools/conformance/cases_resample.cpp): the modules' options, forward and reprs as
// libtorch's, the errors PyTorch 1.13 raises, the CPU autocast policy of the padding modes, and
// the optional primitives against the composite they replace.
#include <kiln/kiln.h>

#include <boost/test/unit_test.hpp>

#include "../check_error.h"

#include <sstream>

namespace nn = kiln::nn;
namespace F = kiln::nn::functional;
using kiln::Tensor;

namespace {

template <class M>
std::string repr(const M& m) {
  std::ostringstream s;
  s << *m;
  return s.str();
}

Tensor ramp(std::vector<int64_t> sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return kiln::arange(n, kiln::TensorOptions(kiln::kFloat)).reshape(sizes);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(resample)

BOOST_AUTO_TEST_CASE(padding_modules_as_libtorch) {
  Tensor x = ramp({1, 2, 3, 4});
  nn::ReflectionPad2d reflect(nn::ReflectionPad2dOptions({1, 2, 0, 1}));
  BOOST_TEST(repr(reflect) == "kiln::nn::ReflectionPad2d(padding=[1, 2, 0, 1])");
  Tensor y = reflect(x);
  BOOST_TEST(y.sizes().vec() == (std::vector<int64_t>{1, 2, 4, 7}));
  // row 0 of channel 0 is 0 1 2 3: reflected by 1 before and 2 after
  std::vector<float> row0(y.data_ptr<float>(), y.data_ptr<float>() + 7);
  BOOST_TEST(row0 == (std::vector<float>{1, 0, 1, 2, 3, 2, 1}), boost::test_tools::per_element());
  nn::ReplicationPad1d replicate(2);
  BOOST_TEST(repr(replicate) == "kiln::nn::ReplicationPad1d(padding=[2, 2])");
  BOOST_TEST(replicate(ramp({2, 3})).sizes().vec() == (std::vector<int64_t>{2, 7}));
  nn::ZeroPad2d zero(1);
  BOOST_TEST(repr(zero) == "kiln::nn::ZeroPad2d(padding=[1, 1, 1, 1])");
  BOOST_TEST(zero(x).sum().item<double>() == x.sum().item<double>());
  nn::ConstantPad3d constant(nn::ConstantPad3dOptions(1, 3.5));
  BOOST_TEST(repr(constant) == "kiln::nn::ConstantPad3d(padding=[1, 1, 1, 1, 1, 1], value=3.5)");
  BOOST_TEST(constant(ramp({1, 1, 1, 1})).sum().item<double>() == 26 * 3.5);
  nn::ReflectionPad3d reflect3(1);
  BOOST_TEST(reflect3(ramp({2, 2, 2, 2})).sizes().vec() == (std::vector<int64_t>{2, 4, 4, 4}));
  nn::ReplicationPad3d replicate3(nn::ReplicationPad3dOptions({1, 0, 0, 1, 2, 0}));
  BOOST_TEST(replicate3(ramp({1, 1, 2, 2, 2})).sizes().vec() ==
             (std::vector<int64_t>{1, 1, 4, 3, 3}));
  reflect->reset();
}

BOOST_AUTO_TEST_CASE(pad_errors_as_pytorch) {
  Tensor x = ramp({1, 3, 4});
  CHECK_ERROR(kiln::ValueError, F::pad(x, F::PadFuncOptions({1, 2, 3})),
              "Padding length must be divisible by 2");
  CHECK_ERROR(kiln::ValueError, F::pad(x, F::PadFuncOptions({1, 1, 1, 1, 1, 1, 1, 1})),
              "Padding length too large");
  CHECK_ERROR(kiln::ValueError, F::pad(x, F::PadFuncOptions({4, 1}).mode(kiln::kReflect)),
              "Padding size should be less than the corresponding input dimension",
              "padding (4, 1) at dimension 2");
  CHECK_ERROR(kiln::ValueError, F::pad(x, F::PadFuncOptions({-2, -3}).mode(kiln::kReplicate)),
              "is too small. Calculated output size: -1");
  CHECK_ERROR(kiln::ValueError, F::pad(x, F::PadFuncOptions({5, 1}).mode(kiln::kCircular)),
              "Padding value causes wrapping around more than once.");
  CHECK_ERROR(kiln::ValueError, F::pad(x, F::PadFuncOptions({-3, -2}).mode(kiln::kCircular)),
              "Negative padding value is resulting in an empty dimension");
  CHECK_ERROR(kiln::Error, F::pad(ramp({4}), F::PadFuncOptions({1, 1}).mode(kiln::kReflect)),
              "Only 2D, 3D, 4D, 5D padding with non-constant padding are supported");
  CHECK_ERROR(kiln::ValueError,
              F::pad(ramp({3, 4}), F::PadFuncOptions({1, 1}).mode(kiln::kCircular)),
              "expects a batched input");
  CHECK_ERROR(kiln::ValueError,
              F::pad(kiln::zeros({1, 0, 4}), F::PadFuncOptions({1, 1}).mode(kiln::kReflect)),
              "non-zero dimensions");
  CHECK_ERROR(kiln::ValueError, kiln::constant_pad_nd(x, {-3, -2}), "crops more than its 4");
  // an empty batch pads
  BOOST_TEST(F::pad(kiln::zeros({0, 2, 3}), F::PadFuncOptions({1, 1}).mode(kiln::kReflect))
                 .sizes()
                 .vec() == (std::vector<int64_t>{0, 2, 5}));
}

BOOST_AUTO_TEST_CASE(padding_under_cpu_autocast_as_pytorch) {
  Tensor x = ramp({1, 2, 4, 4}).to(kiln::kBFloat16);
  kiln::amp::autocast region(kiln::kCPU);
  auto pad = [&](auto mode, std::vector<int64_t> p) {
    return F::pad(x, F::PadFuncOptions(p).mode(mode)).dtype();
  };
  BOOST_TEST(pad(kiln::kReflect, {1, 1, 1, 1}) == kiln::kFloat);
  BOOST_TEST(pad(kiln::kReplicate, {1, 1, 1, 1}) == kiln::kFloat);
  BOOST_TEST(pad(kiln::kCircular, {1, 1, 1, 1}) == kiln::kBFloat16);
  BOOST_TEST(pad(kiln::kConstant, {1, 1}) == kiln::kBFloat16);
  BOOST_TEST(F::interpolate(x, F::InterpolateFuncOptions().scale_factor(std::vector<double>{2, 2}))
                 .dtype() == kiln::kBFloat16);
}

BOOST_AUTO_TEST_CASE(upsample_and_pixel_shuffle_modules_as_libtorch) {
  Tensor x = ramp({1, 2, 3, 4});
  nn::Upsample up(
      nn::UpsampleOptions().scale_factor(std::vector<double>{2, 1.5}).mode(kiln::kBilinear));
  BOOST_TEST(repr(up) == "kiln::nn::Upsample(scale_factor=[2, 1.5], mode=kBilinear)");
  BOOST_TEST(up(x).sizes().vec() == (std::vector<int64_t>{1, 2, 6, 6}));
  nn::Upsample sized(nn::UpsampleOptions().size(std::vector<int64_t>{5, 5}));
  BOOST_TEST(repr(sized) == "kiln::nn::Upsample(size=[5, 5], mode=kNearest)");
  BOOST_TEST(sized(x).sizes().vec() == (std::vector<int64_t>{1, 2, 5, 5}));
  nn::PixelShuffle shuffle(2);
  nn::PixelUnshuffle unshuffle(2);
  BOOST_TEST(repr(shuffle) == "kiln::nn::PixelShuffle(upscale_factor=2)");
  BOOST_TEST(repr(unshuffle) == "kiln::nn::PixelUnshuffle(downscale_factor=2)");
  Tensor y = ramp({2, 8, 3, 5});
  BOOST_TEST(kiln::equal(unshuffle(shuffle(y)), y));
  up->reset();
}

BOOST_AUTO_TEST_CASE(interpolate_errors_as_pytorch) {
  Tensor x = ramp({1, 2, 3, 4});
  using O = F::InterpolateFuncOptions;
  auto sizes = [](std::vector<int64_t> v) { return O().size(v); };
  CHECK_ERROR(kiln::ValueError, F::interpolate(x, O()),
              "either size or scale_factor should be defined");
  CHECK_ERROR(kiln::ValueError,
              F::interpolate(x, sizes({4, 4}).scale_factor(std::vector<double>{2, 2})),
              "only one of size or scale_factor should be defined");
  CHECK_ERROR(kiln::ValueError, F::interpolate(x, sizes({4})),
              "Input and output must have the same number of spatial dimensions");
  CHECK_ERROR(kiln::ValueError, F::interpolate(x, O().scale_factor(std::vector<double>{2})),
              "Input and scale_factor must have the same number of spatial dimensions");
  CHECK_ERROR(kiln::ValueError, F::interpolate(x, sizes({4, 4}).align_corners(true)),
              "align_corners option can only be set with the interpolating modes");
  CHECK_ERROR(kiln::ValueError, F::interpolate(x, sizes({4, 4}).mode(kiln::kLinear)),
              "Got 4D input, but linear mode needs 3D input");
  CHECK_ERROR(kiln::ValueError, F::interpolate(ramp({2, 3}), sizes({4})),
              "Only 3D, 4D and 5D input Tensors supported (got 2D)");
  CHECK_ERROR(kiln::ValueError, F::interpolate(x, sizes({4, 4}).recompute_scale_factor(true)),
              "recompute_scale_factor is not meaningful with an explicit size.");
  CHECK_ERROR(kiln::ValueError, F::interpolate(x, O().scale_factor(std::vector<double>{0.1, 1})),
              "Input and output sizes should be greater than 0");
  CHECK_ERROR(kiln::ValueError, kiln::pixel_shuffle(ramp({1, 5, 2, 2}), 2),
              "input.size(-3)=5 is not divisible by 4");
  CHECK_ERROR(kiln::ValueError, kiln::pixel_unshuffle(ramp({1, 1, 5, 2}), 2),
              "input.size(-2)=5 is not divisible by 2");
}

// The CPU kernels of the optional primitives against the composite (index_select of the same
// source positions) on a strided input, and their gradients against the composite's.
BOOST_AUTO_TEST_CASE(primitives_match_the_composite) {
  Tensor x = kiln::randn({2, 3, 5, 7}).transpose(2, 3).requires_grad_(true);
  Tensor g = kiln::randn({2, 3, 11, 4});
  auto check = [&](const Tensor& fast, const Tensor& slow) {
    BOOST_TEST(kiln::allclose(fast, slow, 1e-5, 1e-6));
    Tensor gf = kiln::autograd::grad({fast}, {x}, {g})[0];
    Tensor gs = kiln::autograd::grad({slow}, {x}, {g})[0];
    BOOST_TEST(kiln::allclose(gf, gs, 1e-5, 1e-5));
  };
  // nearest: PyTorch's positions floor(o * in / out), gathered by index_select
  std::vector<int64_t> rows, cols;
  for (int64_t o = 0; o < 11; ++o) rows.push_back(o * 7 / 11);
  for (int64_t o = 0; o < 4; ++o) cols.push_back(std::min<int64_t>(o * 5 / 4, 4));
  auto index = [](std::vector<int64_t>& v) {
    return kiln::from_blob(v.data(), {static_cast<int64_t>(v.size())}, kiln::kLong).clone();
  };
  check(kiln::upsample_nearest2d(x, {11, 4}),
        kiln::index_select(kiln::index_select(x, 2, index(rows)), 3, index(cols)));
  // bilinear: the trilinear composite over a depth of 1
  check(kiln::upsample_bilinear2d(x, {11, 4}, false),
        F::interpolate(x.unsqueeze(2), F::InterpolateFuncOptions()
                                           .size(std::vector<int64_t>{1, 11, 4})
                                           .mode(kiln::kTrilinear)
                                           .align_corners(false))
            .squeeze(2));
}

BOOST_AUTO_TEST_SUITE_END()
