// Normalization beyond BatchNorm2d and LayerNorm against PyTorch's goldens
// (tests/golden/make_layers_golden.py): batch_norm on 3-D and 5-D inputs, instance_norm (with
// running statistics), group_norm, local_response_norm and normalize, forward and gradients;
// the modules BatchNorm1d/3d, InstanceNorm1d/2d/3d, GroupNorm and LocalResponseNorm, their
// buffers, reprs and errors.
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

}  // namespace

BOOST_AUTO_TEST_SUITE(normalization)

BOOST_AUTO_TEST_CASE(batch_norm_options_match_pytorch) {
  Tensor rm = golden("batch_norm_3d_train", "rm"), rv = golden("batch_norm_3d_train", "rv");
  check_case("batch_norm_3d_train", {"x", "w", "b"}, [&](auto& v) {
    return F::batch_norm(
        v[0], rm, rv,
        F::BatchNormFuncOptions().weight(v[1]).bias(v[2]).training(true).momentum(0.2));
  });
  check_close(rm, golden("batch_norm_3d_train", "rm_after"), 1e-12, 1e-12, "running_mean");
  check_close(rv, golden("batch_norm_3d_train", "rv_after"), 1e-12, 1e-12, "running_var");
  check_case("batch_norm_5d_eval", {"x", "w", "b"}, [](auto& v) {
    return F::batch_norm(v[0], golden("batch_norm_5d_eval", "rm"),
                         golden("batch_norm_5d_eval", "rv"),
                         F::BatchNormFuncOptions().weight(v[1]).bias(v[2]).eps(1e-3));
  });
  CHECK_ERROR(kiln::ValueError,
              F::batch_norm(kiln::ones({2, 3}), Tensor(), Tensor(),
                            F::BatchNormFuncOptions().training(true).momentum(std::nullopt)),
              "batch_norm: momentum must be a number");
}

BOOST_AUTO_TEST_CASE(batch_norm_1d_and_3d_modules) {
  // the module in training: the functional form's numbers, and its buffers
  nn::BatchNorm1d bn(nn::BatchNorm1dOptions(3).momentum(0.2));
  {
    kiln::NoGradGuard no_grad;
    bn->weight.copy_(golden("batch_norm_3d_train", "w"));
    bn->bias.copy_(golden("batch_norm_3d_train", "b"));
    bn->running_mean.copy_(golden("batch_norm_3d_train", "rm"));
    bn->running_var.copy_(golden("batch_norm_3d_train", "rv"));
  }
  Tensor x = golden("batch_norm_3d_train", "x", kiln::kFloat);
  check_close(bn(x), golden("batch_norm_3d_train", "out"), 1e-5, 1e-5, "BatchNorm1d");
  check_close(bn->running_mean, golden("batch_norm_3d_train", "rm_after"), 1e-6, 1e-6,
              "BatchNorm1d running_mean");
  BOOST_TEST(bn->num_batches_tracked.item<int64_t>() == 1);
  BOOST_TEST(bn(kiln::randn({5, 3})).sizes().equals({5, 3}));  // [N, C] too
  CHECK_ERROR(kiln::ValueError, bn(kiln::ones({2, 3, 4, 5})),
              "BatchNorm1d: expected 2D or 3D input (got 4D input of size [2, 3, 4, 5])");
  nn::BatchNorm3d bn3(nn::BatchNormOptions(3).eps(1e-3));
  bn3->eval();
  {
    kiln::NoGradGuard no_grad;
    bn3->weight.copy_(golden("batch_norm_5d_eval", "w"));
    bn3->bias.copy_(golden("batch_norm_5d_eval", "b"));
    bn3->running_mean.copy_(golden("batch_norm_5d_eval", "rm"));
    bn3->running_var.copy_(golden("batch_norm_5d_eval", "rv"));
  }
  check_close(bn3(golden("batch_norm_5d_eval", "x", kiln::kFloat)),
              golden("batch_norm_5d_eval", "out"), 1e-5, 1e-5, "BatchNorm3d");
  CHECK_ERROR(kiln::ValueError, bn3(kiln::ones({2, 3, 4, 5})),
              "BatchNorm3d: expected 5D input (got 4D input");
  BOOST_TEST(repr(*bn) == "kiln::nn::BatchNorm1d(3, eps=1e-05, momentum=0.2, affine=true, "
                          "track_running_stats=true)");
  BOOST_TEST(repr(*nn::BatchNorm3d(nn::BatchNormOptions(4).momentum(std::nullopt))) ==
             "kiln::nn::BatchNorm3d(4, eps=1e-05, momentum=None, affine=true, "
             "track_running_stats=true)");
}

BOOST_AUTO_TEST_CASE(instance_norm_matches_pytorch) {
  Tensor rm = golden("instance_norm", "rm"), rv = golden("instance_norm", "rv");
  check_case("instance_norm", {"x", "w", "b"}, [&](auto& v) {
    return F::instance_norm(v[0], F::InstanceNormFuncOptions()
                                      .running_mean(rm)
                                      .running_var(rv)
                                      .weight(v[1])
                                      .bias(v[2])
                                      .momentum(0.3));
  });
  check_close(rm, golden("instance_norm", "rm_after"), 1e-12, 1e-12, "running_mean");
  check_close(rv, golden("instance_norm", "rv_after"), 1e-12, 1e-12, "running_var");
  check_case("instance_norm_eval", {"x"}, [](auto& v) {
    return F::instance_norm(v[0], F::InstanceNormFuncOptions()
                                      .running_mean(golden("instance_norm_eval", "rm"))
                                      .running_var(golden("instance_norm_eval", "rv"))
                                      .use_input_stats(false));
  });
  check_case("instance_norm_3d", {"x"}, [](auto& v) { return nn::InstanceNorm3d(4)(v[0]); });
  // the module: unbatched input, running statistics in training and evaluation
  nn::InstanceNorm1d norm(nn::InstanceNorm1dOptions(3).track_running_stats(true));
  Tensor x = golden("instance_norm_eval", "x");
  check_close(norm(x[0]), F::instance_norm(x.narrow(0, 0, 1)).squeeze(0), 1e-6, 1e-6,
              "unbatched InstanceNorm1d");
  BOOST_TEST(!kiln::allclose(norm->running_mean, kiln::zeros({3})));
  norm->eval();
  Tensor expected = (x - norm->running_mean.view({1, 3, 1})) /
                    kiln::sqrt(norm->running_var.view({1, 3, 1}) + 1e-5);
  check_close(norm(x.to(kiln::kFloat)), expected, 1e-5, 1e-5, "InstanceNorm1d in evaluation");
  BOOST_TEST(repr(*nn::InstanceNorm2d(nn::InstanceNormOptions(3).affine(true))) ==
             "kiln::nn::InstanceNorm2d(3, eps=1e-05, momentum=0.1, affine=true, "
             "track_running_stats=false)");
  BOOST_TEST(nn::InstanceNorm2d(3)->parameters().empty());
  CHECK_ERROR(kiln::ValueError, nn::InstanceNorm2d(3)(kiln::ones({3, 4})),
              "InstanceNorm2d: expected 3D (unbatched) or 4D (batched) input (got 2D input");
  CHECK_ERROR(kiln::ValueError, F::instance_norm(kiln::ones({2, 3, 1})),
              "instance_norm: expected more than 1 spatial element when using the input's "
              "statistics, got input of size [2, 3, 1]");
}

BOOST_AUTO_TEST_CASE(group_norm_matches_pytorch) {
  check_case("group_norm", {"x", "w", "b"}, [](auto& v) {
    return F::group_norm(v[0], F::GroupNormFuncOptions(3).weight(v[1]).bias(v[2]));
  });
  check_case("group_norm_noaffine", {"x"},
             [](auto& v) { return kiln::group_norm(v[0], 2, {}, {}, 1e-3); });
  nn::GroupNorm gn(3, 6);
  {
    kiln::NoGradGuard no_grad;
    gn->weight.copy_(golden("group_norm", "w"));
    gn->bias.copy_(golden("group_norm", "b"));
  }
  check_close(gn(golden("group_norm", "x", kiln::kFloat)), golden("group_norm", "out"), 1e-5, 1e-5,
              "GroupNorm");
  BOOST_TEST(repr(*gn) == "kiln::nn::GroupNorm(3, 6, eps=1e-05, affine=true)");
  CHECK_ERROR(kiln::ValueError, nn::GroupNorm(4, 6), "GroupNorm: num_channels must be divisible");
  CHECK_ERROR(kiln::ValueError, kiln::group_norm(kiln::ones({2, 6, 3}), 4),
              "group_norm: expected number of channels in input to be divisible by num_groups, "
              "but got input of size [2, 6, 3] and num_groups=4");
  CHECK_ERROR(kiln::ValueError, kiln::group_norm(kiln::ones({2, 6, 3}), 3, kiln::ones({5})),
              "group_norm: expected weight of size [6], but got [5]");
}

BOOST_AUTO_TEST_CASE(local_response_norm_and_normalize_match_pytorch) {
  check_case("local_response_norm_3d", {"x"},
             [](auto& v) { return nn::LocalResponseNorm(3)(v[0]); });
  check_case("local_response_norm_4d", {"x"}, [](auto& v) {
    return F::local_response_norm(v[0],
                                  F::LocalResponseNormFuncOptions(4).alpha(0.01).beta(0.6).k(2.0));
  });
  check_case("normalize", {"x"}, [](auto& v) { return F::normalize(v[0]); });
  check_case("normalize_p1", {"x"}, [](auto& v) {
    return F::normalize(v[0], F::NormalizeFuncOptions().p(1).dim(-1).eps(1e-3));
  });
  BOOST_TEST(repr(*nn::LocalResponseNorm(2)) ==
             "kiln::nn::LocalResponseNorm(2, alpha=0.0001, beta=0.75, k=1)");
  CHECK_ERROR(kiln::ValueError, F::local_response_norm(kiln::ones({2, 3}), 2),
              "local_response_norm: expected 3D or higher dimensionality input (got input of "
              "size [2, 3])");
}

BOOST_AUTO_TEST_CASE(local_response_norm_of_integers_as_pytorch) {
  // PyTorch 1.13: F.local_response_norm(torch.arange(100, 118).resize_(3, 3, 2), 2) and
  // F.local_response_norm(torch.arange(-6, 18).reshape(1, 4, 3, 2), 3, alpha=0.5, beta=0.75,
  // k=2.): float32, the window's mean of squares truncated as its integer avg_pool
  Tensor y = F::local_response_norm(kiln::arange(100, 118).resize_({3, 3, 2}),
                                    F::LocalResponseNormFuncOptions(2));
  BOOST_TEST(y.dtype() == kiln::kFloat);
  Tensor first = kiln::tensor({73.77879333496094, 74.14615631103516, 60.19416427612305,
                               60.330204010009766, 60.4609375, 60.586483001708984},
                              kiln::kFloat);
  BOOST_TEST(kiln::allclose(y.flatten().narrow(0, 0, 6), first, 1e-6, 1e-6));
  Tensor z = F::local_response_norm(kiln::arange(-6, 18).reshape({1, 4, 3, 2}),
                                    F::LocalResponseNormFuncOptions(3).alpha(0.5).beta(0.75).k(2));
  Tensor expected = kiln::tensor({-1.2613446712493896,
                                  -1.3042371273040771,
                                  -1.1962790489196777,
                                  -0.8972092270851135,
                                  -0.5981395244598389,
                                  -0.26084741950035095,
                                  0.0,
                                  0.13457797467708588,
                                  0.25,
                                  0.33631208539009094,
                                  0.393770307302475,
                                  0.42809051275253296,
                                  0.4459526538848877,
                                  0.4529002010822296,
                                  0.452920138835907,
                                  0.44868868589401245,
                                  0.4419417381286621,
                                  0.43378594517707825,
                                  0.8919053077697754,
                                  0.8493871092796326,
                                  0.8057840466499329,
                                  0.7636324763298035,
                                  0.7330314517021179,
                                  0.7024661302566528},
                                 kiln::kFloat);
  BOOST_TEST(kiln::allclose(z.flatten(), expected, 1e-6, 1e-6));
  CHECK_ERROR(kiln::TypeError, F::local_response_norm(kiln::ones({1, 2, 2}, kiln::kBool), 2),
              "local_response_norm: expected a numeric input, but got bool");
}

BOOST_AUTO_TEST_CASE(aten_layer_norm_and_normalize_out) {
  kiln::manual_seed(4);
  Tensor x = kiln::randn({3, 2, 2});
  BOOST_TEST(kiln::allclose(kiln::layer_norm(x, {2, 2}, Tensor(), Tensor(), 2e-5),
                            F::layer_norm(x, F::LayerNormFuncOptions({2, 2}).eps(2e-5))));
  Tensor input = kiln::arange(10, kiln::kFloat).view({1, 2, 5});
  Tensor out = kiln::randn({1, 2, 5});
  Tensor r = F::normalize(input, F::NormalizeFuncOptions().p(1).dim(-1).out(out));
  BOOST_TEST(r.is_same(out));
  BOOST_TEST(kiln::allclose(out, input / input.abs().sum({-1}, true)));
  Tensor small = kiln::empty({0});  // resized to the result's sizes, as libtorch's out=
  F::normalize(input, F::NormalizeFuncOptions().out(small));
  BOOST_TEST(small.sizes().vec() == (std::vector<int64_t>{1, 2, 5}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_SUITE_END()
