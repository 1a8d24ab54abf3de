// npy decoder: NumPy's .npy format (versions 1 to 3): magic, header dict, raw data. Little and
// big endian, C and Fortran order; the dtypes kiln has (b1 u1 i1 i2 i4 i8 f2 f4 f8).
#include "decoders.hpp"

#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::decoders {
namespace {

struct Header {
  int32_t dtype = -1;
  size_t item = 0;
  bool swap = false;
  bool fortran = false;
  std::vector<int64_t> shape;
};

std::string_view value_of(std::string_view dict, std::string_view key) {
  std::string quoted(1, '\'');
  quoted.append(key);
  quoted.push_back('\'');
  size_t k = dict.find(quoted);
  if (k == std::string_view::npos) return {};
  size_t colon = dict.find(':', k);
  if (colon == std::string_view::npos) return {};
  size_t start = dict.find_first_not_of(' ', colon + 1);
  return start == std::string_view::npos ? std::string_view() : dict.substr(start);
}

bool parse_header(std::string_view dict, Header& h, std::string& error) {
  std::string_view descr = value_of(dict, "descr");
  if (descr.size() < 4 || descr[0] != '\'') {
    error = "no 'descr' in the header";
    return false;
  }
  size_t end = descr.find('\'', 1);
  if (end == std::string_view::npos) {
    error = "bad 'descr'";
    return false;
  }
  std::string d(descr.substr(1, end - 1));  // "<f4"
  char order = d.empty() ? '?' : d[0];
  std::string code = d.size() > 1 ? d.substr(1) : "";
  static const struct {
    const char* code;
    int32_t dtype;
    size_t item;
  } kTypes[] = {{"b1", KILN_BOOL, 1}, {"u1", KILN_U8, 1},  {"i1", KILN_I8, 1},
                {"i2", KILN_I16, 2},  {"i4", KILN_I32, 4}, {"i8", KILN_I64, 8},
                {"f2", KILN_F16, 2},  {"f4", KILN_F32, 4}, {"f8", KILN_F64, 8}};
  for (const auto& t : kTypes) {
    if (code == t.code) {
      h.dtype = t.dtype;
      h.item = t.item;
    }
  }
  if (h.dtype < 0 || (order != '<' && order != '>' && order != '|' && order != '=')) {
    error = "dtype '" + d + "' has no kiln dtype (b1 u1 i1 i2 i4 i8 f2 f4 f8 are supported)";
    return false;
  }
  h.swap = order == '>' && h.item > 1;
  std::string_view fortran = value_of(dict, "fortran_order");
  h.fortran = fortran.substr(0, 4) == "True";
  std::string_view shape = value_of(dict, "shape");
  if (shape.empty() || shape[0] != '(') {
    error = "no 'shape' in the header";
    return false;
  }
  size_t close = shape.find(')');
  if (close == std::string_view::npos) {
    error = "bad 'shape'";
    return false;
  }
  std::string_view items = shape.substr(1, close - 1);
  size_t i = 0;
  while (i < items.size()) {
    while (i < items.size() && (items[i] == ' ' || items[i] == ',')) ++i;
    if (i >= items.size()) break;
    int64_t v = 0;
    bool any = false;
    while (i < items.size() && items[i] >= '0' && items[i] <= '9') {
      v = v * 10 + (items[i] - '0');
      if (v > (int64_t{1} << 48)) {
        error = "a dimension in 'shape' is too large";
        return false;
      }
      any = true;
      ++i;
    }
    if (!any || h.shape.size() >= 16) {
      error = "bad 'shape' " + std::string(shape.substr(0, close + 1));
      return false;
    }
    h.shape.push_back(v);
  }
  return true;
}

}  // namespace

kiln_status decode_npy(const void* data, uint64_t size, const char* name,
                       const kiln_decode_out* out, void*) {
  const auto* p = static_cast<const uint8_t*>(data);
  auto fail = [&](const std::string& why) {
    set_error(std::string(name) + " decoder: " + why);
    return 1;
  };
  if (size < 10 || std::memcmp(p, "\x93NUMPY", 6) != 0) return fail("not an .npy file");
  uint8_t major = p[6];
  uint64_t header_len = 0, start = 0;
  if (major == 1) {
    header_len = p[8] | (uint64_t{p[9]} << 8);
    start = 10;
  } else if (major == 2 || major == 3) {
    if (size < 12) return fail("truncated header");
    header_len = p[8] | (uint64_t{p[9]} << 8) | (uint64_t{p[10]} << 16) | (uint64_t{p[11]} << 24);
    start = 12;
  } else {
    return fail("unknown .npy version " + std::to_string(major));
  }
  if (header_len > size - start) return fail("truncated header");
  Header h;
  std::string error;
  std::string_view dict(reinterpret_cast<const char*>(p + start), header_len);
  if (!parse_header(dict, h, error)) return fail(error);
  uint64_t numel = 1;
  for (int64_t s : h.shape) {
    if (s != 0 && numel > (uint64_t{1} << 48) / static_cast<uint64_t>(s)) {
      return fail("the array is too large");
    }
    numel *= static_cast<uint64_t>(s);
  }
  const uint8_t* src = p + start + header_len;
  uint64_t bytes = numel * h.item;
  if (bytes > size - start - header_len) {
    return fail("truncated data: the header says " + std::to_string(bytes) + " bytes, " +
                std::to_string(size - start - header_len) + " follow");
  }
  auto* dst = static_cast<uint8_t*>(
      out->tensor(out->ctx, h.dtype, static_cast<int32_t>(h.shape.size()), h.shape.data()));
  if (dst == nullptr) return 1;
  size_t nd = h.shape.size();
  if (!h.fortran || nd < 2) {
    std::memcpy(dst, src, bytes);
  } else {
    // column-major source -> row-major destination, element by element
    std::vector<int64_t> idx(nd, 0), row_stride(nd, 1);
    for (size_t d = nd - 1; d > 0; --d) row_stride[d - 1] = row_stride[d] * h.shape[d];
    for (uint64_t e = 0; e < numel; ++e) {
      uint64_t to = 0;
      for (size_t d = 0; d < nd; ++d) to += static_cast<uint64_t>(idx[d] * row_stride[d]);
      std::memcpy(dst + to * h.item, src + e * h.item, h.item);
      for (size_t d = 0; d < nd; ++d) {  // column-major: the first index moves fastest
        if (++idx[d] < h.shape[d]) break;
        idx[d] = 0;
      }
    }
  }
  if (h.swap) {
    for (uint64_t e = 0; e < numel; ++e) {
      uint8_t* q = dst + e * h.item;
      for (size_t a = 0, b = h.item - 1; a < b; ++a, --b) std::swap(q[a], q[b]);
    }
  }
  return 0;
}

}  // namespace kiln::decoders
