// The losses and distances beyond kiln's first five (libtorch's L1Loss ... CTCLoss, with
// GaussianNLLLoss, CosineSimilarity and PairwiseDistance), and cross entropy's label smoothing:
// values and input gradients against PyTorch 1.13 for every reduction (loss_cases.txt, written by
// make_loss_golden.py), the examples of libtorch's own tests (test/cpp/api/functional.cpp and
// modules.cpp), the modules' options and printing, autocast, edge cases and error messages.
#include "golden.h"

#include <kiln/amp/autocast.h>

#include <cmath>
#include <functional>
#include <limits>
#include <sstream>

namespace nn = kiln::nn;
namespace F = kiln::nn::functional;
using kiln::Tensor;
using nn::Reduction;
using nn_test::check_close;
using nn_test::golden;

namespace {

using Inputs = std::map<std::string, Tensor>;
using LossFn = std::function<Tensor(Inputs&)>;

// Runs f on the inputs of case `name` (float fields as dtype, requiring grad when the case has
// their gradient; integer fields as int64) and checks its output and every gradient.
void check_case(const std::string& name, const LossFn& f, kiln::ScalarType dtype = kiln::kDouble,
                double tol = 1e-10) {
  const auto& fields = nn_test::golden_case(name).tensors;
  Inputs in;
  std::vector<std::string> differentiated;
  for (const auto& [field, value] : fields) {
    if (field == "out" || field == "gy" || field.rfind("grad_", 0) == 0) continue;
    bool grad = fields.count("grad_" + field) > 0;
    in[field] = golden(name, field, value.is_int ? kiln::kLong : dtype, grad);
    if (grad) differentiated.push_back(field);
  }
  Tensor out = f(in);
  BOOST_TEST_CONTEXT(name) {
    check_close(out, golden(name, "out"), tol, tol, name + " out");
    Tensor objective = fields.count("gy") ? kiln::sum(out * golden(name, "gy", dtype)) : out;
    std::vector<Tensor> wrt;
    for (const std::string& field : differentiated) wrt.push_back(in[field]);
    if (wrt.empty()) return;
    std::vector<Tensor> grads = kiln::autograd::grad({objective}, wrt);
    for (size_t i = 0; i < wrt.size(); ++i) {
      check_close(grads[i], golden(name, "grad_" + differentiated[i]), tol, tol,
                  name + " grad_" + differentiated[i]);
    }
  }
}

// The log-probabilities of a CTC case: log_softmax of its logits z over the last dimension.
Tensor log_probs(Inputs& in) { return F::log_softmax(in["z"], -1); }

const std::pair<const char*, Reduction> kReductions[] = {
    {"mean", Reduction::Mean}, {"sum", Reduction::Sum}, {"none", Reduction::None}};

std::string printed(const nn::Module& module) {
  std::ostringstream out;
  module.pretty_print(out);
  return out.str();
}

bool close(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8) {
  return kiln::allclose(a, b, rtol, atol);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(libtorch_losses)

BOOST_AUTO_TEST_CASE(every_reduction_matches_pytorch) {
  for (auto [suffix, r] : kReductions) {
    const std::string s = suffix;
    check_case("l1_" + s, [r = r](Inputs& in) { return F::l1_loss(in["x"], in["t"], r); });
    check_case("smooth_l1_" + s,
               [r = r](Inputs& in) { return F::smooth_l1_loss(in["x"], in["t"], r, 0.5); });
    check_case("huber_" + s,
               [r = r](Inputs& in) { return F::huber_loss(in["x"], in["t"], r, 0.7); });
    check_case("kl_" + s, [r = r](Inputs& in) { return F::kl_div(in["x"], in["t"], r); });
    check_case("poisson_" + s, [r = r](Inputs& in) {
      return F::poisson_nll_loss(in["x"], in["t"], true, false, 1e-8, r);
    });
    check_case("gauss_" + s, [r = r](Inputs& in) {
      return F::gaussian_nll_loss(in["x"], in["t"], in["v"], false, 1e-6, r);
    });
    check_case("ranking_" + s, [r = r](Inputs& in) {
      return F::margin_ranking_loss(in["x1"], in["x2"], in["t"], 0.3, r);
    });
    check_case("hinge_" + s,
               [r = r](Inputs& in) { return F::hinge_embedding_loss(in["x"], in["t"], 1.5, r); });
    check_case("multi_margin_" + s, [r = r](Inputs& in) {
      return F::multi_margin_loss(in["x"], in["t"], 1, 1.0, {}, r);
    });
    check_case("multilabel_margin_" + s,
               [r = r](Inputs& in) { return F::multilabel_margin_loss(in["x"], in["t"], r); });
    check_case("soft_margin_" + s,
               [r = r](Inputs& in) { return F::soft_margin_loss(in["x"], in["t"], r); });
    check_case("multilabel_soft_" + s, [r = r](Inputs& in) {
      return F::multilabel_soft_margin_loss(in["x"], in["t"], in["w"], r);
    });
    check_case("cos_emb_" + s, [r = r](Inputs& in) {
      return F::cosine_embedding_loss(in["x1"], in["x2"], in["t"], 0.2, r);
    });
    check_case("triplet_" + s, [r = r](Inputs& in) {
      return F::triplet_margin_loss(in["a"], in["p"], in["n"], 1.0, 2.0, 1e-6, false, r);
    });
    check_case("ctc_" + s, [r = r](Inputs& in) {
      return F::ctc_loss(log_probs(in), in["t"], in["il"], in["tl"], 0, r);
    });
    check_case("ce_smooth_" + s, [r = r](Inputs& in) {
      return F::cross_entropy(in["x"], in["t"], in["w"], -1, r, 0.15);
    });
    check_case("nll_spatial_" + s,
               [r = r](Inputs& in) { return F::nll_loss(in["x"], in["t"], in["w"], -5, r); });
  }
  check_case("kl_batchmean",
             [](Inputs& in) { return F::kl_div(in["x"], in["t"], kiln::kBatchMean); });
}

BOOST_AUTO_TEST_CASE(options_and_variants_match_pytorch) {
  check_case("smooth_l1_beta0", [](Inputs& in) {
    return F::smooth_l1_loss(in["x"], in["t"], F::SmoothL1LossFuncOptions().beta(0.0));
  });
  check_case("smooth_l1_default", [](Inputs& in) { return F::smooth_l1_loss(in["x"], in["t"]); });
  check_case("l1_broadcast", [](Inputs& in) { return F::l1_loss(in["x"], in["t"]); });
  check_case("kl_log_target", [](Inputs& in) {
    return F::kl_div(in["x"], in["t"], F::KLDivFuncOptions(kiln::kSum).log_target(true));
  });
  check_case("poisson_rate_full", [](Inputs& in) {
    return F::poisson_nll_loss(
        in["x"], in["t"], F::PoissonNLLLossFuncOptions().log_input(false).full(true).eps(1e-6));
  });
  check_case("gauss_homo", [](Inputs& in) {
    return F::gaussian_nll_loss(in["x"], in["t"], in["v"],
                                F::GaussianNLLLossFuncOptions().full(true));
  });
  check_case("gauss_homo1", [](Inputs& in) {
    return F::gaussian_nll_loss(in["x"], in["t"], in["v"], false, 0.5, kiln::kSum);
  });
  check_case("multi_margin_p2_weight", [](Inputs& in) {
    return F::multi_margin_loss(in["x"], in["t"],
                                F::MultiMarginLossFuncOptions().p(2).margin(0.8).weight(in["w"]));
  });
  check_case("multi_margin_unbatched", [](Inputs& in) {
    return F::multi_margin_loss(in["x"], in["t"], 1, 1.0, {}, kiln::kNone);
  });
  check_case("multilabel_margin_unbatched",
             [](Inputs& in) { return F::multilabel_margin_loss(in["x"], in["t"], kiln::kNone); });
  check_case("soft_margin_extreme",
             [](Inputs& in) { return F::soft_margin_loss(in["x"], in["t"], kiln::kNone); });
  check_case("cos_emb_unbatched", [](Inputs& in) {
    return F::cosine_embedding_loss(in["x1"], in["x2"], in["t"],
                                    F::CosineEmbeddingLossFuncOptions().margin(-0.5));
  });
  check_case("triplet_swap_p1", [](Inputs& in) {
    return F::triplet_margin_loss(in["a"], in["p"], in["n"],
                                  F::TripletMarginLossFuncOptions().margin(0.5).p(1).swap(true));
  });
  check_case("triplet_distance_cos", [](Inputs& in) {
    auto cosine_distance = [](const Tensor& u, const Tensor& v) {
      return 1.0 - kiln::cosine_similarity(u, v);
    };
    return F::triplet_margin_with_distance_loss(in["a"], in["p"], in["n"],
                                                F::TripletMarginWithDistanceLossFuncOptions()
                                                    .distance_function(cosine_distance)
                                                    .margin(0.7)
                                                    .swap(true)
                                                    .reduction(kiln::kSum));
  });
  check_case("ctc_concat_blank4", [](Inputs& in) {
    return F::ctc_loss(log_probs(in), in["t"].to(kiln::kInt), in["il"].to(kiln::kInt), in["tl"],
                       F::CTCLossFuncOptions().blank(4).reduction(kiln::kSum));
  });
  check_case("ctc_zero_infinity", [](Inputs& in) {
    return F::ctc_loss(log_probs(in), in["t"], in["il"], in["tl"],
                       F::CTCLossFuncOptions().reduction(kiln::kNone).zero_infinity(true));
  });
  check_case("ctc_impossible", [](Inputs& in) {
    return F::ctc_loss(log_probs(in), in["t"], in["il"], in["tl"], 0, kiln::kNone);
  });
  check_case("ctc_unbatched", [](Inputs& in) {
    return F::ctc_loss(log_probs(in), in["t"], std::vector<int64_t>{6}, std::vector<int64_t>{3});
  });
  check_case("ce_prob_smooth", [](Inputs& in) {
    return F::cross_entropy(in["x"], in["t"], F::CrossEntropyFuncOptions().label_smoothing(0.2));
  });
  check_case("ce_prob_smooth_weight", [](Inputs& in) {
    return F::cross_entropy(in["x"], in["t"], in["w"], -100, kiln::kMean, 0.4);
  });
  check_case("ce_spatial_smooth", [](Inputs& in) {
    return F::cross_entropy(in["x"], in["t"], {}, -100, kiln::kMean, 0.3);
  });
  check_case("ce_unbatched_smooth", [](Inputs& in) {
    return F::cross_entropy(in["x"], in["t"], {}, -100, kiln::kMean, 0.1);
  });
  check_case("ce_zero_weight_sum", [](Inputs& in) {
    return F::cross_entropy(in["x"], in["t"], in["w"], -100, kiln::kSum, 0.1);
  });
  check_case("bce_logits_weights", [](Inputs& in) {
    return F::binary_cross_entropy_with_logits(in["x"], in["t"], in["w"], kiln::kNone, in["pw"]);
  });
  check_case("cos_sim", [](Inputs& in) { return F::cosine_similarity(in["x1"], in["x2"]); });
  check_case("cos_sim_broadcast", [](Inputs& in) {
    return F::cosine_similarity(in["x1"], in["x2"], F::CosineSimilarityFuncOptions().dim(-1));
  });
  for (int p : {2, 1, 3}) {
    check_case("pairwise_p" + std::to_string(p),
               [p](Inputs& in) { return F::pairwise_distance(in["x1"], in["x2"], p); });
  }
  check_case("pairwise_keepdim", [](Inputs& in) {
    return F::pairwise_distance(in["x1"], in["x2"],
                                F::PairwiseDistanceFuncOptions().eps(1e-3).keepdim(true));
  });
}

BOOST_AUTO_TEST_CASE(modules_match_the_functional_forms_in_float32) {
  auto f32 = kiln::kFloat;
  const double tol = 2e-5;
  check_case(
      "huber_sum",
      [](Inputs& in) {
        return nn::HuberLoss(nn::HuberLossOptions(kiln::kSum).delta(0.7))(in["x"], in["t"]);
      },
      f32, tol);
  check_case(
      "smooth_l1_none",
      [](Inputs& in) {
        return nn::SmoothL1Loss(nn::SmoothL1LossOptions(kiln::kNone).beta(0.5))(in["x"], in["t"]);
      },
      f32, tol);
  check_case(
      "kl_batchmean",
      [](Inputs& in) {
        return nn::KLDivLoss(nn::KLDivLossOptions(kiln::kBatchMean))(in["x"], in["t"]);
      },
      f32, tol);
  check_case(
      "multi_margin_p2_weight",
      [](Inputs& in) {
        nn::MultiMarginLoss loss(nn::MultiMarginLossOptions().p(2).margin(0.8).weight(in["w"]));
        return loss(in["x"], in["t"]);
      },
      f32, tol);
  check_case(
      "multilabel_soft_mean",
      [](Inputs& in) {
        return nn::MultiLabelSoftMarginLoss(nn::MultiLabelSoftMarginLossOptions().weight(in["w"]))(
            in["x"], in["t"]);
      },
      f32, tol);
  check_case(
      "cos_emb_sum",
      [](Inputs& in) {
        nn::CosineEmbeddingLoss loss(
            nn::CosineEmbeddingLossOptions().margin(0.2).reduction(kiln::kSum));
        return loss(in["x1"], in["x2"], in["t"]);
      },
      f32, tol);
  check_case(
      "triplet_swap_p1",
      [](Inputs& in) {
        nn::TripletMarginLoss loss(nn::TripletMarginLossOptions().margin(0.5).p(1).swap(true));
        return loss(in["a"], in["p"], in["n"]);
      },
      f32, tol);
  check_case(
      "ranking_none",
      [](Inputs& in) {
        nn::MarginRankingLoss loss(
            nn::MarginRankingLossOptions().margin(0.3).reduction(kiln::kNone));
        return loss(in["x1"], in["x2"], in["t"]);
      },
      f32, tol);
  check_case(
      "gauss_mean", [](Inputs& in) { return nn::GaussianNLLLoss()(in["x"], in["t"], in["v"]); },
      f32, tol);
  check_case(
      "ctc_mean",
      [](Inputs& in) { return nn::CTCLoss()(log_probs(in), in["t"], in["il"], in["tl"]); }, f32,
      1e-4);
  check_case(
      "l1_sum", [](Inputs& in) { return nn::L1Loss(kiln::kSum)(in["x"], in["t"]); }, f32, tol);
  check_case(
      "soft_margin_mean", [](Inputs& in) { return nn::SoftMarginLoss()(in["x"], in["t"]); }, f32,
      tol);
  check_case(
      "multilabel_margin_none",
      [](Inputs& in) { return nn::MultiLabelMarginLoss(kiln::kNone)(in["x"], in["t"]); }, f32, tol);
  check_case(
      "hinge_mean",
      [](Inputs& in) {
        return nn::HingeEmbeddingLoss(nn::HingeEmbeddingLossOptions().margin(1.5))(in["x"],
                                                                                   in["t"]);
      },
      f32, tol);
  check_case(
      "poisson_sum",
      [](Inputs& in) {
        return nn::PoissonNLLLoss(nn::PoissonNLLLossOptions().reduction(kiln::kSum))(in["x"],
                                                                                     in["t"]);
      },
      f32, tol);
  check_case(
      "ce_smooth_mean",
      [](Inputs& in) {
        nn::CrossEntropyLoss loss(
            nn::CrossEntropyLossOptions().weight(in["w"]).ignore_index(-1).label_smoothing(0.15));
        return loss(in["x"], in["t"]);
      },
      f32, tol);
  check_case(
      "cos_sim_broadcast",
      [](Inputs& in) {
        return nn::CosineSimilarity(nn::CosineSimilarityOptions().dim(-1))(in["x1"], in["x2"]);
      },
      f32, tol);
  check_case(
      "pairwise_p3",
      [](Inputs& in) {
        return nn::PairwiseDistance(nn::PairwiseDistanceOptions(3))(in["x1"], in["x2"]);
      },
      f32, tol);
  // weights are buffers, so to() moves them
  nn::MultiMarginLoss weighted(nn::MultiMarginLossOptions().weight(kiln::ones({3})));
  BOOST_CHECK_EQUAL(weighted->named_buffers()[0].key(), "weight");
  nn::MultiLabelSoftMarginLoss soft(nn::MultiLabelSoftMarginLossOptions().weight(kiln::ones({3})));
  BOOST_CHECK_EQUAL(soft->named_buffers()[0].key(), "weight");
}

// The examples of libtorch's test/cpp/api/functional.cpp and modules.cpp, with their numbers.
BOOST_AUTO_TEST_CASE(libtorch_examples) {
  auto grad_input = [](std::vector<double> v) {
    return kiln::tensor(kiln::TensorData(v), kiln::kFloat).requires_grad_();
  };
  Tensor target = kiln::tensor({0., 1., 5.}, kiln::kFloat);
  Tensor input = grad_input({0.1, 1.2, 4.7});
  Tensor out = F::smooth_l1_loss(input, target);
  BOOST_CHECK(close(out, kiln::tensor(0.0233335, kiln::kFloat)));
  out.sum().backward();
  BOOST_CHECK(input.grad().sizes().equals(input.sizes()));
  BOOST_CHECK(close(F::smooth_l1_loss(grad_input({0.1, 1.5, 10.0}), target, kiln::kMean, 0.5),
                    kiln::tensor(1.67, kiln::kFloat)));
  BOOST_CHECK(close(F::smooth_l1_loss(input, target, kiln::kNone),
                    kiln::tensor({0.005, 0.02, 0.045}, kiln::kFloat)));
  BOOST_CHECK(close(nn::SmoothL1Loss(nn::SmoothL1LossOptions().beta(0.2))(input, target),
                    kiln::tensor(0.108333, kiln::kFloat)));
  BOOST_CHECK(close(F::huber_loss(grad_input({0.1, 1.5, 10.0}), target,
                                  F::HuberLossFuncOptions().reduction(kiln::kMean).delta(0.5)),
                    kiln::tensor(1.67 * 0.5, kiln::kFloat)));
  BOOST_CHECK(close(nn::HuberLoss(nn::HuberLossOptions().delta(0.2))(input, target),
                    kiln::tensor(0.0216666, kiln::kFloat)));
  Tensor margins = kiln::tensor({2., 4., 1., 3.}, kiln::kFloat);
  Tensor pm = kiln::tensor({-1., 1., 1., -1.}, kiln::kFloat);
  BOOST_CHECK(close(F::soft_margin_loss(margins, pm), kiln::tensor(1.3767317, kiln::kFloat)));
  BOOST_CHECK(close(F::soft_margin_loss(margins, pm, kiln::kNone),
                    kiln::tensor({2.1269281, 0.01814993, 0.3132617, 3.0485873}, kiln::kFloat)));
  Tensor ml = kiln::tensor({{0., 2., 2., 0.}, {2., 1., 0., 1.}}, kiln::kFloat);
  Tensor mt = kiln::tensor({{0., 0., 1., 0.}, {1., 0., 1., 1.}}, kiln::kFloat);
  BOOST_CHECK(close(F::multilabel_soft_margin_loss(ml, mt), kiln::tensor(0.7608436, kiln::kFloat)));
  Tensor w = kiln::tensor({0.1, 0.6, 0.4, 0.8}, kiln::kFloat);
  BOOST_CHECK(close(F::multilabel_soft_margin_loss(
                        ml, mt,
                        F::MultilabelSoftMarginLossFuncOptions().reduction(kiln::kNone).weight(w)),
                    kiln::tensor({0.4876902, 0.3321295}, kiln::kFloat)));
  Tensor a = kiln::tensor({{1, 2, 3}, {4, 5, 6}}, kiln::kFloat);
  Tensor b = kiln::tensor({{1, 8, 3}, {2, 1, 6}}, kiln::kFloat);
  BOOST_CHECK(close(F::cosine_similarity(a, b, F::CosineSimilarityFuncOptions().dim(1)),
                    kiln::tensor({0.8078, 0.8721}, kiln::kFloat), 1e-4));
  BOOST_CHECK(close(F::pairwise_distance(a, b, F::PairwiseDistanceFuncOptions().p(1)),
                    kiln::tensor({6, 6}, kiln::kFloat)));
  BOOST_CHECK(close(F::hinge_embedding_loss(kiln::tensor({{2, 22, 4}, {20, 10, 0}}, kiln::kFloat),
                                            kiln::tensor({{2, 6, 4}, {1, 10, 0}}, kiln::kFloat),
                                            F::HingeEmbeddingLossFuncOptions().margin(2)),
                    kiln::tensor(10, kiln::kFloat)));
  Tensor mm_input =
      kiln::tensor({{0.2, 0.2, 0.6}, {0.1, 0.8, 0.1}, {0.9, 0.09, 0.01}}, kiln::kFloat)
          .requires_grad_();
  Tensor mm_weight = kiln::tensor({0.3, 0.3, 0.4}, kiln::kFloat);
  BOOST_CHECK(
      close(F::multi_margin_loss(mm_input, kiln::tensor({2, 1, 0}),
                                 F::MultiMarginLossFuncOptions().margin(2).weight(mm_weight)),
            kiln::tensor(0.305556, kiln::kFloat), 1e-4));
  // integer inputs and target, as libtorch's test writes them
  BOOST_CHECK(close(F::cosine_embedding_loss(kiln::tensor({{2, 3, 4}, {6, 2, 4}}),
                                             kiln::tensor({{2, 3, 5}, {9, 12, 0}}),
                                             kiln::tensor({1, -1}),
                                             F::CosineEmbeddingLossFuncOptions().margin(0.5)),
                    kiln::tensor(0.1004, kiln::kFloat), 1e-4));
  Tensor mlm = kiln::tensor({{0.1, 0.2, 0.4, 0.8}}, kiln::kFloat).requires_grad_();
  BOOST_CHECK(close(F::multilabel_margin_loss(mlm, kiln::tensor({{3, 0, -1, 1}})),
                    kiln::tensor(0.85, kiln::kFloat)));
  BOOST_CHECK(close(F::triplet_margin_loss(kiln::tensor({{3., 3.}}), kiln::tensor({{2., 2.}}),
                                           kiln::tensor({{0., 0.}}),
                                           F::TripletMarginLossFuncOptions().margin(1.0)),
                    kiln::tensor(0.0), 1e-4));
  Tensor ls_input = kiln::tensor({{3., 1.}, {1., 2.}}, kiln::kFloat);
  nn::CrossEntropyLoss smooth(nn::CrossEntropyLossOptions().label_smoothing(0.15));
  BOOST_CHECK(close(smooth(ls_input, kiln::tensor({0, 1})), kiln::tensor(0.3326, kiln::kFloat),
                    1e-4));
  smooth = nn::CrossEntropyLoss(nn::CrossEntropyLossOptions().label_smoothing(0.2));
  BOOST_CHECK(close(smooth(ls_input, kiln::tensor({{0.8, 0.2}, {0.1, 0.9}}, kiln::kFloat)),
                    kiln::tensor(0.5701, kiln::kFloat), 1e-4));
  Tensor rates = kiln::tensor({0.5, 1.5, 2.5}), counts = kiln::tensor({1., 2., 3.});
  Tensor poisson = kiln::exp(rates) - counts * rates;
  BOOST_CHECK(close(F::poisson_nll_loss(rates, counts), kiln::mean(poisson)));
  BOOST_CHECK(close(nn::PoissonNLLLoss(nn::PoissonNLLLossOptions().reduction(kiln::kNone))(rates,
                                                                                           counts),
                    poisson));
  Tensor x1 = kiln::randn({15}) * 10, x2 = kiln::randn({15}) * 10;
  Tensor sign = kiln::sign(kiln::randn({15}));
  BOOST_CHECK(close(F::margin_ranking_loss(x1, x2, sign),
                    kiln::clamp_min(-sign * (x1 - x2), 0).mean()));
  BOOST_CHECK(close(nn::MarginRankingLoss(nn::MarginRankingLossOptions().margin(0.5).reduction(
                        kiln::kSum))(x1, x2, sign),
                    kiln::clamp_min(-sign * (x1 - x2) + 0.5, 0).sum()));
  // the default distance of TripletMarginWithDistanceLoss is triplet_margin_loss's
  Tensor anchor = kiln::randn({100, 128}), pos = kiln::randn({100, 128});
  Tensor neg = kiln::randn({100, 128});
  std::vector<nn::TripletMarginWithDistanceLossOptions::reduction_t> reductions = {
      kiln::kSum, kiln::kMean, kiln::kNone};
  for (bool swap : {true, false}) {
    for (auto r : reductions) {
      nn::TripletMarginWithDistanceLoss distance_loss(
          nn::TripletMarginWithDistanceLossOptions().margin(1.5).swap(swap).reduction(r));
      nn::TripletMarginLoss basic(
          nn::TripletMarginLossOptions().margin(1.5).swap(swap).reduction(r));
      BOOST_CHECK(close(distance_loss(anchor, pos, neg), basic(anchor, pos, neg), 1e-6, 1e-6));
    }
  }
}

BOOST_AUTO_TEST_CASE(ctc_empty_targets_as_libtorch) {
  // empty targets: the loss is -sum over time of the blank's log-probability
  Tensor log_probs = F::log_softmax(kiln::randn({50, 3, 15}, kiln::kDouble), 2);
  Tensor loss = F::ctc_loss(log_probs, kiln::zeros({0}, kiln::kLong), kiln::tensor({50, 50, 50}),
                            kiln::tensor({0, 0, 0}),
                            F::CTCLossFuncOptions().reduction(kiln::kNone));
  BOOST_CHECK(kiln::all(kiln::ge(loss, 0)).item<bool>());
  BOOST_CHECK(close(-log_probs.sum({0}).select(1, 0), loss));
  // a mix of empty and non-empty targets
  Tensor targets = kiln::randint(1, 15, {9});
  loss = F::ctc_loss(log_probs, targets, kiln::tensor({50, 50, 50}), kiln::tensor({0, 9, 0}),
                     F::CTCLossFuncOptions().reduction(kiln::kNone));
  Tensor blanks = -log_probs.sum({0}).select(1, 0);
  BOOST_CHECK(close(blanks[0], loss[0]) && close(blanks[2], loss[2]));
  BOOST_CHECK(std::isfinite(loss[1].item<double>()) && loss[1].item<double>() > 0);
  CHECK_ERROR(kiln::TypeError,
              F::ctc_loss(log_probs, targets, kiln::tensor({50., 50., 50.}),
                          kiln::tensor({3, 3, 3})),
              "input_lengths must be integral");
  CHECK_ERROR(kiln::TypeError,
              F::ctc_loss(log_probs, targets, kiln::tensor({50, 50, 50}),
                          kiln::tensor({3., 3., 3.})),
              "target_lengths must be integral");
  CHECK_ERROR(kiln::ValueError,
              F::ctc_loss(log_probs, kiln::randint(1, 15, {3, 29}), kiln::tensor({50, 50, 50}),
                          kiln::tensor({30, 25, 20})),
              "Expected tensor to have size at least 30 at dimension 1");
  CHECK_ERROR(kiln::ValueError,
              F::ctc_loss(log_probs, targets, kiln::tensor({50, 51, 50}), kiln::tensor({3, 3, 3})),
              "ctc_loss: expected input_lengths to have values at most 50");
  CHECK_ERROR(kiln::IndexError,
              F::ctc_loss(log_probs, kiln::tensor({1, 15, 2}), kiln::tensor({50, 50, 50}),
                          kiln::tensor({1, 1, 1})),
              "ctc_loss: target 15 is out of range");
  CHECK_ERROR(kiln::ValueError,
              F::ctc_loss(log_probs, targets, kiln::tensor({50, 50, 50}), kiln::tensor({3, 3, 3}),
                          15),
              "ctc_loss: blank must be in the label range [0, 15)");
}

BOOST_AUTO_TEST_CASE(edge_cases_match_pytorch) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // an empty batch: Mean is NaN (0 / 0), Sum is 0, None is empty
  Tensor empty = kiln::zeros({0, 4}, kiln::kDouble).requires_grad_();
  Tensor none_targets = kiln::zeros({0}, kiln::kLong);
  BOOST_CHECK(
      std::isnan(F::cross_entropy(empty, none_targets, {}, -100, kiln::kMean, 0.1).item<double>()));
  BOOST_CHECK(std::isnan(F::l1_loss(empty, kiln::zeros({0, 4}, kiln::kDouble)).item<double>()));
  BOOST_CHECK_EQUAL(
      F::multi_margin_loss(empty, none_targets, 1, 1.0, {}, kiln::kSum).item<double>(), 0.0);
  BOOST_CHECK_EQUAL(F::multilabel_soft_margin_loss(empty, kiln::zeros({0, 4}, kiln::kDouble), {},
                                                   kiln::kNone)
                        .numel(),
                    0);
  Tensor e = F::soft_margin_loss(empty, kiln::zeros({0, 4}, kiln::kDouble), kiln::kSum);
  e.backward();
  BOOST_CHECK_EQUAL(e.item<double>(), 0.0);
  BOOST_CHECK(empty.grad().sizes().equals(empty.sizes()));
  // every target ignored: Mean is NaN as PyTorch's, Sum is 0 with a zero gradient
  Tensor x = kiln::randn({3, 4}, kiln::kDouble).requires_grad_();
  Tensor ignored = kiln::tensor({-100, -100, -100});
  BOOST_CHECK(std::isnan(F::cross_entropy(x, ignored, {}, -100, kiln::kMean, 0.2).item<double>()));
  Tensor s = F::cross_entropy(x, ignored, {}, -100, kiln::kSum, 0.2);
  BOOST_CHECK_EQUAL(s.item<double>(), 0.0);
  s.backward();
  BOOST_CHECK_EQUAL(kiln::abs(x.grad()).sum().item<double>(), 0.0);
  // zero class weights: Mean divides 0 by 0
  Tensor zero_w = kiln::zeros({4}, kiln::kDouble);
  BOOST_CHECK(std::isnan(
      F::cross_entropy(x, kiln::tensor({0, 1, 2}), zero_w, -100, kiln::kMean, 0.1).item<double>()));
  BOOST_CHECK_EQUAL(F::multi_margin_loss(x, kiln::tensor({0, 1, 2}), 1, 1.0, zero_w).item<double>(),
                    0.0);
  BOOST_CHECK_EQUAL(
      F::multilabel_soft_margin_loss(x, kiln::ones({3, 4}, kiln::kDouble), zero_w).item<double>(),
      0.0);
  // KL divergence of zero targets is 0, not NaN (0 * log 0)
  BOOST_CHECK_EQUAL(F::kl_div(x, kiln::zeros({3, 4}, kiln::kDouble), kiln::kSum).item<double>(),
                    0.0);
  (void)nan;
}

BOOST_AUTO_TEST_CASE(modules_print_as_libtorch) {
  BOOST_CHECK_EQUAL(printed(*nn::L1Loss()), "kiln::nn::L1Loss()");
  BOOST_CHECK_EQUAL(printed(*nn::KLDivLoss()), "kiln::nn::KLDivLoss()");
  BOOST_CHECK_EQUAL(printed(*nn::HingeEmbeddingLoss(nn::HingeEmbeddingLossOptions().margin(4))),
                    "kiln::nn::HingeEmbeddingLoss(margin=4)");
  BOOST_CHECK_EQUAL(
      printed(*nn::CosineEmbeddingLoss(nn::CosineEmbeddingLossOptions().margin(0.25))),
      "kiln::nn::CosineEmbeddingLoss(margin=0.25)");
  BOOST_CHECK_EQUAL(printed(*nn::TripletMarginLoss(
                        nn::TripletMarginLossOptions().margin(3).p(2).eps(1e-06).swap(false))),
                    "kiln::nn::TripletMarginLoss(margin=3, p=2, eps=1e-06, swap=false)");
  BOOST_CHECK_EQUAL(printed(*nn::TripletMarginWithDistanceLoss()),
                    "kiln::nn::TripletMarginWithDistanceLoss(margin=1, swap=false)");
  BOOST_CHECK_EQUAL(printed(*nn::MultiLabelMarginLoss()), "kiln::nn::MultiLabelMarginLoss()");
  BOOST_CHECK_EQUAL(printed(*nn::MultiLabelSoftMarginLoss()),
                    "kiln::nn::MultiLabelSoftMarginLoss()");
  BOOST_CHECK_EQUAL(printed(*nn::SoftMarginLoss()), "kiln::nn::SoftMarginLoss()");
  BOOST_CHECK_EQUAL(printed(*nn::SmoothL1Loss()), "kiln::nn::SmoothL1Loss");
  BOOST_CHECK_EQUAL(printed(*nn::HuberLoss()), "kiln::nn::HuberLoss");
  BOOST_CHECK_EQUAL(printed(*nn::MarginRankingLoss()), "kiln::nn::MarginRankingLoss()");
  BOOST_CHECK_EQUAL(printed(*nn::PoissonNLLLoss()), "kiln::nn::PoissonNLLLoss()");
  BOOST_CHECK_EQUAL(printed(*nn::GaussianNLLLoss()), "kiln::nn::GaussianNLLLoss()");
  BOOST_CHECK_EQUAL(printed(*nn::CTCLoss()), "kiln::nn::CTCLoss()");
  BOOST_CHECK(nn_test::contains(printed(*nn::MultiMarginLoss()),
                                "kiln::nn::MultiMarginLoss(p=1, margin=1, weight="));
  BOOST_CHECK(nn_test::contains(printed(*nn::MultiMarginLoss()), ", reduction=kMean)"));
  BOOST_CHECK_EQUAL(printed(*nn::CosineSimilarity()),
                    "kiln::nn::CosineSimilarity(dim=1, eps=1e-08)");
  BOOST_CHECK_EQUAL(printed(*nn::CosineSimilarity(nn::CosineSimilarityOptions().dim(0).eps(0.5))),
                    "kiln::nn::CosineSimilarity(dim=0, eps=0.5)");
  BOOST_CHECK_EQUAL(printed(*nn::PairwiseDistance()),
                    "kiln::nn::PairwiseDistance(p=2, eps=1e-06, keepdim=false)");
  BOOST_CHECK_EQUAL(
      printed(*nn::PairwiseDistance(nn::PairwiseDistanceOptions(3).eps(0.5).keepdim(true))),
      "kiln::nn::PairwiseDistance(p=3, eps=0.5, keepdim=true)");
}

// As PyTorch 1.13's CPU list: the listed losses run in float32 under a bfloat16 region; the
// composites it does not list (multilabel_soft_margin_loss, gaussian_nll_loss, the distances)
// keep the region's dtype.
BOOST_AUTO_TEST_CASE(losses_run_in_float32_under_cpu_autocast) {
  kiln::amp::autocast region(kiln::kCPU);
  Tensor x = kiln::rand({4, 3}).to(kiln::kBFloat16), y = kiln::rand({4, 3}).to(kiln::kBFloat16);
  Tensor s = kiln::tensor({1., -1., 1., -1.}).to(kiln::kBFloat16);
  Tensor classes = kiln::tensor({0, 1, 2, 1});
  auto is_float = [](const Tensor& t) { return t.dtype() == kiln::kFloat; };
  BOOST_CHECK(is_float(F::l1_loss(x, y)));
  BOOST_CHECK(is_float(F::smooth_l1_loss(x, y)));
  BOOST_CHECK(is_float(F::huber_loss(x, y)));
  BOOST_CHECK(is_float(F::kl_div(x, y)));
  BOOST_CHECK(is_float(F::margin_ranking_loss(x.select(1, 0), y.select(1, 0), s)));
  BOOST_CHECK(is_float(F::hinge_embedding_loss(x, y)));
  BOOST_CHECK(is_float(F::multi_margin_loss(x, classes)));
  BOOST_CHECK(is_float(F::multilabel_margin_loss(x, kiln::tensor({{0, 1, -1}}).expand({4, 3}))));
  BOOST_CHECK(is_float(F::soft_margin_loss(x, y)));
  BOOST_CHECK(is_float(F::cosine_embedding_loss(x, y, s)));
  BOOST_CHECK(is_float(F::triplet_margin_loss(x, y, x)));
  BOOST_CHECK(is_float(F::poisson_nll_loss(x, y)));
  BOOST_CHECK(is_float(F::cross_entropy(x, classes, {}, -100, kiln::kMean, 0.1)));
  Tensor lp = F::log_softmax(kiln::randn({5, 2, 4}), 2).to(kiln::kBFloat16);
  BOOST_CHECK(is_float(F::ctc_loss(lp, kiln::tensor({{1, 2}, {1, 1}}), kiln::tensor({5, 5}),
                                   kiln::tensor({2, 2}))));
  BOOST_CHECK(F::multilabel_soft_margin_loss(x, y).dtype() == kiln::kBFloat16);
  BOOST_CHECK(F::gaussian_nll_loss(x, y, y + 1).dtype() == kiln::kBFloat16);
  BOOST_CHECK(F::cosine_similarity(x, y).dtype() == kiln::kBFloat16);
  BOOST_CHECK(F::pairwise_distance(x, y).dtype() == kiln::kBFloat16);
}

// First and second derivatives against finite differences (float64, inputs away from the kinks
// of the hinges), as test_gradcheck does for the conformance cases.
BOOST_AUTO_TEST_CASE(gradients_match_finite_differences) {
  using Fn = std::function<Tensor(const std::vector<Tensor>&)>;
  auto check = [](const std::string& name, const Fn& f, std::vector<Tensor> inputs) {
    for (Tensor& t : inputs) t.requires_grad_();
    auto fn = [&f](const std::vector<Tensor>& in) { return std::vector<Tensor>{f(in)}; };
    BOOST_TEST_CONTEXT(name) {
      BOOST_CHECK(kiln::autograd::gradcheck(fn, inputs));
      BOOST_CHECK(kiln::autograd::gradgradcheck(fn, inputs));
    }
  };
  auto rand = [](std::vector<int64_t> shape, double low, double high) {
    return kiln::rand(shape, kiln::kDouble) * (high - low) + low;
  };
  Tensor t = rand({3, 4}, -2, 2), signs = kiln::tensor({{1., -1., 1., -1.}, {-1., 1., 1., -1.}});
  check("smooth_l1", [t](auto& in) { return F::smooth_l1_loss(in[0], t, kiln::kSum, 0.5); },
        {t + kiln::tensor({{0.1, -0.2, 0.9, -1.3}}, kiln::kDouble)});
  check("huber", [t](auto& in) { return F::huber_loss(in[0], t, kiln::kMean, 0.7); },
        {t + kiln::tensor({{0.1, -0.2, 0.9, -1.3}}, kiln::kDouble)});
  check("kl_div", [](auto& in) { return F::kl_div(in[0], in[1], kiln::kBatchMean); },
        {rand({3, 4}, -2, 0), rand({3, 4}, 0.1, 1)});
  check("soft_margin", [signs](auto& in) { return F::soft_margin_loss(in[0], signs); },
        {rand({2, 4}, -3, 3)});
  check("multilabel_soft_margin",
        [](auto& in) { return F::multilabel_soft_margin_loss(in[0], in[1], in[2]); },
        {rand({2, 4}, -3, 3), rand({2, 4}, 0, 1), rand({4}, 0, 1)});
  check("cosine_embedding",
        [](auto& in) {
          return F::cosine_embedding_loss(in[0], in[1], kiln::tensor({1., 1.}));
        },
        {rand({2, 5}, -1, 1), rand({2, 5}, -1, 1)});
  check("triplet_margin",
        [](auto& in) { return F::triplet_margin_loss(in[0], in[1], in[2], 10.0); },
        {rand({3, 4}, -1, 1), rand({3, 4}, -1, 1), rand({3, 4}, -1, 1)});
  check(
      "poisson_full",
      [](auto& in) {
        return F::poisson_nll_loss(in[0], kiln::tensor({0.5, 2., 3.}, kiln::kDouble), false, true);
      },
      {rand({3}, 0.5, 2)});
  check("gaussian_nll", [](auto& in) { return F::gaussian_nll_loss(in[0], in[1], in[2]); },
        {rand({3, 2}, -1, 1), rand({3, 2}, -1, 1), rand({3, 2}, 0.5, 2)});
  check("cosine_similarity", [](auto& in) { return F::cosine_similarity(in[0], in[1]); },
        {rand({3, 4}, -1, 1), rand({3, 4}, -1, 1)});
  check("cross_entropy_smoothing",
        [](auto& in) {
          return F::cross_entropy(in[0], kiln::tensor({0, 2, -100}), in[1], -100, kiln::kMean, 0.2);
        },
        {rand({3, 4}, -1, 1), rand({4}, 0.5, 1)});
  check("ctc",
        [](auto& in) {
          return F::ctc_loss(F::log_softmax(in[0], 2), kiln::tensor({{1, 1, 2}, {2, 0, 0}}),
                             kiln::tensor({5, 4}), kiln::tensor({3, 1}));
        },
        {rand({5, 2, 3}, -1, 1)});
}

BOOST_AUTO_TEST_CASE(error_messages) {
  Tensor x = kiln::randn({3, 4});
  CHECK_ERROR(kiln::ValueError, F::smooth_l1_loss(x, x, kiln::kMean, -1.0),
              "smooth_l1_loss: beta must not be negative, but got -1");
  CHECK_ERROR(kiln::ValueError,
              F::smooth_l1_loss(x, x, F::SmoothL1LossFuncOptions().beta(0.5), 0.5),
              "smooth_l1_loss: expected beta not to be given in the options");
  CHECK_ERROR(kiln::ValueError, F::huber_loss(x, x, kiln::kMean, 0.0),
              "huber_loss: delta must be positive, but got 0");
  CHECK_ERROR(kiln::TypeError, F::kl_div(x, kiln::ones({3, 4}, kiln::kLong)),
              "kl_div: expected floating point input and target, but got float32 and int64");
  CHECK_ERROR(kiln::ValueError, F::margin_ranking_loss(x, x, kiln::ones({3})),
              "margin_ranking_loss: all input tensors should have the same number of dimensions",
              "input1: [3, 4], input2: [3, 4], target: [3]");
  CHECK_ERROR(kiln::ValueError, F::multi_margin_loss(x, kiln::tensor({0, 1, 2}), 3),
              "multi_margin_loss: only p == 1 and p == 2 are supported, but got p = 3");
  CHECK_ERROR(kiln::ValueError, F::multi_margin_loss(x, kiln::tensor({0, 1})),
              "multi_margin_loss: expected a target of 3 class indices for an input of size "
              "[3, 4], but got target of size [2]");
  CHECK_ERROR(kiln::IndexError, F::multi_margin_loss(x, kiln::tensor({0, 4, 1})),
              "multi_margin_loss: target 4 is out of range: expected class indices in [0, 4)");
  CHECK_ERROR(kiln::ValueError,
              F::multi_margin_loss(x, kiln::tensor({0, 1, 1}), 1, 1.0, kiln::ones({3})),
              "multi_margin_loss: expected a weight of 4 elements");
  CHECK_ERROR(kiln::ValueError, F::multi_margin_loss(kiln::randn({2, 3, 4}), kiln::tensor({0, 1})),
              "multi_margin_loss: expected a non-empty vector or matrix");
  CHECK_ERROR(kiln::ValueError, nn::MultiMarginLoss(nn::MultiMarginLossOptions().p(3)),
              "MultiMarginLoss: only p == 1 and p == 2 are supported");
  CHECK_ERROR(kiln::ValueError, F::multilabel_margin_loss(x, kiln::tensor({0, 1, 2})),
              "multilabel_margin_loss: expected a target of the input's size [3, 4], but got "
              "target of size [3]");
  CHECK_ERROR(kiln::IndexError, F::multilabel_margin_loss(x, kiln::full({3, 4}, -2, kiln::kLong)),
              "multilabel_margin_loss: target -2 is out of range: expected class indices in "
              "[-1, 4)");
  CHECK_ERROR(kiln::ValueError, F::cosine_embedding_loss(x, x, kiln::ones({3, 1})),
              "cosine_embedding_loss: expected a 0-D or 1-D target");
  CHECK_ERROR(kiln::ValueError,
              F::cosine_embedding_loss(x.select(0, 0), x.select(0, 0), kiln::ones({4})),
              "cosine_embedding_loss: a 1-D target expects 2-D inputs, but got inputs of sizes "
              "[4] and [4]");
  CHECK_ERROR(kiln::ValueError, F::triplet_margin_loss(x, x, x.select(0, 0)),
              "triplet_margin_loss: all inputs should have the same number of dimensions, but "
              "got 2-D, 2-D and 1-D inputs");
  CHECK_ERROR(kiln::ValueError, F::gaussian_nll_loss(x, x, kiln::ones({4})),
              "gaussian_nll_loss: var of size [4] does not fit the input of size [3, 4]");
  CHECK_ERROR(kiln::ValueError, F::gaussian_nll_loss(x, x, -kiln::ones({3, 4})),
              "gaussian_nll_loss: var has negative entries");
  CHECK_ERROR(kiln::ValueError,
              F::cross_entropy(x, kiln::tensor({0, 1, 2}), {}, -100, kiln::kMean, 1.5),
              "cross_entropy: label_smoothing must be between 0.0 and 1.0, but got 1.5");
  CHECK_ERROR(kiln::TypeError, F::cosine_similarity(kiln::tensor({1, 2}), kiln::tensor({1, 2})),
              "cosine_similarity: expected the inputs' common dtype to be floating point, but it "
              "is int64");
  CHECK_ERROR(kiln::ValueError, F::cosine_similarity(x, kiln::randn({3, 5})),
              "The size of tensor a (4) must match the size of tensor b (5)");
  CHECK_ERROR(kiln::ValueError, F::pairwise_distance(kiln::tensor(1.0), kiln::tensor(2.0)),
              "pairwise_distance: expected inputs of at least 1 dimension");
}

BOOST_AUTO_TEST_SUITE_END()
