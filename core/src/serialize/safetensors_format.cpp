// The safetensors header: dtype codes, building and checking (see safetensors_format.h).
#include "safetensors_format.h"

#include "json.h"

#include <kiln/error.h>

#include <algorithm>
#include <array>
#include <limits>

namespace kiln::safetensors {
namespace {

struct DtypeCode {
  ScalarType dtype;
  const char* code;
};

constexpr std::array<DtypeCode, 10> kCodes{{
    {kBool, "BOOL"},
    {kByte, "U8"},
    {kChar, "I8"},
    {kShort, "I16"},
    {kInt, "I32"},
    {kLong, "I64"},
    {kHalf, "F16"},
    {kBFloat16, "BF16"},
    {kFloat, "F32"},
    {kDouble, "F64"},
}};

// Codes of the format that kiln has no dtype for (an error that says so, not "unknown").
constexpr std::array<const char*, 12> kUnsupportedCodes{"U16",     "U32",     "U64",
                                                        "F8_E5M2", "F8_E4M3", "F8_E8M0",
                                                        "F6_E2M3", "F6_E3M2", "F4",
                                                        "C64",     "C128",    "F8_E4M3FNUZ"};

std::string shape_str(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string offsets_str(const Entry& e) { return detail::str("[", e.begin, ", ", e.end, "]"); }

void append_entry(std::string& out, const Entry& e) {
  json::write_string(out, e.name);
  out += ":{\"dtype\":\"";
  out += dtype_code(e.dtype);
  out += "\",\"shape\":[";
  for (size_t i = 0; i < e.shape.size(); ++i) out += (i ? "," : "") + std::to_string(e.shape[i]);
  out += detail::str("],\"data_offsets\":[", e.begin, ",", e.end, "]}");
}

// A non-negative integer of the header (shape entries, offsets).
uint64_t read_count(const json::Value& v, const std::string& name, const char* field) {
  KILN_CHECK(v.kind == json::Value::Kind::Integer && v.integer >= 0, "tensor '", name, "': ", field,
             " must hold non-negative integers, got ", v.kind_name(),
             v.kind == json::Value::Kind::Integer ? detail::str(" ", v.integer) : "");
  return static_cast<uint64_t>(v.integer);
}

const json::Value& member(const json::Value& obj, const std::string& name, const char* field,
                          json::Value::Kind kind) {
  const json::Value* v = obj.find(field);
  KILN_CHECK(v != nullptr, "tensor '", name, "' has no \"", field, "\"");
  KILN_CHECK(v->kind == kind, "tensor '", name, "': \"", field, "\" is ", v->kind_name());
  return *v;
}

Entry read_entry(const std::string& name, const json::Value& info) {
  KILN_CHECK(info.kind == json::Value::Kind::Object, "tensor '", name,
             "' must be described by an object, got ", info.kind_name());
  Entry e;
  e.name = name;
  const std::string& code = member(info, name, "dtype", json::Value::Kind::String).string;
  std::optional<ScalarType> dtype = dtype_from_code(code);
  if (!dtype) {
    bool known = std::find_if(kUnsupportedCodes.begin(), kUnsupportedCodes.end(),
                              [&](const char* c) { return code == c; }) != kUnsupportedCodes.end();
    KILN_CHECK(!known, "tensor '", name, "' has dtype ", code, ", which kiln does not support");
    KILN_CHECK(false, "tensor '", name, "' has unknown dtype '", code, "'");
  }
  e.dtype = *dtype;
  // numel * element size, refusing shapes a tensor cannot have (Note [Checked sizes] in
  // core/src/tensor_internal.h): the product of the sizes, 0 counted as 1, times the element
  // size must fit int64, or the strides of an empty tensor such as [0, 2^62, 2^62] overflow.
  for (const json::Value& d : member(info, name, "shape", json::Value::Kind::Array).array) {
    e.shape.push_back(static_cast<int64_t>(read_count(d, name, "shape")));
  }
  uint64_t bytes = element_size(e.dtype);
  auto extent = static_cast<int64_t>(bytes);
  for (int64_t n : e.shape) {
    KILN_CHECK(!__builtin_mul_overflow(extent, std::max<int64_t>(n, 1), &extent), "tensor '", name,
               "' has a shape too large to address: ", shape_str(e.shape), " of ", code,
               " spans more than 2^63 - 1 bytes (counting each 0 as 1, for its strides)");
    bytes *= static_cast<uint64_t>(n);  // at most extent
  }
  const auto& offsets = member(info, name, "data_offsets", json::Value::Kind::Array).array;
  KILN_CHECK(offsets.size() == 2, "tensor '", name, "': data_offsets must be [begin, end], got ",
             offsets.size(), " numbers");
  e.begin = read_count(offsets[0], name, "data_offsets");
  e.end = read_count(offsets[1], name, "data_offsets");
  KILN_CHECK(e.begin <= e.end, "tensor '", name, "' has data_offsets ", offsets_str(e),
             " that end before they begin");
  KILN_CHECK(e.end - e.begin == bytes, "tensor '", name, "' of dtype ", code, " and shape ",
             shape_str(e.shape), " needs ", bytes, " bytes but its data_offsets ", offsets_str(e),
             " hold ", e.end - e.begin);
  return e;
}

void read_metadata(const json::Value& v, SafetensorsMetadata& out) {
  KILN_CHECK(v.kind == json::Value::Kind::Object, "\"__metadata__\" must be an object, got ",
             v.kind_name());
  for (const auto& [key, value] : v.object) {
    KILN_CHECK(value.kind == json::Value::Kind::String, "\"__metadata__\" value of \"", key,
               "\" must be a string, got ", value.kind_name());
    out[key] = value.string;
  }
}

// The entries must tile [0, data_size) exactly (as the safetensors library requires).
void check_layout(std::vector<const Entry*> order, uint64_t data_size) {
  std::stable_sort(order.begin(), order.end(), [](const Entry* a, const Entry* b) {
    return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
  });
  uint64_t expected = 0;
  const Entry* previous = nullptr;
  for (const Entry* e : order) {
    KILN_CHECK(e->end <= data_size, "tensor '", e->name, "' has data_offsets ", offsets_str(*e),
               " beyond the ", data_size, " bytes of data in the file");
    KILN_CHECK(e->begin >= expected, "tensors '", previous ? previous->name : "", "' and '",
               e->name, "' overlap (data_offsets ", previous ? offsets_str(*previous) : "", " and ",
               offsets_str(*e), ")");
    KILN_CHECK(e->begin == expected, "bytes [", expected, ", ", e->begin,
               ") of the data belong to no tensor");
    expected = e->end;
    previous = e;
  }
  KILN_CHECK(expected == data_size, "the file has ", data_size - expected,
             " bytes of data after the last tensor");
}

}  // namespace

void check_data(const Entry& e, const unsigned char* bytes, size_t n) {
  if (e.dtype != kBool) return;
  const unsigned char* bad = std::find_if(bytes, bytes + n, [](unsigned char b) { return b > 1; });
  KILN_CHECK(bad == bytes + n, "BOOL tensor '", e.name, "' holds the byte ",
             static_cast<int>(bad == bytes + n ? 0 : *bad), " at element ", bad - bytes,
             " (booleans are 0 or 1), byte ", e.begin + static_cast<uint64_t>(bad - bytes),
             " of the data");
}

const char* dtype_code(ScalarType dtype) {
  for (const DtypeCode& c : kCodes) {
    if (c.dtype == dtype) return c.code;
  }
  KILN_CHECK(false, "safetensors has no code for dtype ", dtype_name(dtype));
  return "";
}

std::optional<ScalarType> dtype_from_code(std::string_view code) {
  for (const DtypeCode& c : kCodes) {
    if (code == c.code) return c.dtype;
  }
  return std::nullopt;
}

std::string build_header(const std::vector<Entry>& entries, const SafetensorsMetadata& metadata) {
  std::string out = "{";
  if (!metadata.empty()) {
    out += "\"__metadata__\":{";
    bool first = true;
    for (const auto& [key, value] : metadata) {
      if (!first) out += ",";
      first = false;
      json::write_string(out, key);
      out += ":";
      json::write_string(out, value);
    }
    out += "}";
  }
  for (size_t i = 0; i < entries.size(); ++i) {
    if (i > 0 || !metadata.empty()) out += ",";
    append_entry(out, entries[i]);
  }
  out += "}";
  out.append((8 - out.size() % 8) % 8, ' ');
  return out;
}

Header parse_header(std::string_view json_text, uint64_t data_size) {
  KILN_CHECK(!json_text.empty() && json_text[0] == '{',
             "the header does not start with '{' (not a safetensors file?)");
  json::Value root;
  try {
    root = json::parse(json_text);
  } catch (const Error& e) {
    throw Error(detail::str("the header is not valid JSON: ", e.what()));
  }
  Header header;
  for (const auto& [name, info] : root.object) {
    if (name == "__metadata__") {
      read_metadata(info, header.metadata);
    } else {
      try {
        header.entries.push_back(read_entry(name, info));
      } catch (const Error& e) {  // where: the header starts at byte 8 of a file
        throw Error(detail::str(e.what(), " (the entry at byte ", 8 + info.offset,
                                " of the file)"));
      }
    }
  }
  std::vector<const Entry*> order;
  for (const Entry& e : header.entries) order.push_back(&e);
  check_layout(std::move(order), data_size);
  return header;
}

}  // namespace kiln::safetensors
