// StepLR and CosineAnnealingLR against PyTorch 1.13's rates, to the last bit.
#include "optim_golden.h"
#include "optim_test.h"

#include <kiln/optim.h>

using namespace kiln;
using namespace kiln::optim;
using namespace optim_test;

namespace {

std::unique_ptr<LRScheduler> make_scheduler(const SchedulerCase& c, Optimizer& opt) {
  auto arg = [&](const std::string& key, double fallback) {
    auto it = c.args.find(key);
    return it == c.args.end() ? fallback : it->second;
  };
  if (c.kind == "steplr") {
    auto step_size = static_cast<int64_t>(arg("step_size", 0));
    if (c.args.count("gamma")) return std::make_unique<StepLR>(opt, step_size, arg("gamma", 0));
    return std::make_unique<StepLR>(opt, step_size);  // PyTorch's default gamma, 0.1
  }
  auto T_max = static_cast<int64_t>(arg("T_max", 0));
  if (c.args.count("eta_min")) {
    return std::make_unique<CosineAnnealingLR>(opt, T_max, arg("eta_min", 0));
  }
  return std::make_unique<CosineAnnealingLR>(opt, T_max);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(schedulers)

BOOST_AUTO_TEST_CASE(rates_match_pytorch_exactly) {
  BOOST_REQUIRE_GE(golden().schedulers.size(), 4u);
  for (const SchedulerCase& c : golden().schedulers) {
    BOOST_TEST_CONTEXT("scheduler " << c.name) {
      // One SGD group per base lr, as the PyTorch script built them.
      std::vector<OptimizerParamGroup> groups;
      std::vector<Tensor> params;
      for (double lr : c.lrs.at(0)) {
        params.push_back(zeros({1}).requires_grad_());
        groups.emplace_back(std::vector<Tensor>{params.back()}, std::make_unique<SGDOptions>(lr));
      }
      SGD opt(std::move(groups), SGDOptions(1.0));
      std::unique_ptr<LRScheduler> scheduler = make_scheduler(c, opt);
      BOOST_CHECK_EQUAL(scheduler->last_epoch(), 0);
      for (int epoch = 0; epoch <= c.epochs; ++epoch) {
        if (epoch > 0) {
          opt.step();
          scheduler->step();
        }
        const std::vector<double>& want = c.lrs.at(static_cast<size_t>(epoch));
        const std::vector<double>& got = scheduler->get_last_lr();
        BOOST_TEST_CONTEXT("epoch " << epoch) {
          BOOST_REQUIRE_EQUAL(got.size(), want.size());
          for (size_t g = 0; g < want.size(); ++g) {
            BOOST_CHECK_EQUAL(got[g], want[g]);  // bit-identical doubles
            BOOST_CHECK_EQUAL(opt.param_groups()[g].options().get_lr(), want[g]);
          }
        }
      }
      BOOST_CHECK_EQUAL(scheduler->last_epoch(), c.epochs);
    }
  }
}

BOOST_AUTO_TEST_CASE(scheduled_lr_drives_the_update) {
  Tensor p = zeros({1}).requires_grad_();
  SGD opt({p}, SGDOptions(1.0));
  StepLR scheduler(opt, 1, 0.5);
  for (double lr : {1.0, 0.5, 0.25}) {
    p.mutable_grad() = ones({1});
    float before = p.item<float>();
    opt.step();
    BOOST_CHECK_EQUAL(p.item<float>(), before - static_cast<float>(lr));
    scheduler.step();
  }
}

// Stops each golden run after k epochs, saves the optimizer's and the scheduler's state, builds
// both afresh, loads the states in PyTorch's order and goes on: the rates are PyTorch's
// uninterrupted ones, bit for bit, and the saved state holds what PyTorch's state_dict() holds.
BOOST_AUTO_TEST_CASE(resume_from_state_dict_matches_pytorch) {
  for (const SchedulerCase& c : golden().schedulers) {
    for (int k : {1, c.epochs / 2, c.epochs - 1}) {
      BOOST_TEST_CONTEXT("scheduler " << c.name << " resumed after epoch " << k) {
        auto build = [&](std::vector<Tensor>& params) {
          std::vector<OptimizerParamGroup> groups;
          for (double lr : c.lrs.at(0)) {
            params.push_back(zeros({1}).requires_grad_());
            groups.emplace_back(std::vector<Tensor>{params.back()},
                                std::make_unique<SGDOptions>(lr));
          }
          return std::make_unique<SGD>(std::move(groups), SGDOptions(1.0));
        };
        std::vector<Tensor> params;
        std::unique_ptr<SGD> opt = build(params);
        std::unique_ptr<LRScheduler> scheduler = make_scheduler(c, *opt);
        for (int epoch = 1; epoch <= k; ++epoch) {
          opt->step();
          scheduler->step();
        }
        OptimizerStateDict saved_opt = opt->state_dict();
        LRSchedulerStateDict saved = scheduler->state_dict();
        BOOST_CHECK_EQUAL(saved.last_epoch, k);
        BOOST_CHECK_EQUAL(saved.step_count, k + 1);  // PyTorch's _step_count
        BOOST_CHECK(saved.base_lrs == c.lrs.at(0));
        BOOST_CHECK(saved.last_lr == c.lrs.at(static_cast<size_t>(k)));
        BOOST_CHECK_EQUAL(saved.options.size(), 2u);

        std::vector<Tensor> params2;
        std::unique_ptr<SGD> opt2 = build(params2);
        std::unique_ptr<LRScheduler> resumed = make_scheduler(c, *opt2);
        opt2->load_state_dict(saved_opt);
        resumed->load_state_dict(saved);
        BOOST_CHECK_EQUAL(resumed->last_epoch(), k);
        BOOST_CHECK(resumed->get_last_lr() == c.lrs.at(static_cast<size_t>(k)));
        for (int epoch = k + 1; epoch <= c.epochs; ++epoch) {
          opt2->step();
          resumed->step();
          const std::vector<double>& want = c.lrs.at(static_cast<size_t>(epoch));
          for (size_t g = 0; g < want.size(); ++g) {
            BOOST_CHECK_EQUAL(resumed->get_last_lr()[g], want[g]);
            BOOST_CHECK_EQUAL(opt2->param_groups()[g].options().get_lr(), want[g]);
          }
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(load_state_dict_checks_kind_and_groups) {
  Tensor p = zeros({1}).requires_grad_();
  Tensor q = zeros({1}).requires_grad_();
  SGD opt({p}, SGDOptions(0.1));
  StepLR step(opt, 2, 0.5);
  CosineAnnealingLR cosine(opt, 10);
  step.step();
  LRSchedulerStateDict saved = step.state_dict();
  CHECK_ERROR(ValueError, cosine.load_state_dict(saved),
              "CosineAnnealingLR.load_state_dict: the state has no 'T_max'");
  LRSchedulerStateDict bad = saved;
  bad.options["step_size"] = 0;
  CHECK_ERROR(ValueError, step.load_state_dict(bad),
              "StepLR.load_state_dict: step_size must be an integer of at least 1, got 0");
  bad = saved;
  bad.base_lrs.push_back(0.1);
  CHECK_ERROR(ValueError, step.load_state_dict(bad),
              "LRScheduler.load_state_dict: the state has 2 base rates and 1 last rates, but the "
              "scheduler has 1 parameter groups");
  // The failed loads left both schedulers as they were; a good one restores the settings too.
  BOOST_CHECK_EQUAL(step.last_epoch(), 1);
  BOOST_CHECK_EQUAL(cosine.state_dict().options.at("T_max"), 10.0);
  SGD opt2({q}, SGDOptions(0.1));
  StepLR other(opt2, 7, 0.9);
  other.load_state_dict(saved);
  LRSchedulerStateDict loaded = other.state_dict();
  BOOST_CHECK_EQUAL(loaded.options.at("step_size"), 2.0);
  BOOST_CHECK_EQUAL(loaded.options.at("gamma"), 0.5);
  BOOST_CHECK_EQUAL(loaded.last_epoch, 1);
}

BOOST_AUTO_TEST_CASE(invalid_arguments) {
  Tensor p = zeros({1}).requires_grad_();
  SGD opt({p}, SGDOptions(0.1));
  CHECK_ERROR(ValueError, StepLR(opt, 0), "StepLR: step_size must be at least 1, got 0");
  CHECK_ERROR(ValueError, CosineAnnealingLR(opt, 0),
              "CosineAnnealingLR: T_max must be at least 1, got 0");
  // Rates are untouched by the failed constructions.
  BOOST_CHECK_EQUAL(opt.param_groups()[0].options().get_lr(), 0.1);
}

BOOST_AUTO_TEST_CASE(param_groups_added_later_are_refused) {
  Tensor p = zeros({1}).requires_grad_();
  Tensor q = zeros({1}).requires_grad_();
  SGD opt({p}, SGDOptions(0.1));
  StepLR scheduler(opt, 1);
  opt.add_param_group(OptimizerParamGroup({q}));
  CHECK_ERROR(Error, scheduler.step(),
              "LRScheduler: the optimizer has 2 parameter groups but had 1 when the scheduler "
              "was created");
}

BOOST_AUTO_TEST_SUITE_END()
