// Optimizer trajectories against PyTorch 1.13's: each case's parameters start from the recorded
// values, get the recorded gradient before each step, and must match PyTorch after every step.
#include "optim_golden.h"
#include "optim_test.h"

#include <boost/test/unit_test.hpp>

using namespace kiln;
using namespace kiln::optim;
using namespace optim_test;

namespace {

// Runs case c and checks every step; returns the optimizer for checks of its final state.
std::unique_ptr<Optimizer> run_case(const OptimizerCase& c, std::vector<Tensor>& params,
                                    FloatDiff& diff) {
  for (size_t i = 0; i < c.shapes.size(); ++i) {
    params.push_back(tensor_of(c.shapes[i], c.initial[i]).requires_grad_());
  }
  std::unique_ptr<Optimizer> opt = make_optimizer(c, params);
  for (int s = 0; s < c.steps; ++s) {
    for (size_t i = 0; i < params.size(); ++i) {
      const std::optional<Values>& g = c.grads[static_cast<size_t>(s)][i];
      params[i].mutable_grad() = g ? tensor_of(c.shapes[i], *g) : Tensor();
    }
    opt->step();
    for (size_t i = 0; i < params.size(); ++i) {
      std::string where = c.name + " step " + std::to_string(s) + " param " + std::to_string(i);
      diff.check(where, values_of(params[i]), c.after[static_cast<size_t>(s)][i]);
    }
  }
  return opt;
}

void check_final_state(const OptimizerCase& c, const Optimizer& opt, FloatDiff& diff) {
  OptimizerStateDict dict = opt.state_dict();
  size_t expected_entries = 0;
  for (const GoldenState& s : c.final_state) {
    auto it = dict.state.find(s.param);
    BOOST_REQUIRE_MESSAGE(it != dict.state.end(), c.name << ": no state for param " << s.param);
    auto t = it->second.find(s.key);
    BOOST_REQUIRE_MESSAGE(t != it->second.end(), c.name << ": no state " << s.key);
    BOOST_CHECK_EQUAL_COLLECTIONS(t->second.sizes().begin(), t->second.sizes().end(),
                                  s.shape.begin(), s.shape.end());
    diff.check(c.name + " state " + std::to_string(s.param) + " " + s.key, values_of(t->second),
               s.values);
    ++expected_entries;
  }
  size_t entries = 0;
  for (const auto& [index, tensors] : dict.state) entries += tensors.size();
  BOOST_CHECK_MESSAGE(entries == expected_entries, c.name << ": " << entries
                                                          << " state tensors, PyTorch has "
                                                          << expected_entries);
  // The groups' options as PyTorch's param_groups hold them.
  BOOST_REQUIRE_EQUAL(dict.param_groups.size(), c.groups.size());
  for (size_t g = 0; g < c.groups.size(); ++g) {
    BOOST_CHECK(dict.param_groups[g].options == c.groups[g].options);
    std::vector<int64_t> want(c.groups[g].params.begin(), c.groups[g].params.end());
    BOOST_CHECK(dict.param_groups[g].params == want);
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(golden_trajectories)

BOOST_AUTO_TEST_CASE(every_case_matches_pytorch) {
  BOOST_REQUIRE_GE(golden().optimizers.size(), 15u);
  FloatDiff all;
  for (const OptimizerCase& c : golden().optimizers) {
    BOOST_TEST_CONTEXT("case " << c.name) {
      FloatDiff diff;
      std::vector<Tensor> params;
      std::unique_ptr<Optimizer> opt = run_case(c, params, diff);
      check_final_state(c, *opt, diff);
      BOOST_TEST_MESSAGE(c.name << ": " << diff.summary());
      all.merge(diff);
    }
  }
  BOOST_TEST_MESSAGE("all optimizer cases: " << all.summary());
}

BOOST_AUTO_TEST_SUITE_END()
