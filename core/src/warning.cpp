// Warnings: the per-thread handler, warnAlways, and the default handler that prints to stderr.
#include <kiln/warning.h>

#include <atomic>
#include <iostream>

namespace kiln {

namespace {

WarningHandler& default_handler() {
  static WarningHandler handler;  // the base class prints
  return handler;
}

thread_local WarningHandler* thread_handler = nullptr;  // nullptr: the default handler
std::atomic<bool> warn_always{false};

}  // namespace

std::ostream& operator<<(std::ostream& out, const SourceLocation& location) {
  return out << location.function << " at " << location.file << ":" << location.line;
}

namespace WarningUtils {

void set_warning_handler(WarningHandler* handler) noexcept { thread_handler = handler; }

WarningHandler* get_warning_handler() noexcept {
  return thread_handler != nullptr ? thread_handler : &default_handler();
}

void set_warnAlways(bool setting) noexcept { warn_always.store(setting); }
bool get_warnAlways() noexcept { return warn_always.load(); }

WarnAlways::WarnAlways(bool setting) : previous_(get_warnAlways()) { set_warnAlways(setting); }
WarnAlways::~WarnAlways() { set_warnAlways(previous_); }

}  // namespace WarningUtils

void Warning::warn(const SourceLocation& source_location, const std::string& msg, bool verbatim) {
  ::kiln::warn(Warning(UserWarning{}, source_location, msg, verbatim));
}

void warn(const Warning& warning) { WarningUtils::get_warning_handler()->process(warning); }

void WarningHandler::process(const Warning& warning) {
  process(warning.source_location(), warning.msg(), warning.verbatim());
}

void WarningHandler::process(const SourceLocation&, const std::string& msg, bool) {
  std::cerr << "kiln: warning: " << msg << "\n";
}

}  // namespace kiln
