// The host table a plugin receives (kiln/sdk/plugin.h), kept for the C++ helpers: kernel.hpp and
// source.hpp read it to report errors, and a plugin may log through it.
//
// Errors have a kind (kiln_error_kind), which picks the kiln::Error subclass the caller gets. A
// C++ exception that a helper catches (kiln::sdk::kernel<>) reports the kind of its type:
//
//   std::out_of_range                        -> IndexError
//   std::invalid_argument, std::domain_error -> ValueError
//   kiln::sdk::type_error                    -> TypeError
//   kiln::sdk::not_implemented               -> NotImplementedError
//   std::bad_alloc, kiln::sdk::out_of_memory -> OutOfMemoryError
//   any other std::exception                 -> kiln::Error
//
// Each plugin has its own copy of host() as long as it is built with hidden visibility
// (kiln_add_plugin does that), so two plugins never share one.
#pragma once

#include <kiln/sdk/plugin.h>

#include <cstddef>
#include <new>
#include <stdexcept>
#include <string>

namespace kiln::sdk {

// The host table handed to this plugin; set it in kiln_plugin_probe / kiln_plugin_init.
inline const kiln_host*& host() {
  static const kiln_host* table = nullptr;
  return table;
}

// Whether the core's host table has the entry `member` (added in a later ABI minor):
//   if (!KILN_HOST_HAS(host, register_source)) ...
#define KILN_HOST_HAS(host, member) \
  ((host)->struct_size >= offsetof(kiln_host, member) + sizeof((host)->member))

// Sets this thread's error message and its kind, which the core reads when a call returns
// non-zero. A core older than ABI 1.2 gets the message alone (kiln::Error).
inline void set_error(kiln_error_kind kind, const std::string& message) {
  const kiln_host* h = host();
  if (h == nullptr) return;
  if (KILN_HOST_HAS(h, set_error_kind)) {
    h->set_error_kind(kind, message.c_str());
  } else {
    h->set_error(message.c_str());
  }
}

// Sets this thread's error message (kind KILN_ERROR_OTHER: kiln::Error).
inline void set_error(const std::string& message) { set_error(KILN_ERROR_OTHER, message); }

// An exception that names its kind; the subclasses below are the kinds without a standard type.
class error : public std::runtime_error {
 public:
  error(kiln_error_kind kind, const std::string& message)
      : std::runtime_error(message), kind_(kind) {}
  kiln_error_kind kind() const { return kind_; }

 private:
  kiln_error_kind kind_;
};

// A dtype the kernel does not take: kiln::TypeError.
class type_error : public error {
 public:
  explicit type_error(const std::string& message) : error(KILN_ERROR_TYPE, message) {}
};

// A case this plugin does not provide (a layout, a dtype, a size): kiln::NotImplementedError.
class not_implemented : public error {
 public:
  explicit not_implemented(const std::string& message)
      : error(KILN_ERROR_NOT_IMPLEMENTED, message) {}
};

// The device's memory is exhausted, with a message naming the size: kiln::OutOfMemoryError.
class out_of_memory : public error {
 public:
  explicit out_of_memory(const std::string& message) : error(KILN_ERROR_OUT_OF_MEMORY, message) {}
};

// Inside a catch block: reports the exception being handled with the kind of its type (the table
// at the top of this file). Never throws.
inline void report_exception() noexcept {
  try {
    try {
      throw;
    } catch (const error& e) {
      set_error(e.kind(), e.what());
    } catch (const std::bad_alloc& e) {
      set_error(KILN_ERROR_OUT_OF_MEMORY, std::string("out of memory (") + e.what() + ")");
    } catch (const std::out_of_range& e) {
      set_error(KILN_ERROR_INDEX, e.what());
    } catch (const std::invalid_argument& e) {
      set_error(KILN_ERROR_VALUE, e.what());
    } catch (const std::domain_error& e) {
      set_error(KILN_ERROR_VALUE, e.what());
    } catch (const std::exception& e) {
      set_error(KILN_ERROR_OTHER, e.what());
    } catch (...) {
      set_error(KILN_ERROR_OTHER, "an exception that is not a std::exception");
    }
  } catch (...) {  // building the message ran out of memory: the core says the call failed
  }
}

// A line in the core's log (KILN_LOG_DEBUG .. KILN_LOG_ERROR; warnings and errors always show).
inline void log(int32_t level, const std::string& message) {
  if (host() != nullptr) host()->log(level, message.c_str());
}

}  // namespace kiln::sdk
