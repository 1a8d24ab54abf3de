// Helpers shared by the benchmarks: the median of repeated runs, JSON output, and reading the
// JSON figures of a PyTorch counterpart run in the same invocation.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
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

using Measures = std::map<std::string, double>;

// Runs a command that prints one flat JSON object of numbers (a PyTorch script, another kiln
// program) and returns its numbers; empty when the command is missing or prints nothing.
inline Measures run_json(const std::string& command) {
  Measures m;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return m;
  std::string text;
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof buf, pipe)) text.append(buf, n);
  pclose(pipe);
  size_t pos = 0;
  while ((pos = text.find('"', pos)) != std::string::npos) {
    size_t end = text.find('"', pos + 1);
    if (end == std::string::npos) break;
    size_t colon = text.find(':', end);
    if (colon == std::string::npos) break;
    char* after = nullptr;
    double v = std::strtod(text.c_str() + colon + 1, &after);
    if (after != text.c_str() + colon + 1) m[text.substr(pos + 1, end - pos - 1)] = v;
    pos = colon + 1;
  }
  return m;
}

}  // namespace bench
