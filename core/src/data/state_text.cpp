// dump_state / parse_state: a DataLoader state as one line of JSON. The state holds only
// None, bools, ints, doubles, strings, lists and maps, so a small writer and reader suffice and
// core needs no JSON library.
#include <kiln/data/dataloader.h>

#include <kiln/error.h>

#include <cctype>
#include <charconv>
#include <cstdio>
#include <sstream>

namespace kiln::data {
namespace {

void write_string(std::ostringstream& out, const std::string& s) {
  out << '"';
  for (char c : s) {
    switch (c) {
      case '"': out << "\\\""; break;
      case '\\': out << "\\\\"; break;
      case '\n': out << "\\n"; break;
      case '\t': out << "\\t"; break;
      case '\r': out << "\\r"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out << buf;
        } else {
          out << c;
        }
    }
  }
  out << '"';
}

void write(std::ostringstream& out, const Sample& s) {
  switch (s.kind()) {
    case Sample::Kind::None: out << "null"; return;
    case Sample::Kind::Bool: out << (s.to_bool() ? "true" : "false"); return;
    case Sample::Kind::Int: out << s.to_int(); return;
    case Sample::Kind::Double: {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.17g", s.to_double());
      std::string text = buf;
      if (text.find_first_of(".eEn") == std::string::npos) text += ".0";  // stays a double
      out << text;
      return;
    }
    case Sample::Kind::String: write_string(out, s.str()); return;
    case Sample::Kind::Tensor:
      throw TypeError("dump_state: a state holds no tensors (found " + s.repr() + ")");
    case Sample::Kind::List: {
      out << '[';
      bool first = true;
      for (const Sample& v : s.list()) {
        out << (first ? "" : ",");
        first = false;
        write(out, v);
      }
      out << ']';
      return;
    }
    case Sample::Kind::Map: {
      out << '{';
      bool first = true;
      for (const auto& [k, v] : s.map()) {
        out << (first ? "" : ",");
        first = false;
        write_string(out, k);
        out << ':';
        write(out, v);
      }
      out << '}';
      return;
    }
  }
}

class Parser {
 public:
  explicit Parser(const std::string& text) : t_(text) {}

  Sample parse() {
    Sample s = value(0);
    space();
    if (i_ != t_.size()) fail("unexpected text after the value");
    return s;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw ValueError(kiln::detail::str("parse_state: ", what, " at offset ", i_));
  }
  void space() {
    while (i_ < t_.size() && std::isspace(static_cast<unsigned char>(t_[i_]))) ++i_;
  }
  bool take(char c) {
    space();
    if (i_ < t_.size() && t_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!take(c)) fail(std::string("expected '") + c + "'");
  }
  bool word(const char* w) {
    size_t n = std::char_traits<char>::length(w);
    if (t_.compare(i_, n, w) == 0) {
      i_ += n;
      return true;
    }
    return false;
  }

  std::string string() {
    expect('"');
    std::string out;
    while (i_ < t_.size() && t_[i_] != '"') {
      char c = t_[i_++];
      if (c != '\\') {
        out += c;
        continue;
      }
      if (i_ >= t_.size()) fail("unterminated escape");
      char e = t_[i_++];
      switch (e) {
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case 'r': out += '\r'; break;
        case 'u': {
          if (i_ + 4 > t_.size()) fail("short \\u escape");
          unsigned code = 0;
          auto [p, ec] = std::from_chars(t_.data() + i_, t_.data() + i_ + 4, code, 16);
          if (ec != std::errc() || p != t_.data() + i_ + 4 || code > 0x7f) {
            fail("unsupported \\u escape (ASCII only)");
          }
          out += static_cast<char>(code);
          i_ += 4;
          break;
        }
        default: out += e;
      }
    }
    if (i_ >= t_.size()) fail("unterminated string");
    ++i_;
    return out;
  }

  Sample number() {
    size_t start = i_;
    bool is_double = false;
    if (i_ < t_.size() && t_[i_] == '-') ++i_;
    while (i_ < t_.size() &&
           (std::isdigit(static_cast<unsigned char>(t_[i_])) || t_[i_] == '.' || t_[i_] == 'e' ||
            t_[i_] == 'E' || t_[i_] == '+' || (t_[i_] == '-' && i_ > start))) {
      is_double |= t_[i_] == '.' || t_[i_] == 'e' || t_[i_] == 'E';
      ++i_;
    }
    std::string text = t_.substr(start, i_ - start);
    if (text.empty() || text == "-") fail("expected a value");
    if (is_double) {
      try {
        return std::stod(text);
      } catch (const std::exception&) {
        fail("bad number '" + text + "'");
      }
    }
    int64_t v = 0;
    auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || p != text.data() + text.size()) fail("bad integer '" + text + "'");
    return v;
  }

  Sample value(int depth) {
    if (depth > 64) fail("nesting deeper than 64");
    space();
    if (i_ >= t_.size()) fail("unexpected end of text");
    char c = t_[i_];
    if (c == '{') {
      ++i_;
      Sample::Map m;
      if (take('}')) return m;
      do {
        space();
        std::string k = string();
        expect(':');
        m[k] = value(depth + 1);
      } while (take(','));
      expect('}');
      return m;
    }
    if (c == '[') {
      ++i_;
      Sample::List l;
      if (take(']')) return l;
      do {
        l.push_back(value(depth + 1));
      } while (take(','));
      expect(']');
      return l;
    }
    if (c == '"') return string();
    if (word("null")) return Sample();
    if (word("true")) return true;
    if (word("false")) return false;
    return number();
  }

  const std::string& t_;
  size_t i_ = 0;
};

}  // namespace

std::string dump_state(const Sample& state) {
  std::ostringstream out;
  write(out, state);
  return out.str();
}

Sample parse_state(const std::string& text) { return Parser(text).parse(); }

}  // namespace kiln::data
