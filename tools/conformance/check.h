// Running conformance cases without a test framework: the comparisons and loops shared by the
// Boost.Test runner (runner.cpp, every loaded device) and kiln-plugin-check (one plugin's
// devices). A failure goes to a sink as (where, what) so each caller reports it its own way.
#pragma once

#include "conformance.h"

#include <functional>
#include <string>
#include <vector>

namespace conformance {

using FailureSink = std::function<void(const std::string& where, const std::string& what)>;

// "" when actual matches expected (dtype, sizes, values within the tolerance of `want`, scaled
// for 16-bit floats); otherwise what differs.
std::string compare(const Tensor& actual, const Tensor& expected, ScalarType want, double scale);

// Runs a reference case on each device, for each of its dtypes and input layouts, against its
// reference; returns the number of calls made.
int run_reference_case(const Case& c, const std::vector<kiln::Device>& devices,
                       const FailureSink& fail);
// Runs a golden case on each device against PyTorch's records; returns the number of records.
int run_golden_case(const Case& c, const std::vector<kiln::Device>& devices,
                    const FailureSink& fail);

// The gradient check of a reference case on `device` against the CPU: the gradients of a
// weighted sum of the outputs with respect to each floating input, in float64 when the case takes
// it (else float32), compared at float32's tolerance. Returns false when the case has nothing to
// check (no floating dtype, no input that gets a gradient on the CPU).
bool run_gradient_case(const Case& c, kiln::Device device, const FailureSink& fail);

}  // namespace conformance
