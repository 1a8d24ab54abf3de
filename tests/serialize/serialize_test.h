// Helpers of the serialization tests: a scratch directory, raw file bytes, bitwise tensor
// comparison and error checks.
#pragma once

#include "check_error.h"

#include <kiln/kiln.h>
#include <kiln/serialize.h>

#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <unistd.h>

namespace serialize_test {

// A directory of its own under /tmp, removed with everything in it at the end of the test.
struct ScratchDir {
  std::filesystem::path dir;
  ScratchDir() {
    dir = std::filesystem::temp_directory_path() /
          ("kiln_test_serialize_" + std::to_string(::getpid()) + "_" + std::to_string(counter()++));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  }
  std::string path(const std::string& name) const { return (dir / name).string(); }
  // The names of the files in the directory.
  std::vector<std::string> files() const {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
      names.push_back(e.path().filename().string());
    }
    return names;
  }

 private:
  static int& counter() {
    static int n = 0;
    return n;
  }
};

inline std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  BOOST_REQUIRE_MESSAGE(in, "cannot open " << path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// A safetensors file from a header text and data bytes (the length prefix added, no padding).
inline std::string safetensors_bytes(const std::string& header, const std::string& data) {
  std::string out(8, '\0');
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out[static_cast<size_t>(i)] = static_cast<char>(n >> (8 * i));
  return out + header + data;
}

// Whether a and b have the same dtype, shape and bytes (NaN payloads and -0 included).
inline bool same_bits(const kiln::Tensor& a, const kiln::Tensor& b) {
  if (a.dtype() != b.dtype() || !a.sizes().equals(b.sizes())) return false;
  kiln::Tensor x = a.detach().cpu().contiguous();
  kiln::Tensor y = b.detach().cpu().contiguous();
  return x.numel() == 0 || std::memcmp(x.data_ptr(), y.data_ptr(), x.nbytes()) == 0;
}

using kiln_test::contains;

}  // namespace serialize_test
