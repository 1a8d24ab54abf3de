// state_dict and load_state_dict: a restored optimizer continues exactly where the saved one
// was, in memory and through a safetensors file; mismatched state dicts are refused whole.
#include "optim_golden.h"
#include "optim_test.h"

#include <kiln/optim.h>
#include <kiln/serialize.h>

#include <cstdio>
#include <unistd.h>

using namespace kiln;
using namespace kiln::optim;
using namespace optim_test;

namespace {

std::vector<Tensor> initial_params(const OptimizerCase& c) {
  std::vector<Tensor> params;
  for (size_t i = 0; i < c.shapes.size(); ++i) {
    params.push_back(tensor_of(c.shapes[i], c.initial[i]).requires_grad_());
  }
  return params;
}

// Steps [from, to) of case c; returns every parameter's values after each step.
std::vector<Values> run_steps(const OptimizerCase& c, std::vector<Tensor>& params, Optimizer& opt,
                              int from, int to) {
  std::vector<Values> out;
  for (int s = from; s < to; ++s) {
    for (size_t i = 0; i < params.size(); ++i) {
      const std::optional<Values>& g = c.grads[static_cast<size_t>(s)][i];
      params[i].mutable_grad() = g ? tensor_of(c.shapes[i], *g) : Tensor();
    }
    opt.step();
    for (const Tensor& p : params) out.push_back(values_of(p));
  }
  return out;
}

std::vector<Tensor> snapshot(const std::vector<Tensor>& params) {
  std::vector<Tensor> copy;
  for (const Tensor& p : params) copy.push_back(p.detach().clone());
  return copy;
}

void restore(std::vector<Tensor>& params, const std::vector<Tensor>& saved) {
  NoGradGuard no_grad;
  for (size_t i = 0; i < params.size(); ++i) params[i].copy_(saved[i]);
}

std::string temp_path(const std::string& name) {
  return "/tmp/kiln_test_optim_" + std::to_string(::getpid()) + "_" + name + ".safetensors";
}

const char* kRoundTripCases[] = {"sgd_momentum",
                                 "sgd_maximize_missing_grads",
                                 "adam_amsgrad",
                                 "adam_missing_grads",
                                 "adamw",
                                 "adam_two_groups",
                                 "rmsprop_centered_momentum",
                                 "rmsprop_maximize_missing_grads",
                                 "adagrad_options",
                                 "adagrad_two_groups_missing_grads"};

}  // namespace

BOOST_AUTO_TEST_SUITE(state_dict)

BOOST_AUTO_TEST_CASE(load_into_same_optimizer_continues_identically) {
  for (const char* name : kRoundTripCases) {
    BOOST_TEST_CONTEXT("case " << name) {
      const OptimizerCase& c = optimizer_case(name);
      std::vector<Tensor> params = initial_params(c);
      auto opt = make_optimizer(c, params);
      run_steps(c, params, *opt, 0, 10);
      OptimizerStateDict saved = opt->state_dict();
      std::vector<Tensor> saved_params = snapshot(params);
      std::vector<Values> first = run_steps(c, params, *opt, 10, c.steps);
      restore(params, saved_params);
      opt->load_state_dict(saved);
      std::vector<Values> second = run_steps(c, params, *opt, 10, c.steps);
      BOOST_CHECK(first == second);  // bit-identical
    }
  }
}

BOOST_AUTO_TEST_CASE(state_dict_is_a_snapshot) {
  const OptimizerCase& c = optimizer_case("adam");
  std::vector<Tensor> params = initial_params(c);
  auto opt = make_optimizer(c, params);
  run_steps(c, params, *opt, 0, 3);
  OptimizerStateDict saved = opt->state_dict();
  Values exp_avg = values_of(saved.state.at(0).at("exp_avg"));
  BOOST_CHECK_EQUAL(saved.state.at(0).at("step").item<float>(), 3.0f);
  run_steps(c, params, *opt, 3, 5);
  BOOST_CHECK(values_of(saved.state.at(0).at("exp_avg")) == exp_avg);
  BOOST_CHECK_EQUAL(saved.state.at(0).at("step").item<float>(), 3.0f);
}

BOOST_AUTO_TEST_CASE(load_into_fresh_optimizer_through_a_file) {
  for (const char* name : kRoundTripCases) {
    BOOST_TEST_CONTEXT("case " << name) {
      const OptimizerCase& c = optimizer_case(name);
      std::vector<Tensor> params = initial_params(c);
      auto opt = make_optimizer(c, params);
      run_steps(c, params, *opt, 0, 10);
      std::string path = temp_path(name);
      kiln::save(*opt, path);
      std::vector<Tensor> saved_params = snapshot(params);
      std::vector<Values> first = run_steps(c, params, *opt, 10, c.steps);

      // A new optimizer over new parameters with the saved values; its options start from the
      // case's but are replaced by the file's.
      std::vector<Tensor> fresh = initial_params(c);
      restore(fresh, saved_params);
      auto reloaded = make_optimizer(c, fresh);
      reloaded->param_groups()[0].options().set_lr(123.0);
      kiln::load(*reloaded, path);
      BOOST_CHECK_EQUAL(reloaded->param_groups()[0].options().get_lr(),
                        opt->param_groups()[0].options().get_lr());
      std::vector<Values> second = run_steps(c, fresh, *reloaded, 10, c.steps);
      BOOST_CHECK(first == second);
      std::remove(path.c_str());
    }
  }
}

BOOST_AUTO_TEST_CASE(file_of_another_optimizer_is_refused) {
  Tensor p = zeros({2}).requires_grad_();
  SGD sgd({p}, SGDOptions(0.1).momentum(0.9));
  p.mutable_grad() = ones({2});
  sgd.step();
  std::string path = temp_path("sgd");
  kiln::save(sgd, path);
  Tensor q = zeros({2}).requires_grad_();
  Adam adam({q});
  CHECK_ERROR(Error, kiln::load(adam, path), "holds the state of an SGD optimizer, not of Adam");
  std::remove(path.c_str());
}

BOOST_AUTO_TEST_CASE(state_moves_to_the_parameter_dtype) {
  Tensor p = zeros({2}, kDouble).requires_grad_();
  SGD opt({p}, SGDOptions(0.1).momentum(0.9));
  OptimizerStateDict dict;
  dict.param_groups.push_back({opt.param_groups()[0].options().values(), {0}});
  dict.state[0]["momentum_buffer"] = ones({2}, kFloat);
  opt.load_state_dict(dict);
  BOOST_CHECK(opt.state_dict().state.at(0).at("momentum_buffer").dtype() == kDouble);
}

BOOST_AUTO_TEST_SUITE_END()
