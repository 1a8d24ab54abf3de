// The safetensors header: dtype codes, building it for save, and parsing and checking it for
// load (see kiln/serialize.h for the layout). Not a public API.
#pragma once

#include <kiln/dtype.h>
#include <kiln/serialize.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::safetensors {

// The format's cap on the header length (as the safetensors library's).
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

// "F32" for kFloat, "BOOL" for kBool, ...
const char* dtype_code(ScalarType dtype);
// The kiln dtype of a code, or nullopt for a code kiln lacks.
std::optional<ScalarType> dtype_from_code(std::string_view code);

// One tensor of a file: where its bytes lie in the data buffer.
struct Entry {
  std::string name;
  ScalarType dtype = kFloat;
  std::vector<int64_t> shape;
  uint64_t begin = 0;  // data_offsets, relative to the start of the data buffer
  uint64_t end = 0;
};

// A header to write: the JSON of `entries` (in their order) and `metadata`, padded with spaces
// to a multiple of 8 bytes.
std::string build_header(const std::vector<Entry>& entries, const SafetensorsMetadata& metadata);

// A parsed and checked header.
struct Header {
  std::vector<Entry> entries;  // in header order
  SafetensorsMetadata metadata;
};

// Parses the JSON header and checks every entry against a data buffer of data_size bytes: known
// dtype, non-negative shape whose strides and byte count fit int64, offsets in range, byte count
// = numel * element size, and offsets that cover the buffer without overlaps or holes. Throws
// kiln::Error with the problem and, for an entry, its byte offset in the file (the caller adds
// the file name).
Header parse_header(std::string_view json_text, uint64_t data_size);

// Checks the n bytes of entry e's data (little-endian, as in the file): a BOOL tensor's bytes
// must be 0 or 1. Throws kiln::Error naming the tensor, the element and its byte offset in the
// data buffer.
void check_data(const Entry& e, const unsigned char* bytes, size_t n);

}  // namespace kiln::safetensors
