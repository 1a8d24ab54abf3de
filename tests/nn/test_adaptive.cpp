// AdaptiveLogSoftmaxWithLoss against PyTorch's goldens (alsm_cases.txt, make_alsm_golden.py):
// forward's output and loss, log_prob, predict and the gradients of the loss for the weights and
// the input; libtorch's ModulesTest cases, its printing and the error paths.
#include "golden.h"

#include <sstream>

namespace nn = kiln::nn;
using kiln::Tensor;
using nn_test::check_close;
using nn_test::golden;
using nn_test::golden_case;

namespace {

std::string printed(const nn::AdaptiveLogSoftmaxWithLoss& module) {
  std::ostringstream out;
  out << module;
  return out.str();
}

// "tail.1.0.weight" -> "tail1_0_w", "head.bias" -> "head_b": the golden field of a parameter.
std::string field_of(const std::string& name) {
  if (name == "head.weight") return "head_w";
  if (name == "head.bias") return "head_b";
  return "tail" + name.substr(5, 1) + "_" + name.substr(7, 1) + "_w";
}

// The module of case `name` with PyTorch's weights, in dtype.
nn::AdaptiveLogSoftmaxWithLoss loaded(const std::string& name,
                                      nn::AdaptiveLogSoftmaxWithLossOptions options,
                                      kiln::ScalarType dtype = kiln::kDouble) {
  nn::AdaptiveLogSoftmaxWithLoss asm_(std::move(options));
  asm_->to(dtype);
  kiln::NoGradGuard no_grad;
  for (auto& item : asm_->named_parameters()) {
    item.value().copy_(golden(name, field_of(item.key())));
  }
  return asm_;
}

void check_golden(const std::string& name, const nn::AdaptiveLogSoftmaxWithLossOptions& options) {
  BOOST_TEST_CONTEXT(name) {
    auto asm_ = loaded(name, options);
    BOOST_CHECK_EQUAL(asm_->parameters().size(),
                      (options.head_bias() ? 2 : 1) + 2 * options.cutoffs().size());
    Tensor x = golden(name, "x", kiln::kDouble, /*requires_grad=*/true);
    Tensor target = golden(name, "target");
    nn::ASMoutput result = asm_(x, target);
    check_close(result.output, golden(name, "out"), 1e-10, 1e-12, name + " out");
    BOOST_CHECK_CLOSE(result.loss, golden(name, "loss").item<double>(), 1e-9);
    (-result.output).mean().backward();
    for (auto& item : asm_->named_parameters()) {
      const std::string field = "grad_" + field_of(item.key());
      if (golden_case(name).tensors.count(field) != 0) {
        check_close(item.value().grad(), golden(name, field), 1e-9, 1e-12, name + " " + field);
      } else {  // no target in this tail: PyTorch leaves the gradient unset
        BOOST_CHECK_MESSAGE(!item.value().grad().defined() ||
                                kiln::all(kiln::eq(item.value().grad(), 0)).item<bool>(),
                            name << ": " << item.key() << " got a gradient");
      }
    }
    check_close(x.grad(), golden(name, "grad_x"), 1e-9, 1e-12, name + " grad_x");
    if (x.dim() == 2) {
      kiln::NoGradGuard no_grad;
      check_close(asm_->log_prob(x), golden(name, "log_prob"), 1e-10, 1e-12, name + " log_prob");
      BOOST_CHECK(asm_->predict(x).equal(golden(name, "predict")));
    }
    // float32 with the same weights
    auto single = loaded(name, options, kiln::kFloat);
    Tensor out32 = single(x.detach().to(kiln::kFloat), target).output;
    BOOST_CHECK(out32.dtype() == kiln::kFloat);
    check_close(out32, golden(name, "out"), 1e-5, 1e-5, name + " float32 out");
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(adaptive_log_softmax)

BOOST_AUTO_TEST_CASE(goldens) {
  using Options = nn::AdaptiveLogSoftmaxWithLossOptions;
  check_golden("alsm_two_tails_bias", Options(8, 10, {4, 8}).div_value(2.).head_bias(true));
  check_golden("alsm_three_tails", Options(16, 20, {4, 10, 15}).div_value(2.));
  check_golden("alsm_default_div_one_tail", Options(8, 4, {2}));
  check_golden("alsm_head_only_targets", Options(6, 7, {3, 5}).div_value(2.).head_bias(true));
  check_golden("alsm_unbatched", Options(8, 10, {4, 8}).div_value(2.));
}

BOOST_AUTO_TEST_CASE(parameters_and_printing) {
  nn::AdaptiveLogSoftmaxWithLoss asm_(
      nn::AdaptiveLogSoftmaxWithLossOptions(8, 10, {4, 8}).div_value(2.).head_bias(true));
  std::vector<std::string> names;
  for (auto& item : asm_->named_parameters()) names.push_back(item.key());
  BOOST_CHECK((names == std::vector<std::string>{"head.weight", "head.bias", "tail.0.0.weight",
                                                 "tail.0.1.weight", "tail.1.0.weight",
                                                 "tail.1.1.weight"}));
  BOOST_CHECK(asm_->named_parameters()["tail.1.0.weight"].sizes().equals({2, 8}));
  BOOST_CHECK_EQUAL(asm_->shortlist_size, 4);
  BOOST_CHECK_EQUAL(asm_->n_clusters, 2);
  BOOST_CHECK_EQUAL(asm_->head_size, 6);
  BOOST_CHECK((asm_->cutoffs == std::vector<int64_t>{4, 8, 10}));
  // libtorch's PrettyPrintAdaptiveLogSoftmaxWithLoss
  BOOST_CHECK_EQUAL(printed(nn::AdaptiveLogSoftmaxWithLoss(
                        nn::AdaptiveLogSoftmaxWithLossOptions(8, 4, {2}).div_value(2.))),
                    "kiln::nn::AdaptiveLogSoftmaxWithLoss(\n"
                    "  (head): kiln::nn::Linear(in_features=8, out_features=3, bias=false)\n"
                    "  (tail): kiln::nn::ModuleList(\n"
                    "    (0): kiln::nn::Sequential(\n"
                    "      (0): kiln::nn::Linear(in_features=8, out_features=4, bias=false)\n"
                    "      (1): kiln::nn::Linear(in_features=4, out_features=2, bias=false)\n"
                    "    )\n"
                    "  )\n"
                    ")");
  BOOST_CHECK_EQUAL(printed(asm_),
                    "kiln::nn::AdaptiveLogSoftmaxWithLoss(\n"
                    "  (head): kiln::nn::Linear(in_features=8, out_features=6, bias=true)\n"
                    "  (tail): kiln::nn::ModuleList(\n"
                    "    (0): kiln::nn::Sequential(\n"
                    "      (0): kiln::nn::Linear(in_features=8, out_features=4, bias=false)\n"
                    "      (1): kiln::nn::Linear(in_features=4, out_features=4, bias=false)\n"
                    "    )\n"
                    "    (1): kiln::nn::Sequential(\n"
                    "      (0): kiln::nn::Linear(in_features=8, out_features=2, bias=false)\n"
                    "      (1): kiln::nn::Linear(in_features=2, out_features=2, bias=false)\n"
                    "    )\n"
                    "  )\n"
                    ")");
  Tensor before = asm_->tail[0]->named_parameters()["0.weight"].clone();
  asm_->reset_parameters();
  BOOST_CHECK(!asm_->tail[0]->named_parameters()["0.weight"].equal(before));
}

// libtorch's ModulesTest.AdaptiveLogSoftmaxWithLoss.
BOOST_AUTO_TEST_CASE(libtorch_cases) {
  using Options = nn::AdaptiveLogSoftmaxWithLossOptions;
  {
    nn::AdaptiveLogSoftmaxWithLoss asfm(Options(8, 4, {2}).div_value(2.));
    Tensor logprob_out = asfm->log_prob(kiln::randn({4, 8}));
    BOOST_CHECK(kiln::allclose(kiln::exp(logprob_out).sum(1), kiln::ones({4})));
  }
  {
    nn::AdaptiveLogSoftmaxWithLoss asfm(Options(8, 10, {4, 8}).div_value(2.).head_bias(true));
    Tensor x = kiln::randn({64, 8});
    BOOST_CHECK(asfm->predict(x).equal(asfm->log_prob(x).argmax(1)));
    // every row's head choosing a cluster: predict's all-outside-the-shortlist branch
    {
      kiln::NoGradGuard no_grad;
      asfm->head->bias.fill_(0.0);
      asfm->head->bias.narrow(0, 5, 1).fill_(100.0);
    }
    Tensor predicted = asfm->predict(x);
    BOOST_CHECK(predicted.equal(asfm->log_prob(x).argmax(1)));
    BOOST_CHECK(kiln::all(kiln::ge(predicted, 8)).item<bool>());
  }
  {
    nn::AdaptiveLogSoftmaxWithLoss asfm(Options(16, 20, {4, 10, 15}).div_value(2.));
    Tensor x = kiln::arange(100, 132, kiln::kFloat).reshape({2, 16});
    auto asm_out = asfm(x, kiln::tensor({0, 17}, kiln::kLong));
    BOOST_CHECK(asm_out.output.sizes().equals({2}));
  }
  {
    nn::AdaptiveLogSoftmaxWithLoss asfm(Options(8, 4, {2}).div_value(2.));
    Tensor x = kiln::randn({4, 8});
    Tensor logprob_out = asfm->log_prob(x);
    for (int64_t v = 0; v < 4; ++v) {
      Tensor y = kiln::full({4}, v, kiln::kLong);
      auto asm_out = asfm(x, y);
      Tensor expected = kiln::nn::functional::nll_loss(logprob_out, y);
      BOOST_CHECK_CLOSE(asm_out.loss, expected.item<double>(), 1e-4);
      BOOST_CHECK(kiln::allclose(asm_out.output, logprob_out.gather(1, y.unsqueeze(1)).squeeze()));
    }
  }
  {
    nn::AdaptiveLogSoftmaxWithLoss asfm(Options(16, 20, {4, 10, 15}).div_value(2.));
    Tensor x = kiln::randn({1, 16});
    Tensor y = kiln::tensor({17}, kiln::kLong);
    BOOST_CHECK(kiln::allclose(asfm(x, y).output.squeeze(0),
                               asfm(x.squeeze(0), y.squeeze(0)).output));
  }
}

BOOST_AUTO_TEST_CASE(errors) {
  using Options = nn::AdaptiveLogSoftmaxWithLossOptions;
  const char* cutoffs_message =
      "AdaptiveLogSoftmaxWithLoss: cutoffs should be a sequence of unique, positive integers "
      "sorted in an increasing order, where each value is between 1 and n_classes-1";
  for (const std::vector<int64_t>& bad :
       std::vector<std::vector<int64_t>>{{}, {5, 3}, {0, 4}, {4, 10}, {3, 3, 5}, {-1}}) {
    CHECK_ERROR(kiln::ValueError, nn::AdaptiveLogSoftmaxWithLoss(Options(8, 10, bad)),
                cutoffs_message, "with n_classes=10");
  }
  CHECK_ERROR(kiln::ValueError, nn::AdaptiveLogSoftmaxWithLoss(Options(8, 10, {4}).div_value(0)),
              "AdaptiveLogSoftmaxWithLoss: div_value should not be equal to 0");
  CHECK_ERROR(kiln::ValueError, nn::AdaptiveLogSoftmaxWithLoss(Options(8, 10, {4}).div_value(-2.)),
              "AdaptiveLogSoftmaxWithLoss: tail 0 would project in_features=8 to -4 features");

  nn::AdaptiveLogSoftmaxWithLoss asfm(Options(8, 10, {4, 8}).div_value(2.));
  CHECK_ERROR(kiln::IndexError, asfm(kiln::randn({3, 8}), kiln::tensor({1, 10, -2}, kiln::kLong)),
              "AdaptiveLogSoftmaxWithLoss: Target values should be in [0, 9], but values in "
              "range [-2, 10] were found");
  CHECK_ERROR(kiln::ValueError, asfm(kiln::randn({3, 8}), kiln::zeros({3, 2}, kiln::kLong)),
              "AdaptiveLogSoftmaxWithLoss: 0D or 1D target tensor expected, multi-target not "
              "supported, but got target of size [3, 2]");
  CHECK_ERROR(kiln::ValueError, asfm(kiln::randn({3, 2, 8}), kiln::zeros({3}, kiln::kLong)),
              "1D target tensor expects 2D input tensors, but found inputs with size [3, 2, 8]");
  CHECK_ERROR(kiln::ValueError, asfm(kiln::randn({3, 8}), kiln::zeros({}, kiln::kLong)),
              "0D target tensor expects 1D input tensors, but found inputs with size [3, 8]");
  CHECK_ERROR(kiln::ValueError, asfm(kiln::randn({3, 8}), kiln::zeros({4}, kiln::kLong)),
              "Input and target should have the same size in the batch dimension, but got input "
              "of size [3, 8] and target of size [4]");
  CHECK_ERROR(kiln::ValueError, asfm(kiln::randn({3, 7}), kiln::zeros({3}, kiln::kLong)),
              "AdaptiveLogSoftmaxWithLoss: expected an input whose last dimension is "
              "in_features=8, but got input of size [3, 7]");
  CHECK_ERROR(kiln::TypeError, asfm(kiln::randn({3, 8}), kiln::zeros({3}, kiln::kInt)),
              "expected a target of class indices of dtype int64, but got int32");
  CHECK_ERROR(kiln::TypeError,
              asfm(kiln::zeros({3, 8}, kiln::kLong), kiln::zeros({3}, kiln::kLong)),
              "expected a floating point input, but got int64");
  CHECK_ERROR(kiln::ValueError, asfm->log_prob(kiln::randn({8})),
              "AdaptiveLogSoftmaxWithLoss::log_prob: expected a 2D input [N, in_features], but "
              "got input of size [8]");
  CHECK_ERROR(kiln::ValueError, asfm->predict(kiln::randn({2, 5})),
              "AdaptiveLogSoftmaxWithLoss::predict: expected an input whose last dimension is "
              "in_features=8, but got input of size [2, 5]");
  // the module still works after the errors
  BOOST_CHECK(
      asfm(kiln::randn({2, 8}), kiln::tensor({9, 0}, kiln::kLong)).output.sizes().equals({2}));
}

BOOST_AUTO_TEST_SUITE_END()
