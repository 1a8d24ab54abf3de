// Reads tests/golden/optim_cases.txt and builds kiln optimizers from its records.
#include "optim_golden.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace optim_test {
namespace {

using namespace kiln;
using namespace kiln::optim;

double number(const std::string& word) {
  char* end = nullptr;
  double v = std::strtod(word.c_str(), &end);
  if (end == word.c_str() || *end != '\0') throw std::runtime_error("bad number '" + word + "'");
  return v;
}

Values rest(std::istringstream& in) {
  Values v;
  std::string word;
  while (in >> word) v.push_back(number(word));
  return v;
}

std::vector<int64_t> shape(std::istringstream& in) {
  int64_t ndim = -1;
  in >> ndim;
  if (ndim < 0) throw std::runtime_error("bad rank");
  std::vector<int64_t> s(static_cast<size_t>(ndim));
  for (int64_t& d : s) in >> d;
  return s;
}

std::map<std::string, double> key_values(std::istringstream& in) {
  std::map<std::string, double> kv;
  std::string key, value;
  while (in >> key >> value) kv[key] = number(value);
  return kv;
}

void parse_line(OptimGolden& g, const std::string& tag, std::istringstream& in) {
  if (tag == "config") {
    OptimizerCase c;
    in >> c.name >> c.kind >> c.steps;
    g.optimizers.push_back(c);
  } else if (tag == "group") {
    GoldenGroup group;
    int count = 0;
    in >> count;
    group.params.resize(static_cast<size_t>(count));
    for (int& p : group.params) in >> p;
    group.options = key_values(in);
    g.optimizers.back().groups.push_back(group);
  } else if (tag == "param") {
    OptimizerCase& c = g.optimizers.back();
    int i = 0;
    in >> i;
    c.shapes.push_back(shape(in));
    c.initial.push_back(rest(in));
  } else if (tag == "step") {
    OptimizerCase& c = g.optimizers.back();
    c.grads.emplace_back();
    c.after.emplace_back();
  } else if (tag == "grad") {
    int i = 0;
    std::string first;
    in >> i >> first;
    std::optional<Values> grad;
    if (first != "none") {
      grad = rest(in);
      grad->insert(grad->begin(), number(first));
    }
    g.optimizers.back().grads.back().push_back(grad);
  } else if (tag == "after") {
    int i = 0;
    in >> i;
    g.optimizers.back().after.back().push_back(rest(in));
  } else if (tag == "state") {
    GoldenState s;
    in >> s.param >> s.key;
    s.shape = shape(in);
    s.values = rest(in);
    g.optimizers.back().final_state.push_back(s);
  } else if (tag == "scheduler") {
    SchedulerCase s;
    in >> s.name >> s.kind >> s.epochs;
    s.args = key_values(in);
    g.schedulers.push_back(s);
  } else if (tag == "lrs") {
    int epoch = 0;
    in >> epoch;
    g.schedulers.back().lrs.push_back(rest(in));
  } else if (tag == "curvefit") {
    std::string lr;
    in >> g.curve_fit.steps >> lr >> g.curve_fit.batch;
    g.curve_fit.lr = number(lr);
  } else if (tag == "w0") {
    g.curve_fit.w0 = rest(in);
  } else if (tag == "x") {
    int s = 0;
    in >> s;
    g.curve_fit.x.push_back(rest(in));
  } else if (tag == "loss") {
    int s = 0;
    in >> s;
    g.curve_fit.loss.push_back(rest(in).at(0));
  } else if (tag == "w") {
    g.curve_fit.w = rest(in);
  } else if (tag != "end") {
    throw std::runtime_error("unknown record '" + tag + "'");
  }
}

OptimGolden read_golden() {
  std::string path = std::string(KILN_GOLDEN_DIR) + "/optim_cases.txt";
  std::ifstream file(path);
  if (!file) throw std::runtime_error("cannot open " + path);
  OptimGolden g;
  std::string line;
  int number_of_line = 0;
  while (std::getline(file, line)) {
    ++number_of_line;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream in(line);
    std::string tag;
    in >> tag;
    try {
      parse_line(g, tag, in);
    } catch (const std::exception& e) {
      throw std::runtime_error(path + ":" + std::to_string(number_of_line) + ": " + e.what());
    }
  }
  return g;
}

double option(const GoldenGroup& g, const std::string& key) {
  auto it = g.options.find(key);
  if (it == g.options.end()) throw std::runtime_error("golden group lacks option " + key);
  return it->second;
}

SGDOptions sgd_options(const GoldenGroup& g) {
  return SGDOptions(option(g, "lr"))
      .momentum(option(g, "momentum"))
      .dampening(option(g, "dampening"))
      .weight_decay(option(g, "weight_decay"))
      .nesterov(option(g, "nesterov") != 0)
      .maximize(option(g, "maximize") != 0);
}

template <class Options>
Options adam_options(const GoldenGroup& g) {
  Options o(option(g, "lr"));
  o.betas({option(g, "beta1"), option(g, "beta2")})
      .eps(option(g, "eps"))
      .weight_decay(option(g, "weight_decay"))
      .amsgrad(option(g, "amsgrad") != 0)
      .maximize(option(g, "maximize") != 0);
  return o;
}

RMSpropOptions rmsprop_options(const GoldenGroup& g) {
  return RMSpropOptions(option(g, "lr"))
      .alpha(option(g, "alpha"))
      .eps(option(g, "eps"))
      .weight_decay(option(g, "weight_decay"))
      .momentum(option(g, "momentum"))
      .centered(option(g, "centered") != 0)
      .maximize(option(g, "maximize") != 0);
}

AdagradOptions adagrad_options(const GoldenGroup& g) {
  return AdagradOptions(option(g, "lr"))
      .lr_decay(option(g, "lr_decay"))
      .weight_decay(option(g, "weight_decay"))
      .initial_accumulator_value(option(g, "initial_accumulator_value"))
      .eps(option(g, "eps"))
      .maximize(option(g, "maximize") != 0);
}

template <class Opt, class Options>
std::unique_ptr<Optimizer> build(const OptimizerCase& c, const std::vector<Tensor>& params,
                                 Options (*options_of)(const GoldenGroup&)) {
  auto params_of = [&](const GoldenGroup& g) {
    std::vector<Tensor> ps;
    for (int i : g.params) ps.push_back(params.at(static_cast<size_t>(i)));
    return ps;
  };
  if (c.groups.size() == 1) {
    return std::make_unique<Opt>(params_of(c.groups[0]), options_of(c.groups[0]));
  }
  std::vector<OptimizerParamGroup> groups;
  groups.emplace_back(params_of(c.groups[0]));  // takes the defaults
  for (size_t i = 1; i < c.groups.size(); ++i) {
    groups.emplace_back(params_of(c.groups[i]), std::make_unique<Options>(options_of(c.groups[i])));
  }
  return std::make_unique<Opt>(std::move(groups), options_of(c.groups[0]));
}

}  // namespace

const OptimGolden& golden() {
  static const OptimGolden g = read_golden();
  return g;
}

const OptimizerCase& optimizer_case(const std::string& name) {
  for (const OptimizerCase& c : golden().optimizers) {
    if (c.name == name) return c;
  }
  throw std::runtime_error("no golden optimizer case " + name);
}

Tensor tensor_of(const std::vector<int64_t>& shape, const Values& values) {
  Tensor t = kiln::empty(shape, kFloat);
  float* p = t.data_ptr<float>();
  for (size_t i = 0; i < values.size(); ++i) p[i] = static_cast<float>(values[i]);
  return t;
}

Values values_of(const Tensor& t) {
  Tensor h = t.detach().to(Device(kCPU)).to(kDouble, /*copy=*/true).contiguous();
  const double* p = h.data_ptr<double>();
  return Values(p, p + h.numel());
}

std::unique_ptr<Optimizer> make_optimizer(const OptimizerCase& c,
                                          const std::vector<Tensor>& params) {
  if (c.kind == "sgd") return build<SGD, SGDOptions>(c, params, sgd_options);
  if (c.kind == "adam") return build<Adam, AdamOptions>(c, params, adam_options<AdamOptions>);
  if (c.kind == "adamw") return build<AdamW, AdamWOptions>(c, params, adam_options<AdamWOptions>);
  if (c.kind == "rmsprop") return build<RMSprop, RMSpropOptions>(c, params, rmsprop_options);
  if (c.kind == "adagrad") return build<Adagrad, AdagradOptions>(c, params, adagrad_options);
  throw std::runtime_error("unknown optimizer kind " + c.kind);
}

}  // namespace optim_test
