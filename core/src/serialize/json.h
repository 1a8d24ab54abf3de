// A small JSON reader and writer for safetensors headers: objects (keys kept in file order),
// arrays, strings with every escape (\uXXXX with surrogate pairs), integers, and for
// completeness numbers with fractions, true, false and null. Not a public API.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::json {

struct Member;

struct Value {
  enum class Kind { Null, Bool, Integer, Number, String, Array, Object };
  Kind kind = Kind::Null;
  bool boolean = false;
  int64_t integer = 0;       // Kind::Integer: a number without fraction or exponent
  double number = 0;         // Kind::Number
  std::string string;        // Kind::String
  std::vector<Value> array;  // Kind::Array
  // Kind::Object, in file order (Member, not std::pair: clang's libstdc++ checks refuse a pair
  // of the incomplete Value)
  std::vector<Member> object;
  size_t offset = 0;  // where the value starts in the parsed text, for messages

  // Defaulted in json.cpp, where Value is complete: implicit ones are defined at the closing
  // brace and need std::pair<std::string, Value> while Value is incomplete (clang rejects it).
  Value();
  Value(const Value&);
  Value(Value&&) noexcept;
  Value& operator=(const Value&);
  Value& operator=(Value&&) noexcept;
  ~Value();

  // The member `key` of an object, or null when absent.
  const Value* find(std::string_view key) const;
  // "object", "string", ... for messages.
  const char* kind_name() const;
};

// A key and value of an object.
struct Member {
  std::string first;
  Value second;
};

// Parses one JSON document (surrounding whitespace allowed). Throws kiln::Error whose message
// is "<problem> at byte <offset>"; duplicate object keys and nesting deeper than 64 are errors.
Value parse(std::string_view text);

// Appends `s` as a JSON string literal (quotes, escapes for ", \ and control characters; other
// bytes, UTF-8 included, as they are).
void write_string(std::string& out, std::string_view s);

}  // namespace kiln::json
