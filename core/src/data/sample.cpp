// kiln::data::Sample. See kiln/data/sample.h.
#include <kiln/data/sample.h>

#include <kiln/error.h>

#include <ostream>
#include <sstream>

namespace kiln::data {
namespace {

[[noreturn]] void throw_kind(const Sample& s, const char* wanted) {
  throw TypeError(kiln::detail::str("Sample: expected ", wanted, ", but the sample is ",
                                    kind_name(s.kind()), ": ", s.repr()));
}

std::string short_text(const std::string& s) {
  if (s.size() <= 40) return s;
  return s.substr(0, 37) + "...";
}

void write_repr(std::ostream& out, const Sample& s, int depth) {
  switch (s.kind()) {
    case Sample::Kind::None: out << "None"; return;
    case Sample::Kind::Bool: out << (s.to_bool() ? "true" : "false"); return;
    case Sample::Kind::Int: out << s.to_int(); return;
    case Sample::Kind::Double: out << s.to_double(); return;
    case Sample::Kind::String: out << '"' << short_text(s.str()) << '"'; return;
    case Sample::Kind::Tensor: {
      const Tensor& t = s.tensor();
      if (!t.defined()) {
        out << "Tensor(undefined)";
        return;
      }
      out << "Tensor" << t.sizes() << " " << dtype_name(t.dtype());
      if (!t.is_cpu()) out << " " << t.device();
      return;
    }
    case Sample::Kind::List: {
      out << "[";
      const auto& l = s.list();
      for (size_t i = 0; i < l.size(); ++i) {
        if (i == 8 || depth > 3) {
          out << (i ? ", " : "") << "... (" << l.size() << " items)";
          break;
        }
        out << (i ? ", " : "");
        write_repr(out, l[i], depth + 1);
      }
      out << "]";
      return;
    }
    case Sample::Kind::Map: {
      out << "{";
      size_t i = 0;
      for (const auto& [k, v] : s.map()) {
        if (i == 16 || depth > 3) {
          out << (i ? ", " : "") << "... (" << s.map().size() << " keys)";
          break;
        }
        out << (i++ ? ", " : "") << '"' << k << "\": ";
        write_repr(out, v, depth + 1);
      }
      out << "}";
      return;
    }
  }
}

}  // namespace

const char* kind_name(Sample::Kind kind) {
  switch (kind) {
    case Sample::Kind::None: return "None";
    case Sample::Kind::Bool: return "bool";
    case Sample::Kind::Int: return "int";
    case Sample::Kind::Double: return "double";
    case Sample::Kind::String: return "string";
    case Sample::Kind::Tensor: return "Tensor";
    case Sample::Kind::List: return "list";
    case Sample::Kind::Map: return "map";
  }
  return "unknown";
}

bool Sample::to_bool() const {
  if (!is_bool()) throw_kind(*this, "a bool");
  return std::get<bool>(value_);
}

int64_t Sample::to_int() const {
  if (!is_int()) throw_kind(*this, "an int");
  return std::get<int64_t>(value_);
}

double Sample::to_double() const {
  if (is_int()) return static_cast<double>(std::get<int64_t>(value_));
  if (!is_double()) throw_kind(*this, "a double");
  return std::get<double>(value_);
}

const std::string& Sample::str() const {
  if (!is_string()) throw_kind(*this, "a string");
  return std::get<std::string>(value_);
}

const Tensor& Sample::tensor() const {
  if (!is_tensor()) throw_kind(*this, "a Tensor");
  return std::get<Tensor>(value_);
}

const Sample::List& Sample::list() const {
  if (!is_list()) throw_kind(*this, "a list");
  return std::get<List>(value_);
}

Sample::List& Sample::list() {
  if (!is_list()) throw_kind(*this, "a list");
  return std::get<List>(value_);
}

const Sample::Map& Sample::map() const {
  if (!is_map()) throw_kind(*this, "a map");
  return std::get<Map>(value_);
}

Sample::Map& Sample::map() {
  if (!is_map()) throw_kind(*this, "a map");
  return std::get<Map>(value_);
}

Sample& Sample::operator[](const std::string& key) {
  if (is_none()) value_ = Map();
  return map()[key];
}

const Sample& Sample::at(const std::string& key) const {
  const Map& m = map();
  auto it = m.find(key);
  if (it == m.end()) {
    std::string keys;
    for (const auto& [k, v] : m) keys += (keys.empty() ? "" : ", ") + k;
    throw IndexError(kiln::detail::str("Sample: no key '", key,
                                       "' (keys: ", keys.empty() ? "none" : keys, ")"));
  }
  return it->second;
}

Sample& Sample::at(const std::string& key) {
  return const_cast<Sample&>(static_cast<const Sample*>(this)->at(key));
}

const Sample& Sample::at(int64_t index) const {
  const List& l = list();
  int64_t n = static_cast<int64_t>(l.size());
  int64_t i = index < 0 ? index + n : index;
  KILN_CHECK_INDEX(i >= 0 && i < n, "Sample: index ", index, " is out of range for a list of ", n,
                   " items");
  return l[static_cast<size_t>(i)];
}

Sample& Sample::at(int64_t index) {
  return const_cast<Sample&>(static_cast<const Sample*>(this)->at(index));
}

bool Sample::contains(const std::string& key) const {
  return is_map() && std::get<Map>(value_).count(key) > 0;
}

int64_t Sample::size() const {
  switch (kind()) {
    case Kind::List: return static_cast<int64_t>(std::get<List>(value_).size());
    case Kind::Map: return static_cast<int64_t>(std::get<Map>(value_).size());
    case Kind::String: return static_cast<int64_t>(std::get<std::string>(value_).size());
    default: throw_kind(*this, "a list, a map or a string");
  }
}

std::string Sample::repr() const {
  std::ostringstream out;
  write_repr(out, *this, 0);
  return out.str();
}

std::ostream& operator<<(std::ostream& out, const Sample& sample) { return out << sample.repr(); }

}  // namespace kiln::data
