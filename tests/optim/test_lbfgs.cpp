// L-BFGS against PyTorch 1.13's (tests/golden/lbfgs_cases.txt, written by
// make_lbfgs_golden.py): the losses, the counters and the parameters after each step(), with a
// fixed step and with the strong Wolfe line search; its options, errors and state dict.
#include "optim_golden.h"
#include "optim_test.h"

#include <kiln/optim.h>
#include <kiln/serialize.h>

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

using namespace kiln;
using namespace kiln::optim;
using namespace optim_test;

namespace {

struct Shaped {
  std::vector<int64_t> shape;
  Values values;
};

struct LbfgsStep {
  double loss = 0;
  int64_t func_evals = 0, n_iter = 0;
  std::vector<Values> after;
};

// A tensor of these values, float64 or float32.
Tensor make_tensor(const Shaped& s, bool float64) {
  if (!float64) return tensor_of(s.shape, s.values);
  Tensor t = kiln::empty(s.shape, kDouble);
  double* p = t.data_ptr<double>();
  for (size_t i = 0; i < s.values.size(); ++i) p[i] = s.values[i];
  return t;
}

struct LbfgsCase {
  std::string name, problem;
  int steps = 0;
  std::map<std::string, double> options;
  std::vector<Shaped> params;
  std::map<std::string, Shaped> data;
  std::vector<LbfgsStep> trajectory;
  bool float64() const { return options.at("float64") == 1; }
};

Shaped read_shaped(std::istream& in) {
  Shaped s;
  int ndim = 0;
  in >> ndim;
  int64_t numel = 1;
  for (int d = 0; d < ndim; ++d) {
    int64_t size = 0;
    in >> size;
    s.shape.push_back(size);
    numel *= size;
  }
  s.values.resize(static_cast<size_t>(numel));
  for (double& v : s.values) in >> v;
  return s;
}

const std::vector<LbfgsCase>& cases() {
  static const std::vector<LbfgsCase> all = [] {
    std::ifstream file(std::string(KILN_GOLDEN_DIR) + "/lbfgs_cases.txt");
    BOOST_REQUIRE_MESSAGE(file, "cannot open lbfgs_cases.txt");
    std::vector<LbfgsCase> out;
    std::string line;
    while (std::getline(file, line)) {
      std::istringstream in(line);
      std::string tag;
      in >> tag;
      if (tag == "case") {
        LbfgsCase c;
        in >> c.name >> c.problem >> c.steps;
        std::string key;
        double value = 0;
        while (in >> key >> value) c.options[key] = value;
        out.push_back(c);
      } else if (tag == "param") {
        int i = 0;
        in >> i;
        out.back().params.push_back(read_shaped(in));
      } else if (tag == "data") {
        std::string key;
        in >> key;
        out.back().data[key] = read_shaped(in);
      } else if (tag == "step") {
        LbfgsStep s;
        int index = 0;
        in >> index >> s.loss >> s.func_evals >> s.n_iter;
        out.back().trajectory.push_back(s);
      } else if (tag == "after") {
        int i = 0;
        in >> i;
        Values v;
        double x = 0;
        while (in >> x) v.push_back(x);
        out.back().trajectory.back().after.push_back(v);
      }
    }
    return out;
  }();
  return all;
}

// The problem's loss, written as make_lbfgs_golden.py writes it.
Tensor loss_of(const LbfgsCase& c, const std::vector<Tensor>& params) {
  if (c.problem == "rosenbrock") {
    const Tensor& x = params[0];
    int64_t n = x.size(0);
    Tensor a = x.slice(0, 0, n - 1), b = x.slice(0, 1, n);
    Tensor u = b - a * a;
    Tensor v = 1 - a;
    return (100 * (u * u) + v * v).sum();
  }
  const Shaped& A = c.data.at("A");
  const Shaped& Y = c.data.at("Y");
  Tensor r = make_tensor(A, c.float64()).matmul(params[0].t()) + params[1] -
             make_tensor(Y, c.float64());
  return (r * r).mean();
}

LBFGSOptions options_of(const LbfgsCase& c) {
  const auto& o = c.options;
  LBFGSOptions options(o.at("lr"));
  options.max_iter(static_cast<int64_t>(o.at("max_iter")))
      .max_eval(static_cast<int64_t>(o.at("max_eval")))
      .tolerance_grad(o.at("tolerance_grad"))
      .tolerance_change(o.at("tolerance_change"))
      .history_size(static_cast<int64_t>(o.at("history_size")));
  if (o.at("line_search_fn") == 1) options.line_search_fn("strong_wolfe");
  return options;
}

std::vector<Tensor> initial_params(const LbfgsCase& c) {
  std::vector<Tensor> params;
  for (const Shaped& p : c.params) params.push_back(make_tensor(p, c.float64()).requires_grad_());
  return params;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(lbfgs)

BOOST_AUTO_TEST_CASE(trajectories_match_pytorch) {
  BOOST_REQUIRE_EQUAL(cases().size(), 4u);
  for (const LbfgsCase& c : cases()) {
    BOOST_TEST_CONTEXT("case " << c.name) {
      std::vector<Tensor> params = initial_params(c);
      LBFGS opt(params, options_of(c));
      auto closure = [&] {
        opt.zero_grad();
        Tensor loss = loss_of(c, params);
        loss.backward();
        return loss;
      };
      FloatDiff diff;  // see the docstring of make_lbfgs_golden.py for the float32 cases
      diff.rtol = c.float64() ? 1e-9 : 1e-5;
      for (int s = 0; s < c.steps; ++s) {
        const LbfgsStep& want = c.trajectory[static_cast<size_t>(s)];
        Tensor loss = opt.step(closure);
        std::string where = c.name + " step " + std::to_string(s);
        diff.check(where + " loss", {loss.item<double>()}, {want.loss});
        OptimizerStateDict state = opt.state_dict();
        BOOST_CHECK_EQUAL(state.state.at(0).at("func_evals").item<int64_t>(), want.func_evals);
        BOOST_CHECK_EQUAL(state.state.at(0).at("n_iter").item<int64_t>(), want.n_iter);
        for (size_t i = 0; i < params.size(); ++i) {
          diff.check(where + " param " + std::to_string(i), values_of(params[i]), want.after[i]);
        }
      }
      BOOST_TEST_MESSAGE(c.name << ": " << diff.summary());
    }
  }
}

BOOST_AUTO_TEST_CASE(state_dict_resumes_identically) {
  const LbfgsCase& c = cases()[2];  // strong Wolfe, history_size 4: the history wraps
  std::vector<Tensor> params = initial_params(c);
  LBFGS opt(params, options_of(c));
  auto closure_of = [&](LBFGS& o, std::vector<Tensor>& ps) {
    return [&] {
      o.zero_grad();
      Tensor loss = loss_of(c, ps);
      loss.backward();
      return loss;
    };
  };
  opt.step(closure_of(opt, params));
  OptimizerStateDict saved = opt.state_dict();
  std::string path = "/tmp/kiln_test_lbfgs_" + std::to_string(::getpid()) + ".safetensors";
  kiln::save(opt, path);
  Tensor after_first = params[0].detach().clone();
  BOOST_CHECK_EQUAL(saved.state.at(0).at("old_dirs").size(0), 4);
  BOOST_CHECK_EQUAL(saved.param_groups[0].options.at("line_search_fn"), 1.0);
  std::vector<Tensor> resumed = initial_params(c);
  {
    NoGradGuard no_grad;
    resumed[0].copy_(params[0]);
  }
  opt.step(closure_of(opt, params));
  LBFGS other(resumed, LBFGSOptions(0.1));
  other.load_state_dict(saved);
  BOOST_CHECK(
      static_cast<const LBFGSOptions&>(other.param_groups()[0].options()).line_search_fn() ==
      std::optional<std::string>("strong_wolfe"));
  other.step(closure_of(other, resumed));
  BOOST_CHECK(values_of(resumed[0]) == values_of(params[0]));  // bit-identical

  // the same through a safetensors file
  std::vector<Tensor> from_file = initial_params(c);
  {
    NoGradGuard no_grad;
    from_file[0].copy_(after_first);
  }
  LBFGS reloaded(from_file, LBFGSOptions(0.1));
  kiln::load(reloaded, path);
  std::remove(path.c_str());
  BOOST_CHECK_EQUAL(reloaded.param_groups()[0].options().get_lr(), 1.0);
  reloaded.step(closure_of(reloaded, from_file));
  BOOST_CHECK(values_of(from_file[0]) == values_of(params[0]));

  OptimizerStateDict bad = saved;
  bad.state[0]["d"] = zeros({3});
  LBFGS third(initial_params(c), options_of(c));
  third.load_state_dict(bad);
  std::vector<Tensor> ps = third.parameters();
  CHECK_ERROR(ValueError, third.step(closure_of(third, ps)),
              "LBFGS: the state does not fit the parameters (6 elements)");
}

BOOST_AUTO_TEST_CASE(options_and_errors) {
  Tensor p = ones({2}).requires_grad_();
  LBFGS opt({p}, 0.5);  // implicit from the lr
  const auto& o = static_cast<const LBFGSOptions&>(opt.param_groups()[0].options());
  BOOST_CHECK_EQUAL(o.lr(), 0.5);
  BOOST_CHECK_EQUAL(*o.max_eval(), 25);  // max_iter * 5 / 4, as PyTorch
  BOOST_CHECK(o.tolerance_grad() == 1e-7 && o.tolerance_change() == 1e-9 &&
              o.history_size() == 100 && !o.line_search_fn());
  CHECK_ERROR(Error, opt.step(), "LBFGS: step() needs a closure");
  std::vector<OptimizerParamGroup> groups;
  groups.emplace_back(std::vector<Tensor>{ones({1}).requires_grad_()});
  groups.emplace_back(std::vector<Tensor>{ones({1}).requires_grad_()});
  CHECK_ERROR(ValueError, LBFGS unused(groups),
              "LBFGS doesn't support per-parameter options (parameter groups)");
  CHECK_ERROR(ValueError, LBFGS({p}, LBFGSOptions().line_search_fn("backtracking")),
              "LBFGS: only 'strong_wolfe' is supported as line_search_fn, got 'backtracking'");
  CHECK_ERROR(ValueError, LBFGS({p}, LBFGSOptions(-1)), "LBFGS: Invalid learning rate: -1");
  CHECK_ERROR(ValueError, LBFGS({p}, LBFGSOptions().history_size(0)),
              "LBFGS: history_size must be at least 1");
  // a gradient already at the tolerance: one closure call, nothing moves
  Tensor q = zeros({2}).requires_grad_();
  LBFGS flat({q});
  int calls = 0;
  flat.step([&] {
    ++calls;
    flat.zero_grad();
    Tensor loss = (q * q).sum();
    loss.backward();
    return loss;
  });
  BOOST_CHECK_EQUAL(calls, 1);
  BOOST_CHECK_EQUAL(flat.state_dict().state.at(0).count("d"), 0u);
}

BOOST_AUTO_TEST_SUITE_END()
