// Helpers of the recurrent tests (test_rnn*.cpp, test_lstm_lm.cpp) over tests/golden/
// rnn_cases.txt (make_rnn_golden.py): options of a case, parameters copied into a module by
// PyTorch's names, and the checks of outputs and gradients.
#pragma once

#include "golden.h"

#include <map>
#include <string>

namespace rnn_test {

using kiln::Tensor;

// Option `key` of case `name` ("kind", "hidden_size", ...), or `fallback` when absent.
std::string option(const std::string& name, const std::string& key,
                   const std::string& fallback = "");
int64_t int_option(const std::string& name, const std::string& key, int64_t fallback);
bool bool_option(const std::string& name, const std::string& key, bool fallback);

// The module in float64 with every parameter copied from the case's "p.<name>".
void load_parameters(kiln::nn::Module& module, const std::string& name);

// sum(t * g_<field>) over the outputs, the loss the goldens differentiate.
Tensor weighted_loss(const std::string& name, const std::map<std::string, Tensor>& outputs);

// Checks each output against the case, then backpropagates the weighted loss and checks the
// gradient of every parameter of `module` and of each input ("grad_<field>").
void check_outputs_and_gradients(const std::string& name, kiln::nn::Module& module,
                                 const std::map<std::string, Tensor>& outputs,
                                 const std::map<std::string, Tensor>& inputs, double tol = 1e-10);

}  // namespace rnn_test
