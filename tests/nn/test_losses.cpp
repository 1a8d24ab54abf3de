// Losses against PyTorch (values and input gradients, every reduction), the numerical
// stability cases, the loss modules, clip_grad_norm_/clip_grad_value_, and the error messages.
#include "golden.h"

#include <cmath>
#include <limits>

namespace nn = kiln::nn;
namespace F = kiln::nn::functional;
using kiln::Tensor;
using nn::Reduction;
using nn_test::check_close;
using nn_test::golden;

namespace {

// Checks out = f(x, t, extra...) and d out / dx (through gy when not a scalar) for case name.
template <class Fn>
void check_loss(const std::string& name, Fn f, const std::vector<std::string>& extra = {},
                kiln::ScalarType dtype = kiln::kDouble, double tol = 1e-10) {
  Tensor x = golden(name, "x", dtype, true);
  bool int_target = nn_test::golden_case(name).tensors.at("t").is_int;
  Tensor t = golden(name, "t", int_target ? kiln::kLong : dtype);
  std::vector<Tensor> more;
  for (const std::string& field : extra) more.push_back(golden(name, field, dtype));
  Tensor out = f(x, t, more);
  check_close(out, golden(name, "out"), tol, tol, name + " out");
  const auto& fields = nn_test::golden_case(name).tensors;
  if (fields.count("gy")) {
    kiln::sum(out * golden(name, "gy", dtype)).backward();
  } else {
    out.backward();
  }
  check_close(x.grad(), golden(name, "grad_x"), tol, tol, name + " grad_x");
}

const std::pair<const char*, Reduction> kReductions[] = {
    {"mean", Reduction::Mean}, {"sum", Reduction::Sum}, {"none", Reduction::None}};

}  // namespace

BOOST_AUTO_TEST_SUITE(losses)

BOOST_AUTO_TEST_CASE(every_reduction_matches_pytorch) {
  for (auto [suffix, r] : kReductions) {
    std::string s = suffix;
    check_loss("mse_" + s, [r = r](auto x, auto t, auto&) { return F::mse_loss(x, t, r); });
    check_loss("ce_idx_" + s,
               [r = r](auto x, auto t, auto&) { return F::cross_entropy(x, t, {}, -100, r); });
    check_loss("ce_prob_" + s,
               [r = r](auto x, auto t, auto&) { return F::cross_entropy(x, t, {}, -100, r); });
    check_loss("bce_" + s,
               [r = r](auto x, auto t, auto& m) { return F::binary_cross_entropy(x, t, m[0], r); },
               {"w"});
    check_loss("bce_logits_" + s,
               [r = r](auto x, auto t, auto& m) {
                 return F::binary_cross_entropy_with_logits(x, t, {}, r, m[0]);
               },
               {"pw"});
  }
}

BOOST_AUTO_TEST_CASE(weights_ignore_index_and_shapes_match_pytorch) {
  check_loss("ce_weight_ignore",
             [](auto x, auto t, auto& m) {
               return F::cross_entropy(x, t,
                                       F::CrossEntropyFuncOptions().weight(m[0]).ignore_index(-1));
             },
             {"w"});
  check_loss("ce_prob_weight", [](auto x, auto t, auto& m) { return F::cross_entropy(x, t, m[0]); },
             {"w"});
  check_loss("ce_spatial", [](auto x, auto t, auto&) { return F::cross_entropy(x, t); });
  check_loss("ce_unbatched", [](auto x, auto t, auto&) { return F::cross_entropy(x, t); });
  check_loss("nll_weight", [](auto x, auto t, auto& m) { return F::nll_loss(x, t, m[0]); }, {"w"});
  check_loss("bce_logits_extreme",
             [](auto x, auto t, auto&) { return F::binary_cross_entropy_with_logits(x, t); });
  // float32 too, through the modules
  check_loss(
      "ce_weight_ignore",
      [](auto x, auto t, auto& m) {
        nn::CrossEntropyLoss loss(nn::CrossEntropyLossOptions().weight(m[0]).ignore_index(-1));
        return loss(x, t);
      },
      {"w"}, kiln::kFloat, 1e-5);
  Tensor x = golden("bce_extreme", "x"), t = golden("bce_extreme", "t");
  check_close(F::binary_cross_entropy(x, t, {}, Reduction::None), golden("bce_extreme", "out"),
              1e-12, 1e-12, "bce at 0 and 1 (log clamped to -100)");
}

BOOST_AUTO_TEST_CASE(the_seeds_numerical_stability_cases) {
  // xe([0.5, 0.5], [1000, 0]) = 500, gradient [0.5, -0.5], in float32 as in "Effective PyTorch"
  Tensor logits = kiln::tensor({1000.0, 0.0}).requires_grad_();
  Tensor labels = kiln::tensor({0.5, 0.5});
  Tensor xe = F::cross_entropy(logits, labels);
  BOOST_CHECK_EQUAL(xe.item<double>(), 500.0);
  Tensor g = kiln::autograd::grad({xe}, {logits})[0];
  BOOST_CHECK(nn_test::values(g) == std::vector<double>({0.5, -0.5}));
  check_loss("stable_ce", [](auto x, auto t, auto&) { return F::cross_entropy(x, t); });
  // class 1 of [1000, 0]: -log_softmax = 1000, finite; the naive log(softmax) is inf
  Tensor target = kiln::tensor(int64_t{1});
  BOOST_CHECK_EQUAL(F::cross_entropy(logits, target).item<double>(), 1000.0);
  BOOST_CHECK(std::isinf(-kiln::log(F::softmax(logits, 0))[1].item<double>()));
  // binary cross entropy with logits at +-100 stays finite where sigmoid + log is not
  Tensor z = kiln::tensor({100.0, -100.0}).requires_grad_();
  Tensor ones = kiln::tensor({0.0, 1.0});
  Tensor l = F::binary_cross_entropy_with_logits(z, ones, {}, Reduction::None);
  BOOST_CHECK(nn_test::values(l) == std::vector<double>({100.0, 100.0}));
  kiln::sum(l).backward();
  BOOST_CHECK(nn_test::values(z.grad()) == std::vector<double>({1.0, -1.0}));
}

BOOST_AUTO_TEST_CASE(loss_modules) {
  Tensor x = golden("mse_sum", "x", kiln::kFloat), t = golden("mse_sum", "t", kiln::kFloat);
  check_close(nn::MSELoss(nn::MSELossOptions(kiln::kSum))(x, t), golden("mse_sum", "out"), 1e-5,
              1e-5, "MSELoss");
  x = golden("bce_mean", "x"), t = golden("bce_mean", "t");
  Tensor w = golden("bce_mean", "w");
  check_close(nn::BCELoss(nn::BCELossOptions().weight(w))(x, t), golden("bce_mean", "out"), 1e-10,
              1e-10, "BCELoss");
  x = golden("bce_logits_none", "x"), t = golden("bce_logits_none", "t");
  nn::BCEWithLogitsLoss logits_loss(nn::BCEWithLogitsLossOptions()
                                        .pos_weight(golden("bce_logits_none", "pw"))
                                        .reduction(kiln::kNone));
  check_close(logits_loss(x, t), golden("bce_logits_none", "out"), 1e-10, 1e-10,
              "BCEWithLogitsLoss");
  BOOST_CHECK_EQUAL(logits_loss->named_buffers()[0].key(), "pos_weight");
  x = golden("nll_weight", "x"), t = golden("nll_weight", "t");
  nn::NLLLoss nll(nn::NLLLossOptions().weight(golden("nll_weight", "w")));
  check_close(nll(x, t), golden("nll_weight", "out"), 1e-10, 1e-10, "NLLLoss");
  nn::CrossEntropyLoss ce;
  x = golden("ce_idx_mean", "x"), t = golden("ce_idx_mean", "t");
  check_close(ce(x, t), golden("ce_idx_mean", "out"), 1e-10, 1e-10, "CrossEntropyLoss");
}

BOOST_AUTO_TEST_CASE(error_messages) {
  Tensor x = kiln::randn({3, 4});
  CHECK_ERROR(kiln::IndexError, F::cross_entropy(x, kiln::tensor({0, 4, 1})),
              "cross_entropy: Target 4 is out of bounds (expected class indices in [0, 4) or "
              "ignore_index -100)");
  CHECK_ERROR(kiln::IndexError, F::nll_loss(x, kiln::tensor({0, -3, 1})),
              "nll_loss: Target -3 is out of bounds");
  // the ignored index may be out of range
  BOOST_CHECK(std::isfinite(F::cross_entropy(x, kiln::tensor({0, -100, 1})).item<double>()));
  CHECK_ERROR(kiln::TypeError, F::cross_entropy(x, kiln::tensor({0, 1, 1}, kiln::kInt)),
              "cross_entropy: expected a target of class indices of dtype int64, but got int32");
  CHECK_ERROR(kiln::ValueError, F::cross_entropy(x, kiln::tensor({0, 1})),
              "cross_entropy: expected a target of size [3] for an input of size [3, 4], but got "
              "target of size [2]");
  CHECK_ERROR(kiln::ValueError, F::cross_entropy(x, kiln::rand({3, 5})),
              "cross_entropy: expected a target of class probabilities of the input's size [3, 4]");
  CHECK_ERROR(kiln::ValueError, F::cross_entropy(x, kiln::tensor({0, 1, 1}), kiln::ones({3})),
              "weight tensor should be defined either for all 4 classes or no classes but got "
              "weight tensor of shape: [3]");
  CHECK_ERROR(kiln::TypeError,
              F::cross_entropy(kiln::ones({2, 2}, kiln::kLong), kiln::tensor({0, 1})),
              "cross_entropy: expected a floating point input, but got int64");
  CHECK_ERROR(kiln::ValueError, F::binary_cross_entropy(kiln::tensor({0.5, 1.5}), kiln::ones({2})),
              "binary_cross_entropy: all elements of input should be between 0 and 1");
  CHECK_ERROR(kiln::ValueError, F::binary_cross_entropy(kiln::rand({2, 1}), kiln::ones({2})),
              "binary_cross_entropy: using a target size ([2]) that is different to the input "
              "size ([2, 1])");
  CHECK_ERROR(kiln::ValueError,
              F::binary_cross_entropy_with_logits(kiln::rand({2}), kiln::ones({3})),
              "binary_cross_entropy_with_logits: Target size ([3]) must be the same as input "
              "size ([2])");  // PyTorch's own words for this loss (libtorch's BCEWithLogitsLoss)
}

BOOST_AUTO_TEST_CASE(clip_grad_norm_matches_pytorch) {
  const std::pair<const char*, double> kinds[] = {
      {"clip_2.0", 2.0}, {"clip_1.0", 1.0}, {"clip_inf", std::numeric_limits<double>::infinity()}};
  for (auto [name, norm_type] : kinds) {
    std::vector<Tensor> params;
    for (int i = 0; i < 2; ++i) {
      Tensor g = golden(name, "g" + std::to_string(i), kiln::kFloat);
      Tensor p = kiln::zeros(g.sizes()).requires_grad_();
      p.set_grad(g);
      params.push_back(p);
    }
    params.push_back(kiln::zeros({2}).requires_grad_());  // no gradient: skipped
    double total = nn::utils::clip_grad_norm_(params, 1.5, norm_type);
    BOOST_CHECK_CLOSE(total, golden(name, "total").item<double>(), 1e-4);
    for (int i = 0; i < 2; ++i) {
      check_close(params[i].grad(), golden(name, "clipped" + std::to_string(i)), 1e-5, 1e-6,
                  std::string(name) + " clipped");
    }
  }
  Tensor p = kiln::zeros({2}).requires_grad_();
  p.set_grad(kiln::tensor({0.3, 0.4}));
  BOOST_CHECK_CLOSE(nn::utils::clip_grad_norm_(p, 10.0), 0.5, 1e-4);  // below max: unchanged
  BOOST_CHECK(nn_test::values(p.grad())[1] == static_cast<double>(0.4f));
  p.set_grad(kiln::tensor({std::numeric_limits<float>::infinity(), 1.0f}));
  CHECK_ERROR(kiln::ValueError, nn::utils::clip_grad_norm_({p}, 1.0, 2.0, true),
              "clip_grad_norm_: the total norm of order 2 for gradients from `parameters` is "
              "non-finite");
  p.set_grad(kiln::tensor({-3.0, 0.5}));
  nn::utils::clip_grad_value_(p, 1.0);
  BOOST_CHECK(nn_test::values(p.grad()) == std::vector<double>({-1.0, 0.5}));
}

BOOST_AUTO_TEST_SUITE_END()
