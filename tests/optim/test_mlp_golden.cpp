// An MLP 784-512-512-10 trained 5 steps with SGD and momentum on the same weights and data as
// PyTorch (tests/golden/make_mlp_golden.py): the losses and the final weights match PyTorch's
// to float32 rounding. The weights and data come from an integer hash both sides compute.
#include "optim_golden.h"
#include "optim_test.h"

#include <kiln/nn.h>
#include <kiln/optim.h>

#include <cmath>
#include <cstdint>
#include <fstream>
#include <map>
#include <sstream>

using namespace kiln;
using namespace kiln::optim;
using namespace optim_test;

namespace {

struct MlpGolden {
  int steps = 0;
  int64_t batch = 0;
  double lr = 0;
  double momentum = 0;
  Values loss;
  std::map<std::string, Values> final, rowsum, colsum, sample;
  int64_t stride = 1;
};

MlpGolden read_golden() {
  std::ifstream file(std::string(KILN_GOLDEN_DIR) + "/mlp_cases.txt");
  BOOST_REQUIRE_MESSAGE(file, "cannot open " KILN_GOLDEN_DIR "/mlp_cases.txt");
  MlpGolden g;
  std::string line;
  auto rest = [](std::istringstream& in) {
    Values v;
    double x;
    while (in >> x) v.push_back(x);
    return v;
  };
  while (std::getline(file, line)) {
    std::istringstream in(line);
    std::string tag, name;
    in >> tag;
    if (tag == "mlp") {
      in >> g.steps >> g.batch >> g.lr >> g.momentum;
    } else if (tag == "loss") {
      int s;
      in >> s;
      g.loss.push_back(rest(in).at(0));
    } else if (tag == "final" || tag == "rowsum" || tag == "colsum") {
      in >> name;
      auto& table = tag == "final" ? g.final : tag == "rowsum" ? g.rowsum : g.colsum;
      table[name] = rest(in);
    } else if (tag == "sample") {
      in >> name >> g.stride;
      g.sample[name] = rest(in);
    }
  }
  BOOST_REQUIRE_EQUAL(g.loss.size(), static_cast<size_t>(g.steps));
  return g;
}

// make_mlp_golden.py's uniform(stream, i): splitmix64 of stream * 2^32 + i, its top 24 bits.
std::vector<double> uniform(uint64_t stream, int64_t count) {
  std::vector<double> u(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    uint64_t z = (stream << 32) + static_cast<uint64_t>(i) + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    u[static_cast<size_t>(i)] = static_cast<double>(z >> 40) * 0x1p-24;
  }
  return u;
}

Tensor float_tensor(const std::vector<int64_t>& shape, const std::vector<double>& v) {
  Tensor t = empty(shape, kFloat);
  float* p = t.data_ptr<float>();
  for (size_t i = 0; i < v.size(); ++i) p[i] = static_cast<float>(v[i]);
  return t;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(mlp)

BOOST_AUTO_TEST_CASE(sgd_momentum_trajectory_matches_pytorch) {
  const MlpGolden g = read_golden();
  nn::Linear fc1(784, 512), fc2(512, 512), fc3(512, 10);
  nn::Sequential model(fc1, nn::ReLU(), fc2, nn::ReLU(), fc3);
  std::map<std::string, Tensor> initial;
  {
    NoGradGuard no_grad;
    uint64_t stream = 1;
    for (auto& [name, p] : model->named_parameters()) {
      int64_t fan_in = name[0] == '0' ? 784 : 512;
      std::vector<double> w = uniform(stream++, p.numel());
      for (double& x : w) x = (2.0 * x - 1.0) / std::sqrt(static_cast<double>(fan_in));
      p.copy_(float_tensor(p.sizes().vec(), w));
      initial[name] = p.detach().clone();
    }
  }
  SGD opt(model->parameters(), SGDOptions(g.lr).momentum(g.momentum));
  FloatDiff loss_diff;
  loss_diff.rtol = 2e-6;
  loss_diff.atol = 0;
  for (int s = 0; s < g.steps; ++s) {
    Tensor x = float_tensor({g.batch, 784}, uniform(100 + static_cast<uint64_t>(s), g.batch * 784));
    std::vector<double> u = uniform(200 + static_cast<uint64_t>(s), g.batch);
    Tensor y = empty({g.batch}, kLong);
    for (int64_t i = 0; i < g.batch; ++i) {
      y.data_ptr<int64_t>()[i] = static_cast<int64_t>(std::floor(10.0 * u[static_cast<size_t>(i)]));
    }
    Tensor loss = nn::functional::cross_entropy(model->forward(x), y);
    opt.zero_grad();
    loss.backward();
    opt.step();
    loss_diff.check("loss of step " + std::to_string(s), {loss.item<double>()},
                    {g.loss[static_cast<size_t>(s)]});
  }
  // Every element of the small parameters; row and column sums of the large weights' updates
  // (an error in any element shows in both) and a sample of their elements.
  FloatDiff weight_diff, sum_diff;
  weight_diff.rtol = 1e-5;
  weight_diff.atol = 1e-7;
  sum_diff.rtol = 1e-4;
  sum_diff.atol = 1e-6;
  size_t checked = 0;
  for (auto& [name, p] : model->named_parameters()) {
    BOOST_TEST_CONTEXT("parameter " << name) {
      if (g.final.count(name)) {
        weight_diff.check(name, values_of(p), g.final.at(name));
        ++checked;
        continue;
      }
      BOOST_REQUIRE(g.rowsum.count(name) && g.colsum.count(name) && g.sample.count(name));
      Tensor delta = p.detach().to(kDouble) - initial.at(name).to(kDouble);
      sum_diff.check(name + " row sums", values_of(delta.sum(1)), g.rowsum.at(name));
      sum_diff.check(name + " column sums", values_of(delta.sum(0)), g.colsum.at(name));
      Values all = values_of(p), sampled;
      for (size_t i = 0; i < all.size(); i += static_cast<size_t>(g.stride))
        sampled.push_back(all[i]);
      weight_diff.check(name + " sample", sampled, g.sample.at(name));
      ++checked;
    }
  }
  BOOST_CHECK_EQUAL(checked, 6u);
  BOOST_TEST_MESSAGE("MLP losses: " << loss_diff.summary() << "; weights: " << weight_diff.summary()
                                    << "; update sums: " << sum_diff.summary());
}

BOOST_AUTO_TEST_SUITE_END()
