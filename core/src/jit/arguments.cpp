// The tokens of a saved graph's call arguments (kiln/jit/recorded_call.h): integers in
// decimal, floating values as C99 hexadecimal floats (exact; "inf", "nan" too), strings as
// <length>:<bytes>; separated by one space (a reader also takes newlines).
#include "arguments.h"

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <unordered_map>

namespace kiln::jit::detail {

void ArgWriter::i64(int64_t v) {
  if (!text.empty()) text += ' ';
  text += std::to_string(v);
}

void ArgWriter::f64(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%a", v);
  if (!text.empty()) text += ' ';
  text += buf;
}

void ArgWriter::str(const std::string& v) {
  if (!text.empty()) text += ' ';
  text += std::to_string(v.size());
  text += ':';
  text += v;
}

ArgReader::ArgReader(std::string where, const std::string& text)
    : where_(std::move(where)), text_(text) {}

void ArgReader::fail(const std::string& what) const {
  throw ValueError(kiln::detail::str("jit::load: ", where_, ", byte ", pos_, ": expected ", what,
                                     "; the file is damaged or was not written by "
                                     "kiln::jit::save: save the traced function again"));
}

bool ArgReader::at_end() const {
  size_t p = pos_;
  while (p < text_.size() && (text_[p] == ' ' || text_[p] == '\n')) ++p;
  return p >= text_.size();
}

std::string ArgReader::token(const char* what) {
  while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n')) ++pos_;
  if (pos_ >= text_.size()) fail(what);
  size_t end = pos_;
  while (end < text_.size() && text_[end] != ' ' && text_[end] != '\n') ++end;
  std::string t = text_.substr(pos_, end - pos_);
  return t;
}

int64_t ArgReader::i64() {
  std::string t = token("an integer");
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(t.c_str(), &end, 10);
  if (t.empty() || end != t.c_str() + t.size() || errno == ERANGE) fail("an integer");
  pos_ += t.size();
  return static_cast<int64_t>(v);
}

double ArgReader::f64() {
  std::string t = token("a floating value");
  char* end = nullptr;
  double v = std::strtod(t.c_str(), &end);
  if (t.empty() || end != t.c_str() + t.size()) fail("a floating value");
  pos_ += t.size();
  return v;
}

size_t ArgReader::count(size_t limit) {
  size_t at = pos_;
  int64_t v = i64();
  if (v < 0 || static_cast<uint64_t>(v) > limit) {
    pos_ = at;
    fail(kiln::detail::str("a count in [0, ", limit, "]"));
  }
  return static_cast<size_t>(v);
}

std::string ArgReader::str() {
  while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n')) ++pos_;
  size_t colon = text_.find(':', pos_);
  if (colon == std::string::npos || colon == pos_ || colon - pos_ > 9) fail("a string");
  for (size_t i = pos_; i < colon; ++i) {
    if (text_[i] < '0' || text_[i] > '9') fail("a string's length");
  }
  size_t n = static_cast<size_t>(std::strtoull(text_.c_str() + pos_, nullptr, 10));
  if (n > text_.size() - colon - 1) fail("a string of the length given");
  std::string v = text_.substr(colon + 1, n);
  pos_ = colon + 1 + n;
  return v;
}

namespace {
struct Loaders {
  std::mutex mutex;
  std::unordered_map<std::string, CallLoader> by_kind;
};
Loaders& loaders() {
  static auto* l = new Loaders();  // leaked: loaders stay registered until exit
  return *l;
}
}  // namespace

void register_call_loader(const std::string& kind, CallLoader loader) {
  Loaders& l = loaders();
  std::lock_guard<std::mutex> lock(l.mutex);
  l.by_kind[kind] = loader;
}

CallLoader find_call_loader(const std::string& kind) {
  Loaders& l = loaders();
  std::lock_guard<std::mutex> lock(l.mutex);
  auto it = l.by_kind.find(kind);
  return it == l.by_kind.end() ? nullptr : it->second;
}

}  // namespace kiln::jit::detail
