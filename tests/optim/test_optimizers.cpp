// RMSprop and Adagrad beyond their golden trajectories (tests/optim/test_golden.cpp): implicit
// options as libtorch's, PyTorch's messages for invalid options, and the validation of their
// state dicts.
#include "optim_test.h"

#include <kiln/optim.h>

using namespace kiln;
using namespace kiln::optim;

namespace {

Tensor param(int64_t n = 2) { return ones({n}).requires_grad_(); }

}  // namespace

BOOST_AUTO_TEST_SUITE(optimizers)

BOOST_AUTO_TEST_CASE(options_are_implicit_from_the_learning_rate) {
  Tensor p = param();
  SGD sgd({p}, 0.1);
  Adam adam({param()}, 0.01);
  AdamW adamw({param()}, 0.02);
  RMSprop rmsprop({param()}, 0.03);
  Adagrad adagrad({param()}, 0.04);
  BOOST_CHECK_EQUAL(sgd.defaults().get_lr(), 0.1);
  BOOST_CHECK_EQUAL(adam.defaults().get_lr(), 0.01);
  BOOST_CHECK_EQUAL(adamw.defaults().get_lr(), 0.02);
  BOOST_CHECK_EQUAL(rmsprop.defaults().get_lr(), 0.03);
  BOOST_CHECK_EQUAL(adagrad.defaults().get_lr(), 0.04);
  // PyTorch's defaults
  RMSpropOptions r;
  BOOST_CHECK(r.lr() == 1e-2 && r.alpha() == 0.99 && r.eps() == 1e-8 && r.momentum() == 0 &&
              !r.centered());
  AdagradOptions a;
  BOOST_CHECK(a.lr() == 1e-2 && a.lr_decay() == 0 && a.eps() == 1e-10 &&
              a.initial_accumulator_value() == 0);
  p.mutable_grad() = ones({2});
  sgd.step();
  BOOST_CHECK_CLOSE(p[0].item<double>(), 0.9, 1e-4);
}

BOOST_AUTO_TEST_CASE(invalid_options) {
  CHECK_ERROR(ValueError, RMSprop({param()}, RMSpropOptions(-1)),
              "RMSprop: Invalid learning rate: -1");
  CHECK_ERROR(ValueError, RMSprop({param()}, RMSpropOptions().eps(-1)),
              "RMSprop: Invalid epsilon value: -1");
  CHECK_ERROR(ValueError, RMSprop({param()}, RMSpropOptions().momentum(-0.5)),
              "RMSprop: Invalid momentum value: -0.5");
  CHECK_ERROR(ValueError, RMSprop({param()}, RMSpropOptions().weight_decay(-2)),
              "RMSprop: Invalid weight_decay value: -2");
  CHECK_ERROR(ValueError, RMSprop({param()}, RMSpropOptions().alpha(-0.1)),
              "RMSprop: Invalid alpha value: -0.1");
  CHECK_ERROR(ValueError, Adagrad({param()}, AdagradOptions(-1)),
              "Adagrad: Invalid learning rate: -1");
  CHECK_ERROR(ValueError, Adagrad({param()}, AdagradOptions().lr_decay(-1)),
              "Adagrad: Invalid lr_decay value: -1");
  CHECK_ERROR(ValueError, Adagrad({param()}, AdagradOptions().weight_decay(-1)),
              "Adagrad: Invalid weight_decay value: -1");
  CHECK_ERROR(ValueError, Adagrad({param()}, AdagradOptions().initial_accumulator_value(-1)),
              "Adagrad: Invalid initial_accumulator_value value: -1");
  CHECK_ERROR(ValueError, Adagrad({param()}, AdagradOptions().eps(-1)),
              "Adagrad: Invalid epsilon value: -1");
}

BOOST_AUTO_TEST_CASE(state_dicts_are_validated) {
  // Adagrad has state for every parameter from the start, as PyTorch's.
  Tensor p = param(), q = param(3);
  Adagrad adagrad({p, q}, AdagradOptions(0.1).initial_accumulator_value(0.5));
  OptimizerStateDict dict = adagrad.state_dict();
  BOOST_REQUIRE_EQUAL(dict.state.size(), 2u);
  BOOST_CHECK_EQUAL(dict.state.at(1).at("sum")[2].item<float>(), 0.5f);
  BOOST_CHECK_EQUAL(dict.state.at(1).at("step").item<float>(), 0.0f);
  BOOST_CHECK_EQUAL(dict.param_groups[0].options.at("initial_accumulator_value"), 0.5);

  OptimizerStateDict no_sum = dict;
  no_sum.state[0].erase("sum");
  CHECK_ERROR(ValueError, adagrad.load_state_dict(no_sum),
              "Adagrad: state of parameter 0: the state lacks 'sum'");
  OptimizerStateDict unknown = dict;
  unknown.state[0]["exp_avg"] = zeros({2});
  CHECK_ERROR(ValueError, adagrad.load_state_dict(unknown), "Adagrad has no state 'exp_avg'");
  OptimizerStateDict wrong_shape = dict;
  wrong_shape.state[1]["sum"] = zeros({2});
  CHECK_ERROR(ValueError, adagrad.load_state_dict(wrong_shape),
              "state 'sum' of parameter 1 has shape [2] but the parameter has shape [3]");
  OptimizerStateDict other_options = dict;
  other_options.param_groups[0].options["alpha"] = 0.9;
  CHECK_ERROR(ValueError, adagrad.load_state_dict(other_options),
              "AdagradOptions: unknown option 'alpha'");

  Tensor r = param();
  RMSprop rmsprop({r}, RMSpropOptions(0.01).momentum(0.9).centered(true));
  r.mutable_grad() = ones({2});
  rmsprop.step();
  OptimizerStateDict saved = rmsprop.state_dict();
  BOOST_CHECK_EQUAL(saved.state.at(0).size(), 4u);  // step, square_avg, momentum, grad_avg
  OptimizerStateDict no_square = saved;
  no_square.state[0].erase("square_avg");
  CHECK_ERROR(ValueError, rmsprop.load_state_dict(no_square), "the state lacks 'square_avg'");
  OptimizerStateDict bad_alpha = saved;
  bad_alpha.param_groups[0].options["alpha"] = -1;
  CHECK_ERROR(ValueError, rmsprop.load_state_dict(bad_alpha),
              "RMSprop: parameter group 0 of the loaded state dict: RMSprop: Invalid alpha value");
  // the refused loads left the state as it was
  BOOST_CHECK_EQUAL(rmsprop.state_dict().state.at(0).at("step").item<float>(), 1.0f);
  rmsprop.load_state_dict(saved);
}

BOOST_AUTO_TEST_SUITE_END()
