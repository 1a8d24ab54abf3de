// The golden records of tests/golden/conformance_cases.txt: inputs and PyTorch's outputs.
#pragma once

#include "conformance.h"

#include <string>
#include <vector>

namespace conformance {

struct GoldenRecord {
  std::string name;   // the case it belongs to
  std::string label;  // what this record varies (dtype, shape, ...)
  Args args;
  Outputs expected;
  int line = 0;
};

// Every record of the file, loaded once (throws with the line on a parse error).
const std::vector<GoldenRecord>& golden_records();
std::string golden_file();

}  // namespace conformance
