// Command-line numbers for the examples, checked: an error names the program and the option.
#pragma once

#include <kiln/error.h>
#include <kiln/profiler.h>

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

namespace example_options {

// `text` (all of it) as an integer from lo to hi; throws kiln::ValueError
// "<program>: <option>: expected <what> from <lo> to <hi>, got '<text>'".
inline int64_t parse_int(const std::string& program, const std::string& option,
                         const std::string& text, int64_t lo, int64_t hi,
                         const char* what = "an integer") {
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < lo || value > hi) {
    throw kiln::ValueError(kiln::detail::str(program, ": ", option, ": expected ", what, " from ",
                                             lo, " to ", hi, ", got '", text, "'"));
  }
  return value;
}

// `--profile FILE`: profiles the training loop while it lives (kiln/profiler.h), then prints
// the key_averages table (sorted by self time, 20 rows) and writes the Chrome trace to FILE
// (open it in Perfetto). An empty path profiles nothing.
class ProfileRun {
 public:
  explicit ProfileRun(std::string path) : path_(std::move(path)) {
    if (!path_.empty()) profile_ = std::make_unique<kiln::profiler::Profile>();
  }
  ~ProfileRun() {
    try {
      finish();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "profile: %s\n", e.what());
    }
  }
  ProfileRun(const ProfileRun&) = delete;
  ProfileRun& operator=(const ProfileRun&) = delete;

  void finish() {
    if (!profile_) return;
    std::unique_ptr<kiln::profiler::Profile> p = std::move(profile_);
    p->stop();
    std::printf("%s", p->key_averages().table("self_cpu_time_total", 20).c_str());
    p->export_chrome_trace(path_);
    std::printf("wrote the profile's Chrome trace to %s (open it in Perfetto)\n", path_.c_str());
  }

 private:
  std::string path_;
  std::unique_ptr<kiln::profiler::Profile> profile_;
};

}  // namespace example_options
