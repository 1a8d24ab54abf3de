// Brace expansion with its caps as parameters: expand_braces (kiln/data/source.h) uses the
// defaults; the libFuzzer target tests/data/fuzz_brace.cpp uses small ones, so that it explores
// patterns instead of spending its time building a million names. Internal to libkiln_core.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::data::detail {

struct BraceLimits {
  uint64_t names = 1'000'000;            // names in all
  uint64_t bytes = uint64_t{256} << 20;  // characters in all
};

// expand_braces(pattern), throwing kiln::ValueError past `limits`.
std::vector<std::string> expand_braces(const std::string& pattern, BraceLimits limits);

}  // namespace kiln::data::detail
