// Brace expansion of shard lists, as the braceexpand package that WebDataset uses.
//
// The pattern is outside text (a user's spec, a config file), so the expansion is bounded: at
// most detail::BraceLimits' names and characters (1,000,000 and 256 MiB), counted before
// anything is built, and ranges are stepped in unsigned arithmetic so that endpoints near the
// int64 limits and any step are exact.
#include "brace.h"

#include <kiln/data/source.h>
#include <kiln/error.h>

#include <cctype>
#include <charconv>
#include <optional>
#include <string_view>

namespace kiln::data {
namespace {

constexpr int kMaxDepth = 64;

// The pattern being expanded (for messages) and the caps.
struct Context {
  std::string_view pattern;
  detail::BraceLimits limits;
};

// An int from all of `s` (an optional '+' or '-', then digits), or nullopt.
std::optional<int64_t> to_int(std::string_view s) {
  bool plus = !s.empty() && s[0] == '+';
  if (plus) s.remove_prefix(1);
  if (s.empty() || (plus && s[0] == '-')) return std::nullopt;
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

uint64_t magnitude(int64_t v) {
  return v < 0 ? uint64_t{0} - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
}

// Width for zero padding: an endpoint written with a leading zero ("08", "-05") pads every item
// to the widest endpoint.
size_t pad_width(std::string_view a, std::string_view b) {
  auto leading_zero = [](std::string_view s) {
    if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
    return s.size() > 1 && s[0] == '0';
  };
  return leading_zero(a) || leading_zero(b) ? std::max(a.size(), b.size()) : 0;
}

[[noreturn]] void too_many(const Context& c) {
  throw ValueError(kiln::detail::str("expand_braces: '", c.pattern, "' expands to more than ",
                                     c.limits.names, " names or ", c.limits.bytes >> 20,
                                     " MiB of text; split the spec or use fewer shards"));
}

// The items of lo, lo +- step, ... up to hi (inclusive), from the first and last and the step's
// magnitude; `format` turns each value into its text.
template <class Format>
std::vector<std::string> steps(int64_t lo, int64_t hi, uint64_t step, const Context& c,
                               Format format) {
  // exact in uint64: the distance between two int64 is below 2^64
  uint64_t span = lo <= hi ? static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo)
                           : static_cast<uint64_t>(lo) - static_cast<uint64_t>(hi);
  if (span / step >= c.limits.names) too_many(c);
  uint64_t count = span / step + 1;
  std::vector<std::string> out;
  out.reserve(count);
  uint64_t bytes = 0;
  for (uint64_t k = 0; k < count; ++k) {
    uint64_t offset = k * step;  // <= span
    auto v = static_cast<int64_t>(lo <= hi ? static_cast<uint64_t>(lo) + offset
                                           : static_cast<uint64_t>(lo) - offset);
    out.push_back(format(v));
    bytes += out.back().size();
    if (bytes > c.limits.bytes) too_many(c);
  }
  return out;
}

// "{lo..hi}" or "{lo..hi..step}", numbers or single letters; nullopt when `inner` is not one.
std::optional<std::vector<std::string>> range(std::string_view inner, const Context& c) {
  size_t dots = inner.find("..");
  if (dots == std::string_view::npos) return std::nullopt;
  std::string_view lo = inner.substr(0, dots);
  std::string_view rest = inner.substr(dots + 2);
  std::string_view hi = rest, step_text;
  size_t dots2 = rest.find("..");
  if (dots2 != std::string_view::npos) {
    hi = rest.substr(0, dots2);
    step_text = rest.substr(dots2 + 2);
  }
  uint64_t step = 1;
  if (!step_text.empty()) {
    auto s = to_int(step_text);
    if (!s || *s == 0) return std::nullopt;
    step = magnitude(*s);
  }
  auto a = to_int(lo), b = to_int(hi);
  if (a && b) {
    size_t width = pad_width(lo, hi);
    return steps(*a, *b, step, c, [width](int64_t v) {
      std::string digits = std::to_string(magnitude(v));
      size_t sign = v < 0 ? 1 : 0;
      if (width > digits.size() + sign) digits.insert(0, width - digits.size() - sign, '0');
      return (v < 0 ? "-" : "") + digits;
    });
  }
  if (lo.size() == 1 && hi.size() == 1 && std::isalpha(static_cast<unsigned char>(lo[0])) &&
      std::isalpha(static_cast<unsigned char>(hi[0]))) {
    return steps(static_cast<unsigned char>(lo[0]), static_cast<unsigned char>(hi[0]), step, c,
                 [](int64_t ch) { return std::string(1, static_cast<char>(ch)); });
  }
  return std::nullopt;
}

uint64_t total_bytes(const std::vector<std::string>& v) {
  uint64_t n = 0;
  for (const std::string& s : v) n += s.size();
  return n;
}

// Every `head` followed by `middle` and each of `tails`, with the heads varying slowest as in
// braceexpand; counted first against the caps.
std::vector<std::string> product(const std::vector<std::string>& heads, std::string_view middle,
                                 const std::vector<std::string>& tails, const Context& c) {
  uint64_t count = 0, per_head = 0, head_bytes = 0, tail_bytes = 0, bytes = 0;
  if (__builtin_mul_overflow(uint64_t{heads.size()}, uint64_t{tails.size()}, &count) ||
      count > c.limits.names) {
    too_many(c);
  }
  // bytes = |tails| * sum(heads) + count * |middle| + |heads| * sum(tails)
  if (__builtin_mul_overflow(uint64_t{tails.size()}, total_bytes(heads), &head_bytes) ||
      __builtin_mul_overflow(count, uint64_t{middle.size()}, &per_head) ||
      __builtin_mul_overflow(uint64_t{heads.size()}, total_bytes(tails), &tail_bytes) ||
      __builtin_add_overflow(head_bytes, per_head, &bytes) ||
      __builtin_add_overflow(bytes, tail_bytes, &bytes) || bytes > c.limits.bytes) {
    too_many(c);
  }
  std::vector<std::string> out;
  out.reserve(count);
  for (const std::string& h : heads) {
    for (const std::string& t : tails) {
      std::string s;
      s.reserve(h.size() + middle.size() + t.size());
      s.append(h).append(middle).append(t);
      out.push_back(std::move(s));
    }
  }
  return out;
}

std::vector<std::string> expand(std::string_view s, int depth, const Context& c);

// The alternatives of the group s[open] .. s[close] ("{...}").
std::vector<std::string> group(std::string_view s, size_t open, size_t close,
                               const std::vector<size_t>& commas, int depth, const Context& c) {
  std::string_view inner = s.substr(open + 1, close - open - 1);
  if (commas.empty()) {
    if (auto r = range(inner, c)) return std::move(*r);
    // not a list nor a range: kept with its braces, as braceexpand does ("{x}", "{}")
    std::vector<std::string> names = expand(inner, depth + 1, c);
    for (std::string& n : names) n = "{" + n + "}";
    return names;
  }
  std::vector<std::string> alts;
  uint64_t bytes = 0;
  size_t start = open + 1;
  for (size_t i = 0; i <= commas.size(); ++i) {
    size_t end = i < commas.size() ? commas[i] : close;
    for (std::string& a : expand(s.substr(start, end - start), depth + 1, c)) {
      bytes += a.size();
      if (alts.size() >= c.limits.names || bytes > c.limits.bytes) too_many(c);
      alts.push_back(std::move(a));
    }
    start = end + 1;
  }
  return alts;
}

// The names of `s`: its groups left to right, each multiplying the names so far.
std::vector<std::string> expand(std::string_view s, int depth, const Context& c) {
  KILN_CHECK_VALUE(depth < kMaxDepth, "expand_braces: braces nested deeper than ", kMaxDepth,
                   " in '", c.pattern, "'");
  std::vector<std::string> out{""};
  size_t pos = 0;
  for (;;) {
    size_t open = s.find('{', pos);
    std::string_view literal = s.substr(pos, open == std::string_view::npos ? open : open - pos);
    KILN_CHECK_VALUE(literal.find('}') == std::string_view::npos, "expand_braces: unbalanced ",
                     "braces in '", c.pattern, "'");
    if (open == std::string_view::npos) return product(out, literal, {""}, c);
    // the matching close, and the top-level commas between
    int level = 0;
    size_t close = std::string_view::npos;
    std::vector<size_t> commas;
    for (size_t i = open; i < s.size(); ++i) {
      if (s[i] == '{') {
        ++level;
      } else if (s[i] == '}') {
        if (--level == 0) {
          close = i;
          break;
        }
      } else if (s[i] == ',' && level == 1) {
        commas.push_back(i);
      }
    }
    KILN_CHECK_VALUE(close != std::string_view::npos, "expand_braces: unbalanced braces in '",
                     c.pattern, "'");
    out = product(out, literal, group(s, open, close, commas, depth, c), c);
    pos = close + 1;
  }
}

}  // namespace

namespace detail {

std::vector<std::string> expand_braces(const std::string& pattern, BraceLimits limits) {
  const Context c{pattern, limits};
  std::vector<std::string> out;
  uint64_t bytes = 0;
  size_t start = 0;
  for (;;) {
    size_t sep = pattern.find("::", start);
    std::string_view part(pattern);
    part = part.substr(start, sep == std::string::npos ? sep : sep - start);
    if (!part.empty()) {
      for (std::string& s : expand(part, 0, c)) {
        bytes += s.size();
        if (out.size() >= c.limits.names || bytes > c.limits.bytes) too_many(c);
        out.push_back(std::move(s));
      }
    }
    if (sep == std::string::npos) break;
    start = sep + 2;
  }
  return out;
}

}  // namespace detail

std::vector<std::string> expand_braces(const std::string& pattern) {
  return detail::expand_braces(pattern, detail::BraceLimits{});
}

}  // namespace kiln::data
