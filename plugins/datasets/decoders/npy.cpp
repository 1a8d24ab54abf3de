// npy decoder: NumPy's .npy format (versions 1 to 3): magic, header dict, raw data. Little and
// big endian, C and Fortran order; the dtypes kiln has (b1 u1 i1 i2 i4 i8 f2 f4 f8).
#include "decoders.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::decoders {
namespace {

// The largest array the decoder accepts, in elements, and in elements spanned (each 0 counted as
// 1, so that the row-major strides of an empty array fit too).
constexpr uint64_t kMaxElements = uint64_t{1} << 48;
constexpr size_t kMaxDims = 16;

// A problem with the bytes: the message names the header field or the data and its byte offset.
struct BadNpy {
  std::string why;
};

struct Header {
  int32_t dtype = -1;
  size_t item = 0;
  bool swap = false;
  bool fortran = false;
  std::vector<int64_t> shape;
  uint64_t numel = 1;
};

// The offset in `dict` of the value of 'key' (after the colon and spaces); throws when absent.
size_t value_at(std::string_view dict, std::string_view key, uint64_t base) {
  std::string quoted(1, '\'');  // built by appends: GCC 12 warns (-Wrestrict) on "'" + ...
  quoted.append(key);
  quoted.push_back('\'');
  size_t k = dict.find(quoted);
  size_t colon = k == std::string_view::npos ? k : dict.find(':', k + quoted.size());
  size_t start = colon == std::string_view::npos ? colon : dict.find_first_not_of(' ', colon + 1);
  if (start == std::string_view::npos) {
    throw BadNpy{"the header dict at byte " + std::to_string(base) + " has no field " + quoted};
  }
  return start;
}

void parse_descr(std::string_view dict, uint64_t base, Header& h) {
  size_t at = value_at(dict, "descr", base);
  std::string field = "header field 'descr' at byte " + std::to_string(base + at);
  size_t end = dict[at] == '\'' ? dict.find('\'', at + 1) : std::string_view::npos;
  if (end == std::string_view::npos) throw BadNpy{field + " is not a quoted dtype string"};
  std::string d(dict.substr(at + 1, end - at - 1));  // "<f4"
  static const struct {
    const char* code;
    int32_t dtype;
    size_t item;
  } kTypes[] = {{"b1", KILN_BOOL, 1}, {"u1", KILN_U8, 1},  {"i1", KILN_I8, 1},
                {"i2", KILN_I16, 2},  {"i4", KILN_I32, 4}, {"i8", KILN_I64, 8},
                {"f2", KILN_F16, 2},  {"f4", KILN_F32, 4}, {"f8", KILN_F64, 8}};
  char order = d.empty() ? '?' : d[0];
  for (const auto& t : kTypes) {
    if (d.size() > 1 && d.compare(1, std::string::npos, t.code) == 0) {
      h.dtype = t.dtype;
      h.item = t.item;
    }
  }
  if (h.dtype < 0 || (order != '<' && order != '>' && order != '|' && order != '=')) {
    throw BadNpy{field + ": dtype '" + d +
                 "' has no kiln dtype (b1 u1 i1 i2 i4 i8 f2 f4 f8 are supported)"};
  }
  h.swap = order == '>' && h.item > 1;
}

void parse_shape(std::string_view dict, uint64_t base, Header& h) {
  size_t at = value_at(dict, "shape", base);
  std::string field = "header field 'shape' at byte " + std::to_string(base + at);
  size_t close = dict[at] == '(' ? dict.find(')', at) : std::string_view::npos;
  if (close == std::string_view::npos) throw BadNpy{field + " is not a tuple"};
  std::string_view text = dict.substr(at, close - at + 1);
  uint64_t extent = 1;
  for (size_t i = 1; i < text.size() - 1;) {
    if (text[i] == ' ' || text[i] == ',') {
      ++i;
      continue;
    }
    uint64_t v = 0;
    size_t first = i;
    for (; i < text.size() - 1 && text[i] >= '0' && text[i] <= '9'; ++i) {
      v = v * 10 + static_cast<uint64_t>(text[i] - '0');  // at most 2^48 before
      if (v > kMaxElements) {
        throw BadNpy{field + ": a dimension of " + std::string(text) + " exceeds 2^48"};
      }
    }
    if (i == first || h.shape.size() >= kMaxDims) {
      throw BadNpy{field + ": " + std::string(text) + " is not a tuple of at most 16 sizes"};
    }
    h.shape.push_back(static_cast<int64_t>(v));
    if (v > 1 && extent > kMaxElements / v) {
      throw BadNpy{field + ": " + std::string(text) + " spans more than 2^48 elements"};
    }
    extent *= v > 1 ? v : 1;
    h.numel *= v;  // at most extent
  }
}

Header parse_header(std::string_view dict, uint64_t base) {
  size_t last = dict.find_last_not_of(" \n");
  if (dict.empty() || dict[0] != '{' || last == std::string_view::npos || dict[last] != '}') {
    throw BadNpy{"the header at byte " + std::to_string(base) + " is not a dict literal"};
  }
  Header h;
  parse_descr(dict, base, h);
  size_t at = value_at(dict, "fortran_order", base);
  h.fortran = dict.substr(at, 4) == "True";
  if (!h.fortran && dict.substr(at, 5) != "False") {
    throw BadNpy{"header field 'fortran_order' at byte " + std::to_string(base + at) +
                 " is neither True nor False"};
  }
  parse_shape(dict, base, h);
  return h;
}

// Copies the column-major src into the row-major dst, element by element.
void transpose_fortran(const Header& h, const uint8_t* src, uint8_t* dst) {
  size_t nd = h.shape.size();
  // row-major strides: at most the array's extent (2^48), see parse_shape
  uint64_t idx[kMaxDims] = {}, row_stride[kMaxDims];
  row_stride[nd - 1] = 1;
  for (size_t d = nd - 1; d > 0; --d) {
    row_stride[d - 1] = row_stride[d] * static_cast<uint64_t>(h.shape[d]);
  }
  for (uint64_t e = 0; e < h.numel; ++e) {
    uint64_t to = 0;
    for (size_t d = 0; d < nd; ++d) to += idx[d] * row_stride[d];
    std::memcpy(dst + to * h.item, src + e * h.item, h.item);
    for (size_t d = 0; d < nd; ++d) {  // column-major: the first index moves fastest
      if (++idx[d] < static_cast<uint64_t>(h.shape[d])) break;
      idx[d] = 0;
    }
  }
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
    if (size < 12) return fail("truncated header length at byte 8");
    header_len = p[8] | (uint64_t{p[9]} << 8) | (uint64_t{p[10]} << 16) | (uint64_t{p[11]} << 24);
    start = 12;
  } else {
    return fail("unknown .npy version " + std::to_string(major) + " at byte 6");
  }
  if (header_len > size - start) {
    return fail("the header length " + std::to_string(header_len) + " at byte 8 exceeds the " +
                std::to_string(size - start) + " bytes that follow");
  }
  Header h;
  try {
    h = parse_header(std::string_view(reinterpret_cast<const char*>(p + start), header_len), start);
  } catch (const BadNpy& e) {
    return fail(e.why);
  }
  const uint64_t data_start = start + header_len;
  const uint8_t* src = p + data_start;
  uint64_t bytes = h.numel * h.item;  // at most 2^51
  if (bytes > size - data_start) {
    return fail("truncated data at byte " + std::to_string(data_start) + ": the header says " +
                std::to_string(bytes) + " bytes, " + std::to_string(size - data_start) + " follow");
  }
  if (h.dtype == KILN_BOOL) {  // any other byte is not a valid bool
    const uint8_t* bad = std::find_if(src, src + bytes, [](uint8_t b) { return b > 1; });
    if (bad != src + bytes) {
      return fail("b1 (bool) element " + std::to_string(bad - src) + " at byte " +
                  std::to_string(data_start + static_cast<uint64_t>(bad - src)) +
                  " holds the byte " + std::to_string(*bad) + " (booleans are 0 or 1)");
    }
  }
  auto* dst =
      static_cast<uint8_t*>(out->tensor(out->ctx, h.dtype, static_cast<int32_t>(h.shape.size()),
                                        h.shape.data()));
  if (dst == nullptr) return 1;
  if (bytes == 0) return 0;
  if (!h.fortran || h.shape.size() < 2) {
    std::memcpy(dst, src, bytes);
  } else {
    transpose_fortran(h, src, dst);
  }
  if (h.swap) {
    for (uint64_t e = 0; e < h.numel; ++e) {
      uint8_t* q = dst + e * h.item;
      for (size_t a = 0, b = h.item - 1; a < b; ++a, --b) std::swap(q[a], q[b]);
    }
  }
  return 0;
}

}  // namespace kiln::decoders
