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
        groups.emplace_back(std::vector<Tensor>{params.back()},
                            std::make_unique<SGDOptions>(lr));
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
