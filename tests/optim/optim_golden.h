// The records of tests/golden/optim_cases.txt (format: make_optim_golden.py's docstring):
// PyTorch 1.13's optimizer trajectories, scheduler rates and the curve fit of "Effective PyTorch".
#pragma once

#include <kiln/kiln.h>
#include <kiln/optim.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace optim_test {

using Values = std::vector<double>;

struct GoldenGroup {
  std::vector<int> params;
  std::map<std::string, double> options;  // PyTorch's names; betas as beta1, beta2
};

struct GoldenState {
  int param = 0;
  std::string key;
  std::vector<int64_t> shape;
  Values values;
};

struct OptimizerCase {
  std::string name;
  std::string kind;  // sgd, adam, adamw
  int steps = 0;
  std::vector<GoldenGroup> groups;
  std::vector<std::vector<int64_t>> shapes;               // per parameter
  std::vector<Values> initial;                            // per parameter
  std::vector<std::vector<std::optional<Values>>> grads;  // [step][param]; nullopt: no grad
  std::vector<std::vector<Values>> after;                 // [step][param]
  std::vector<GoldenState> final_state;
};

struct SchedulerCase {
  std::string name;
  std::string kind;  // steplr, cosine
  int epochs = 0;
  std::map<std::string, double> args;
  std::vector<std::vector<double>> lrs;  // [epoch][group], epoch 0 = after construction
};

struct CurveFitCase {
  int steps = 0;
  double lr = 0;
  int batch = 0;
  Values w0;
  std::vector<Values> x;  // [step]
  Values loss;            // [step]
  Values w;
};

struct OptimGolden {
  std::vector<OptimizerCase> optimizers;
  std::vector<SchedulerCase> schedulers;
  CurveFitCase curve_fit;
};

// The golden file, parsed once (throws with the line on a parse error).
const OptimGolden& golden();
// The case of that name; throws when absent.
const OptimizerCase& optimizer_case(const std::string& name);

// A float32 CPU tensor of these values.
kiln::Tensor tensor_of(const std::vector<int64_t>& shape, const Values& values);
// t's values as float64, row-major.
Values values_of(const kiln::Tensor& t);

// A kiln optimizer configured as the case's groups: the first group's options are the
// defaults; later groups carry their own (as the PyTorch script built them).
std::unique_ptr<kiln::optim::Optimizer> make_optimizer(const OptimizerCase& c,
                                                       const std::vector<kiln::Tensor>& params);

}  // namespace optim_test
