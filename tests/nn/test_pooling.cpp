// Pooling layers against PyTorch's goldens (tests/golden/make_layers_golden.py): forward,
// indices and the gradient of every max, average, adaptive, LP and unpooling form in 1, 2 and 3
// dimensions; the modules' options and reprs; the errors for bad geometry.
#include "golden.h"

namespace nn = kiln::nn;
namespace F = kiln::nn::functional;
using kiln::Tensor;
using nn_test::check_case;
using nn_test::check_close;
using nn_test::golden;

namespace {

// Checks the indices of `pool` (a with_indices form) on case `name`, and its output and gradient.
template <class Pool>
void check_with_indices(const std::string& name, Pool pool) {
  Tensor indices;
  check_case(name, {"x"}, [&](std::vector<Tensor>& v) {
    auto [out, at] = pool(v[0]);
    indices = at;
    return out;
  });
  BOOST_TEST(indices.dtype() == kiln::kLong);
  check_close(indices, golden(name, "indices"), 0, 0, name + " indices");
}

}  // namespace

BOOST_AUTO_TEST_SUITE(pooling)

BOOST_AUTO_TEST_CASE(max_pool_matches_pytorch) {
  check_with_indices("max_pool1d", [](const Tensor& x) {
    return F::max_pool1d_with_indices(x, F::MaxPool1dFuncOptions(3).stride(2).padding(1));
  });
  check_with_indices("max_pool1d_ceil_dilated", [](const Tensor& x) {
    return F::max_pool1d_with_indices(
        x, F::MaxPool1dFuncOptions(2).stride(3).padding(1).dilation(2).ceil_mode(true));
  });
  check_with_indices("max_pool2d", [](const Tensor& x) {
    nn::MaxPool2d pool(nn::MaxPool2dOptions(3).stride(2).padding(1));
    return pool->forward_with_indices(x);
  });
  check_with_indices("max_pool2d_rect_ceil", [](const Tensor& x) {
    return F::max_pool2d_with_indices(
        x,
        F::MaxPool2dFuncOptions({3, 2}).stride({2, 1}).padding({1, 0}).dilation({1, 2}).ceil_mode(
            true));
  });
  check_with_indices("max_pool2d_unbatched", [](const Tensor& x) {
    return std::make_tuple(kiln::max_pool2d(x, 2),
                           std::get<1>(F::max_pool2d_with_indices(x, F::MaxPool2dFuncOptions(2))));
  });
  check_with_indices("max_pool3d", [](const Tensor& x) {
    return F::max_pool3d_with_indices(
        x, F::MaxPool3dFuncOptions({2, 3, 2}).stride({2, 2, 1}).padding({1, 1, 0}).ceil_mode(true));
  });
}

BOOST_AUTO_TEST_CASE(avg_pool_matches_pytorch) {
  check_case("avg_pool1d", {"x"}, [](auto& v) {
    return nn::AvgPool1d(nn::AvgPool1dOptions(3).stride(2).padding(1))(v[0]);
  });
  check_case("avg_pool1d_ceil_nopad", {"x"}, [](auto& v) {
    return F::avg_pool1d(
        v[0],
        F::AvgPool1dFuncOptions(4).stride(3).padding(2).ceil_mode(true).count_include_pad(false));
  });
  check_case("avg_pool2d", {"x"}, [](auto& v) { return kiln::avg_pool2d(v[0], 3, 2, 1); });
  check_case("avg_pool2d_ceil_exclude", {"x"}, [](auto& v) {
    return F::avg_pool2d(
        v[0],
        F::AvgPool2dFuncOptions({3, 2}).stride({2, 3}).padding(1).ceil_mode(true).count_include_pad(
            false));
  });
  check_case("avg_pool2d_divisor", {"x"}, [](auto& v) {
    return F::avg_pool2d(v[0], F::AvgPool2dFuncOptions(2).stride(1).padding(1).divisor_override(3));
  });
  check_case("avg_pool3d", {"x"}, [](auto& v) {
    return nn::AvgPool3d(
        nn::AvgPool3dOptions({2, 3, 2}).stride({2, 2, 1}).padding({1, 1, 0}).ceil_mode(true))(v[0]);
  });
  check_case("avg_pool3d_exclude_divisor", {"x"}, [](auto& v) {
    return F::avg_pool3d(v[0], F::AvgPool3dFuncOptions(3)
                                   .stride(2)
                                   .padding(1)
                                   .ceil_mode(true)
                                   .count_include_pad(false)
                                   .divisor_override(5));
  });
}

BOOST_AUTO_TEST_CASE(adaptive_pool_matches_pytorch) {
  check_with_indices("adaptive_max_pool1d", [](const Tensor& x) {
    return nn::AdaptiveMaxPool1d(4)->forward_with_indices(x);
  });
  check_with_indices("adaptive_max_pool2d", [](const Tensor& x) {
    return F::adaptive_max_pool2d_with_indices(x, F::AdaptiveMaxPool2dFuncOptions({3, 4}));
  });
  check_with_indices("adaptive_max_pool2d_none", [](const Tensor& x) {
    return F::adaptive_max_pool2d_with_indices(x,
                                               F::AdaptiveMaxPool2dFuncOptions({2, std::nullopt}));
  });
  check_with_indices("adaptive_max_pool3d", [](const Tensor& x) {
    return kiln::adaptive_max_pool3d(x, {2, 3, 3});
  });
  check_case("adaptive_avg_pool1d", {"x"}, [](auto& v) { return nn::AdaptiveAvgPool1d(4)(v[0]); });
  check_case("adaptive_avg_pool2d", {"x"}, [](auto& v) {
    return F::adaptive_avg_pool2d(v[0], F::AdaptiveAvgPool2dFuncOptions({3, 4}));
  });
  check_case("adaptive_avg_pool2d_global", {"x"},
             [](auto& v) { return kiln::adaptive_avg_pool2d(v[0], 1); });
  check_case("adaptive_avg_pool3d", {"x"}, [](auto& v) {
    return nn::AdaptiveAvgPool3d(nn::AdaptiveAvgPool3dOptions({2, std::nullopt, 3}))(v[0]);
  });
}

BOOST_AUTO_TEST_CASE(lp_pool_and_max_unpool_match_pytorch) {
  check_case("lp_pool1d", {"x"},
             [](auto& v) { return nn::LPPool1d(nn::LPPool1dOptions(2, 3).stride(2))(v[0]); });
  check_case("lp_pool2d", {"x"}, [](auto& v) {
    return F::lp_pool2d(v[0], F::LPPool2dFuncOptions(3, {3, 2}).stride({2, 1}).ceil_mode(true));
  });
  check_case("max_unpool1d", {"x", "indices"}, [](auto& v) {
    return nn::MaxUnpool1d(nn::MaxUnpool1dOptions(3).stride(2).padding(1))(v[0], v[1]);
  });
  check_case("max_unpool2d_overlap", {"x", "indices"}, [](auto& v) {
    return F::max_unpool2d(
        v[0], v[1],
        F::MaxUnpool2dFuncOptions(3).stride(2).padding(1).output_size(std::vector<int64_t>{7, 6}));
  });
  check_case("max_unpool2d_size", {"x", "indices"}, [](auto& v) {
    return nn::MaxUnpool2d(2)(v[0], v[1], std::vector<int64_t>{1, 2, 7, 7});
  });
  check_case("max_unpool3d", {"x", "indices"},
             [](auto& v) { return nn::MaxUnpool3d(2)(v[0], v[1]); });
}

// Windows that tile the input: kiln views them instead of gathering.
BOOST_AUTO_TEST_CASE(tiling_windows_match_pytorch) {
  check_case("avg_pool2d_tiles", {"x"}, [](auto& v) { return kiln::avg_pool2d(v[0], 2); });
  check_with_indices("max_pool3d_tiles", [](const Tensor& x) {
    return F::max_pool3d_with_indices(x, F::MaxPool3dFuncOptions({2, 3, 2}));
  });
  check_with_indices("adaptive_max_pool2d_tiles", [](const Tensor& x) {
    return kiln::adaptive_max_pool2d(x, {3, 4});
  });
  check_case("adaptive_avg_pool2d_tiles", {"x"}, [](auto& v) {
    return kiln::adaptive_avg_pool2d(v[0], {3, 2});
  });
}

// float32 and bfloat16 keep their dtype; the results agree with float64's.
BOOST_AUTO_TEST_CASE(pooling_keeps_the_input_dtype) {
  Tensor x = golden("avg_pool2d", "x");
  for (kiln::ScalarType dtype : {kiln::kFloat, kiln::kBFloat16}) {
    double tol = dtype == kiln::kFloat ? 1e-6 : 2e-2;
    Tensor avg = kiln::avg_pool2d(x.to(dtype), 3, 2, 1);
    BOOST_TEST(avg.dtype() == dtype);
    check_close(avg, golden("avg_pool2d", "out"), tol, tol, "avg_pool2d in lower precision");
    Tensor m = kiln::max_pool2d(x.to(dtype), 3, 2, 1);
    BOOST_TEST(m.dtype() == dtype);
    check_close(m, kiln::max_pool2d(x, 3, 2, 1), tol, tol, "max_pool2d in lower precision");
  }
}

// Under autocast, pooling runs in its input's dtype, as PyTorch's.
BOOST_AUTO_TEST_CASE(pooling_under_autocast_keeps_the_input_dtype) {
  kiln::amp::autocast region(kiln::kCPU);
  for (kiln::ScalarType dtype : {kiln::kFloat, kiln::kBFloat16}) {
    Tensor x = kiln::randn({2, 3, 6, 6}).to(dtype);
    BOOST_TEST(kiln::avg_pool2d(x, 2).dtype() == dtype);
    BOOST_TEST(kiln::adaptive_avg_pool2d(x, 1).dtype() == dtype);
    BOOST_TEST(kiln::max_pool2d(x, 3, 2, 1).dtype() == dtype);
  }
}

BOOST_AUTO_TEST_CASE(reprs_as_libtorch) {
  auto repr = [](const auto& module) {
    std::ostringstream s;
    s << module;
    return s.str();
  };
  BOOST_TEST(repr(nn::MaxPool2d(nn::MaxPool2dOptions(3).stride(2).padding(1))) ==
             "kiln::nn::MaxPool2d(kernel_size=[3, 3], stride=[2, 2], padding=[1, 1], "
             "dilation=[1, 1], ceil_mode=false)");
  BOOST_TEST(repr(nn::MaxPool1d(nn::MaxPool1dOptions(2).ceil_mode(true))) ==
             "kiln::nn::MaxPool1d(kernel_size=[2], stride=[2], padding=[0], dilation=[1], "
             "ceil_mode=true)");
  BOOST_TEST(repr(nn::AvgPool3d(nn::AvgPool3dOptions({1, 2, 3}))) ==
             "kiln::nn::AvgPool3d(kernel_size=[1, 2, 3], stride=[1, 2, 3], padding=[0, 0, 0])");
  BOOST_TEST(repr(nn::AdaptiveMaxPool2d(nn::AdaptiveMaxPool2dOptions({5, std::nullopt}))) ==
             "kiln::nn::AdaptiveMaxPool2d(output_size=[5, None])");
  BOOST_TEST(repr(nn::AdaptiveAvgPool1d(3)) == "kiln::nn::AdaptiveAvgPool1d(output_size=[3])");
  BOOST_TEST(repr(nn::MaxUnpool2d(nn::MaxUnpool2dOptions(3).stride(2).padding(1))) ==
             "kiln::nn::MaxUnpool2d(kernel_size=[3, 3], stride=[2, 2], padding=[1, 1])");
  BOOST_TEST(repr(nn::LPPool2d(nn::LPPool2dOptions(2, {3, 4}).stride({5, 6}))) ==
             "kiln::nn::LPPool2d(norm_type=2, kernel_size=[3, 4], stride=[5, 6], "
             "ceil_mode=false)");
}

BOOST_AUTO_TEST_CASE(errors_name_the_operator_and_the_geometry) {
  Tensor x = kiln::ones({1, 2, 4, 4});
  CHECK_ERROR(kiln::ValueError, kiln::max_pool2d(kiln::ones({4, 4}), 2),
              "max_pool2d: expected a 3-D (unbatched) or 4-D (batched) input, but got input of "
              "size [4, 4]");
  CHECK_ERROR(kiln::TypeError, kiln::max_pool2d(kiln::ones({1, 4, 4}, kiln::kLong), 2),
              "max_pool2d: expected a floating point input, but got int64");
  CHECK_ERROR(kiln::ValueError, kiln::max_pool2d(x, 2, 1, 2),
              "max_pool2d: pad should be at least 0 and at most half of kernel size, but got "
              "padding=[2, 2] for kernel_size=[2, 2]");
  CHECK_ERROR(kiln::ValueError, kiln::max_pool2d(x, 0), "kernel size should be greater than zero");
  CHECK_ERROR(kiln::ValueError, kiln::avg_pool2d(x, 2, 0),
              "avg_pool2d: stride should be greater than zero, but got stride=[0, 0]");
  CHECK_ERROR(kiln::ValueError, kiln::max_pool2d(x, 3, 1, 0, 2),
              "max_pool2d: given input of size [1, 2, 4, 4], kernel_size=[3, 3], stride=[1, 1], "
              "padding=[0, 0] and dilation=[2, 2], the calculated output size (0x0) is too small");
  CHECK_ERROR(kiln::ValueError, kiln::max_pool2d(x, {2, 2, 2}),
              "max_pool2d: expected kernel_size to be a single integer or a list of 2 integers, "
              "but got [2, 2, 2]");
  const int64_t huge = int64_t{1} << 62;
  CHECK_ERROR(kiln::ValueError, kiln::max_pool1d(kiln::ones({1, 1, 4}), 3, 1, 1, huge),
              "max_pool1d: input size 4 with padding 1, kernel size 3 and dilation "
              "4611686018427387904 overflows int64");
  CHECK_ERROR(kiln::ValueError, kiln::adaptive_avg_pool2d(x, {0, 2}),
              "adaptive_avg_pool2d: expected positive output sizes, but got output_size 0");
  CHECK_ERROR(kiln::ValueError, F::avg_pool2d(x, F::AvgPool2dFuncOptions(2).divisor_override(0)),
              "avg_pool2d: divisor must be not zero");
  auto [y, at] = F::max_pool2d_with_indices(x, F::MaxPool2dFuncOptions(2));
  CHECK_ERROR(kiln::IndexError, F::max_unpool2d(y, at + 16, F::MaxUnpool2dFuncOptions(2)),
              "max_unpool2d: found an invalid max index 16 (output planes are of size 4x4)");
  CHECK_ERROR(kiln::ValueError,
              F::max_unpool2d(y, at,
                              F::MaxUnpool2dFuncOptions(2).output_size(std::vector<int64_t>{6, 4})),
              "max_unpool2d: invalid output_size [6, 4] (dim 0 must be between 2 and 6)");
  CHECK_ERROR(kiln::TypeError, F::max_unpool2d(y, at.to(kiln::kInt), F::MaxUnpool2dFuncOptions(2)),
              "max_unpool2d: expected indices of dtype int64, but got int32");
}

BOOST_AUTO_TEST_SUITE_END()
