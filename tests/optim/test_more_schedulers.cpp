// LinearLR, CosineAnnealingWarmRestarts, OneCycleLR, ReduceLROnPlateau and SequentialLR against
// PyTorch 1.13's rates (tests/golden/scheduler_cases.txt, written by make_scheduler_golden.py,
// which builds the same schedulers by case name), to the last bit; their errors and state dicts.
#include "optim_test.h"

#include <kiln/optim.h>

#include <fstream>
#include <functional>
#include <map>
#include <sstream>

using namespace kiln;
using namespace kiln::optim;

namespace {

struct Rates {
  std::vector<double> lrs, momentum;
};

struct ScheduleCase {
  std::string name;
  std::vector<double> lrs;
  std::vector<Rates> rates;       // [step]
  std::map<int, double> metrics;  // step -> metric (ReduceLROnPlateau)
};

const std::vector<ScheduleCase>& cases() {
  static const std::vector<ScheduleCase> all = [] {
    std::ifstream file(std::string(KILN_GOLDEN_DIR) + "/scheduler_cases.txt");
    BOOST_REQUIRE_MESSAGE(file, "cannot open scheduler_cases.txt");
    std::vector<ScheduleCase> out;
    std::string line;
    while (std::getline(file, line)) {
      std::istringstream in(line);
      std::string tag, word;
      in >> tag;
      if (tag == "case") {
        out.emplace_back();
        in >> out.back().name;
        for (double lr; in >> lr;) out.back().lrs.push_back(lr);
      } else if (tag == "rates") {
        int step = 0;
        in >> step;
        Rates r;
        std::vector<double>* into = &r.lrs;
        while (in >> word) {
          if (word == "momentum") {
            into = &r.momentum;
          } else {
            into->push_back(std::stod(word));
          }
        }
        out.back().rates.push_back(r);
      } else if (tag == "metric") {
        int step = 0;
        double value = 0;
        in >> step >> value;
        out.back().metrics[step] = value;
      }
    }
    return out;
  }();
  return all;
}

// The optimizer of a case: one group per lr, as the script's.
std::unique_ptr<Optimizer> make_optimizer(const ScheduleCase& c, std::vector<Tensor>& params,
                                          bool momentum) {
  std::vector<OptimizerParamGroup> groups;
  bool adam = c.name.find("adam") != std::string::npos;
  for (double lr : c.lrs) {
    params.push_back(zeros({1}).requires_grad_());
    std::unique_ptr<OptimizerOptions> options;
    if (adam) {
      options = std::make_unique<AdamOptions>(lr);
    } else {
      options = std::make_unique<SGDOptions>(SGDOptions(lr).momentum(momentum ? 0.9 : 0));
    }
    groups.emplace_back(std::vector<Tensor>{params.back()}, std::move(options));
  }
  if (adam) return std::make_unique<Adam>(std::move(groups), AdamOptions(1.0));
  return std::make_unique<SGD>(std::move(groups), SGDOptions(1.0).momentum(momentum ? 0.9 : 0));
}

// The scheduler of each case, as make_scheduler_golden.py builds it.
std::shared_ptr<LRScheduler> make_scheduler(const std::string& name, Optimizer& o) {
  if (name == "linear") return std::make_shared<LinearLR>(o, 0.25, 1.0, 4);
  if (name == "linear_default") return std::make_shared<LinearLR>(o);
  if (name == "linear_decay") return std::make_shared<LinearLR>(o, 1.0, 0.1, 6);
  if (name == "warm_restarts") return std::make_shared<CosineAnnealingWarmRestarts>(o, 3, 2, 0.001);
  if (name == "warm_restarts_mult1") return std::make_shared<CosineAnnealingWarmRestarts>(o, 4);
  if (name == "warm_restarts_fractional") {
    return std::make_shared<CosineAnnealingWarmRestarts>(o, 2, 2);
  }
  if (name == "onecycle") {
    return std::make_shared<OneCycleLR>(o, OneCycleLROptions({1.0, 0.5}).total_steps(20));
  }
  if (name == "onecycle_adam_three_phase_linear") {
    return std::make_shared<OneCycleLR>(o, OneCycleLROptions(0.01)
                                               .epochs(3)
                                               .steps_per_epoch(5)
                                               .anneal_strategy("linear")
                                               .three_phase(true)
                                               .pct_start(0.25)
                                               .div_factor(10)
                                               .final_div_factor(100));
  }
  if (name == "onecycle_no_momentum") {
    return std::make_shared<OneCycleLR>(
        o, OneCycleLROptions(0.3).total_steps(7).cycle_momentum(false));
  }
  if (name == "plateau_min") {
    return std::make_shared<ReduceLROnPlateau>(o, ReduceLROnPlateau::min, 0.5, 2, 1e-4,
                                               ReduceLROnPlateau::rel, 1,
                                               std::vector<double>{0.01, 0.08});
  }
  if (name == "plateau_max_abs") {
    return std::make_shared<ReduceLROnPlateau>(o, ReduceLROnPlateau::max, 0.1, 1, 0.1,
                                               ReduceLROnPlateau::abs);
  }
  if (name == "sequential") {
    auto first = std::make_shared<LinearLR>(o, 0.5, 1.0, 3);
    auto second = std::make_shared<StepLR>(o, 2, 0.5);
    return std::make_shared<SequentialLR>(o,
                                          std::vector<std::shared_ptr<LRScheduler>>{first, second},
                                          std::vector<int64_t>{3});
  }
  if (name == "sequential_three") {
    auto first = std::make_shared<LinearLR>(o, 0.2, 1.0, 2);
    auto second = std::make_shared<CosineAnnealingLR>(o, 4, 0.1);
    auto third = std::make_shared<CosineAnnealingWarmRestarts>(o, 2);
    return std::make_shared<SequentialLR>(o,
                                          std::vector<std::shared_ptr<LRScheduler>>{first, second,
                                                                                    third},
                                          std::vector<int64_t>{2, 6});
  }
  throw std::runtime_error("no scheduler for golden case " + name);
}

double momentum_of(const OptimizerParamGroup& group) {
  OptionValues values = group.options().values();
  return values.count("beta1") ? values.at("beta1") : values.at("momentum");
}

// Steps case c's scheduler (by PyTorch's rule for the case) and checks every step's rates.
void run_case(const ScheduleCase& c, Optimizer& opt, LRScheduler& scheduler, size_t from) {
  for (size_t s = from; s < c.rates.size(); ++s) {
    if (s > 0) {
      opt.step();
      if (auto* plateau = dynamic_cast<ReduceLROnPlateau*>(&scheduler)) {
        plateau->step(c.metrics.at(static_cast<int>(s)));
      } else if (c.name == "warm_restarts_fractional") {
        auto i = static_cast<int64_t>(s - 1);
        static_cast<CosineAnnealingWarmRestarts&>(scheduler).step(static_cast<double>(i / 4) +
                                                                  static_cast<double>(i % 4) / 4);
      } else {
        scheduler.step();
      }
    }
    BOOST_TEST_CONTEXT("step " << s) {
      const Rates& want = c.rates[s];
      BOOST_REQUIRE_EQUAL(scheduler.get_last_lr().size(), want.lrs.size());
      for (size_t g = 0; g < want.lrs.size(); ++g) {
        BOOST_CHECK_EQUAL(scheduler.get_last_lr()[g], want.lrs[g]);  // bit-identical
        BOOST_CHECK_EQUAL(opt.param_groups()[g].options().get_lr(), want.lrs[g]);
        if (!want.momentum.empty()) {
          BOOST_CHECK_EQUAL(momentum_of(opt.param_groups()[g]), want.momentum[g]);
        }
      }
    }
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(more_schedulers)

BOOST_AUTO_TEST_CASE(rates_match_pytorch_exactly) {
  BOOST_REQUIRE_EQUAL(cases().size(), 13u);
  for (const ScheduleCase& c : cases()) {
    BOOST_TEST_CONTEXT("case " << c.name) {
      std::vector<Tensor> params;
      bool momentum = !c.rates[0].momentum.empty();
      auto opt = make_optimizer(c, params, momentum);
      std::shared_ptr<LRScheduler> scheduler = make_scheduler(c.name, *opt);
      run_case(c, *opt, *scheduler, 0);
    }
  }
}

BOOST_AUTO_TEST_CASE(state_dict_resumes_every_kind) {
  for (const ScheduleCase& c : cases()) {
    BOOST_TEST_CONTEXT("case " << c.name) {
      // Run half the steps, save, then resume in a new optimizer and scheduler, PyTorch's way.
      std::vector<Tensor> params;
      bool momentum = !c.rates[0].momentum.empty();
      auto opt = make_optimizer(c, params, momentum);
      std::shared_ptr<LRScheduler> scheduler = make_scheduler(c.name, *opt);
      size_t half = c.rates.size() / 2;
      ScheduleCase first = c;
      first.rates.resize(half);
      run_case(first, *opt, *scheduler, 0);
      OptimizerStateDict saved_opt = opt->state_dict();
      LRSchedulerStateDict saved = scheduler->state_dict();

      std::vector<Tensor> fresh;
      auto opt2 = make_optimizer(c, fresh, momentum);
      std::shared_ptr<LRScheduler> resumed = make_scheduler(c.name, *opt2);
      opt2->load_state_dict(saved_opt);
      resumed->load_state_dict(saved);
      run_case(c, *opt2, *resumed, half);
    }
  }
}

BOOST_AUTO_TEST_CASE(errors) {
  Tensor p = zeros({1}).requires_grad_();
  SGD sgd({p}, 0.1);
  CHECK_ERROR(ValueError, LinearLR(sgd, 0.0), "LinearLR: Starting multiplicative factor expected");
  CHECK_ERROR(ValueError, LinearLR(sgd, 0.5, 1.5), "LinearLR: Ending multiplicative factor");
  CHECK_ERROR(ValueError, CosineAnnealingWarmRestarts(sgd, 0),
              "Expected positive integer T_0, but got 0");
  CHECK_ERROR(ValueError, CosineAnnealingWarmRestarts(sgd, 2, 0),
              "Expected integer T_mult >= 1, but got 0");
  CosineAnnealingWarmRestarts warm(sgd, 2);
  CHECK_ERROR(ValueError, warm.step(-1.0), "Expected non-negative epoch, but got -1");
  CHECK_ERROR(ValueError, OneCycleLR(sgd, OneCycleLROptions(1.0)),
              "You must define either total_steps OR (epochs AND steps_per_epoch)");
  CHECK_ERROR(ValueError, OneCycleLR(sgd, OneCycleLROptions(1.0).total_steps(0)),
              "Expected positive integer total_steps, but got 0");
  CHECK_ERROR(ValueError, OneCycleLR(sgd, OneCycleLROptions(1.0).total_steps(5).pct_start(1.5)),
              "Expected float between 0 and 1 pct_start, but got 1.5");
  CHECK_ERROR(ValueError,
              OneCycleLR(sgd, OneCycleLROptions(1.0).total_steps(5).anneal_strategy("exp")),
              "anneal_strategy must by one of 'cos' or 'linear', instead got exp");
  CHECK_ERROR(ValueError, OneCycleLR(sgd, OneCycleLROptions({1.0, 2.0}).total_steps(5)),
              "expected 1 values for max_lr, got 2");
  Adagrad adagrad({zeros({1}).requires_grad_()});
  CHECK_ERROR(ValueError, OneCycleLR(adagrad, OneCycleLROptions(1.0).total_steps(5)),
              "optimizer must support momentum with `cycle_momentum` option enabled");
  SGD other({zeros({1}).requires_grad_()}, 0.1);
  OneCycleLR short_cycle(other, OneCycleLROptions(1.0).total_steps(2));
  short_cycle.step();
  short_cycle.step();
  CHECK_ERROR(ValueError, short_cycle.step(),
              "Tried to step 4 times. The specified number of total steps is 2");
  CHECK_ERROR(ValueError, ReduceLROnPlateau(sgd, ReduceLROnPlateau::min, 1.0),
              "Factor should be < 1.0");
  CHECK_ERROR(ValueError,
              ReduceLROnPlateau(sgd, ReduceLROnPlateau::min, 0.1, 10, 1e-4, ReduceLROnPlateau::rel,
                                0, {0.1, 0.2}),
              "expected 1 min_lrs, got 2");
  ReduceLROnPlateau plateau(sgd);
  CHECK_ERROR(Error, static_cast<LRScheduler&>(plateau).step(), "step() needs the epoch's metric");
  auto linear = std::make_shared<LinearLR>(sgd);
  auto elsewhere = std::make_shared<LinearLR>(other);
  CHECK_ERROR(ValueError, SequentialLR(sgd, {linear, elsewhere}, {2}),
              "expects all schedulers to belong to the same optimizer, but got schedulers at "
              "index 1 to be different than the optimizer passed in");
  CHECK_ERROR(ValueError, SequentialLR(sgd, {linear}, {2}),
              "number of schedulers 1 and the number of milestones to be equal to 1");
  auto on_metric = std::make_shared<ReduceLROnPlateau>(sgd);
  CHECK_ERROR(ValueError, SequentialLR(sgd, {linear, on_metric}, {2}),
              "is a ReduceLROnPlateau, which is stepped with a metric");
  // a state of another kind is refused whole
  LinearLR fresh(other);
  CHECK_ERROR(ValueError, fresh.load_state_dict(warm.state_dict()), "LinearLR.load_state_dict");
}

BOOST_AUTO_TEST_SUITE_END()
