// kiln::save: named tensors to a safetensors file, written atomically.
#include "file_io.h"
#include "safetensors_format.h"

#include <kiln/autograd.h>
#include <kiln/serialize.h>

#include <algorithm>
#include <bit>
#include <numeric>
#include <unordered_set>

namespace kiln {
namespace {

// Writes n elements of `size` bytes little-endian (byte-swapped on big-endian hosts).
void write_le(fileio::OutputFile& out, const void* data, size_t n, size_t size) {
  if constexpr (std::endian::native == std::endian::little) {
    out.write(data, n * size);
  } else {
    std::vector<char> swapped(static_cast<const char*>(data),
                              static_cast<const char*>(data) + n * size);
    for (size_t i = 0; i < n; ++i) std::reverse(&swapped[i * size], &swapped[(i + 1) * size]);
    out.write(swapped.data(), swapped.size());
  }
}

}  // namespace

void save(const NamedTensors& tensors, const std::string& path,
          const SafetensorsMetadata& metadata) {
  NoGradGuard no_grad;
  std::unordered_set<std::string> names;
  std::vector<Tensor> host;
  std::vector<safetensors::Entry> entries;
  for (const auto& [name, t] : tensors) {
    KILN_CHECK_VALUE(t.defined(), "save: tensor '", name, "' is undefined (writing '", path, "')");
    KILN_CHECK_VALUE(name != "__metadata__", "save: \"__metadata__\" is reserved by the format ",
                     "and cannot name a tensor (writing '", path, "')");
    KILN_CHECK_VALUE(names.insert(name).second, "save: two tensors are named '", name,
                     "' (writing '", path, "')");
    host.push_back(t.to(Device(kCPU)).contiguous());
    safetensors::Entry e;
    e.name = name;
    e.dtype = t.dtype();
    e.shape = t.sizes().vec();
    entries.push_back(std::move(e));
  }
  // Data laid out by element size, largest first (stable), so that every tensor is aligned to
  // its element size in the file, as the safetensors library lays it out; the header keeps the
  // given order.
  std::vector<size_t> order(entries.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return element_size(entries[a].dtype) > element_size(entries[b].dtype);
  });
  uint64_t offset = 0;
  for (size_t i : order) {
    entries[i].begin = offset;
    offset += host[i].nbytes();
    entries[i].end = offset;
  }
  std::string header = safetensors::build_header(entries, metadata);
  fileio::write_atomically("save", path, [&](fileio::OutputFile& out) {
    uint64_t length = header.size();
    unsigned char prefix[8];
    for (int i = 0; i < 8; ++i) prefix[i] = static_cast<unsigned char>(length >> (8 * i));
    out.write(prefix, 8);
    out.write(header.data(), header.size());
    for (size_t i : order) {
      if (host[i].numel() == 0) continue;
      write_le(out, host[i].data_ptr(), static_cast<size_t>(host[i].numel()),
               host[i].element_size());
    }
  });
}

void save(const std::map<std::string, Tensor>& tensors, const std::string& path,
          const SafetensorsMetadata& metadata) {
  save(NamedTensors(tensors.begin(), tensors.end()), path, metadata);
}

void save(std::initializer_list<std::pair<std::string, Tensor>> tensors, const std::string& path,
          const SafetensorsMetadata& metadata) {
  save(NamedTensors(tensors.begin(), tensors.end()), path, metadata);
}

}  // namespace kiln
