// kiln::load: a safetensors file's tensors, after checking its header against the file size.
#include "file_io.h"
#include "safetensors_format.h"

#include <kiln/autograd.h>
#include <kiln/ops.h>
#include <kiln/serialize.h>

#include <algorithm>
#include <bit>

namespace kiln {
namespace {

[[noreturn]] void invalid(const std::string& path, const std::string& problem) {
  throw Error(detail::str("load: '", path, "' is not a valid safetensors file: ", problem));
}

// Reads entry e's bytes into a new CPU tensor.
Tensor read_tensor(const fileio::InputFile& file, const std::string& path, uint64_t data_start,
                   const safetensors::Entry& e) {
  Tensor t = empty(e.shape, e.dtype);
  size_t n = static_cast<size_t>(e.end - e.begin);
  if (n == 0) return t;
  auto* bytes = static_cast<unsigned char*>(t.data_ptr());
  if (file.read_at(bytes, n, data_start + e.begin) != n) {
    invalid(path, detail::str("the file ended while reading tensor '", e.name, "' at byte ",
                              data_start + e.begin));
  }
  try {
    safetensors::check_data(e, bytes, n);
  } catch (const Error& error) {
    invalid(path, error.what());
  }
  if constexpr (std::endian::native == std::endian::big) {
    size_t size = element_size(e.dtype);
    for (size_t i = 0; i < n; i += size) std::reverse(bytes + i, bytes + i + size);
  }
  return t;
}

}  // namespace

SafetensorsContents load_safetensors(const std::string& path) {
  NoGradGuard no_grad;
  fileio::InputFile file("load", path);
  if (file.size() < 8) {
    invalid(path,
            detail::str("it has ", file.size(), " bytes, fewer than the 8 of the header length"));
  }
  unsigned char prefix[8];
  if (file.read_at(prefix, 8, 0) != 8) invalid(path, "the file ended in the header length");
  uint64_t length = 0;
  for (int i = 7; i >= 0; --i) length = (length << 8) | prefix[i];
  if (length > safetensors::kMaxHeaderBytes) {
    invalid(path, detail::str("the header length ", length, " exceeds the format's limit of ",
                              safetensors::kMaxHeaderBytes, " bytes"));
  }
  if (length > file.size() - 8) {
    invalid(path, detail::str("the header length ", length, " exceeds the ", file.size() - 8,
                              " bytes that follow it (truncated file?)"));
  }
  std::string header_text(length, '\0');
  if (file.read_at(header_text.data(), length, 8) != length) {
    invalid(path, "the file ended in the header");
  }
  uint64_t data_start = 8 + length;
  safetensors::Header header;
  try {
    header = safetensors::parse_header(header_text, file.size() - data_start);
  } catch (const Error& e) {
    invalid(path, detail::str(e.what(), " (the header is bytes [8, ", data_start,
                              ") of the file, the data buffer follows)"));
  }
  SafetensorsContents contents;
  contents.metadata = std::move(header.metadata);
  for (const safetensors::Entry& e : header.entries) {
    contents.tensors.emplace_back(e.name, read_tensor(file, path, data_start, e));
  }
  return contents;
}

NamedTensors load(const std::string& path) { return load_safetensors(path).tensors; }

}  // namespace kiln
