#include "rnn_golden.h"

namespace rnn_test {

std::string option(const std::string& name, const std::string& key, const std::string& fallback) {
  const auto& strings = nn_test::golden_case(name).strings;
  auto it = strings.find(key);
  return it == strings.end() ? fallback : it->second;
}

int64_t int_option(const std::string& name, const std::string& key, int64_t fallback) {
  std::string v = option(name, key);
  return v.empty() ? fallback : std::stoll(v);
}

bool bool_option(const std::string& name, const std::string& key, bool fallback) {
  std::string v = option(name, key);
  return v.empty() ? fallback : v == "true";
}

void load_parameters(kiln::nn::Module& module, const std::string& name) {
  module.to(kiln::kDouble);
  kiln::NoGradGuard no_grad;
  int loaded = 0;
  for (auto& item : module.named_parameters()) {
    item.value().copy_(nn_test::golden(name, "p." + item.key()));
    ++loaded;
  }
  BOOST_TEST_REQUIRE(loaded > 0, name << ": no parameters");
}

Tensor weighted_loss(const std::string& name, const std::map<std::string, Tensor>& outputs) {
  Tensor loss;
  for (const auto& [field, t] : outputs) {
    Tensor term = kiln::sum(t * nn_test::golden(name, "g_" + field));
    loss = loss.defined() ? loss + term : term;
  }
  return loss;
}

void check_outputs_and_gradients(const std::string& name, kiln::nn::Module& module,
                                 const std::map<std::string, Tensor>& outputs,
                                 const std::map<std::string, Tensor>& inputs, double tol) {
  for (const auto& [field, t] : outputs) {
    nn_test::check_close(t, nn_test::golden(name, field), tol, tol, name + " " + field);
  }
  weighted_loss(name, outputs).backward();
  for (auto& item : module.named_parameters()) {
    nn_test::check_close(item.value().grad(), nn_test::golden(name, "grad." + item.key()), tol, tol,
                         name + " grad." + item.key());
  }
  for (const auto& [field, t] : inputs) {
    nn_test::check_close(t.grad(), nn_test::golden(name, "grad_" + field), tol, tol,
                         name + " grad_" + field);
  }
}

}  // namespace rnn_test
