// Every user error of the optimizers: invalid options (PyTorch's messages), invalid parameter
// lists, and state dicts that do not fit (which leave the optimizer unchanged).
#include "optim_test.h"

#include <kiln/optim.h>

using namespace kiln;
using namespace kiln::optim;

namespace {

Tensor param(int64_t n = 2) { return ones({n}).requires_grad_(); }

}  // namespace

BOOST_AUTO_TEST_SUITE(errors)

BOOST_AUTO_TEST_CASE(invalid_sgd_options) {
  CHECK_ERROR(ValueError, SGD({param()}, SGDOptions(-0.1)), "SGD: Invalid learning rate: -0.1");
  CHECK_ERROR(ValueError, SGD({param()}, SGDOptions(0.1).momentum(-1)),
              "SGD: Invalid momentum value: -1");
  CHECK_ERROR(ValueError, SGD({param()}, SGDOptions(0.1).weight_decay(-0.5)),
              "SGD: Invalid weight_decay value: -0.5");
  CHECK_ERROR(ValueError, SGD({param()}, SGDOptions(0.1).nesterov(true)),
              "SGD: Nesterov momentum requires a momentum and zero dampening");
  CHECK_ERROR(ValueError,
              SGD({param()}, SGDOptions(0.1).momentum(0.9).dampening(0.1).nesterov(true)),
              "Nesterov momentum requires a momentum and zero dampening (momentum 0.9, "
              "dampening 0.1)");
}

BOOST_AUTO_TEST_CASE(invalid_adam_options) {
  CHECK_ERROR(ValueError, Adam({param()}, AdamOptions(-1)), "Adam: Invalid learning rate: -1");
  CHECK_ERROR(ValueError, Adam({param()}, AdamOptions().eps(-1e-8)),
              "Adam: Invalid epsilon value: -1e-08");
  CHECK_ERROR(ValueError, Adam({param()}, AdamOptions().betas({1.0, 0.999})),
              "Adam: Invalid beta parameter at index 0: 1");
  CHECK_ERROR(ValueError, Adam({param()}, AdamOptions().betas({0.9, -0.1})),
              "Adam: Invalid beta parameter at index 1: -0.1");
  CHECK_ERROR(ValueError, Adam({param()}, AdamOptions().weight_decay(-1)),
              "Adam: Invalid weight_decay value: -1");
  CHECK_ERROR(ValueError, AdamW({param()}, AdamWOptions(-0.5)),
              "AdamW: Invalid learning rate: -0.5");
  CHECK_ERROR(ValueError, Adam({param()}, AdamOptions(std::nan(""))),
              "Adam: Invalid learning rate: nan");
}

BOOST_AUTO_TEST_CASE(invalid_group_options) {
  std::vector<OptimizerParamGroup> groups;
  groups.emplace_back(std::vector<Tensor>{param()});
  groups.emplace_back(std::vector<Tensor>{param()}, std::make_unique<SGDOptions>(-2));
  CHECK_ERROR(ValueError, SGD(groups, SGDOptions(0.1)), "SGD: Invalid learning rate: -2");
  std::vector<OptimizerParamGroup> other;
  other.emplace_back(std::vector<Tensor>{param()}, std::make_unique<SGDOptions>(0.1));
  CHECK_ERROR(TypeError, Adam unused(other),
              "Adam: the parameter group's options are of another optimizer");
}

BOOST_AUTO_TEST_CASE(invalid_parameters) {
  CHECK_ERROR(ValueError, SGD(std::vector<Tensor>{}, SGDOptions(0.1)),
              "SGD: optimizer got an empty parameter list");
  CHECK_ERROR(ValueError, Adam(std::vector<OptimizerParamGroup>{}),
              "Adam: optimizer got an empty parameter list");
  CHECK_ERROR(ValueError, SGD({param(), Tensor()}, SGDOptions(0.1)),
              "SGD: parameter 1 of the group is undefined");
  Tensor leaf = param();
  CHECK_ERROR(ValueError, SGD({leaf * 2}, SGDOptions(0.1)),
              "SGD: can't optimize a non-leaf Tensor (parameter 0 of the group)");
  CHECK_ERROR(ValueError, SGD({leaf, leaf}, SGDOptions(0.1)),
              "SGD: the parameter group contains parameter 1 twice");
  SGD opt({leaf}, SGDOptions(0.1));
  CHECK_ERROR(ValueError, opt.add_param_group(OptimizerParamGroup({leaf})),
              "SGD: some parameters appear in more than one parameter group");
  CHECK_ERROR(ValueError, opt.add_param_group(OptimizerParamGroup(std::vector<Tensor>{})),
              "SGD: optimizer got an empty parameter list");
  BOOST_CHECK_EQUAL(opt.param_groups().size(), 1u);
}

BOOST_AUTO_TEST_CASE(group_without_options_outside_an_optimizer) {
  OptimizerParamGroup group({param()});
  BOOST_CHECK(!group.has_options());
  CHECK_ERROR(Error, group.options(), "OptimizerParamGroup: the group has no options yet");
}

// An Adam optimizer over [2] and [3] parameters after one step, and its state dict.
struct AdamFixture {
  Tensor a = param(2);
  Tensor b = param(3);
  Adam opt{std::vector<Tensor>{a, b}, AdamOptions(0.1)};
  OptimizerStateDict dict;
  AdamFixture() {
    a.mutable_grad() = ones({2});
    b.mutable_grad() = ones({3});
    opt.step();
    dict = opt.state_dict();
  }
  // The optimizer's state is still dict's (a failed load changed nothing).
  void check_unchanged() {
    OptimizerStateDict now = opt.state_dict();
    BOOST_CHECK(now.param_groups[0].options == dict.param_groups[0].options);
    BOOST_CHECK(now.state.at(0).at("exp_avg").equal(dict.state.at(0).at("exp_avg")));
  }
};

BOOST_FIXTURE_TEST_CASE(mismatched_state_dicts, AdamFixture) {
  OptimizerStateDict d = dict;
  d.param_groups.push_back(d.param_groups[0]);
  CHECK_ERROR(ValueError, opt.load_state_dict(d),
              "Adam: loaded state dict has a different number of parameter groups (2) than the "
              "optimizer (1)");
  d = dict;
  d.param_groups[0].params.pop_back();
  CHECK_ERROR(ValueError, opt.load_state_dict(d),
              "loaded state dict contains a parameter group that doesn't match the size of "
              "optimizer's group (group 0 has 1 parameters in the state dict and 2 in the "
              "optimizer)");
  d = dict;
  d.state[0]["exp_avg"] = zeros({3});
  CHECK_ERROR(ValueError, opt.load_state_dict(d),
              "Adam: state 'exp_avg' of parameter 0 has shape [3] but the parameter has shape [2]");
  d = dict;
  d.state[1]["momentum_buffer"] = zeros({3});
  CHECK_ERROR(ValueError, opt.load_state_dict(d),
              "Adam: state of parameter 1: Adam has no state 'momentum_buffer'");
  d = dict;
  d.state[1].erase("exp_avg_sq");
  CHECK_ERROR(ValueError, opt.load_state_dict(d),
              "Adam: state of parameter 1: the state lacks 'exp_avg_sq'");
  d = dict;
  d.state[7] = d.state[0];
  CHECK_ERROR(ValueError, opt.load_state_dict(d),
              "Adam: loaded state dict has state for parameter 7, which is in none of its "
              "parameter groups");
  d = dict;
  d.state[0]["step"] = zeros({2});
  CHECK_ERROR(ValueError, opt.load_state_dict(d),
              "Adam: state 'step' of parameter 0 must have one element, got shape [2]");
  check_unchanged();
}

BOOST_FIXTURE_TEST_CASE(mismatched_group_options, AdamFixture) {
  OptimizerStateDict d = dict;
  d.param_groups[0].options.erase("eps");
  CHECK_ERROR(ValueError, opt.load_state_dict(d),
              "Adam: parameter group 0 of the loaded state dict: AdamOptions: missing option "
              "'eps'");
  d = dict;
  d.param_groups[0].options["momentum"] = 0.9;
  CHECK_ERROR(ValueError, opt.load_state_dict(d), "AdamOptions: unknown option 'momentum'");
  d = dict;
  d.param_groups[0].options["lr"] = -1;
  CHECK_ERROR(ValueError, opt.load_state_dict(d),
              "parameter group 0 of the loaded state dict: Adam: Invalid learning rate: -1");
  check_unchanged();
}

BOOST_AUTO_TEST_SUITE_END()
