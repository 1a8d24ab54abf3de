// Helpers of the optimizer tests: comparing float32 results with PyTorch's (tolerance and ULP
// statistics) and checking errors with their type and text.
#pragma once

#include "check_error.h"

#include <kiln/kiln.h>

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

namespace optim_test {

// Distance in float32 units in the last place between two float32 values.
inline int64_t ulps(float a, float b) {
  auto ordered = [](float f) {
    int32_t i;
    std::memcpy(&i, &f, sizeof i);
    return i < 0 ? int64_t{INT32_MIN} - i : int64_t{i};
  };
  return std::llabs(ordered(a) - ordered(b));
}

// Compares float32 results with PyTorch's: each value within rtol * |want| + atol, and keeps the
// largest differences seen for the report. PyTorch's CPU updates fuse multiply-adds (see Note
// [Fused multiply-add in PyTorch's updates] in core/src/optim/adam.cpp), so most values are
// bit-identical and the others differ by the rounding of one product per operation.
struct FloatDiff {
  double rtol = 1e-5;
  double atol = 1e-7;
  double max_abs = 0;
  double max_rel = 0;
  int64_t max_ulps = 0;
  int64_t values = 0;
  int64_t exact = 0;

  void check(const std::string& where, const std::vector<double>& got,
             const std::vector<double>& want) {
    BOOST_REQUIRE_MESSAGE(got.size() == want.size(),
                          where << ": " << got.size() << " values, expected " << want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      double d = std::abs(got[i] - want[i]);
      ++values;
      exact += got[i] == want[i];
      max_abs = std::max(max_abs, d);
      if (want[i] != 0) max_rel = std::max(max_rel, d / std::abs(want[i]));
      max_ulps = std::max(max_ulps, ulps(static_cast<float>(got[i]), static_cast<float>(want[i])));
      BOOST_CHECK_MESSAGE(d <= atol + rtol * std::abs(want[i]), where << " element " << i
                                                                      << ": got " << got[i]
                                                                      << ", PyTorch " << want[i]);
    }
  }

  void merge(const FloatDiff& o) {
    max_abs = std::max(max_abs, o.max_abs);
    max_rel = std::max(max_rel, o.max_rel);
    max_ulps = std::max(max_ulps, o.max_ulps);
    values += o.values;
    exact += o.exact;
  }

  std::string summary() const {
    std::ostringstream out;
    out << exact << " of " << values << " values bit-identical; max abs diff " << max_abs
        << ", max rel diff " << max_rel << ", max " << max_ulps << " ulp";
    return out.str();
  }
};

using kiln_test::contains;

}  // namespace optim_test
