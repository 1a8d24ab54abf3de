// TensorProto to kiln tensors: the element types, raw_data and the typed fields, external data
// files (relative to the model's folder, never outside it), every size checked.
#include "onnx_impl.h"

#include <kiln/ops.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

namespace kiln::onnx::detail {

namespace fs = std::filesystem;

std::optional<ScalarType> dtype_from_onnx(int32_t code) {
  switch (code) {
    case pb::TensorProto_DataType_FLOAT: return kFloat;
    case pb::TensorProto_DataType_UINT8: return kByte;
    case pb::TensorProto_DataType_INT8: return kChar;
    case pb::TensorProto_DataType_INT16: return kShort;
    case pb::TensorProto_DataType_INT32: return kInt;
    case pb::TensorProto_DataType_INT64: return kLong;
    case pb::TensorProto_DataType_BOOL: return kBool;
    case pb::TensorProto_DataType_FLOAT16: return kHalf;
    case pb::TensorProto_DataType_DOUBLE: return kDouble;
    case pb::TensorProto_DataType_BFLOAT16: return kBFloat16;
    default: return std::nullopt;
  }
}

const char* onnx_dtype_name(int32_t code) {
  if (pb::TensorProto_DataType_IsValid(code)) {
    return pb::TensorProto_DataType_Name(static_cast<pb::TensorProto_DataType>(code)).c_str();
  }
  return "an unknown element type";
}

namespace {

// Reads `length` bytes at `offset` of an external data file, path checked to stay inside
// base_dir.
std::string read_external(const pb::TensorProto& proto, const std::string& where,
                          const std::string& base_dir, size_t expected) {
  std::string location;
  uint64_t offset = 0;
  std::optional<uint64_t> length;
  auto parse_u64 = [&](const std::string& key, const std::string& v) {
    KILN_CHECK_VALUE(!v.empty() && v.size() <= 19 &&
                         v.find_first_not_of("0123456789") == std::string::npos,
                     where, ": external_data's ", key, " '", v, "' is not a non-negative integer");
    return static_cast<uint64_t>(std::stoull(v));
  };
  for (const auto& kv : proto.external_data()) {
    if (kv.key() == "location") {
      location = kv.value();
    } else if (kv.key() == "offset") {
      offset = parse_u64("offset", kv.value());
    } else if (kv.key() == "length") {
      length = parse_u64("length", kv.value());
    }
  }
  KILN_CHECK_VALUE(!location.empty(), where, ": external data without a location");
  KILN_CHECK_VALUE(!base_dir.empty(), where, ": external data ('", location,
                   "') needs the model's folder: load the model from its file");
  fs::path rel(location);
  KILN_CHECK_VALUE(!rel.is_absolute() && location.find('\0') == std::string::npos, where,
                   ": external data location '", location,
                   "' must be a path relative to the model's folder");
  std::error_code ec;
  fs::path base = fs::weakly_canonical(fs::path(base_dir), ec);
  fs::path full = fs::weakly_canonical(fs::path(base_dir) / rel, ec);
  KILN_CHECK_VALUE(!ec, where, ": external data location '", location, "': ", ec.message());
  auto b = base.native(), f = full.native();
  KILN_CHECK_VALUE(f.size() > b.size() && f.compare(0, b.size(), b) == 0 &&
                       (b.back() == '/' || f[b.size()] == '/'),
                   where, ": external data location '", location, "' leaves the model's folder (",
                   base.string(), ")");
  std::ifstream in(full, std::ios::binary);
  KILN_CHECK_VALUE(in.good(), where, ": cannot open external data file ", full.string());
  in.seekg(0, std::ios::end);
  auto size = static_cast<uint64_t>(in.tellg());
  uint64_t len = length.value_or(size >= offset ? size - offset : 0);
  KILN_CHECK_VALUE(len == expected, where, ": external data length ", len,
                   " bytes, but the shape and element type need ", expected, " bytes");
  KILN_CHECK_VALUE(offset <= size && len <= size - offset, where, ": external data file ",
                   full.string(), " has ", size, " bytes, fewer than offset ", offset, " + length ",
                   len);
  std::string data(len, '\0');
  in.seekg(static_cast<std::streamoff>(offset));
  in.read(data.data(), static_cast<std::streamsize>(len));
  KILN_CHECK_VALUE(in.good() || len == 0, where, ": cannot read external data file ",
                   full.string());
  return data;
}

template <class Field>
void check_count(const Field& field, int64_t numel, const std::string& where, const char* name) {
  KILN_CHECK_VALUE(static_cast<int64_t>(field.size()) == numel, where, ": ", name, " has ",
                   field.size(), " values, but the shape has ", numel, " elements");
}

}  // namespace

Tensor tensor_from_proto(const pb::TensorProto& proto, const std::string& where,
                         const std::string& base_dir) {
  auto dtype = dtype_from_onnx(proto.data_type());
  if (!dtype) {
    if (proto.data_type() == pb::TensorProto_DataType_UNDEFINED) {
      throw ValueError(kiln::detail::str(where, ": data_type is not set"));
    }
    throw NotImplementedError(kiln::detail::str(where, ": element type ",
                                                onnx_dtype_name(proto.data_type()), " (",
                                                proto.data_type(), ") is not supported by kiln"));
  }
  KILN_CHECK_VALUE(!proto.has_segment(), where, ": segmented tensors are not supported");
  std::vector<int64_t> sizes;
  int64_t numel = 1;
  for (int64_t d : proto.dims()) {
    KILN_CHECK_VALUE(d >= 0, where, ": dims has a negative size ", d);
    KILN_CHECK_VALUE(!__builtin_mul_overflow(numel, d, &numel), where,
                     ": the number of elements of dims overflows");
    sizes.push_back(d);
  }
  const auto elsize = static_cast<int64_t>(element_size(*dtype));
  int64_t nbytes = 0;
  KILN_CHECK_VALUE(!__builtin_mul_overflow(numel, elsize, &nbytes) && nbytes <= (int64_t{1} << 40),
                   where, ": the tensor's size in bytes overflows or exceeds 1 TiB");
  Tensor out = kiln::empty(sizes, TensorOptions().dtype(*dtype));
  auto* dst = static_cast<char*>(out.data_ptr());
  const bool external = proto.data_location() == pb::TensorProto_DataLocation_EXTERNAL;
  if (external || proto.has_raw_data()) {
    std::string ext;
    const std::string& raw =
        external ? (ext = read_external(proto, where, base_dir, static_cast<size_t>(nbytes)))
                 : proto.raw_data();
    KILN_CHECK_VALUE(static_cast<int64_t>(raw.size()) == nbytes, where, ": raw_data has ",
                     raw.size(), " bytes, but the shape and element type need ", nbytes);
    if (nbytes > 0) std::memcpy(dst, raw.data(), static_cast<size_t>(nbytes));
    if (*dtype == kBool) {
      for (int64_t k = 0; k < numel; ++k) dst[k] = dst[k] != 0;
    }
    return out;
  }
  switch (proto.data_type()) {
    case pb::TensorProto_DataType_FLOAT:
      check_count(proto.float_data(), numel, where, "float_data");
      if (numel > 0) std::memcpy(dst, proto.float_data().data(), static_cast<size_t>(nbytes));
      break;
    case pb::TensorProto_DataType_DOUBLE:
      check_count(proto.double_data(), numel, where, "double_data");
      if (numel > 0) std::memcpy(dst, proto.double_data().data(), static_cast<size_t>(nbytes));
      break;
    case pb::TensorProto_DataType_INT64:
      check_count(proto.int64_data(), numel, where, "int64_data");
      if (numel > 0) std::memcpy(dst, proto.int64_data().data(), static_cast<size_t>(nbytes));
      break;
    default: {
      // int32_data holds the narrower integers, bool, and the bits of float16 and bfloat16
      check_count(proto.int32_data(), numel, where, "int32_data");
      for (int64_t k = 0; k < numel; ++k) {
        const int32_t v = proto.int32_data(static_cast<int>(k));
        switch (*dtype) {
          case kBool: dst[k] = v != 0; break;
          case kByte: dst[k] = static_cast<char>(static_cast<uint8_t>(v)); break;
          case kChar: dst[k] = static_cast<char>(static_cast<int8_t>(v)); break;
          case kShort: reinterpret_cast<int16_t*>(dst)[k] = static_cast<int16_t>(v); break;
          case kInt: reinterpret_cast<int32_t*>(dst)[k] = v; break;
          default: reinterpret_cast<uint16_t*>(dst)[k] = static_cast<uint16_t>(v); break;
        }
      }
    }
  }
  return out;
}

}  // namespace kiln::onnx::detail

namespace kiln::onnx {

Tensor load_tensor_from_string(const std::string& bytes, const std::string& name) {
  detail::pb::TensorProto proto;
  KILN_CHECK_VALUE(bytes.size() < (size_t{1} << 31) && proto.ParseFromString(bytes),
                   "onnx::load_tensor: ", name, " is not a TensorProto");
  return detail::tensor_from_proto(proto, name, {});
}

Tensor load_tensor(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  KILN_CHECK_VALUE(in.good(), "onnx::load_tensor: cannot open ", path);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return load_tensor_from_string(bytes, path);
}

}  // namespace kiln::onnx
