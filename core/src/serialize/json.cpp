// The JSON reader and writer of safetensors headers (see json.h).
#include "json.h"

#include <kiln/error.h>

#include <cerrno>
#include <cstdlib>
#include <unordered_set>

namespace kiln::json {
namespace {

constexpr int kMaxDepth = 64;

class Parser {
 public:
  explicit Parser(std::string_view text) : s_(text) {}

  Value document() {
    skip_space();
    Value v = value(0);
    skip_space();
    if (pos_ != s_.size()) fail("unexpected data after the JSON value");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw Error(detail::str(what, " at byte ", pos_));
  }

  void skip_space() {
    while (pos_ < s_.size() &&
           (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) {
      ++pos_;
    }
  }

  char peek() const {
    if (pos_ >= s_.size()) fail("unexpected end of JSON");
    return s_[pos_];
  }

  void expect(char c) {
    if (peek() != c) fail(detail::str("expected '", c, "'"));
    ++pos_;
  }

  void literal(std::string_view word) {
    if (s_.substr(pos_, word.size()) != word) fail("invalid JSON value");
    pos_ += word.size();
  }

  Value value(int depth) {
    if (depth >= kMaxDepth) fail("JSON nested too deeply");
    Value v;
    v.offset = pos_;
    char c = peek();
    if (c == '{') {
      v.kind = Value::Kind::Object;
      parse_object(v, depth);
    } else if (c == '[') {
      v.kind = Value::Kind::Array;
      parse_array(v, depth);
    } else if (c == '"') {
      v.kind = Value::Kind::String;
      v.string = parse_string();
    } else if (c == 't') {
      literal("true");
      v.kind = Value::Kind::Bool;
      v.boolean = true;
    } else if (c == 'f') {
      literal("false");
      v.kind = Value::Kind::Bool;
    } else if (c == 'n') {
      literal("null");
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      parse_number(v);
    } else {
      fail(detail::str("unexpected character '", c, "'"));
    }
    return v;
  }

  void parse_object(Value& v, int depth) {
    expect('{');
    skip_space();
    if (peek() == '}') {
      ++pos_;
      return;
    }
    std::unordered_set<std::string> keys;
    while (true) {
      skip_space();
      if (peek() != '"') fail("expected a string key");
      size_t key_pos = pos_;
      std::string key = parse_string();
      if (!keys.insert(key).second) {
        pos_ = key_pos;
        fail(detail::str("duplicate key \"", key, "\""));
      }
      skip_space();
      expect(':');
      skip_space();
      Value member = value(depth + 1);
      v.object.push_back({std::move(key), std::move(member)});
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      expect('}');
      return;
    }
  }

  void parse_array(Value& v, int depth) {
    expect('[');
    skip_space();
    if (peek() == ']') {
      ++pos_;
      return;
    }
    while (true) {
      skip_space();
      v.array.push_back(value(depth + 1));
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      expect(']');
      return;
    }
  }

  void parse_number(Value& v) {
    size_t start = pos_;
    if (s_[pos_] == '-') ++pos_;
    auto digits = [&] {
      size_t from = pos_;
      while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
      if (pos_ == from) fail("invalid number");
    };
    if (peek() == '0') {
      ++pos_;
    } else {
      digits();
    }
    bool integral = true;
    if (pos_ < s_.size() && s_[pos_] == '.') {
      ++pos_;
      digits();
      integral = false;
    }
    if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      ++pos_;
      if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) ++pos_;
      digits();
      integral = false;
    }
    std::string text(s_.substr(start, pos_ - start));
    errno = 0;
    if (integral) {
      long long n = std::strtoll(text.c_str(), nullptr, 10);
      if (errno == ERANGE) {
        pos_ = start;
        fail("integer " + text + " out of range");
      }
      v.kind = Value::Kind::Integer;
      v.integer = n;
    } else {
      v.kind = Value::Kind::Number;
      v.number = std::strtod(text.c_str(), nullptr);
    }
  }

  unsigned hex4() {
    if (pos_ + 4 > s_.size()) fail("unexpected end of JSON in a \\u escape");
    unsigned code = 0;
    for (int i = 0; i < 4; ++i) {
      char c = s_[pos_++];
      code <<= 4;
      if (c >= '0' && c <= '9') {
        code |= static_cast<unsigned>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        code |= static_cast<unsigned>(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        code |= static_cast<unsigned>(c - 'A' + 10);
      } else {
        --pos_;
        fail("invalid hex digit in a \\u escape");
      }
    }
    return code;
  }

  static void append_utf8(std::string& out, unsigned code) {
    if (code < 0x80) {
      out += static_cast<char>(code);
    } else if (code < 0x800) {
      out += static_cast<char>(0xC0 | (code >> 6));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
      out += static_cast<char>(0xE0 | (code >> 12));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (code >> 18));
      out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    }
  }

  unsigned unicode_escape() {
    unsigned code = hex4();
    if (code >= 0xDC00 && code <= 0xDFFF) fail("unpaired low surrogate in a \\u escape");
    if (code >= 0xD800 && code <= 0xDBFF) {
      if (s_.substr(pos_, 2) != "\\u") fail("unpaired high surrogate in a \\u escape");
      pos_ += 2;
      unsigned low = hex4();
      if (low < 0xDC00 || low > 0xDFFF) fail("invalid low surrogate in a \\u escape");
      code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
    }
    return code;
  }

  std::string parse_string() {
    expect('"');
    std::string out;
    while (true) {
      char c = peek();
      ++pos_;
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) {
        --pos_;
        fail("unescaped control character in a string");
      }
      if (c != '\\') {
        out += c;
        continue;
      }
      char e = peek();
      ++pos_;
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': append_utf8(out, unicode_escape()); break;
        default: --pos_; fail(detail::str("invalid escape '\\", e, "'"));
      }
    }
  }

  std::string_view s_;
  size_t pos_ = 0;
};

}  // namespace

Value::Value() = default;
Value::Value(const Value&) = default;
Value::Value(Value&&) noexcept = default;
Value& Value::operator=(const Value&) = default;
Value& Value::operator=(Value&&) noexcept = default;
Value::~Value() = default;

const Value* Value::find(std::string_view key) const {
  for (const auto& [k, v] : object) {
    if (k == key) return &v;
  }
  return nullptr;
}

const char* Value::kind_name() const {
  switch (kind) {
    case Kind::Null: return "null";
    case Kind::Bool: return "a boolean";
    case Kind::Integer: return "an integer";
    case Kind::Number: return "a number";
    case Kind::String: return "a string";
    case Kind::Array: return "an array";
    case Kind::Object: return "an object";
  }
  return "?";
}

Value parse(std::string_view text) { return Parser(text).document(); }

void write_string(std::string& out, std::string_view s) {
  static const char* const kHex = "0123456789abcdef";
  out += '"';
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (c == '"') {
      out += "\\\"";
    } else if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\b') {
      out += "\\b";
    } else if (c == '\f') {
      out += "\\f";
    } else if (u < 0x20) {
      out += "\\u00";
      out += kHex[u >> 4];
      out += kHex[u & 0xF];
    } else {
      out += c;
    }
  }
  out += '"';
}

}  // namespace kiln::json
