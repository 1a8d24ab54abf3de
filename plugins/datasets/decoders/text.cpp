// txt and cls decoders.
#include "decoders.hpp"

#include <cctype>
#include <cstdint>
#include <string>
#include <string_view>

namespace kiln::decoders {

kiln_status decode_text(const void* data, uint64_t size, const char*, const kiln_decode_out* out,
                        void*) {
  return out->text(out->ctx, static_cast<const char*>(data), size);
}

// An integer in ASCII, with blanks around it (Python's int(b" 7\n")).
kiln_status decode_class(const void* data, uint64_t size, const char* name,
                         const kiln_decode_out* out, void*) {
  std::string_view s(static_cast<const char*>(data), static_cast<size_t>(size));
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  bool negative = false;
  std::string_view digits = s;
  if (!digits.empty() && (digits[0] == '-' || digits[0] == '+')) {
    negative = digits[0] == '-';
    digits.remove_prefix(1);
  }
  uint64_t v = 0;
  bool ok = !digits.empty() && digits.size() <= 19;
  for (char c : digits) {
    if (c < '0' || c > '9') ok = false;
    if (ok) v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  if (!ok || v > static_cast<uint64_t>(INT64_MAX)) {
    std::string shown(s.substr(0, 40));
    set_error(std::string(name) + " decoder: '" + shown + (s.size() > 40 ? "...'" : "'") +
              " is not an integer");
    return 1;
  }
  int64_t value = negative ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
  void* p = out->tensor(out->ctx, KILN_I64, 0, nullptr);
  if (p == nullptr) return 1;
  *static_cast<int64_t*>(p) = value;
  return 0;
}

}  // namespace kiln::decoders
