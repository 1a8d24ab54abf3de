// Timing helpers shared by kiln-bench and kiln-bench-torch: median of repeated runs.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

namespace bench {

// Median seconds per call of f, over `runs` samples of `inner` calls each, after warm-up.
template <class F>
double median_seconds(F&& f, int inner, int runs = 15) {
  for (int i = 0; i < inner; ++i) f();
  std::vector<double> samples;
  for (int r = 0; r < runs; ++r) {
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < inner; ++i) f();
    auto stop = std::chrono::steady_clock::now();
    samples.push_back(std::chrono::duration<double>(stop - start).count() / inner);
  }
  std::nth_element(samples.begin(), samples.begin() + runs / 2, samples.end());
  return samples[runs / 2];
}

struct Result {
  std::string name;
  double value;
  std::string unit;
};

inline void print_json(const std::vector<Result>& results) {
  std::printf("{");
  for (size_t i = 0; i < results.size(); ++i) {
    std::printf("%s\"%s\": %.6g", i ? ", " : "", results[i].name.c_str(), results[i].value);
  }
  std::printf("}\n");
}

}  // namespace bench
