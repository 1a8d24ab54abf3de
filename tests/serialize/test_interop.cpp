// Interop with PyTorch's side (tests/golden/make_safetensors_golden.py): kiln loads the file
// written there, and writes a file that is byte for byte the script's kiln-layout file and that
// the script's reader (run when /usr/bin/python3 has torch) loads with the same values.
#include "serialize_test.h"

#include <cstdlib>
#include <limits>

using namespace kiln;
using namespace serialize_test;

namespace {

const std::string kSafetensorsDir = std::string(KILN_GOLDEN_DIR) + "/safetensors";
const char* const kPython = "/usr/bin/python3";

// The script's tensors(), built with kiln.
NamedTensors expected_tensors() {
  Tensor base = arange(12).reshape({3, 4});
  Tensor f32 = arange(12, kFloat).reshape({3, 4}) * 0.1 - 0.5;
  float nan = std::numeric_limits<float>::quiet_NaN();
  float inf = std::numeric_limits<float>::infinity();
  return {
      {"bool", (base % 3) == 0},
      {"u8", (base * 21).to(kByte)},
      {"i8", (base * 11 - 60).to(kChar)},
      {"i16", (base * 3000 - 16000).to(kShort)},
      {"i32", (base * 190000000 - 1000000000).to(kInt)},
      {"i64", base * int64_t{1000000000000} - int64_t{5000000000000}},
      {"f16", f32.to(kHalf)},
      {"bf16", f32.to(kBFloat16)},
      {"f32", f32},
      {"f64", arange(12, kDouble).reshape({3, 4}) * 0.1 - 0.5},
      {"specials", tensor({nan, inf, -inf, -0.0f, 1e-45f, 3.4028234663852886e38f})},
      {"scalar", tensor(3.5f)},
      {"empty", zeros({2, 0})},
      {"layer.0/w\xc3\xb6rd \"q\"\\\t\xf0\x9f\x98\x80", tensor({7, -8}, kInt)},
  };
}

const SafetensorsMetadata kMetadata = {{"format", "pt"},
                                       {"note", "line\nbreak \"quoted\" \xc3\xa9!"}};

// Whether kPython exists and finds torch (without importing it, which takes seconds).
bool python_with_torch() {
  std::string probe = std::string(kPython) +
                      " -c 'import importlib.util, sys; "
                      "sys.exit(importlib.util.find_spec(\"torch\") is None)' > /dev/null 2>&1";
  return std::system(probe.c_str()) == 0;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(interop)

BOOST_AUTO_TEST_CASE(loads_the_file_written_on_the_pytorch_side) {
  SafetensorsContents contents = load_safetensors(kSafetensorsDir + "/torch_written.safetensors");
  BOOST_CHECK(contents.metadata == kMetadata);
  NamedTensors expected = expected_tensors();
  BOOST_REQUIRE_EQUAL(contents.tensors.size(), expected.size());
  for (const auto& [name, want] : expected) {
    BOOST_TEST_CONTEXT("tensor " << name) {
      auto it = std::find_if(contents.tensors.begin(), contents.tensors.end(),
                             [&name = name](const auto& entry) { return entry.first == name; });
      BOOST_REQUIRE(it != contents.tensors.end());
      BOOST_CHECK(same_bits(it->second, want));
    }
  }
  // The header's order (the library's: by alignment, then name), kept.
  BOOST_CHECK_EQUAL(contents.tensors.front().first, "f64");
  BOOST_CHECK_EQUAL(contents.tensors.back().first, "u8");
}

BOOST_AUTO_TEST_CASE(writes_the_bytes_the_script_expects) {
  ScratchDir scratch;
  std::string path = scratch.path("kiln_written.safetensors");
  save(expected_tensors(), path, kMetadata);
  std::string got = read_bytes(path);
  std::string want = read_bytes(kSafetensorsDir + "/kiln_expected.safetensors");
  BOOST_CHECK_EQUAL(got.size(), want.size());
  BOOST_CHECK_MESSAGE(got == want, "kiln's file differs from kiln_expected.safetensors");
}

BOOST_AUTO_TEST_CASE(pytorch_reads_what_kiln_writes) {
  if (!python_with_torch()) {
    BOOST_TEST_MESSAGE("skipped: " << kPython
                                   << " with torch is not available (the bytes are "
                                      "checked against kiln_expected.safetensors instead)");
    return;
  }
  ScratchDir scratch;
  std::string path = scratch.path("kiln_written.safetensors");
  save(expected_tensors(), path, kMetadata);
  std::string command = std::string(kPython) + " " + KILN_GOLDEN_DIR +
                        "/make_safetensors_golden.py --check '" + path + "'";
  BOOST_CHECK_EQUAL(std::system(command.c_str()), 0);
}

BOOST_AUTO_TEST_SUITE_END()
