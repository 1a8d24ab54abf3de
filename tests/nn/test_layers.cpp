// Layers against PyTorch's goldens (forward and the gradients of inputs and weights): Linear,
// LayerNorm, BatchNorm2d (running statistics over training steps, then evaluation), Embedding,
// softmax/log_softmax; Dropout's statistics; initialisation bounds; error messages.
#include "golden.h"

#include <kiln/optim.h>

#include <cmath>

namespace nn = kiln::nn;
namespace F = kiln::nn::functional;
using kiln::Tensor;
using nn_test::check_case;
using nn_test::check_close;
using nn_test::golden;

BOOST_AUTO_TEST_SUITE(layers)

BOOST_AUTO_TEST_CASE(linear_matches_pytorch) {
  check_case("linear", {"x", "w", "b"}, [](auto& v) { return F::linear(v[0], v[1], v[2]); });
  check_case("linear_3d_nobias", {"x", "w"}, [](auto& v) { return F::linear(v[0], v[1]); });
  // the module: same values through its parameters
  nn::Linear lin(3, 2);
  {
    kiln::NoGradGuard no_grad;
    lin->weight.copy_(golden("linear", "w"));
    lin->bias.copy_(golden("linear", "b"));
  }
  Tensor x = golden("linear", "x", kiln::kFloat);
  check_close(lin(x), golden("linear", "out"), 1e-5, 1e-6, "Linear module");
  CHECK_ERROR(kiln::ValueError, lin(kiln::ones({2, 4})),
              "linear: input of size [2, 4] does not match weight of size [2, 3]");
  CHECK_ERROR(kiln::TypeError, lin(kiln::ones({2, 3}, kiln::kDouble)),
              "linear: expected input and weight to have the same dtype, but got float64 and "
              "float32");
}

BOOST_AUTO_TEST_CASE(default_initialisation_as_pytorch) {
  kiln::manual_seed(1);
  nn::Linear lin(100, 50);
  double bound = 1.0 / std::sqrt(100.0);
  BOOST_CHECK_LE(kiln::amax(kiln::abs(lin->weight)).item<double>(), bound);
  BOOST_CHECK_GT(kiln::amax(kiln::abs(lin->weight)).item<double>(), 0.95 * bound);
  BOOST_CHECK_LE(kiln::amax(kiln::abs(lin->bias)).item<double>(), bound);
  nn::Conv2d conv(nn::Conv2dOptions(8, 16, 3).groups(2));
  double conv_bound = 1.0 / std::sqrt(4.0 * 9.0);  // fan_in = in / groups * kH * kW
  BOOST_CHECK_LE(kiln::amax(kiln::abs(conv->weight)).item<double>(), conv_bound);
  BOOST_CHECK_GT(kiln::amax(kiln::abs(conv->weight)).item<double>(), 0.9 * conv_bound);
  nn::Embedding emb(1000, 20);
  BOOST_CHECK_SMALL(kiln::mean(emb->weight).item<double>(), 0.05);
  BOOST_CHECK_CLOSE(kiln::std(emb->weight).item<double>(), 1.0, 5.0);
  nn::BatchNorm2d bn(3);
  BOOST_CHECK(nn_test::values(bn->weight) == std::vector<double>(3, 1.0));
  BOOST_CHECK(nn_test::values(bn->bias) == std::vector<double>(3, 0.0));
  Tensor t = kiln::empty({30, 20});
  nn::init::xavier_uniform_(t);
  BOOST_CHECK_LE(kiln::amax(kiln::abs(t)).item<double>(), std::sqrt(6.0 / 50.0));
  BOOST_CHECK_CLOSE(nn::init::calculate_gain(nn::init::Nonlinearity::LeakyReLU, std::sqrt(5.0)),
                    std::sqrt(1.0 / 3.0), 1e-9);
  CHECK_ERROR(kiln::ValueError, nn::init::kaiming_uniform_(kiln::empty({3})),
              "fan in and fan out can not be computed for tensor with fewer than 2 dimensions");
}

BOOST_AUTO_TEST_CASE(init_takes_libtorch_tags_eye_and_dirac) {
  namespace init = nn::init;
  BOOST_CHECK_CLOSE(init::calculate_gain(kiln::kTanh), 5.0 / 3.0, 1e-12);
  BOOST_CHECK_CLOSE(init::calculate_gain(kiln::kReLU), std::sqrt(2.0), 1e-12);
  BOOST_CHECK_CLOSE(init::calculate_gain(kiln::kLeakyReLU), std::sqrt(2.0 / (1 + 1e-4)), 1e-12);
  BOOST_CHECK_EQUAL(init::calculate_gain(kiln::kConvTranspose2D), 1.0);
  kiln::manual_seed(0);
  Tensor w = kiln::empty({200, 300});
  init::kaiming_normal_(w, 0, kiln::kFanOut, kiln::kReLU);  // std sqrt(2 / 200)
  BOOST_CHECK_CLOSE(w.std().item<double>(), std::sqrt(2.0 / 200.0), 3.0);
  Tensor e = init::eye_(kiln::empty({2, 3}));
  BOOST_CHECK(e.equal(kiln::tensor({1.0f, 0.0f, 0.0f, 0.0f, 1.0f, 0.0f}).view({2, 3})));
  CHECK_ERROR(kiln::ValueError, init::eye_(kiln::empty({2})), "eye_: only tensors with 2");
  // torch.nn.init.dirac_(torch.empty(4, 2, 3), groups=2): a 1 at [g*2+c, c, 1]
  Tensor d = init::dirac_(kiln::empty({4, 2, 3}), 2);
  BOOST_CHECK_EQUAL(d.sum().item<double>(), 4.0);
  for (int64_t g = 0; g < 2; ++g) {
    for (int64_t c = 0; c < 2; ++c) BOOST_CHECK_EQUAL(d[g * 2 + c][c][1].item<double>(), 1.0);
  }
  // a 2-D convolution weight initialised by dirac_ passes its input through
  Tensor k = init::dirac_(kiln::empty({3, 3, 3, 3}));
  Tensor x = kiln::randn({1, 3, 5, 5});
  BOOST_CHECK(kiln::allclose(kiln::conv2d(x, k, {}, 1, 1), x));
  CHECK_ERROR(kiln::ValueError, init::dirac_(kiln::empty({3, 2, 3}), 2),
              "dirac_: dim 0 (3) must be divisible by groups (2)");
  CHECK_ERROR(kiln::ValueError, init::dirac_(kiln::empty({3, 3})), "3, 4, or 5 dimensions");
}

BOOST_AUTO_TEST_CASE(init_orthogonal) {
  namespace init = nn::init;
  kiln::manual_seed(0);
  // tall, wide and a convolution weight (flattened to [out, in * k * k]): rows or columns
  // orthonormal, times gain
  Tensor tall = init::orthogonal_(kiln::empty({6, 3}));
  BOOST_CHECK(kiln::allclose(tall.t().matmul(tall), kiln::eye(3), 1e-5, 1e-5));
  Tensor wide = init::orthogonal_(kiln::empty({3, 6}, kiln::kDouble), 2.0);
  BOOST_CHECK(kiln::allclose(wide.matmul(wide.t()), kiln::eye(3, kiln::kDouble) * 4, 1e-12, 1e-12));
  nn::Conv2d conv(nn::Conv2dOptions(3, 2, 3).stride(2));  // libtorch's CanInitializeCnn...
  Tensor w = init::orthogonal_(conv->named_parameters()["weight"]);
  BOOST_CHECK(w.is_same(conv->weight));
  BOOST_CHECK(!w.grad_fn());
  Tensor flat = w.view({2, 27});
  BOOST_CHECK(kiln::allclose(flat.matmul(flat.t()), kiln::eye(2), 1e-5, 1e-5));
  // Q of a random matrix: two draws differ; a square one is orthogonal
  Tensor square = init::orthogonal_(kiln::empty({4, 4}, kiln::kDouble));
  BOOST_CHECK(!init::orthogonal_(kiln::empty({4, 4}, kiln::kDouble)).equal(square));
  BOOST_CHECK(kiln::allclose(square.matmul(square.t()), kiln::eye(4, kiln::kDouble)));
  BOOST_CHECK(init::orthogonal_(kiln::empty({0, 3})).numel() == 0);
  CHECK_ERROR(kiln::ValueError, init::orthogonal_(kiln::empty({3})),
              "orthogonal_: only tensors with 2 or more dimensions are supported");
}

BOOST_AUTO_TEST_CASE(layer_norm_matches_pytorch) {
  check_case("layer_norm_1", {"x", "w", "b"},
             [](auto& v) { return F::layer_norm(v[0], {4}, v[1], v[2]); });
  check_case("layer_norm_2", {"x", "w", "b"}, [](auto& v) {
    return F::layer_norm(v[0], {3, 4}, v[1], v[2], 1e-3);
  });
  nn::LayerNorm ln(std::vector<int64_t>{4});
  CHECK_ERROR(kiln::ValueError, ln(kiln::ones({2, 5})),
              "layer_norm: given normalized_shape=[4], expected input with shape [*, [4]], but "
              "got input of size[2, 5]");
}

BOOST_AUTO_TEST_CASE(batch_norm_running_stats_match_pytorch) {
  for (kiln::ScalarType dtype : {kiln::kDouble, kiln::kFloat}) {
    double tol = dtype == kiln::kDouble ? 1e-10 : 1e-4;
    nn::BatchNorm2d bn(3);
    bn->to(dtype);
    {
      kiln::NoGradGuard no_grad;
      bn->weight.copy_(golden("batchnorm", "weight"));
      bn->bias.copy_(golden("batchnorm", "bias"));
    }
    for (int step = 0; step < 3; ++step) {
      std::string s = std::to_string(step);
      Tensor x = golden("batchnorm", "x" + s, dtype, true);
      Tensor out = bn(x);
      check_close(out, golden("batchnorm", "out" + s), tol, tol, "batchnorm out" + s);
      kiln::sum(out * golden("batchnorm", "gy" + s, dtype)).backward();
      check_close(x.grad(), golden("batchnorm", "grad_x" + s), tol, tol, "grad_x" + s);
    }
    check_close(bn->weight.grad(), golden("batchnorm", "grad_weight"), tol, tol, "grad_weight");
    check_close(bn->bias.grad(), golden("batchnorm", "grad_bias"), tol, tol, "grad_bias");
    check_close(bn->running_mean, golden("batchnorm", "running_mean"), tol, tol, "running_mean");
    check_close(bn->running_var, golden("batchnorm", "running_var"), tol, tol, "running_var");
    BOOST_CHECK_EQUAL(bn->num_batches_tracked.item<int64_t>(), 3);
    bn->eval();
    check_close(bn(golden("batchnorm", "x_eval", dtype)), golden("batchnorm", "out_eval"), tol, tol,
                "batchnorm eval");
    BOOST_CHECK_EQUAL(bn->num_batches_tracked.item<int64_t>(), 3);
  }
  nn::BatchNorm2d bn(3);
  CHECK_ERROR(kiln::ValueError, bn(kiln::ones({2, 3, 4})),
              "BatchNorm2d: expected 4D input (got 3D");
  CHECK_ERROR(
      kiln::ValueError, bn(kiln::ones({2, 4, 2, 2})),
      "batch_norm: expected running_mean to have 4 elements (one per channel), but got [3]");
  CHECK_ERROR(kiln::ValueError, bn(kiln::ones({1, 3, 1, 1})),
              "expected more than 1 value per channel when training, got input size [1, 3, 1, 1]");
  // momentum=None: a cumulative average
  nn::BatchNorm2d cumulative(nn::BatchNormOptions(1).momentum(std::nullopt).affine(false));
  cumulative(kiln::full({2, 1, 1, 1}, 2.0));
  cumulative(kiln::full({2, 1, 1, 1}, 4.0));
  BOOST_CHECK_CLOSE(cumulative->running_mean.item<double>(), 3.0, 1e-5);
}

// Sequential runs a BatchNorm2d followed by a ReLU as one fused module (forward_relu): the same
// output, gradients and running statistics as the two modules one after the other, in training
// and in evaluation, in float32 and bfloat16.
BOOST_AUTO_TEST_CASE(sequential_fuses_batch_norm_and_relu) {
  for (kiln::ScalarType dtype : {kiln::kFloat, kiln::kBFloat16}) {
    double tol = dtype == kiln::kFloat ? 1e-5 : 2e-2;
    kiln::manual_seed(3);
    Tensor x0 = (kiln::randn({2, 4, 5, 3}) * 2 + 0.5).to(dtype);
    Tensor gy = kiln::randn({2, 4, 5, 3}).to(dtype);
    nn::BatchNorm2d a(4), b(4);
    nn::ReLU relu;
    nn::Sequential fused(a, relu);
    {
      kiln::NoGradGuard no_grad;
      for (nn::BatchNorm2d* bn : {&a, &b}) {
        (*bn)->weight.copy_(kiln::tensor({0.5, 1.0, 1.5, -2.0}));
        (*bn)->bias.copy_(kiln::tensor({0.1, -0.2, 0.0, 0.3}));
      }
    }
    for (int step = 0; step < 2; ++step) {
      Tensor x1 = x0.detach().requires_grad_(), x2 = x0.detach().requires_grad_();
      Tensor y1 = fused(x1), y2 = kiln::relu(b(x2));
      BOOST_CHECK_EQUAL(y1.dtype(), dtype);
      check_close(y1, y2, tol, tol, "fused output");
      kiln::sum(y1 * gy).backward();
      kiln::sum(y2 * gy).backward();
      check_close(x1.grad(), x2.grad(), tol, tol, "fused grad_x");
    }
    check_close(a->weight.grad(), b->weight.grad(), tol, tol, "fused grad_weight");
    check_close(a->bias.grad(), b->bias.grad(), tol, tol, "fused grad_bias");
    check_close(a->running_mean, b->running_mean, 1e-5, 1e-5, "fused running_mean");
    check_close(a->running_var, b->running_var, 1e-5, 1e-5, "fused running_var");
    fused->eval();
    b->eval();
    check_close(fused(x0), kiln::relu(b(x0)), tol, tol, "fused evaluation");
  }
}

BOOST_AUTO_TEST_CASE(embedding_matches_pytorch) {
  check_case("embedding", {"w", "idx"}, [](auto& v) { return F::embedding(v[1], v[0]); });
  check_case("embedding_pad", {"w", "idx"}, [](auto& v) { return F::embedding(v[1], v[0], 0); });
  nn::Embedding emb(nn::EmbeddingOptions(5, 2).padding_idx(-1));
  BOOST_CHECK_EQUAL(*emb->options.padding_idx(), 4);
  BOOST_CHECK_EQUAL(kiln::sum(kiln::abs(emb->weight[4])).item<double>(), 0.0);
  CHECK_ERROR(kiln::TypeError, emb(kiln::ones({2})),
              "embedding: expected indices of dtype int64 or int32, but got float32");
  CHECK_ERROR(kiln::Error, emb(kiln::full({2}, int64_t{5})),
              "index 5 is out of bounds for dimension 0 with size 5");
  CHECK_ERROR(kiln::IndexError, nn::Embedding(nn::EmbeddingOptions(5, 2).padding_idx(5)),
              "padding_idx must be within num_embeddings");
}

BOOST_AUTO_TEST_CASE(softmax_matches_pytorch_and_is_stable) {
  check_case("softmax_1", {"x"}, [](auto& v) { return F::softmax(v[0], 1); });
  check_case("softmax_0", {"x"}, [](auto& v) { return F::softmax(v[0], 0); });
  check_case("log_softmax_1", {"x"}, [](auto& v) { return F::log_softmax(v[0], 1); });
  check_case("stable_softmax", {"x"}, [](auto& v) { return F::softmax(v[0], 0); });
  check_case("stable_log_softmax", {"x"}, [](auto& v) { return F::log_softmax(v[0], 1); });
  // float32, the case of "Effective PyTorch": [1000, 0] -> [1, 0], no NaN
  Tensor x = kiln::tensor({1000.0, 0.0});
  BOOST_CHECK(nn_test::values(F::softmax(x, 0)) == std::vector<double>({1.0, 0.0}));
  BOOST_CHECK(nn_test::values(F::log_softmax(x, 0)) == std::vector<double>({0.0, -1000.0}));
  Tensor naive = kiln::exp(x) / kiln::sum(kiln::exp(x));
  BOOST_CHECK(std::isnan(nn_test::values(naive)[0]));
  CHECK_ERROR(kiln::TypeError, F::softmax(kiln::ones({2}, kiln::kLong), 0),
              "softmax: expected a floating point input, but got int64");
  BOOST_CHECK(F::softmax(kiln::ones({2}, kiln::kLong), 0, kiln::kDouble).dtype() == kiln::kDouble);
}

BOOST_AUTO_TEST_CASE(dropout_scales_in_training_and_is_identity_in_eval) {
  kiln::manual_seed(3);
  nn::Dropout drop(0.25);
  Tensor x = kiln::ones({100000}, kiln::TensorOptions().requires_grad(true));
  Tensor y = drop(x);
  std::vector<double> v = nn_test::values(y);
  int64_t zeros = 0;
  for (double e : v) {
    zeros += e == 0.0;
    BOOST_REQUIRE(e == 0.0 || std::abs(e - 1.0 / 0.75) < 1e-6);
  }
  BOOST_CHECK_CLOSE(static_cast<double>(zeros) / 100000.0, 0.25, 3.0);
  kiln::sum(y).backward();
  BOOST_CHECK(nn_test::values(x.grad()) == v);  // the gradient is the same mask, scaled
  drop->eval();
  BOOST_CHECK(drop(x).is_same(x));
  BOOST_CHECK_EQUAL(kiln::sum(F::dropout(x, 1.0)).item<double>(), 0.0);
  CHECK_ERROR(kiln::ValueError, nn::Dropout(1.5),
              "Dropout: probability has to be between 0 and 1, "
              "but got 1.5");
  CHECK_ERROR(kiln::ValueError, F::dropout(x, -0.1),
              "dropout: probability has to be between 0 "
              "and 1, but got -0.1");
}

BOOST_AUTO_TEST_CASE(flatten_relu_sigmoid_tanh) {
  Tensor x = kiln::randn({2, 3, 4, 5});
  BOOST_CHECK_EQUAL(nn::Flatten()(x).sizes(), kiln::IntArrayRef({2, 60}));
  BOOST_CHECK_EQUAL(nn::Flatten(nn::FlattenOptions().start_dim(0).end_dim(1))(x).sizes(),
                    kiln::IntArrayRef({6, 4, 5}));
  BOOST_CHECK(nn::ReLU()(x).equal(kiln::relu(x)));
  BOOST_CHECK(nn::Sigmoid()(x).equal(kiln::sigmoid(x)));
  BOOST_CHECK(nn::Tanh()(x).equal(kiln::tanh(x)));
  Tensor y = x.clone();
  nn::ReLU(true)(y);
  BOOST_CHECK(y.equal(kiln::relu(x)));
}

// PyTorch 1.13's F.softplus on these inputs (float64), default and beta=0.5, threshold=3: the
// smooth branch, the threshold, and inputs far beyond it (exp would overflow float32 at 100).
BOOST_AUTO_TEST_CASE(softplus_matches_pytorch) {
  auto options = kiln::TensorOptions().dtype(kiln::kDouble);
  Tensor x = kiln::tensor({-30.0, -3.0, -0.5, 0.0, 0.5, 3.0, 19.0, 21.0, 100.0}, options);
  Tensor expected = kiln::tensor({9.35762297e-14, 0.0485873516, 0.474076984, 0.693147181,
                                  0.974076984, 3.04858735, 19.0, 21.0, 100.0},
                                 options);
  BOOST_CHECK(F::softplus(x).allclose(expected, 1e-8, 0));
  BOOST_CHECK(nn::Softplus()(x).allclose(expected, 1e-8, 0));
  Tensor expected_b = kiln::tensor({6.11804547e-07, 0.402826556, 1.15187884, 1.38629436, 1.65187884,
                                    3.40282656, 19.0, 21.0, 100.0},
                                   options);
  BOOST_CHECK(F::softplus(x, 0.5, 3).allclose(expected_b, 1e-8, 0));
  BOOST_CHECK(nn::Softplus(nn::SoftplusOptions().beta(0.5).threshold(3))(x).allclose(expected_b,
                                                                                     1e-8, 0));
  // float32 and the 16-bit dtypes (computed in float32, rounded once): 15 stays 15 in float16
  // (exp(15) overflows it) and the gradient stays finite beyond the threshold
  Tensor big = kiln::tensor({15.0, -15.0, 0.25, 90.0}).requires_grad_();
  Tensor y32 = F::softplus(big);
  y32.sum().backward();
  BOOST_CHECK(big.grad().allclose(kiln::sigmoid(big.detach()), 1e-6, 0));
  for (kiln::ScalarType dt : {kiln::kHalf, kiln::kBFloat16}) {
    Tensor y16 = F::softplus(big.detach().to(dt));
    BOOST_CHECK_EQUAL(y16.dtype(), dt);
    BOOST_CHECK(y16.to(kiln::kFloat).allclose(y32.detach(), 1e-2, 1e-3));
  }
  CHECK_ERROR(kiln::TypeError, F::softplus(kiln::arange(3)),
              "softplus: expected a floating point input, but got int64");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(model)

// The checkerboard network of "Effective PyTorch" (1x1 convolutions, BatchNorm2d, ReLU), smaller: a
// few Adam steps on a 16x16 grid lower the loss, and every parameter gets a gradient.
BOOST_AUTO_TEST_CASE(checkerboard_network_trains) {
  kiln::manual_seed(0);
  Tensor h = kiln::arange(16, kiln::kFloat).div(16).unsqueeze(0).repeat({16, 1});
  Tensor v = kiln::arange(16, kiln::kFloat).div(16).unsqueeze(1).repeat({1, 16});
  Tensor inputs = kiln::stack({h, v}, 0).unsqueeze(0);
  Tensor targets = kiln::logical_xor(kiln::gt(kiln::fmod(h * 2, 1.0), 0.5),
                                     kiln::gt(kiln::fmod(v * 2, 1.0), 0.5))
                       .to(kiln::kFloat)
                       .unsqueeze(0)
                       .unsqueeze(0);
  nn::Sequential net(nn::Conv2d(2, 32, 1), nn::BatchNorm2d(32), nn::ReLU(), nn::Conv2d(32, 32, 1),
                     nn::BatchNorm2d(32), nn::ReLU(), nn::Conv2d(32, 1, 1));
  nn::MSELoss loss_fn;
  kiln::optim::Adam opt(net->parameters(), kiln::optim::AdamOptions(0.01));
  double first = 0, last = 0;
  for (int i = 0; i < 30; ++i) {
    opt.zero_grad();
    Tensor loss = loss_fn(net(inputs), targets);
    loss.backward();
    if (i == 0) {
      for (const auto& [name, p] : net->named_parameters()) {
        BOOST_CHECK_MESSAGE(p.grad().defined(), name << " has no gradient");
      }
    }
    opt.step();
    (i == 0 ? first : last) = loss.item<double>();
  }
  BOOST_CHECK_LT(last, 0.8 * first);
  net->eval();
  BOOST_CHECK(std::isfinite(kiln::sum(net(inputs)).item<double>()));
}

BOOST_AUTO_TEST_SUITE_END()
