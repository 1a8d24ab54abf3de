// A live status line: on a terminal it rewrites itself with '\r' (at most every 100 ms); in a
// log (stdout redirected, as in CI) it prints plain lines, only those the caller marks.
#pragma once

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>

class StatusLine {
 public:
  StatusLine() : terminal_(isatty(STDOUT_FILENO) == 1) {}

  bool terminal() const { return terminal_; }

  // Shows `text`: redrawn on a terminal (always when `milestone`, else when 100 ms have passed);
  // printed as a line in a log when `milestone`.
  void show(const std::string& text, bool milestone) {
    auto now = std::chrono::steady_clock::now();
    if (terminal_) {
      if (!milestone && now - last_ < std::chrono::milliseconds(100)) return;
      std::printf("\r%s", text.c_str());
      // Blank out the end of a longer previous text.
      for (size_t i = text.size(); i < shown_; ++i) std::putchar(' ');
      shown_ = text.size();
    } else if (milestone) {
      std::printf("%s\n", text.c_str());
    }
    std::fflush(stdout);
    last_ = now;
  }

  // Shows `text` for good and ends the line.
  void done(const std::string& text) {
    if (terminal_) {
      show(text, true);
      std::printf("\n");
    } else {
      std::printf("%s\n", text.c_str());
    }
    std::fflush(stdout);
    shown_ = 0;
  }

 private:
  bool terminal_;
  size_t shown_ = 0;
  std::chrono::steady_clock::time_point last_{};
};
