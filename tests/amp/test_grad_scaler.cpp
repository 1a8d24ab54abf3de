// GradScaler: the reference algorithm's arithmetic (overflow skip and back-off, growth, update
// with a new scale), the disabled mode, state round trips, kiln's additions, and every error.
#include "amp_test.h"

#include <kiln/optim.h>

#include <cmath>
#include <limits>

using namespace kiln;
using amp::GradScaler;
using amp::GradScalerOptions;
using amp_test::check_error;

namespace {

// One parameter w (3 values) with loss sum(w * x): its gradient is x, known exactly.
struct Problem {
  Tensor w = tensor({1.0, 2.0, 3.0}).requires_grad_();
  Tensor x = tensor({0.5, -1.0, 2.0});
  optim::SGD opt{{w}, optim::SGDOptions(0.25)};

  Tensor loss() const { return (w * x).sum(); }
  std::vector<float> values() const {
    return {w[0].item<float>(), w[1].item<float>(), w[2].item<float>()};
  }
};

// One scaled iteration; `poison` replaces the gradient's first value before the step.
void iterate(GradScaler& scaler, Problem& p, double poison = 0.0) {
  p.opt.zero_grad();
  scaler.scale(p.loss()).backward();
  if (poison != 0.0) {
    NoGradGuard no_grad;
    p.w.mutable_grad()[0].fill_(poison);
  }
  scaler.step(p.opt);
  scaler.update();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(grad_scaler)

BOOST_AUTO_TEST_CASE(defaults_are_pytorchs) {
  GradScaler scaler;
  BOOST_TEST(scaler.is_enabled());
  BOOST_TEST(scaler.get_scale() == 65536.0);
  BOOST_TEST(scaler.get_growth_factor() == 2.0);
  BOOST_TEST(scaler.get_backoff_factor() == 0.5);
  BOOST_TEST(scaler.get_growth_interval() == 2000);
  BOOST_TEST(!scaler.last_step_skipped());
  Tensor loss = tensor(1.5);
  BOOST_TEST(scaler.scale(loss).item<double>() == 1.5 * 65536.0);
  std::vector<Tensor> scaled = scaler.scale(std::vector<Tensor>{tensor(1.0), tensor(-2.0)});
  BOOST_TEST(scaled[0].item<double>() == 65536.0);
  BOOST_TEST(scaled[1].item<double>() == -131072.0);
  Tensor low = tensor({1.0}).to(kBFloat16);
  BOOST_TEST(scaler.scale(low).dtype() == kBFloat16);  // a 0-dim scale does not promote
}

// Scaling by a power of two and unscaling is exact: the scaled run equals the plain one.
BOOST_AUTO_TEST_CASE(scaled_training_equals_plain_training_in_float32) {
  Problem scaled, plain;
  GradScaler scaler;
  for (int i = 0; i < 3; ++i) {
    iterate(scaler, scaled);
    plain.opt.zero_grad();
    plain.loss().backward();
    plain.opt.step();
  }
  BOOST_TEST(scaled.values() == plain.values(), boost::test_tools::per_element());
  // w - 3 * 0.25 * x
  BOOST_TEST(scaled.values() == std::vector<float>({0.625f, 2.75f, 1.5f}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(forced_overflow_skips_the_step_and_halves_the_scale) {
  for (double poison :
       {std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
        std::numeric_limits<double>::quiet_NaN()}) {
    Problem p;
    GradScaler scaler;
    iterate(scaler, p);  // clean: tracker 1
    BOOST_TEST(scaler.get_growth_tracker() == 1);
    std::vector<float> before = p.values();
    iterate(scaler, p, poison);
    BOOST_TEST(scaler.last_step_skipped());
    BOOST_TEST(scaler.skipped_steps() == 1);
    BOOST_TEST(p.values() == before, boost::test_tools::per_element());
    BOOST_TEST(scaler.get_scale() == 32768.0);
    BOOST_TEST(scaler.get_growth_tracker() == 0);
    iterate(scaler, p);
    BOOST_TEST(!scaler.last_step_skipped());
    BOOST_TEST(scaler.get_scale() == 32768.0);
  }
}

BOOST_AUTO_TEST_CASE(growth_after_growth_interval_clean_steps) {
  Problem p;
  GradScaler scaler(GradScalerOptions().set_growth_interval(3));
  std::vector<double> scales;
  std::vector<int64_t> trackers;
  for (int i = 0; i < 7; ++i) {
    iterate(scaler, p);
    scales.push_back(scaler.get_scale());
    trackers.push_back(scaler.get_growth_tracker());
  }
  BOOST_TEST(scales == std::vector<double>({65536, 65536, 131072, 131072, 131072, 262144, 262144}),
             boost::test_tools::per_element());
  BOOST_TEST(trackers == std::vector<int64_t>({1, 2, 0, 1, 2, 0, 1}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(growth_that_would_overflow_float32_is_dropped) {
  Problem p;
  GradScaler scaler(GradScalerOptions().set_init_scale(3e38).set_growth_interval(1));
  p.x = tensor({1e-39, 0.0, 0.0});  // keeps the scaled gradient finite
  iterate(scaler, p);
  BOOST_TEST(scaler.get_scale() == static_cast<double>(3e38f));
  BOOST_TEST(scaler.get_growth_tracker() == 0);
}

BOOST_AUTO_TEST_CASE(min_scale_stops_the_collapse) {
  Problem p;
  GradScaler scaler(GradScalerOptions().set_init_scale(4.0).set_min_scale(1.0));
  double inf = std::numeric_limits<double>::infinity();
  std::vector<double> scales;
  for (int i = 0; i < 4; ++i) {
    iterate(scaler, p, inf);
    scales.push_back(scaler.get_scale());
  }
  BOOST_TEST(scales == std::vector<double>({2, 1, 1, 1}), boost::test_tools::per_element());
  BOOST_TEST(scaler.skipped_steps() == 4);
  GradScaler unbounded(GradScalerOptions().set_init_scale(4.0));
  for (int i = 0; i < 4; ++i) iterate(unbounded, p, inf);
  BOOST_TEST(unbounded.get_scale() == 0.25);
}

// From 1.0, PyTorch's scale reaches 0 after 150 overflows in a row; the next clean step unscaled
// the gradients by 1/0 and wrote NaN into the weights. The default floor, 2^-126, stops it there.
BOOST_AUTO_TEST_CASE(a_long_overflow_streak_stops_at_the_default_floor) {
  Problem p;
  GradScaler scaler(GradScalerOptions().set_init_scale(1.0));
  double inf = std::numeric_limits<double>::infinity();
  for (int i = 0; i < 160; ++i) iterate(scaler, p, inf);
  BOOST_TEST(scaler.get_scale() == amp::kDefaultMinScale);
  BOOST_TEST(amp::kDefaultMinScale == static_cast<double>(std::numeric_limits<float>::min()));
  BOOST_TEST(scaler.skipped_steps() == 160);
  iterate(scaler, p);  // a clean step: gradient x, SGD lr 0.25
  BOOST_TEST(!scaler.last_step_skipped());
  std::vector<float> w = p.values();
  BOOST_TEST(w == std::vector<float>({0.875f, 2.25f, 2.5f}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(update_with_a_new_scale_keeps_the_tracker) {
  Problem p;
  GradScaler scaler;
  iterate(scaler, p);
  iterate(scaler, p);
  p.opt.zero_grad();
  scaler.scale(p.loss()).backward();
  scaler.step(p.opt);
  scaler.update(1024.0);
  BOOST_TEST(scaler.get_scale() == 1024.0);
  BOOST_TEST(scaler.get_growth_tracker() == 2);
  scaler.update(tensor(512.0));
  BOOST_TEST(scaler.get_scale() == 512.0);
}

BOOST_AUTO_TEST_CASE(one_optimizer_skips_alone_and_the_shared_scale_backs_off) {
  Problem a, b;
  GradScaler scaler;
  a.opt.zero_grad();
  b.opt.zero_grad();
  scaler.scale(a.loss() + b.loss()).backward();
  {
    NoGradGuard no_grad;
    a.w.mutable_grad()[1].fill_(std::numeric_limits<double>::infinity());
  }
  std::vector<float> a_before = a.values();
  scaler.step(a.opt);
  BOOST_TEST(scaler.last_step_skipped());
  scaler.step(b.opt);
  BOOST_TEST(!scaler.last_step_skipped());
  scaler.update();
  BOOST_TEST(a.values() == a_before, boost::test_tools::per_element());
  BOOST_TEST(b.values() == std::vector<float>({0.875f, 2.25f, 2.5f}),
             boost::test_tools::per_element());
  BOOST_TEST(scaler.get_scale() == 32768.0);
}

BOOST_AUTO_TEST_CASE(disabled_scaler_is_a_no_op) {
  Problem p, plain;
  GradScaler scaler(GradScalerOptions().set_enabled(false));
  BOOST_TEST(!scaler.is_enabled());
  BOOST_TEST(scaler.get_scale() == 1.0);
  Tensor loss = p.loss();
  BOOST_TEST(scaler.scale(loss).impl_ptr() == loss.impl_ptr());
  scaler.unscale_(p.opt);  // nothing to check, nothing recorded
  for (int i = 0; i < 2; ++i) {
    iterate(scaler, p, i == 1 ? std::numeric_limits<double>::infinity() : 0.0);
    plain.opt.zero_grad();
    plain.loss().backward();
    if (i == 1) {
      NoGradGuard no_grad;
      plain.w.mutable_grad()[0].fill_(std::numeric_limits<double>::infinity());
    }
    plain.opt.step();
  }
  // the disabled scaler stepped even with an inf gradient, exactly as the plain loop
  std::vector<float> got = p.values(), want = plain.values();
  BOOST_TEST(std::isinf(got[0]));
  BOOST_TEST(got[1] == want[1]);
  BOOST_TEST(got[2] == want[2]);
  BOOST_TEST(scaler.get_scale() == 1.0);
  BOOST_TEST(scaler.state_dict().empty());
  scaler.load_state_dict({});  // no-op, no error
}

BOOST_AUTO_TEST_CASE(state_round_trip) {
  Problem p;
  GradScaler scaler(GradScalerOptions().set_growth_interval(4).set_growth_factor(3.0));
  iterate(scaler, p, std::numeric_limits<double>::infinity());
  iterate(scaler, p);
  iterate(scaler, p);
  std::map<std::string, double> state = scaler.state_dict();
  BOOST_TEST(state.at("scale") == 32768.0);
  BOOST_TEST(state.at("growth_factor") == 3.0);
  BOOST_TEST(state.at("backoff_factor") == 0.5);
  BOOST_TEST(state.at("growth_interval") == 4.0);
  BOOST_TEST(state.at("_growth_tracker") == 2.0);
  GradScaler restored;
  restored.load_state_dict(state);
  BOOST_TEST(restored.state_dict() == state);
  // both continue identically: two more clean steps grow the scale by 3
  Problem q;
  {
    NoGradGuard no_grad;
    q.w.copy_(p.w);
  }
  iterate(scaler, p);
  iterate(scaler, p);
  iterate(restored, q);
  iterate(restored, q);
  BOOST_TEST(restored.get_scale() == 98304.0);
  BOOST_TEST(restored.state_dict() == scaler.state_dict());
  // a fresh scaler saves its initial state
  BOOST_TEST(GradScaler().state_dict().at("scale") == 65536.0);
}

BOOST_AUTO_TEST_SUITE(errors)

BOOST_AUTO_TEST_CASE(invalid_options) {
  check_error<ValueError>([] { GradScaler(GradScalerOptions().set_growth_factor(1.0)); },
                          {"GradScaler", "growth factor must be > 1.0", "1"});
  check_error<ValueError>([] { GradScaler(GradScalerOptions().set_backoff_factor(1.5)); },
                          {"GradScaler", "backoff factor must be < 1.0", "1.5"});
  check_error<ValueError>([] { GradScaler(GradScalerOptions().set_growth_interval(0)); },
                          {"GradScaler", "growth interval"});
  check_error<ValueError>([] { GradScaler(GradScalerOptions().set_min_scale(0.0)); },
                          {"GradScaler", "min_scale must be in [2^-126"});
  check_error<ValueError>([] { GradScaler(GradScalerOptions().set_min_scale(1e-40)); },
                          {"GradScaler", "min_scale", "1e-40"});
  check_error<ValueError>([] { GradScaler(GradScalerOptions().set_backoff_factor(0.0)); },
                          {"GradScaler", "backoff factor must be < 1.0 and > 0", "0"});
  check_error<ValueError>([] { GradScaler(GradScalerOptions().set_growth_interval(1LL << 31)); },
                          {"GradScaler", "growth interval", "2147483648"});
  double nan = std::numeric_limits<double>::quiet_NaN();
  double inf = std::numeric_limits<double>::infinity();
  for (double bad : {nan, inf, 0.0, -1.0, 1e39}) {
    check_error<ValueError>([&] { GradScaler(GradScalerOptions().set_init_scale(bad)); },
                            {"GradScaler: init_scale must be finite and in [min_scale"});
  }
  check_error<ValueError>(
      [] { GradScaler(GradScalerOptions().set_init_scale(0.5).set_min_scale(1.0)); },
      {"init_scale", "[1, ", "0.5"});
  GradScaler scaler;
  check_error<ValueError>([&] { scaler.set_growth_factor(0.5); }, {"growth factor"});
  check_error<ValueError>([&] { scaler.set_growth_factor(inf); }, {"growth factor", "inf"});
  BOOST_TEST(scaler.get_growth_factor() == 2.0);  // a refused value is not kept
}

BOOST_AUTO_TEST_CASE(non_finite_new_scale) {
  Problem p;
  GradScaler scaler;
  p.opt.zero_grad();
  scaler.scale(p.loss()).backward();
  scaler.step(p.opt);
  double inf = std::numeric_limits<double>::infinity();
  for (double bad : {std::numeric_limits<double>::quiet_NaN(), inf, -inf, 0.0, 1e39}) {
    check_error<ValueError>([&] { scaler.update(bad); },
                            {"GradScaler.update: new_scale must be finite"});
  }
  check_error<ValueError>([&] { scaler.update(tensor(std::nan(""))); }, {"new_scale", "nan"});
  BOOST_TEST(scaler.get_scale() == 65536.0);
}

BOOST_AUTO_TEST_CASE(invalid_state_dicts_change_nothing) {
  std::map<std::string, double> good = GradScaler().state_dict();
  auto with = [&](const char* key, double v) {
    std::map<std::string, double> s = good;
    s[key] = v;
    return s;
  };
  double nan = std::numeric_limits<double>::quiet_NaN();
  GradScaler scaler(GradScalerOptions().set_init_scale(8.0).set_growth_interval(3));
  check_error<ValueError>([&] { scaler.load_state_dict(with("scale", nan)); },
                          {"load_state_dict", "\"scale\"", "nan"});
  check_error<ValueError>([&] { scaler.load_state_dict(with("growth_interval", 2.5)); },
                          {"\"growth_interval\" must be a whole number", "2.5"});
  check_error<ValueError>([&] { scaler.load_state_dict(with("growth_interval", 1e300)); },
                          {"\"growth_interval\""});
  check_error<ValueError>([&] { scaler.load_state_dict(with("_growth_tracker", 2000)); },
                          {"\"_growth_tracker\" must be a whole number in [0, 1999]"});
  check_error<ValueError>([&] { scaler.load_state_dict(with("backoff_factor", nan)); },
                          {"backoff factor"});
  BOOST_TEST(scaler.get_scale() == 8.0);
  BOOST_TEST(scaler.get_growth_interval() == 3);
}

BOOST_AUTO_TEST_CASE(unscale_before_scale) {
  Problem p;
  GradScaler scaler;
  p.loss().backward();
  check_error<Error>([&] { scaler.unscale_(p.opt); },
                     {"unscale_", "did not use scaler.scale(loss or outputs)"});
}

BOOST_AUTO_TEST_CASE(unscale_twice_and_after_step) {
  Problem p;
  GradScaler scaler;
  scaler.scale(p.loss()).backward();
  scaler.unscale_(p.opt);
  check_error<Error>([&] { scaler.unscale_(p.opt); },
                     {"unscale_() has already been called on this optimizer", "SGD",
                      "since the last update()"});
  scaler.step(p.opt);
  check_error<Error>([&] { scaler.unscale_(p.opt); }, {"unscale_() is being called after step()"});
  check_error<Error>([&] { scaler.step(p.opt); },
                     {"step() has already been called since the last update()", "SGD"});
  scaler.update();
  scaler.scale(p.loss()).backward();
  scaler.unscale_(p.opt);  // a new iteration
}

BOOST_AUTO_TEST_CASE(closure_is_refused) {
  Problem p;
  GradScaler scaler;
  scaler.scale(p.loss()).backward();
  check_error<Error>([&] { scaler.step(p.opt, [&] { return p.loss(); }); },
                     {"Closure use is not currently supported if GradScaler is enabled."});
}

BOOST_AUTO_TEST_CASE(float16_gradients) {
  Tensor w = ones({2, 3}, TensorOptions().dtype(kHalf)).requires_grad_();
  optim::SGD opt({w}, optim::SGDOptions(0.1));
  GradScaler scaler;
  scaler.scale(w.sum()).backward();
  check_error<ValueError>([&] { scaler.unscale_(opt); },
                          {"unscale_", "Attempting to unscale FP16 gradients", "[2, 3]", "float16",
                           "cpu"});
}

BOOST_AUTO_TEST_CASE(no_inf_checks) {
  Problem p;
  GradScaler scaler;
  scaler.scale(p.loss());
  check_error<Error>([&] { scaler.step(p.opt); },
                     {"step", "No inf checks were recorded for this optimizer", "SGD"});
  GradScaler fresh;
  fresh.scale(p.loss());
  check_error<Error>([&] { fresh.update(); }, {"No inf checks were recorded prior to update."});
}

BOOST_AUTO_TEST_CASE(bad_new_scale_and_state) {
  GradScaler scaler;
  Tensor two = tensor({1.0, 2.0});
  check_error<ValueError>([&] { scaler.update(two); }, {"update", "new_scale", "[2]", "float32"});
  Tensor needs_grad = tensor(2.0).requires_grad_();
  check_error<ValueError>([&] { scaler.update(needs_grad); }, {"update", "requiring grad"});
  check_error<Error>([&] { scaler.load_state_dict({}); },
                     {"load_state_dict", "The source state dict is empty"});
  check_error<ValueError>(
      [&] {
        scaler.load_state_dict({{"scale", 2.0}});
      },
      {"load_state_dict", "growth_factor"});
}

BOOST_AUTO_TEST_SUITE_END()
BOOST_AUTO_TEST_SUITE_END()
