// The functional operators issue 15 added for libtorch's FunctionalTest: embedding_bag and
// embedding's options, bilinear, pdist, affine_grid, grid_sample and fractional max pooling
// against PyTorch's goldens (func_cases.txt: outputs and gradients) and finite differences;
// the dropout family and gumbel_softmax by their statistics; errors; autocast policies.
#include "golden.h"

#include <kiln/amp.h>
#include <kiln/gradcheck.h>

#include <cmath>

namespace F = kiln::nn::functional;
using kiln::Tensor;
using nn_test::check_case;
using nn_test::check_close;
using nn_test::golden;

namespace {

// gradcheck of fn over float64 inputs that require grad.
bool grads_match(const std::function<Tensor(const std::vector<Tensor>&)>& fn,
                 const std::vector<Tensor>& inputs) {
  return kiln::autograd::gradcheck(
      [&](const std::vector<Tensor>& v) { return std::vector<Tensor>{fn(v)}; }, inputs);
}

Tensor leaf(std::vector<int64_t> sizes, double low = -1.0, double high = 1.0) {
  return (kiln::rand(sizes, kiln::kDouble) * (high - low) + low).requires_grad_();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(func)

BOOST_AUTO_TEST_CASE(embedding_bag_matches_pytorch) {
  check_case("embedding_bag_sum_padding", {"w", "idx", "offsets"}, [](auto& v) {
    return F::embedding_bag(
        v[1], v[0], F::EmbeddingBagFuncOptions().offsets(v[2]).mode(kiln::kSum).padding_idx(4));
  });
  check_case("embedding_bag_mean_2d_padding", {"w", "idx"}, [](auto& v) {
    return F::embedding_bag(v[1], v[0], F::EmbeddingBagFuncOptions().padding_idx(2));
  });
  check_case("embedding_bag_max_last_offset", {"w", "idx", "offsets"}, [](auto& v) {
    return F::embedding_bag(
        v[1], v[0],
        F::EmbeddingBagFuncOptions().offsets(v[2]).mode(kiln::kMax).include_last_offset(true));
  });
  check_case("embedding_bag_per_sample_weights", {"w", "psw", "idx", "offsets"}, [](auto& v) {
    return F::embedding_bag(
        v[2], v[0],
        F::EmbeddingBagFuncOptions().offsets(v[3]).mode(kiln::kSum).per_sample_weights(v[1]));
  });
  // scale_grad_by_freq divides each row's gradient by its count in the batch, as documented
  // (PyTorch 1.13's CPU embedding_bag scales some rows by another entry's count: not followed;
  // func_cases.txt keeps its numbers as embedding_bag_mean_scale_grad)
  Tensor ones = kiln::ones({6, 1}, kiln::kDouble).requires_grad_();
  F::embedding_bag(golden("embedding_bag_mean_scale_grad", "idx"), ones,
                   F::EmbeddingBagFuncOptions().mode(kiln::kSum).scale_grad_by_freq(true))
      .sum()
      .backward();
  BOOST_CHECK(ones.grad().flatten().equal(kiln::tensor({1.0, 1.0, 0.0, 1.0, 0.0, 1.0},
                                                       kiln::kDouble)));
  // ATen's form: the bags of each entry and their sizes besides the output
  Tensor w = golden("embedding_bag_sum_padding", "w");
  auto [out, offset2bag, bag_size, max_indices] =
      kiln::embedding_bag(w, golden("embedding_bag_sum_padding", "idx"),
                          golden("embedding_bag_sum_padding", "offsets"), false, 0, false, Tensor(),
                          false, 4);
  check_close(out, golden("embedding_bag_sum_padding", "out"), 1e-12, 1e-12, "kiln::embedding_bag");
  BOOST_CHECK(offset2bag.equal(kiln::tensor({0, 0, 0, 2, 2, 2, 3, 3}, kiln::kLong)));
  BOOST_CHECK(bag_size.equal(kiln::tensor({2, 0, 2, 2}, kiln::kLong)));  // padding excluded
}

BOOST_AUTO_TEST_CASE(embedding_options_match_pytorch) {
  check_case("embedding_scale_grad", {"w", "idx"}, [](auto& v) {
    return F::embedding(v[1], v[0], F::EmbeddingFuncOptions().scale_grad_by_freq(true));
  });
  Tensor w = golden("embedding_max_norm", "w");
  Tensor out = F::embedding(golden("embedding_max_norm", "idx"), w,
                            F::EmbeddingFuncOptions().max_norm(1.5).norm_type(1.0));
  check_close(out, golden("embedding_max_norm", "out"), 1e-12, 1e-12, "embedding max_norm");
  check_close(w, golden("embedding_max_norm", "w_after"), 1e-12, 1e-12, "renormalised weight");
  // ATen's form, as torch::embedding
  Tensor table = kiln::rand({5, 2});
  Tensor idx = kiln::tensor({4, 0, 4}, kiln::kLong);
  BOOST_CHECK(kiln::embedding(table, idx).equal(table.index_select(0, idx)));
  BOOST_CHECK(F::one_hot(kiln::tensor({0, 2}, kiln::kLong), 3)
                  .equal(kiln::tensor({{1, 0, 0}, {0, 0, 1}}, kiln::kLong)));
}

BOOST_AUTO_TEST_CASE(embedding_bag_errors) {
  Tensor w = kiln::rand({5, 2});
  Tensor idx = kiln::tensor({0, 1, 2}, kiln::kLong);
  CHECK_ERROR(kiln::ValueError, F::embedding_bag(idx, w), "embedding_bag: offsets has to be a 1D",
              "got None");
  CHECK_ERROR(kiln::ValueError,
              F::embedding_bag(
                  idx, w, F::EmbeddingBagFuncOptions().offsets(kiln::tensor({1, 2}, kiln::kLong))),
              "offsets[0] has to be 0", "got 1");
  CHECK_ERROR(kiln::ValueError,
              F::embedding_bag(idx.view({1, 3}), w,
                               F::EmbeddingBagFuncOptions().offsets(kiln::tensor({0},
                                                                                 kiln::kLong))),
              "if input is 2D, then offsets has to be None");
  CHECK_ERROR(kiln::ValueError,
              F::embedding_bag(idx, w,
                               F::EmbeddingBagFuncOptions()
                                   .offsets(kiln::tensor({0}, kiln::kLong))
                                   .per_sample_weights(kiln::ones({3}))),
              "per_sample_weights is only supported for mode='sum' (got mode='mean')");
  CHECK_ERROR(kiln::TypeError, F::embedding_bag(kiln::ones({2, 2}), w),
              "embedding_bag: expected indices of dtype int64 or int32, but got float32");
  CHECK_ERROR(kiln::ValueError, F::EmbeddingBagFuncOptions().mode(kiln::kNone),
              "mode must be kiln::kSum, kiln::kMean or kiln::kMax");
}

BOOST_AUTO_TEST_CASE(embedding_bag_gradcheck) {
  Tensor w = leaf({6, 3});
  Tensor idx = kiln::tensor({0, 5, 2, 2, 4, 1}, kiln::kLong);
  Tensor offsets = kiln::tensor({0, 2, 2}, kiln::kLong);
  for (auto mode : {kiln::nn::EmbeddingBagMode(kiln::kSum), kiln::nn::EmbeddingBagMode(kiln::kMean),
                    kiln::nn::EmbeddingBagMode(kiln::kMax)}) {
    BOOST_CHECK(grads_match(
        [&](const std::vector<Tensor>& v) {
          return F::embedding_bag(idx, v[0],
                                  F::EmbeddingBagFuncOptions().offsets(offsets).mode(mode));
        },
        {w}));
  }
}

BOOST_AUTO_TEST_CASE(bilinear_and_pdist_match_pytorch) {
  check_case("bilinear", {"x1", "x2", "w", "b"},
             [](auto& v) { return F::bilinear(v[0], v[1], v[2], v[3]); });
  check_case("bilinear_3d_nobias", {"x1", "x2", "w"},
             [](auto& v) { return F::bilinear(v[0], v[1], v[2]); });
  check_case("pdist", {"x"}, [](auto& v) { return F::pdist(v[0]); });
  check_case("pdist_p1_5", {"x"}, [](auto& v) { return F::pdist(v[0], 1.5); });
  check_case("pdist_p1", {"x"}, [](auto& v) { return F::pdist(v[0], 1.0); });
  check_case("pdist_inf", {"x"}, [](auto& v) { return F::pdist(v[0], INFINITY); });
  // integer inputs, as libtorch's FunctionalTest.Bilinear gives them
  Tensor y = F::bilinear(kiln::tensor({{1, 2, 3}, {7, 6, 5}}), kiln::tensor({{7, 4}, {8, 9}}),
                         kiln::tensor({{{2, 3}, {9, 7}, {8, 6}}}), kiln::tensor({1}));
  BOOST_CHECK(y.equal(kiln::tensor({{449}, {1702}})));
  BOOST_CHECK(grads_match([](const auto& v) { return F::bilinear(v[0], v[1], v[2], v[3]); },
                          {leaf({2, 3}), leaf({2, 2}), leaf({2, 3, 2}), leaf({2})}));
  BOOST_CHECK(grads_match([](const auto& v) { return F::pdist(v[0], 3.0); }, {leaf({4, 3})}));
  CHECK_ERROR(kiln::ValueError,
              F::bilinear(kiln::ones({2, 3}), kiln::ones({2, 2}), kiln::ones({1, 4, 2})),
              "bilinear(): input1 size does not match weight size: got 3 but expected 4");
  CHECK_ERROR(kiln::ValueError,
              F::bilinear(kiln::ones({2, 3}), kiln::ones({3, 2}), kiln::ones({1, 3, 2})),
              "bilinear(): input batch dimensions do not match: got [2, 3] and [3, 2]");
  CHECK_ERROR(kiln::ValueError, F::pdist(kiln::ones({2, 3, 4})),
              "pdist: only supports 2D tensors, got: 3D");
  CHECK_ERROR(kiln::ValueError, F::pdist(kiln::ones({2, 3}), -1.0),
              "pdist: only supports non-negative p values, got -1");
  BOOST_CHECK_EQUAL(F::pdist(kiln::ones({1, 3})).numel(), 0);
}

BOOST_AUTO_TEST_CASE(affine_grid_matches_pytorch) {
  for (std::string suffix : {"", "_align"}) {
    bool align = !suffix.empty();
    check_case("affine_grid_2d" + suffix, {"theta"}, [&](auto& v) {
      return F::affine_grid(v[0], {2, 3, 4, 5}, align);
    });
    check_case("affine_grid_3d" + suffix, {"theta"}, [&](auto& v) {
      return F::affine_grid(v[0], {2, 1, 3, 4, 2}, align);
    });
  }
  BOOST_CHECK(grads_match(
      [](const auto& v) {
        return F::affine_grid(v[0], {1, 1, 2, 3});
      },
      {leaf({1, 2, 3})}));
  CHECK_ERROR(kiln::ValueError, F::affine_grid(kiln::empty({2, 2, 3}), {-1, 1, 2, 2}),
              "affine_grid: Expected non-zero, positive output size. Got [-1, 1, 2, 2]");
  CHECK_ERROR(kiln::TypeError, F::affine_grid(kiln::empty({1, 2, 3}, kiln::kInt), {1, 1, 2, 2}),
              "Expected theta to have floating point type, but got int32");
  CHECK_ERROR(kiln::ValueError, F::affine_grid(kiln::empty({1, 3, 4}), {1, 1, 2, 2}),
              "Expected a batch of 2D affine matrices of shape Nx2x3 for size [1, 1, 2, 2]. Got "
              "[1, 3, 4].");
  CHECK_ERROR(kiln::ValueError, F::affine_grid(kiln::empty({1, 3, 4}), {1, 1}),
              "affine_grid only supports 4D and 5D sizes");
}

BOOST_AUTO_TEST_CASE(grid_sample_matches_pytorch) {
  for (std::string mode : {"bilinear", "nearest"}) {
    for (std::string padding : {"zeros", "border", "reflection"}) {
      for (bool align : {false, true}) {
        F::GridSampleFuncOptions options;
        options.align_corners(align);
        if (mode == "nearest") options.mode(kiln::kNearest);
        if (padding == "border") options.padding_mode(kiln::kBorder);
        if (padding == "reflection") options.padding_mode(kiln::kReflection);
        std::string suffix = padding + (align ? "_align" : "");
        check_case("grid_sample_" + mode + "_" + suffix, {"x", "grid"},
                   [&](auto& v) { return F::grid_sample(v[0], v[1], options); });
        std::string name3d = mode == "nearest" ? "grid_sample_3d_nearest_" : "grid_sample_3d_";
        check_case(name3d + suffix, {"x", "grid"},
                   [&](auto& v) { return F::grid_sample(v[0], v[1], options); });
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(grid_sample_gradcheck_and_errors) {
  for (bool reflection : {false, true}) {
    F::GridSampleFuncOptions options;
    options.align_corners(reflection);
    if (reflection) options.padding_mode(kiln::kReflection);
    BOOST_CHECK(grads_match([&](const auto& v) { return F::grid_sample(v[0], v[1], options); },
                            {leaf({1, 2, 3, 4}), leaf({1, 2, 2, 2}, -1.2, 1.2)}));
  }
  Tensor x = kiln::ones({1, 1, 3, 3});
  CHECK_ERROR(kiln::TypeError, F::grid_sample(x, kiln::zeros({1, 2, 2, 2}, kiln::kDouble)),
              "grid_sampler(): expected input and grid to have same dtype, but input has float32 "
              "and grid has float64");
  CHECK_ERROR(kiln::ValueError, F::grid_sample(x, kiln::zeros({2, 2, 2, 2})),
              "expected grid and input to have same batch size");
  CHECK_ERROR(kiln::ValueError, F::grid_sample(x, kiln::zeros({1, 2, 2, 3})),
              "expected grid to have size 2 in last dimension");
  CHECK_ERROR(kiln::ValueError, F::grid_sample(x.view({1, 3, 3}), kiln::zeros({1, 2, 2})),
              "expected 4D or 5D input and grid with same number of dimensions");
}

BOOST_AUTO_TEST_CASE(fractional_max_pool_matches_pytorch) {
  for (const char* name : {"fractional_max_pool2d", "fractional_max_pool2d_ratio_unbatched",
                           "fractional_max_pool3d"}) {
    Tensor x = golden(name, "x", std::nullopt, true);
    Tensor samples = golden(name, "samples");
    Tensor out, indices;
    if (std::string(name) == "fractional_max_pool3d") {
      std::tie(out, indices) = F::fractional_max_pool3d_with_indices(
          x, F::FractionalMaxPool3dFuncOptions({2, 3, 2}).output_size({3, 4, 5})._random_samples(
                 samples));
    } else if (std::string(name) == "fractional_max_pool2d") {
      std::tie(out, indices) = F::fractional_max_pool2d_with_indices(
          x,
          F::FractionalMaxPool2dFuncOptions({3, 2}).output_size({4, 5})._random_samples(samples));
    } else {
      std::tie(out, indices) = F::fractional_max_pool2d_with_indices(
          x, F::FractionalMaxPool2dFuncOptions(2).output_ratio(0.5)._random_samples(samples));
    }
    check_close(out, golden(name, "out"), 1e-12, 1e-12, std::string(name) + " out");
    BOOST_CHECK(indices.equal(golden(name, "indices")));
    kiln::sum(out * golden(name, "gy")).backward();
    check_close(x.grad(), golden(name, "grad_x"), 1e-12, 1e-12, std::string(name) + " grad");
  }
  // float32 places the windows in float32 arithmetic, as ATen
  Tensor x = golden("fractional_max_pool2d", "x", kiln::kFloat);
  auto [out, indices] = F::fractional_max_pool2d_with_indices(
      x, F::FractionalMaxPool2dFuncOptions({3, 2}).output_size({4, 5})._random_samples(
             golden("fractional_max_pool2d", "samples", kiln::kFloat)));
  BOOST_CHECK(indices.equal(golden("fractional_max_pool2d", "indices")));
  BOOST_CHECK(grads_match(
      [](const auto& v) {
        return F::fractional_max_pool2d(
            v[0], F::FractionalMaxPool2dFuncOptions(2).output_size(3)._random_samples(
                      kiln::full({1, 1, 2}, 0.3, kiln::kDouble)));
      },
      {leaf({1, 1, 5, 5})}));
  CHECK_ERROR(kiln::ValueError,
              F::fractional_max_pool2d(kiln::ones({1, 1, 5, 5}),
                                       F::FractionalMaxPool2dFuncOptions(3)),
              "fractional_max_pool2d requires specifying either an output_size or an "
              "output_ratio");
  CHECK_ERROR(kiln::ValueError,
              F::fractional_max_pool2d(kiln::ones({1, 1, 5, 5}),
                                       F::FractionalMaxPool2dFuncOptions(3).output_size(4)),
              "fractional_max_pool2d: pool size 3 of spatial dimension 0 too large relative to "
              "input size 5");
  // without samples: drawn from the default generator, the windows still of the right size
  auto [y, where] =
      F::fractional_max_pool2d_with_indices(kiln::ones({2, 5, 5}),
                                            F::FractionalMaxPool2dFuncOptions(3).output_size(2));
  BOOST_CHECK(where.equal(kiln::tensor({{{0, 2}, {10, 12}}, {{0, 2}, {10, 12}}}, kiln::kLong)));
}

BOOST_AUTO_TEST_CASE(autocast_policies) {
  kiln::amp::autocast region(kiln::kCPU);
  Tensor x = kiln::rand({1, 1, 4, 4}).to(kiln::kBFloat16);
  Tensor grid = (kiln::rand({1, 2, 2, 2}) * 2 - 1).to(kiln::kBFloat16);
  F::GridSampleFuncOptions options;
  options.align_corners(false);
  BOOST_CHECK(F::grid_sample(x, grid, options).dtype() == kiln::kFloat);
  BOOST_CHECK(
      F::fractional_max_pool2d(x, F::FractionalMaxPool2dFuncOptions(2).output_size(2)).dtype() ==
      kiln::kFloat);
  // not on the CPU's lists: as they come
  Tensor a = kiln::rand({2, 3}).to(kiln::kBFloat16);
  BOOST_CHECK(F::pdist(a).dtype() == kiln::kBFloat16);
}

BOOST_AUTO_TEST_CASE(dropout_family_statistics) {
  kiln::manual_seed(0);
  // dropout2d: whole channels are zero or scaled by 1 / (1 - p)
  Tensor x = kiln::ones({8, 16, 3, 3});
  Tensor y = F::dropout2d(x, F::Dropout2dFuncOptions().p(0.5));
  Tensor per_channel = kiln::amax(y, {2, 3}) - kiln::amin(y, {2, 3});
  BOOST_CHECK_EQUAL(kiln::amax(per_channel).item<double>(), 0.0);
  double kept = kiln::mean(kiln::gt(y, 0.0).to(kiln::kFloat)).item<double>();
  BOOST_CHECK_GT(kept, 0.35);
  BOOST_CHECK_LT(kept, 0.65);
  BOOST_CHECK_EQUAL(kiln::amax(y).item<double>(), 2.0);
  // unbatched 3-D input to dropout3d, evaluation is the identity, in place writes the input
  BOOST_CHECK(F::dropout3d(kiln::ones({2, 3, 2, 2})).sizes().equals({2, 3, 2, 2}));
  BOOST_CHECK(F::dropout2d(x, F::Dropout2dFuncOptions().training(false)).is_same(x));
  Tensor z = kiln::ones({4, 5});
  Tensor r = F::dropout(z, F::DropoutFuncOptions().p(0.5).inplace(true));
  BOOST_CHECK(r.is_same(z));
  // alpha dropout keeps mean 0 and variance 1 of a standard normal input
  Tensor n = kiln::randn({20000});
  Tensor a = F::alpha_dropout(n, F::AlphaDropoutFuncOptions().p(0.3).training(true));
  BOOST_CHECK_SMALL(kiln::mean(a).item<double>(), 0.05);
  BOOST_CHECK_CLOSE(kiln::std(a).item<double>(), 1.0, 5.0);
  BOOST_CHECK(F::alpha_dropout(n).is_same(n));  // training is off by default
  Tensor f = F::feature_alpha_dropout(kiln::ones({6, 40, 2}),
                                      F::FeatureAlphaDropoutFuncOptions().p(0.5).training(true));
  Tensor spread = kiln::amax(f, {2}) - kiln::amin(f, {2});
  BOOST_CHECK_EQUAL(kiln::amax(spread).item<double>(), 0.0);
  CHECK_ERROR(kiln::ValueError, F::dropout2d(kiln::ones({2, 2})),
              "dropout2d: expected 3-D or 4-D input");
  CHECK_ERROR(kiln::ValueError, F::dropout(x, F::DropoutFuncOptions().p(1.5)),
              "dropout: dropout probability has to be between 0 and 1, but got 1.5");
  CHECK_ERROR(kiln::ValueError,
              F::feature_alpha_dropout(kiln::ones({4}),
                                       F::FeatureAlphaDropoutFuncOptions().training(true)),
              "feature dropout requires at least 2 dimensions");
  // the gradient is the mask's scale
  Tensor g = kiln::ones({4, 8, 2}).requires_grad_();
  Tensor out = F::dropout1d(g, F::Dropout1dFuncOptions().p(0.5));
  out.sum().backward();
  BOOST_CHECK(g.grad().equal(out.detach()));
}

BOOST_AUTO_TEST_CASE(gumbel_softmax_samples) {
  kiln::manual_seed(0);
  Tensor logits = kiln::log(kiln::tensor({0.1, 0.2, 0.7}, kiln::kDouble));
  Tensor draws =
      F::gumbel_softmax(logits.expand({4000, 3}), F::GumbelSoftmaxFuncOptions().hard(true).dim(1));
  BOOST_CHECK(kiln::sum(draws, {1}).equal(kiln::ones({4000}, kiln::kDouble)));
  // hard samples pick each class with its probability (Gumbel-max)
  std::vector<double> freq = nn_test::values(kiln::mean(draws, {0}));
  BOOST_CHECK_CLOSE(freq[0], 0.1, 20.0);
  BOOST_CHECK_CLOSE(freq[2], 0.7, 5.0);
  // soft samples: a distribution along dim with the soft sample's gradient
  Tensor l = kiln::randn({5, 4}, kiln::kDouble).requires_grad_();
  Tensor soft = F::gumbel_softmax(l, F::GumbelSoftmaxFuncOptions().tau(0.5).dim(0));
  check_close(kiln::sum(soft, {0}), kiln::ones({4}, kiln::kDouble), 1e-12, 1e-12, "sums");
  kiln::sum(F::gumbel_softmax(l, F::GumbelSoftmaxFuncOptions().hard(true)) *
            kiln::arange(4, kiln::kDouble))
      .backward();
  BOOST_CHECK(l.grad().defined());
  BOOST_CHECK_GT(kiln::amax(kiln::abs(l.grad())).item<double>(), 0.0);
  CHECK_ERROR(kiln::ValueError, F::gumbel_softmax(l, F::GumbelSoftmaxFuncOptions().tau(0)),
              "gumbel_softmax: tau must be positive");
}

BOOST_AUTO_TEST_SUITE_END()
