// Warnings, as libtorch's c10 (c10/util/Exception.h): KILN_WARN(parts...) builds a Warning
// and hands it to the calling thread's WarningHandler; the default handler prints
// "kiln: warning: <message>" to stderr. kiln's own warnings (a CPU fallback, a malformed
// setting, a plugin's warning log) go through the same handler, so a program can collect them,
// turn them into errors or silence them:
//
//   struct Collect : kiln::WarningHandler {
//     std::vector<std::string> messages;
//     void process(const kiln::Warning& w) override { messages.push_back(w.msg()); }
//   } collect;
//   kiln::WarningUtils::WarningHandlerGuard guard(&collect);  // this thread, until scope ends
//
// The handler is per thread, as c10's: a thread starts with the default handler. Both of
// libtorch's spellings are here: a handler overrides process(const Warning&) (PyTorch 2) or
// process(location, message, verbatim) (PyTorch 1.x), and the handler is set with
// kiln::set_warning_handler, WarningUtils::set_warning_handler or Warning::set_warning_handler.
#pragma once

#include <kiln/error.h>
#include <kiln/export.h>
#include <kiln/util/string.h>

#include <cstdint>
#include <ostream>
#include <string>
#include <variant>

namespace kiln {

// Where a warning (or error) was raised: the function, file and line.
struct SourceLocation {
  const char* function = "";
  const char* file = "";
  uint32_t line = 0;
};
KILN_API std::ostream& operator<<(std::ostream& out, const SourceLocation& location);

class WarningHandler;

namespace WarningUtils {

// Sets the calling thread's handler (nullptr: the default one). The caller keeps the handler
// alive while it is set.
KILN_API void set_warning_handler(WarningHandler* handler) noexcept;
// The calling thread's handler; never null.
KILN_API WarningHandler* get_warning_handler() noexcept;

// Sets the calling thread's handler while it lives, then puts the previous one back.
class WarningHandlerGuard {
 public:
  explicit WarningHandlerGuard(WarningHandler* handler) : previous_(get_warning_handler()) {
    set_warning_handler(handler);
  }
  ~WarningHandlerGuard() { set_warning_handler(previous_); }
  WarningHandlerGuard(const WarningHandlerGuard&) = delete;
  WarningHandlerGuard& operator=(const WarningHandlerGuard&) = delete;

 private:
  WarningHandler* previous_;
};

// When true (for every thread), KILN_WARN_ONCE warns every time, as KILN_WARN: tests use it
// to see a warning that an earlier call already gave.
KILN_API void set_warnAlways(bool setting) noexcept;
KILN_API bool get_warnAlways() noexcept;

// Sets warnAlways while it lives, then puts the previous setting back.
class KILN_API WarnAlways {
 public:
  explicit WarnAlways(bool setting = true);
  ~WarnAlways();
  WarnAlways(const WarnAlways&) = delete;
  WarnAlways& operator=(const WarnAlways&) = delete;

 private:
  bool previous_;
};

}  // namespace WarningUtils

using WarningUtils::get_warning_handler;
using WarningUtils::set_warning_handler;

class KILN_API Warning {
 public:
  class UserWarning {};
  class DeprecationWarning {};
  using warning_variant_t = std::variant<UserWarning, DeprecationWarning>;

  Warning(warning_variant_t type, const SourceLocation& source_location, std::string msg,
          bool verbatim)
      : type_(type), source_location_(source_location), msg_(std::move(msg)), verbatim_(verbatim) {}

  warning_variant_t type() const { return type_; }
  const SourceLocation& source_location() const { return source_location_; }
  const std::string& msg() const { return msg_; }
  // Whether the message is complete as it is (a handler adding context should not).
  bool verbatim() const { return verbatim_; }

  // PyTorch 1.x's spellings, as static members.
  static void warn(const SourceLocation& source_location, const std::string& msg, bool verbatim);
  static void set_warning_handler(WarningHandler* handler) noexcept {
    WarningUtils::set_warning_handler(handler);
  }
  static WarningHandler* get_warning_handler() noexcept {
    return WarningUtils::get_warning_handler();
  }
  static void set_warnAlways(bool setting) noexcept { WarningUtils::set_warnAlways(setting); }
  static bool get_warnAlways() noexcept { return WarningUtils::get_warnAlways(); }
  using WarnAlways = WarningUtils::WarnAlways;

 private:
  warning_variant_t type_;
  SourceLocation source_location_;
  std::string msg_;
  bool verbatim_;
};

using UserWarning = Warning::UserWarning;
using DeprecationWarning = Warning::DeprecationWarning;

// Hands the warning to the calling thread's handler. A handler may throw (to make warnings
// errors); the exception then leaves warn().
KILN_API void warn(const Warning& warning);

class KILN_API WarningHandler {
 public:
  virtual ~WarningHandler() = default;
  // Called for each warning. The default calls the three-argument process below.
  virtual void process(const Warning& warning);
  // PyTorch 1.x's form. The default prints "kiln: warning: <message>" to stderr.
  virtual void process(const SourceLocation& source_location, const std::string& msg,
                       bool verbatim);
};

}  // namespace kiln

// Warns with the concatenated message parts, as TORCH_WARN.
#define KILN_WARN(...)                                                                  \
  ::kiln::warn(::kiln::Warning(::kiln::UserWarning{},                                   \
                               ::kiln::SourceLocation{__func__, __FILE__,               \
                                                      static_cast<uint32_t>(__LINE__)}, \
                               ::kiln::str(__VA_ARGS__), false))

// Warns the first time this line runs (in the process), as TORCH_WARN_ONCE; every time while
// WarningUtils::get_warnAlways() is true.
#define KILN_WARN_ONCE(...)                                        \
  do {                                                             \
    if (::kiln::WarningUtils::get_warnAlways()) {                  \
      KILN_WARN(__VA_ARGS__);                                      \
    } else {                                                       \
      [[maybe_unused]] static const bool kiln_warned_once_ = [&] { \
        KILN_WARN(__VA_ARGS__);                                    \
        return true;                                               \
      }();                                                         \
    }                                                              \
  } while (0)
