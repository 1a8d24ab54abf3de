// kiln::data::Sample — one value that flows through a dataset, a transform, collation and a
// DataLoader: nothing (None), a bool, an int64, a double, a string, a Tensor, a list of samples,
// or a map from names to samples. It plays the part of the Python objects (tensors, numbers,
// strings, dicts, tuples) that PyTorch's datasets return.
//
//   Sample s = Sample::Map{{"jpg", image}, {"cls", int64_t(3)}, {"__key__", "000123"}};
//   s["cls"].to_int();            // 3
//   s.at("jpg").tensor().sizes(); // [H, W, 3]
//
// A Sample is a value: copying it copies lists and maps (tensors inside alias, as Tensor
// copies do). A tar source's samples are maps from field names ("jpg", "cls", "__key__",
// "__url__") to decoded values; a batch is a map of the same names to collated values.
#pragma once

#include <kiln/export.h>
#include <kiln/tensor.h>

#include <cstdint>
#include <map>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

namespace kiln::data {

class KILN_API Sample {
 public:
  enum class Kind { None, Bool, Int, Double, String, Tensor, List, Map };
  using List = std::vector<Sample>;
  using Map = std::map<std::string, Sample>;

  Sample() = default;            // None
  Sample(bool v) : value_(v) {}  // NOLINT: implicit, as a Python value
  template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  Sample(T v) : value_(static_cast<int64_t>(v)) {}     // NOLINT
  Sample(double v) : value_(v) {}                      // NOLINT
  Sample(float v) : value_(static_cast<double>(v)) {}  // NOLINT
  Sample(std::string v) : value_(std::move(v)) {}      // NOLINT
  Sample(const char* v) : value_(std::string(v)) {}    // NOLINT
  Sample(Tensor v) : value_(std::move(v)) {}           // NOLINT
  Sample(List v) : value_(std::move(v)) {}             // NOLINT
  Sample(Map v) : value_(std::move(v)) {}              // NOLINT

  Kind kind() const { return static_cast<Kind>(value_.index()); }
  bool is_none() const { return kind() == Kind::None; }
  bool is_bool() const { return kind() == Kind::Bool; }
  bool is_int() const { return kind() == Kind::Int; }
  bool is_double() const { return kind() == Kind::Double; }
  bool is_string() const { return kind() == Kind::String; }
  bool is_tensor() const { return kind() == Kind::Tensor; }
  bool is_list() const { return kind() == Kind::List; }
  bool is_map() const { return kind() == Kind::Map; }

  // The value as that kind; throws kiln::TypeError naming both kinds when it is another.
  bool to_bool() const;
  int64_t to_int() const;
  // A Double, or an Int converted.
  double to_double() const;
  const std::string& str() const;
  const Tensor& tensor() const;
  const List& list() const;
  List& list();
  const Map& map() const;
  Map& map();

  // Map element `key`, inserted as None when absent (a None sample becomes an empty map first).
  Sample& operator[](const std::string& key);
  // Map element `key`; throws kiln::IndexError listing the keys there are when it is absent.
  const Sample& at(const std::string& key) const;
  Sample& at(const std::string& key);
  // List element `index` (negative counts from the end); throws kiln::IndexError when out of range.
  const Sample& at(int64_t index) const;
  Sample& at(int64_t index);
  // Whether a map has `key` (false for other kinds).
  bool contains(const std::string& key) const;
  // Length of a list or map, characters of a string; throws for other kinds.
  int64_t size() const;

  // Short text for messages: {"cls": 3, "jpg": Tensor[32, 32, 3] uint8}.
  std::string repr() const;

 private:
  std::variant<std::monostate, bool, int64_t, double, std::string, Tensor, List, Map> value_;
};

// "None", "bool", "int", "double", "string", "Tensor", "list", "map".
KILN_API const char* kind_name(Sample::Kind kind);

KILN_API std::ostream& operator<<(std::ostream& out, const Sample& sample);

}  // namespace kiln::data
