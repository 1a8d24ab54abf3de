// tests/golden/nn_cases.txt and loss_cases.txt (written by make_nn_golden.py and
// make_loss_golden.py with PyTorch), parsed without a library, and helpers to compare kiln
// tensors with them.
#pragma once

#include "check_error.h"

#include <kiln/kiln.h>
#include <kiln/nn.h>

#include <boost/test/unit_test.hpp>

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace nn_test {

struct GoldenTensor {
  bool is_int = false;
  std::vector<int64_t> sizes;
  std::vector<double> values;
};

struct GoldenCase {
  std::map<std::string, GoldenTensor> tensors;
  std::map<std::string, std::string> strings;
};

// Every case of the file by name, loaded once.
const std::map<std::string, GoldenCase>& golden_cases();
const GoldenCase& golden_case(const std::string& name);

// Field `field` of case `name` as a kiln tensor of dtype (float64 or int64 when omitted).
kiln::Tensor golden(const std::string& name, const std::string& field,
                    std::optional<kiln::ScalarType> dtype = std::nullopt,
                    bool requires_grad = false);

// t's values as float64, row-major.
std::vector<double> values(const kiln::Tensor& t);

// Checks |got - want| <= atol + rtol * |want| elementwise and equal sizes, reporting what.
void check_close(const kiln::Tensor& got, const kiln::Tensor& want, double rtol, double atol,
                 const std::string& what);

// Runs out = f(inputs) on case `name`'s fields `inputs` in float64 (floating ones requiring
// grad), checks out and the gradients of sum(out * gy) (or of the scalar out) against the case.
void check_case(const std::string& name, const std::vector<std::string>& inputs,
                const std::function<kiln::Tensor(std::vector<kiln::Tensor>&)>& f,
                double tol = 1e-10);

using kiln_test::contains;

}  // namespace nn_test
