// kiln::models::LSTMLM against PyTorch's word_language_model RNNModel (make_rnn_golden.py):
// one training step with PyTorch's weights (loss, final states, every parameter's gradient, and
// the parameters after clip_grad_norm_(0.25) and the example's SGD update), untied and tied.
#include "rnn_golden.h"

#include <kiln/models.h>

namespace F = kiln::nn::functional;
using kiln::Tensor;
using nn_test::check_close;
using nn_test::golden;
using rnn_test::bool_option;
using rnn_test::int_option;

namespace {

void check_training_step(const std::string& name) {
  kiln::models::LSTMLM model(kiln::models::LSTMLMOptions(int_option(name, "ntoken", 0),
                                                         int_option(name, "ninp", 0),
                                                         int_option(name, "nhid", 0),
                                                         int_option(name, "nlayers", 0))
                                 .dropout(0.0)
                                 .tie_weights(bool_option(name, "tie_weights", false)));
  rnn_test::load_parameters(*model, name);
  Tensor data = golden(name, "data"), targets = golden(name, "targets");
  auto [log_probs, hidden] = model(data, model->init_hidden(data.size(1)));
  Tensor loss = F::nll_loss(log_probs, targets);
  check_close(loss, golden(name, "loss"), 1e-12, 1e-12, name + " loss");
  check_close(std::get<0>(hidden), golden(name, "hn"), 1e-12, 1e-12, name + " hn");
  check_close(std::get<1>(hidden), golden(name, "cn"), 1e-12, 1e-12, name + " cn");
  loss.backward();
  std::vector<Tensor> params = model->parameters();
  for (auto& item : model->named_parameters()) {
    check_close(item.value().grad(), golden(name, "grad." + item.key()), 1e-10, 1e-12,
                name + " grad." + item.key());
  }
  kiln::nn::utils::clip_grad_norm_(params, 0.25);
  {
    kiln::NoGradGuard no_grad;
    for (Tensor& p : params) p.sub_(p.grad() * 20.0);
  }
  for (auto& item : model->named_parameters()) {
    check_close(item.value(), golden(name, "updated." + item.key()), 1e-10, 1e-12,
                name + " updated." + item.key());
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(lstm_lm)

BOOST_AUTO_TEST_CASE(training_step_matches_pytorch) { check_training_step("lstm_lm"); }

BOOST_AUTO_TEST_CASE(tied_training_step_matches_pytorch) {
  check_training_step("lstm_lm_tied");
  kiln::models::LSTMLM tied(kiln::models::LSTMLMOptions(11, 6, 6, 2).tie_weights(true));
  BOOST_TEST(tied->decoder->weight.is_same(tied->encoder->weight));
  BOOST_TEST(tied->parameters().size() == 1u + 8u + 1u);  // encoder, LSTM, decoder bias
  std::ostringstream printed;
  printed << *tied;
  BOOST_TEST(kiln_test::contains(printed.str(), "(decoder): kiln::nn::Linear(in_features=6, "
                                                "out_features=11, bias=true)"));
  CHECK_ERROR(kiln::ValueError,
              kiln::models::LSTMLM(kiln::models::LSTMLMOptions(11, 6, 8, 2).tie_weights(true)),
              "When using the tied flag, nhid must be equal to emsize");
}

BOOST_AUTO_TEST_SUITE_END()
