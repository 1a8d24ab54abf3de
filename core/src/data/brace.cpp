// Brace expansion of shard lists, as the braceexpand package that WebDataset uses.
#include <kiln/data/source.h>

#include <kiln/error.h>

#include <cctype>
#include <charconv>
#include <optional>

namespace kiln::data {
namespace {

// An int from all of `s`, or nullopt.
std::optional<int64_t> to_int(std::string_view s) {
  int64_t v = 0;
  if (s.empty()) return std::nullopt;
  const char* first = s.data();
  if (*first == '+') ++first;
  auto [p, ec] = std::from_chars(first, s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
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

// "{lo..hi}" or "{lo..hi..step}", numbers or single letters; nullopt when `inner` is not one.
std::optional<std::vector<std::string>> range(const std::string& inner) {
  size_t dots = inner.find("..");
  if (dots == std::string::npos) return std::nullopt;
  std::string_view lo(inner.data(), dots);
  std::string_view rest(inner.data() + dots + 2, inner.size() - dots - 2);
  std::string_view hi = rest, step_text;
  size_t dots2 = rest.find("..");
  if (dots2 != std::string_view::npos) {
    hi = rest.substr(0, dots2);
    step_text = rest.substr(dots2 + 2);
  }
  int64_t step = 1;
  if (!step_text.empty()) {
    auto s = to_int(step_text);
    if (!s || *s == 0) return std::nullopt;
    step = *s < 0 ? -*s : *s;
  }
  std::vector<std::string> out;
  auto a = to_int(lo), b = to_int(hi);
  if (a && b) {
    KILN_CHECK_VALUE((*a > *b ? *a - *b : *b - *a) / step < 10'000'000, "expand_braces: the ",
                     "range {", inner, "} has more than 10 million items");
    size_t width = pad_width(lo, hi);
    int64_t dir = *a <= *b ? 1 : -1;
    for (int64_t v = *a; dir > 0 ? v <= *b : v >= *b; v += dir * step) {
      std::string digits = std::to_string(v < 0 ? -v : v);
      size_t sign = v < 0 ? 1 : 0;
      if (width > digits.size() + sign) digits.insert(0, width - digits.size() - sign, '0');
      out.push_back((v < 0 ? "-" : "") + digits);
    }
    return out;
  }
  if (lo.size() == 1 && hi.size() == 1 && std::isalpha(static_cast<unsigned char>(lo[0])) &&
      std::isalpha(static_cast<unsigned char>(hi[0]))) {
    int dir = lo[0] <= hi[0] ? 1 : -1;
    for (int c = lo[0]; dir > 0 ? c <= hi[0] : c >= hi[0]; c += dir * static_cast<int>(step)) {
      out.emplace_back(1, static_cast<char>(c));
    }
    return out;
  }
  return std::nullopt;
}

std::vector<std::string> expand(const std::string& s, int depth) {
  KILN_CHECK_VALUE(depth < 64, "expand_braces: braces nested too deeply in '", s, "'");
  size_t open = s.find('{');
  if (open == std::string::npos) {
    KILN_CHECK_VALUE(s.find('}') == std::string::npos, "expand_braces: unbalanced braces in '",
                     s, "'");
    return {s};
  }
  KILN_CHECK_VALUE(s.find('}') > open, "expand_braces: unbalanced braces in '", s, "'");
  // the matching close, and the top-level commas between
  int level = 0;
  size_t close = std::string::npos;
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
  KILN_CHECK_VALUE(close != std::string::npos, "expand_braces: unbalanced braces in '", s, "'");
  std::string prefix = s.substr(0, open);
  std::string inner = s.substr(open + 1, close - open - 1);
  std::vector<std::string> alts;
  if (!commas.empty()) {
    size_t start = open + 1;
    commas.push_back(close);
    for (size_t c : commas) {
      for (std::string& a : expand(s.substr(start, c - start), depth + 1)) alts.push_back(a);
      start = c + 1;
    }
  } else if (auto r = range(inner)) {
    alts = std::move(*r);
  } else {
    for (std::string& a : expand(inner, depth + 1)) alts.push_back("{" + a + "}");
  }
  // prefix + alternative + rest, with the alternatives varying slowest as in braceexpand
  std::vector<std::string> ordered;
  std::vector<std::string> rests = expand(s.substr(close + 1), depth + 1);
  ordered.reserve(alts.size() * rests.size());
  for (const std::string& a : alts) {
    for (const std::string& rest : rests) ordered.push_back(prefix + a + rest);
  }
  return ordered;
}

}  // namespace

std::vector<std::string> expand_braces(const std::string& pattern) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    size_t sep = pattern.find("::", start);
    std::string part = pattern.substr(start, sep == std::string::npos ? sep : sep - start);
    if (!part.empty()) {
      for (std::string& s : expand(part, 0)) out.push_back(std::move(s));
    }
    if (sep == std::string::npos) break;
    start = sep + 2;
  }
  return out;
}

}  // namespace kiln::data
