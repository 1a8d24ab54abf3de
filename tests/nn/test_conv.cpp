// conv2d forward and backward with stride, padding, dilation and groups against PyTorch: float64
// (the direct loops), float32 and bfloat16 (oneDNN), strided inputs, the Conv2d module,
// create_graph through the backward primitives, and the error messages.
#include "golden.h"

#include <sstream>

namespace nn = kiln::nn;
namespace F = kiln::nn::functional;
using kiln::Tensor;
using nn_test::check_close;
using nn_test::golden;

namespace {

struct Geometry {
  std::vector<int64_t> stride, padding, dilation;
  int64_t groups;
};

Geometry geometry(const std::string& name) {
  std::istringstream in(nn_test::golden_case(name).strings.at("geometry"));
  Geometry g{{0, 0}, {0, 0}, {0, 0}, 1};
  in >> g.stride[0] >> g.stride[1] >> g.padding[0] >> g.padding[1] >> g.dilation[0] >>
      g.dilation[1] >> g.groups;
  return g;
}

const char* const kCases[] = {"conv_basic",     "conv_stride_pad", "conv_dilation",
                              "conv_groups",    "conv_depthwise",  "conv_rect",
                              "conv_1x1",       "conv_odd_stride", "conv_c16",
                              "conv_c32_groups"};

// Checks case `name` in dtype; `layout` reshapes x before the call (e.g. to channels-last
// strides).
void check_conv(const std::string& name, kiln::ScalarType dtype, double tol,
                Tensor (*layout)(const Tensor&) = nullptr) {
  Geometry g = geometry(name);
  bool has_bias = nn_test::golden_case(name).tensors.count("b") > 0;
  Tensor x = golden(name, "x", dtype);
  if (layout != nullptr) x = layout(x);
  x.requires_grad_();
  Tensor w = golden(name, "w", dtype, true);
  Tensor b = has_bias ? golden(name, "b", dtype, true) : Tensor();
  Tensor out = kiln::conv2d(x, w, b, g.stride, g.padding, g.dilation, g.groups);
  BOOST_CHECK(out.dtype() == dtype);
  std::string what = name + " (" + kiln::dtype_name(dtype) + ")";
  // bfloat16 keeps 8 bits: compare with a tolerance scaled to the values
  double scale =
      dtype == kiln::kBFloat16 ? kiln::amax(kiln::abs(golden(name, "out"))).item<double>() : 1.0;
  check_close(out, golden(name, "out"), tol, tol * scale, what + " out");
  kiln::sum(out * golden(name, "gy", dtype)).backward();
  for (const char* field : {"x", "w", "b"}) {
    if (std::string(field) == "b" && !has_bias) continue;
    Tensor got = field[0] == 'x' ? x.grad() : (field[0] == 'w' ? w.grad() : b.grad());
    Tensor want = golden(name, std::string("grad_") + field);
    double s = dtype == kiln::kBFloat16 ? kiln::amax(kiln::abs(want)).item<double>() : 1.0;
    check_close(got, want, tol, tol * s, what + " grad_" + field);
  }
}

Tensor channels_last(const Tensor& x) {
  return x.permute({0, 2, 3, 1}).contiguous().permute({0, 3, 1, 2});
}
Tensor sliced(const Tensor& x) {
  return kiln::stack({x, x}, 4).select(4, 0);  // x again, with a column stride of 2
}

}  // namespace

BOOST_AUTO_TEST_SUITE(conv)

BOOST_AUTO_TEST_CASE(float64_matches_pytorch) {
  for (const char* name : kCases) check_conv(name, kiln::kDouble, 1e-10);
}

BOOST_AUTO_TEST_CASE(float32_matches_pytorch) {
  for (const char* name : kCases) check_conv(name, kiln::kFloat, 1e-4);
}

BOOST_AUTO_TEST_CASE(bfloat16_matches_pytorch) {
  for (const char* name : kCases) check_conv(name, kiln::kBFloat16, 4e-2);
}

BOOST_AUTO_TEST_CASE(float16_runs_the_direct_loops) {
  check_conv("conv_stride_pad", kiln::kHalf, 1e-2);
}

BOOST_AUTO_TEST_CASE(strided_inputs) {
  for (const char* name : {"conv_basic", "conv_groups", "conv_rect"}) {
    check_conv(name, kiln::kFloat, 1e-4, channels_last);
    check_conv(name, kiln::kFloat, 1e-4, sliced);
    check_conv(name, kiln::kDouble, 1e-10, sliced);
  }
}

BOOST_AUTO_TEST_CASE(module_and_unbatched_input) {
  nn::Conv2d conv(nn::Conv2dOptions(3, 4, 3).stride(2).padding(1));
  {
    kiln::NoGradGuard no_grad;
    conv->weight.copy_(golden("conv_stride_pad", "w"));
    conv->bias.copy_(golden("conv_stride_pad", "b"));
  }
  Tensor x = golden("conv_stride_pad", "x", kiln::kFloat);
  check_close(conv(x), golden("conv_stride_pad", "out"), 1e-4, 1e-4, "Conv2d module");
  check_close(conv(x[1]), golden("conv_stride_pad", "out")[1], 1e-4, 1e-4, "unbatched");
  CHECK_ERROR(
      kiln::ValueError, conv(kiln::ones({3, 5})),
      "conv2d: expected 3D (unbatched) or 4D (batched) input, but got input of size: [3, 5]");
  CHECK_ERROR(kiln::ValueError, nn::Conv2d(nn::Conv2dOptions(3, 4, 3).groups(2)),
              "Conv2d: in_channels must be divisible by groups (got in_channels=3, groups=2)");
  CHECK_ERROR(kiln::ValueError, nn::Conv2d(nn::Conv2dOptions(4, 3, 3).groups(2)),
              "Conv2d: out_channels must be divisible by groups (got out_channels=3, groups=2)");
}

BOOST_AUTO_TEST_CASE(create_graph_through_the_backward_primitives) {
  // L = sum(dx * r) with dx = d sum(conv(x, w) * gy) / dx, linear in w and gy: its gradient
  // with respect to w is exact by a central difference
  Geometry g = geometry("conv_groups");
  Tensor x = golden("conv_groups", "x", std::nullopt, true);
  Tensor w = golden("conv_groups", "w", std::nullopt, true);
  Tensor gy = golden("conv_groups", "gy");
  Tensor r = kiln::randn(x.sizes(), kiln::kDouble);
  auto loss = [&](const Tensor& weight, bool create) {
    Tensor y = kiln::conv2d(x, weight, Tensor(), g.stride, g.padding, g.dilation, g.groups);
    Tensor dx = kiln::autograd::grad({kiln::sum(y * gy)}, {x}, {}, std::nullopt, create)[0];
    return kiln::sum(dx * r);
  };
  Tensor l = loss(w, true);
  Tensor dw = kiln::autograd::grad({l}, {w})[0];
  kiln::NoGradGuard no_grad;
  std::vector<double> analytic = nn_test::values(dw);
  Tensor flat = w.detach().clone().reshape({-1});
  for (int64_t i : {int64_t{0}, int64_t{7}, flat.numel() - 1}) {
    Tensor plus = flat.clone(), minus = flat.clone();
    plus[i].add_(0.5);
    minus[i].sub_(0.5);
    kiln::AutoGradMode grad_on(true);
    double numeric = loss(plus.view(w.sizes()), false).item<double>() -
                     loss(minus.view(w.sizes()), false).item<double>();
    BOOST_CHECK_CLOSE(numeric, analytic[static_cast<size_t>(i)], 1e-6);
  }
}

BOOST_AUTO_TEST_CASE(error_messages) {
  Tensor x = kiln::ones({2, 3, 5, 5}), w = kiln::ones({4, 3, 3, 3});
  CHECK_ERROR(kiln::ValueError, kiln::conv2d(kiln::ones({2, 4, 5, 5}), w),
              "conv2d: given groups=1, weight of size [4, 3, 3, 3], expected input[2, 4, 5, 5] to "
              "have 3 channels, but got 4 channels instead");
  CHECK_ERROR(kiln::ValueError, kiln::conv2d(x, w, kiln::ones({5})),
              "conv2d: given weight of size [4, 3, 3, 3], expected bias to be 1-dimensional with "
              "4 elements, but got bias of size [5] instead");
  CHECK_ERROR(kiln::ValueError, kiln::conv2d(x, kiln::ones({4, 1, 3, 3}), {}, 1, 0, 1, 3),
              "conv2d: given groups=3, expected weight to be divisible by 3 at dimension 0");
  CHECK_ERROR(kiln::ValueError, kiln::conv2d(x, kiln::ones({4, 3, 7, 7})),
              "conv2d: calculated padded input size per channel: (5 x 5). Kernel size: (7 x 7). "
              "Kernel size can't be greater than actual input size");
  CHECK_ERROR(kiln::ValueError, kiln::conv2d(x, w, {}, 0),
              "conv2d: non-positive stride is not supported");
  CHECK_ERROR(kiln::ValueError, kiln::conv2d(x, w, {}, 1, -1),
              "conv2d: negative padding is not supported");
  CHECK_ERROR(kiln::ValueError, kiln::conv2d(x, w, {}, 1, 0, 0),
              "conv2d: dilation should be greater than zero");
  CHECK_ERROR(kiln::ValueError, kiln::conv2d(x, w, {}, {1, 1, 1}),
              "conv2d: expected stride to be a single integer or a list of 2 integers, but got "
              "[1, 1, 1]");
  CHECK_ERROR(kiln::ValueError, kiln::conv2d(kiln::ones({3, 5, 5}), w),
              "conv2d: expected a 4-D input [N, C, H, W], but got input of size [3, 5, 5]");
  CHECK_ERROR(kiln::TypeError, kiln::conv2d(x, w.to(kiln::kDouble)),
              "conv2d: expected input and weight to have the same dtype, but got float32 and "
              "float64");
  CHECK_ERROR(kiln::TypeError, kiln::conv2d(x.to(kiln::kLong), w.to(kiln::kLong)),
              "conv2d: expected a floating point input, but got int64");
  CHECK_ERROR(kiln::ValueError,
              kiln::conv2d_backward_input(kiln::ones({2, 4, 2, 2}), w, {2, 3, 5, 5}, 1, 0, 1, 1),
              "conv2d_backward_input: expected grad_output of size [2, 4, 3, 3] for input "
              "[2, 3, 5, 5] and weight [4, 3, 3, 3], but got [2, 4, 2, 2]");
  // empty batches are fine
  BOOST_CHECK_EQUAL(kiln::conv2d(kiln::ones({0, 3, 5, 5}), w).sizes(),
                    kiln::IntArrayRef({0, 4, 3, 3}));
}

BOOST_AUTO_TEST_SUITE_END()
