// A saved graph's call arguments (kiln::jit::save / load, core/src/jit/serialize.cpp): each
// recorded call's non-tensor arguments as a sequence of integer, floating and string tokens,
// written and read back per argument type (every type a TypedCall owns: integers, enumerations,
// bool, double, Scalar, ScalarType, optionals and lists of these; a tensor list writes its
// length and an optional tensor whether it is there, so that the slots come out the same).
//
// A RecordedCall that is not one operator's TypedCall (a fused group) saves and loads by also
// deriving from SavableCall and registering a loader for its kind (register_call_loader).
#pragma once

#include <kiln/jit/recorded_call.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace kiln::jit::detail {

// Integers in decimal, floating values as C99 hexadecimal floats (exact; "inf", "nan" too),
// strings as <length>:<bytes>; separated by a space.
class ArgWriter {
 public:
  void i64(int64_t v);
  void f64(double v);
  void str(const std::string& v);
  std::string text;
};

// Reads ArgWriter's tokens (spaces and newlines separate them); throws kiln::ValueError naming
// `where`, the byte and what it expected.
class ArgReader {
 public:
  ArgReader(std::string where, const std::string& text);
  int64_t i64();
  double f64();
  std::string str();
  // A count of elements to come (a list's length, a flag): an integer in [0, limit].
  size_t count(size_t limit = 1u << 24);
  bool at_end() const;
  [[noreturn]] void fail(const std::string& what) const;

 private:
  std::string token(const char* what);
  std::string where_;
  const std::string& text_;
  size_t pos_ = 0;
};

// The interface of a savable call that is not a TypedCall.
class SavableCall {
 public:
  virtual ~SavableCall() = default;
  // The kind its loader is registered under (not an operator's name).
  virtual std::string kind() const = 0;
  virtual void write_arguments(ArgWriter& out) const = 0;
};
// Makes a call of a registered kind from its arguments; registered once, before load.
using CallLoader = std::unique_ptr<RecordedCall> (*)(ArgReader& in);
void register_call_loader(const std::string& kind, CallLoader loader);
CallLoader find_call_loader(const std::string& kind);

// The arguments of a TypedCall (serialize_calls.cpp): false when the call's type is none that
// load knows. make_call: a call of `op` with the arguments read from `in`; null when op's
// signature is none that load knows.
bool write_call_arguments(const RecordedCall& call, ArgWriter& out);
std::unique_ptr<RecordedCall> make_call(const OperatorBase& op, ArgReader& in);

// A tensor list's length at most (a damaged count must not allocate gigabytes).
inline constexpr size_t kMaxListTensors = 4096;

template <class T>
void write_arg(ArgWriter& out, const T& v) {
  if constexpr (std::is_same_v<T, Tensor>) {
    // a slot
  } else if constexpr (std::is_same_v<T, std::vector<Tensor>>) {
    out.i64(static_cast<int64_t>(v.size()));
  } else if constexpr (std::is_same_v<T, std::optional<Tensor>>) {
    out.i64(v ? 1 : 0);
  } else if constexpr (std::is_same_v<T, bool> || std::is_integral_v<T> || std::is_enum_v<T>) {
    out.i64(static_cast<int64_t>(v));
  } else if constexpr (std::is_floating_point_v<T>) {
    out.f64(static_cast<double>(v));
  } else if constexpr (std::is_same_v<T, Scalar>) {
    if (v.is_floating_point()) {
      out.i64(1);
      out.f64(v.to_double());
    } else {
      out.i64(v.is_bool() ? 2 : 0);
      out.i64(v.to_long());
    }
  } else if constexpr (std::is_same_v<T, std::string>) {
    out.str(v);
  } else if constexpr (requires { v.has_value(); }) {
    out.i64(v ? 1 : 0);
    if (v) write_arg(out, *v);
  } else {
    static_assert(requires {
      v.size();
      v.begin();
    });
    out.i64(static_cast<int64_t>(v.size()));
    for (const auto& e : v) write_arg(out, e);
  }
}

template <class T>
void read_arg(ArgReader& in, T& v) {
  if constexpr (std::is_same_v<T, Tensor>) {
    v = Tensor();
  } else if constexpr (std::is_same_v<T, std::vector<Tensor>>) {
    v.assign(in.count(kMaxListTensors), Tensor());
  } else if constexpr (std::is_same_v<T, std::optional<Tensor>>) {
    if (in.count(1) == 1) {
      v = Tensor();
    } else {
      v.reset();
    }
  } else if constexpr (std::is_same_v<T, bool>) {
    v = in.count(1) == 1;
  } else if constexpr (std::is_same_v<T, ScalarType>) {
    v = static_cast<ScalarType>(in.count(kNumScalarTypes - 1));
  } else if constexpr (std::is_enum_v<T>) {
    // the operators check the enumerations they take (reduction modes, ...)
    v = static_cast<T>(in.count(255));
  } else if constexpr (std::is_integral_v<T>) {
    v = static_cast<T>(in.i64());
  } else if constexpr (std::is_floating_point_v<T>) {
    v = static_cast<T>(in.f64());
  } else if constexpr (std::is_same_v<T, Scalar>) {
    switch (in.count(2)) {
      case 1: v = Scalar(in.f64()); break;
      case 2: v = Scalar(in.count(1) == 1); break;
      default: v = Scalar(in.i64()); break;
    }
  } else if constexpr (std::is_same_v<T, std::string>) {
    v = in.str();
  } else if constexpr (requires { v.has_value(); }) {
    if (in.count(1) == 1) {
      typename T::value_type e{};
      read_arg(in, e);
      v = std::move(e);
    } else {
      v.reset();
    }
  } else {
    size_t n = in.count();
    v.clear();
    for (size_t i = 0; i < n; ++i) {
      typename T::value_type e{};
      read_arg(in, e);
      v.push_back(std::move(e));
    }
  }
}

}  // namespace kiln::jit::detail
