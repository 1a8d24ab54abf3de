// The host table a plugin receives (kiln/sdk/plugin.h), kept for the C++ helpers: kernel.hpp and
// source.hpp read it to report errors, and a plugin may log through it.
//
// Each plugin has its own copy of host() as long as it is built with hidden visibility
// (kiln_add_plugin does that), so two plugins never share one.
#pragma once

#include <kiln/sdk/plugin.h>

#include <string>

namespace kiln::sdk {

// The host table handed to this plugin; set it in kiln_plugin_probe / kiln_plugin_init.
inline const kiln_host*& host() {
  static const kiln_host* table = nullptr;
  return table;
}

// Sets this thread's error message, which the core reads when a call returns non-zero.
inline void set_error(const std::string& message) {
  if (host() != nullptr) host()->set_error(message.c_str());
}

// A line in the core's log (KILN_LOG_DEBUG .. KILN_LOG_ERROR; warnings and errors always show).
inline void log(int32_t level, const std::string& message) {
  if (host() != nullptr) host()->log(level, message.c_str());
}

// Whether the core's host table has the entry `member` (added in a later ABI minor):
//   if (!KILN_HOST_HAS(host, register_source)) ...
#define KILN_HOST_HAS(host, member) \
  ((host)->struct_size >= offsetof(kiln_host, member) + sizeof((host)->member))

}  // namespace kiln::sdk
