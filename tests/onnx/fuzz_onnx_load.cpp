// libFuzzer target over the bytes of an ONNX model (built with clang when it is installed; see
// tests/onnx/CMakeLists.txt): kiln::onnx::load_from_string parses them with libonnx's protobuf
// classes, runs ONNX's checker and version converter, validates every node and converts every
// initializer; the same bytes also go through load_tensor_from_string (a TensorProto). Any
// outcome but a loaded model or a kiln::Error (ValueError or NotImplementedError naming what is
// wrong) is a failure: a crash, a hang, a sanitizer report, another exception.
#include <kiln/error.h>
#include <kiln/onnx.h>

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  kiln::onnx::LoadOptions options;
  options.trace = false;
  try {
    auto model = kiln::onnx::load_from_string(bytes, "fuzz.onnx", {}, options);
    for (const auto& info : model.inputs()) {
      if (info.name.empty()) __builtin_trap();  // load refuses empty names
    }
  } catch (const kiln::Error&) {
  }
  try {
    kiln::Tensor t = kiln::onnx::load_tensor_from_string(bytes, "fuzz.pb");
    if (t.numel() < 0) __builtin_trap();
  } catch (const kiln::Error&) {
  }
  return 0;
}
