// Convolutions beyond Conv2d against PyTorch's goldens (tests/golden/make_layers_golden.py):
// conv1d and conv3d (stride, padding, dilation, groups, padding 'same'), the padding modes
// (reflect, replicate, circular), transposed convolutions in 1, 2 and 3 dimensions
// (output_padding, groups, dilation), fold and unfold; forward and gradients; the modules,
// their reprs and errors.
#include "golden.h"

namespace nn = kiln::nn;
namespace F = kiln::nn::functional;
using kiln::Tensor;
using nn_test::check_case;
using nn_test::check_close;
using nn_test::golden;

namespace {

std::string repr(const nn::Module& m) {
  std::ostringstream s;
  m.pretty_print(s);
  return s.str();
}

// Copies case `name`'s w and b (when present) into a module's parameters.
template <class Module>
void load(Module& m, const std::string& name) {
  kiln::NoGradGuard no_grad;
  m->weight.copy_(golden(name, "w"));
  if (m->bias.defined()) m->bias.copy_(golden(name, "b"));
}

}  // namespace

BOOST_AUTO_TEST_SUITE(conv_nd)

BOOST_AUTO_TEST_CASE(conv1d_and_conv3d_match_pytorch) {
  check_case("conv1d", {"x", "w", "b"}, [](auto& v) {
    return F::conv1d(v[0], v[1],
                     F::Conv1dFuncOptions().bias(v[2]).stride(2).padding(1).dilation(2).groups(2));
  });
  check_case("conv1d_same", {"x", "w"}, [](auto& v) {
    return F::conv1d(v[0], v[1], F::Conv1dFuncOptions().padding(kiln::kSame));
  });
  check_case("conv3d", {"x", "w", "b"}, [](auto& v) {
    return kiln::conv3d(v[0], v[1], v[2], {2, 1, 2}, {1, 0, 1}, {1, 2, 1}, 2);
  });
  check_case("conv3d_same", {"x", "w"}, [](auto& v) {
    return F::conv3d(v[0], v[1], F::Conv3dFuncOptions().padding(kiln::kSame));
  });
  // the modules, unbatched too
  nn::Conv3d conv(nn::Conv3dOptions(4, 6, {3, 2, 3})
                      .stride({2, 1, 2})
                      .padding({1, 0, 1})
                      .dilation({1, 2, 1})
                      .groups(2));
  load(conv, "conv3d");
  Tensor x = golden("conv3d", "x", kiln::kFloat);
  check_close(conv(x), golden("conv3d", "out"), 1e-5, 1e-5, "Conv3d");
  check_close(conv(x[1]), golden("conv3d", "out")[1], 1e-5, 1e-5, "unbatched Conv3d");
  nn::Conv1d conv1(nn::Conv1dOptions(3, 4, 4).padding(kiln::kSame).bias(false));
  load(conv1, "conv1d_same");
  check_close(conv1(golden("conv1d_same", "x", kiln::kFloat)), golden("conv1d_same", "out"), 1e-5,
              1e-5, "Conv1d same");
}

BOOST_AUTO_TEST_CASE(padding_modes_match_pytorch) {
  std::vector<std::pair<std::string, nn::PaddingMode>> modes = {
      {"reflect", kiln::kReflect}, {"replicate", kiln::kReplicate}, {"circular", kiln::kCircular}};
  for (const auto& [label, mode] : modes) {
    const std::string name = "conv1d_" + label;
    // the module's output and the gradient of its input
    check_case(
        name, {"x"},
        [&, mode = mode](auto& v) {
          nn::Conv1d conv(nn::Conv1dOptions(3, 2, 3).padding(2).padding_mode(mode));
          load(conv, name);
          return conv(v[0].to(kiln::kFloat)).to(kiln::kDouble);
        },
        1e-5);
  }
  nn::Conv2d conv(
      nn::Conv2dOptions(2, 3, {3, 2}).padding(kiln::kSame).padding_mode(kiln::kReflect));
  load(conv, "conv2d_reflect_same");
  check_close(conv(golden("conv2d_reflect_same", "x", kiln::kFloat)),
              golden("conv2d_reflect_same", "out"), 1e-5, 1e-5, "Conv2d reflect same");
  BOOST_TEST(repr(*conv) == "kiln::nn::Conv2d(2, 3, kernel_size=[3, 2], stride=[1, 1], "
                            "padding='same', padding_mode=kReflect)");
  CHECK_ERROR(kiln::ValueError,
              nn::Conv1d(nn::Conv1dOptions(1, 1, 3).padding(4).padding_mode(kiln::kReflect))(
                  kiln::ones({1, 1, 4})),
              "Conv1d: padding (4, 4) with padding_mode='reflect' must be smaller than the input "
              "size 4");
}

BOOST_AUTO_TEST_CASE(transposed_convolutions_match_pytorch) {
  check_case("conv_transpose1d", {"x", "w", "b"}, [](auto& v) {
    return F::conv_transpose1d(v[0], v[1],
                               F::ConvTranspose1dFuncOptions()
                                   .bias(v[2])
                                   .stride(2)
                                   .padding(1)
                                   .output_padding(1)
                                   .groups(2)
                                   .dilation(2));
  });
  check_case("conv_transpose2d", {"x", "w", "b"}, [](auto& v) {
    return kiln::conv_transpose2d(v[0], v[1], v[2], {2, 3}, {1, 0}, {1, 2}, 1, {1, 2});
  });
  check_case("conv_transpose3d", {"x", "w", "b"}, [](auto& v) {
    nn::ConvTranspose3d conv(nn::ConvTranspose3dOptions(4, 2, {3, 2, 2})
                                 .stride({2, 1, 2})
                                 .padding({1, 0, 1})
                                 .output_padding({1, 0, 0})
                                 .groups(2));
    return F::conv_transpose3d(v[0], v[1],
                               F::ConvTranspose3dFuncOptions()
                                   .bias(v[2])
                                   .stride(conv->options.stride())
                                   .padding(conv->options.padding())
                                   .output_padding(conv->options.output_padding())
                                   .groups(2));
  });
  nn::ConvTranspose2d conv(nn::ConvTranspose2dOptions(3, 2, {3, 2})
                               .stride({2, 3})
                               .padding({1, 0})
                               .output_padding({1, 2})
                               .dilation({1, 2}));
  load(conv, "conv_transpose2d");
  Tensor x = golden("conv_transpose2d", "x", kiln::kFloat);
  check_close(conv(x), golden("conv_transpose2d", "out"), 1e-5, 1e-5, "ConvTranspose2d");
  check_close(conv(x[0]), golden("conv_transpose2d", "out")[0], 1e-5, 1e-5, "unbatched");
  BOOST_TEST(conv->weight.sizes().equals({3, 2, 3, 2}));
  // output_size picks output_padding, as libtorch's
  nn::ConvTranspose2d plain(
      nn::ConvTranspose2dOptions(3, 2, {3, 2}).stride({2, 3}).padding({1, 0}).dilation({1, 2}));
  load(plain, "conv_transpose2d");
  check_close(plain->forward(x, std::vector<int64_t>{8, 17}), golden("conv_transpose2d", "out"),
              1e-5, 1e-5, "ConvTranspose2d with output_size");
  CHECK_ERROR(kiln::ValueError, plain->forward(x, std::vector<int64_t>{2, 2, 9, 16}),
              "ConvTranspose2d: requested an output size of [2, 2, 9, 16], but valid sizes of "
              "dimension 0 range from 7 to 8");
  BOOST_TEST(repr(*conv) ==
             "kiln::nn::ConvTranspose2d(3, 2, kernel_size=[3, 2], stride=[2, 3], padding=[1, 0], "
             "dilation=[1, 2], output_padding=[1, 2])");
  CHECK_ERROR(kiln::ValueError, kiln::conv_transpose2d(x, conv->weight, {}, 2, 0, 2),
              "conv_transpose2d: output padding must be smaller than either stride or dilation");
  CHECK_ERROR(kiln::ValueError, kiln::conv_transpose2d(x, conv->weight.narrow(0, 0, 2)),
              "conv_transpose2d: given transposed weight of size [2, 2, 3, 2], expected input "
              "[2, 3, 4, 5] to have 2 channels, but got 3 channels instead");
  CHECK_ERROR(kiln::ValueError,
              kiln::conv_transpose1d(kiln::ones({1, 1, 1}), kiln::ones({1, 1, 1}), {}, 1, 1),
              "conv_transpose1d: given input of size [1, 1, 1] and weight of size [1, 1, 1], the "
              "calculated output size -1 of spatial dimension 0 is too small");
  CHECK_ERROR(
      kiln::ValueError,
      nn::ConvTranspose1d(nn::ConvTranspose1dOptions(2, 2, 3).padding_mode(kiln::kCircular)),
      "ConvTranspose1d: only padding_mode='zeros' is supported (got 'circular')");
}

BOOST_AUTO_TEST_CASE(fold_and_unfold_match_pytorch) {
  check_case("unfold", {"x"}, [](auto& v) {
    return nn::Unfold(nn::UnfoldOptions({2, 3}).dilation({1, 2}).padding({1, 0}).stride({2,
                                                                                         1}))(v[0]);
  });
  check_case("fold", {"x"}, [](auto& v) {
    return F::fold(v[0], F::FoldFuncOptions({5, 6}, {2, 3}).padding({1, 0}).stride({2, 1}));
  });
  BOOST_TEST(repr(*nn::Fold(nn::FoldOptions({5, 6}, 2))) ==
             "kiln::nn::Fold(output_size=[5, 6], kernel_size=[2, 2], dilation=[1, 1], "
             "padding=[0, 0], stride=[1, 1])");
  CHECK_ERROR(kiln::ValueError,
              F::fold(kiln::ones({2, 12, 10}), F::FoldFuncOptions({5, 6}, {2, 3})),
              "fold: given output_size=[5, 6], kernel_size=[2, 3], dilation=[1, 1], "
              "padding=[0, 0], stride=[1, 1], expected size of input's dimension 2 to match the "
              "calculated number of sliding blocks 4 * 4 = 16, but got input.size(2)=10");
  CHECK_ERROR(kiln::ValueError, F::fold(kiln::ones({2, 5, 16}), F::FoldFuncOptions({5, 6}, {2, 3})),
              "fold: expected size of input's dimension 1 to be divisible by the product of "
              "kernel_size, but got input.size(1)=5 and kernel_size=[2, 3]");
  CHECK_ERROR(kiln::ValueError,
              F::fold(kiln::ones({1, 3, 16, 16}), F::FoldFuncOptions({4, 5}, {2, 2})),
              "fold: Input Error: Only unbatched (2D) or batched (3D) input Tensors are supported "
              "(got 4D)");
}

BOOST_AUTO_TEST_CASE(conv_module_reprs_and_errors) {
  BOOST_TEST(repr(*nn::Conv1d(nn::Conv1dOptions(3, 4, 5).stride(2).groups(1).bias(false))) ==
             "kiln::nn::Conv1d(3, 4, kernel_size=5, stride=2, bias=false)");
  // one-dimensional sizes print alone, as libtorch's ExpandingArray<1> (PrettyPrintConv)
  BOOST_TEST(repr(*nn::ConvTranspose1d(
                 nn::ConvTranspose1dOptions(3, 4, 5).stride(2).padding(1).output_padding(1))) ==
             "kiln::nn::ConvTranspose1d(3, 4, kernel_size=5, stride=2, padding=1, "
             "output_padding=1)");
  BOOST_TEST(
      repr(*nn::Conv3d(nn::Conv3dOptions(2, 4, 3).padding(1).dilation(2).groups(2).padding_mode(
          kiln::kCircular))) ==
      "kiln::nn::Conv3d(2, 4, kernel_size=[3, 3, 3], stride=[1, 1, 1], padding=[1, 1, 1], "
      "dilation=[2, 2, 2], groups=2, padding_mode=kCircular)");
  CHECK_ERROR(
      kiln::ValueError, nn::Conv2d(nn::Conv2dOptions(2, 2, 3).padding(kiln::kSame).stride(2)),
      "Conv2d: padding='same' is not supported for strided convolutions (got stride=[2, 2])");
  CHECK_ERROR(kiln::ValueError, nn::Conv3d(nn::Conv3dOptions(3, 4, 3).groups(2)),
              "Conv3d: in_channels must be divisible by groups (got in_channels=3, groups=2)");
  CHECK_ERROR(kiln::ValueError,
              F::conv1d(kiln::ones({1, 2, 5}), kiln::ones({2, 2, 3}),
                        F::Conv1dFuncOptions().stride(2).padding(kiln::kSame)),
              "conv1d: padding='same' is not supported for strided convolutions");
  CHECK_ERROR(kiln::ValueError, kiln::conv3d(kiln::ones({2, 3, 3}), kiln::ones({2, 2, 1, 1, 1})),
              "conv3d: expected 4D (unbatched) or 5D (batched) input, but got input of size: "
              "[2, 3, 3]");
  CHECK_ERROR(
      kiln::ValueError, kiln::conv3d(kiln::ones({1, 2, 2, 3, 3}), kiln::ones({2, 2, 3, 1, 1})),
      "conv3d: calculated padded input depth 2 is smaller than the dilated kernel's depth 3");
  CHECK_ERROR(kiln::ValueError,
              kiln::conv1d(kiln::ones({1, 2, 5}), kiln::ones({2, 2, 3}), {}, {1, 1}),
              "conv1d: expected stride to be a single integer or a list of 1 integers");
}

BOOST_AUTO_TEST_SUITE_END()
