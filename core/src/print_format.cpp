// A port of torch/_tensor_str.py (PyTorch 1.13) for strided, non-complex tensors. Names follow
// the Python (_Formatter, _vector_str, _tensor_str_with_formatter, _add_suffixes) so the two can
// be read side by side; where PyTorch has an odd rule (the width of "1." style numbers ignores
// nan and inf, the suffix line length counts two extra characters) it is kept on purpose, and
// line breaks fall where PyTorch's "torch." text puts them (see pytorch_length).
#include "print_format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace kiln::detail {
namespace {

constexpr int64_t kThreshold = 1000;  // more elements than this are summarized with "..."
constexpr int64_t kEdgeItems = 3;     // elements kept at each end of a summarized dimension
constexpr int64_t kLineWidth = 80;
constexpr int64_t kGap = -1;  // a position that stands for "..."

std::string spaces(int64_t n) {
  return std::string(static_cast<size_t>(std::max<int64_t>(n, 0)), ' ');
}

std::string pad_left(const std::string& text, size_t width) {
  return text.size() >= width ? text : std::string(width - text.size(), ' ') + text;
}

std::string join(const std::vector<std::string>& parts, const std::string& separator) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    out += (i == 0 ? "" : separator) + parts[i];
  }
  return out;
}

// printf-style formatting of one double ("%.4e", "%.4f", "%.0f"), which rounds exactly as
// Python's str.format does.
std::string printf_double(const char* format, double value) {
  const int length = std::snprintf(nullptr, 0, format, value);
  std::string out(static_cast<size_t>(length) + 1, '\0');
  std::snprintf(out.data(), out.size(), format, value);
  out.resize(static_cast<size_t>(length));
  return out;
}

// Python spells every nan "nan" (glibc may write "-nan").
std::string nonfinite_text(double value) {
  if (std::isnan(value)) return "nan";
  return value < 0 ? "-inf" : "inf";
}

int64_t numel(const std::vector<int64_t>& sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

std::vector<int64_t> row_major_strides(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> strides(sizes.size(), 1);
  for (size_t d = sizes.size(); d-- > 1;) strides[d - 1] = strides[d] * sizes[d];
  return strides;
}

// The indices printed along a dimension of `size`: all, or the edges around a kGap.
std::vector<int64_t> shown_positions(int64_t size, bool summarize) {
  std::vector<int64_t> positions;
  if (summarize && size > 2 * kEdgeItems) {
    for (int64_t i = 0; i < kEdgeItems; ++i) positions.push_back(i);
    positions.push_back(kGap);
    for (int64_t i = size - kEdgeItems; i < size; ++i) positions.push_back(i);
  } else {
    for (int64_t i = 0; i < size; ++i) positions.push_back(i);
  }
  return positions;
}

// Row-major sizes and strides of the tensor being printed, and whether it is summarized.
struct Layout {
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
  bool summarize = false;
};

// The flat indices of every element that will be printed (PyTorch's get_summarized_data).
void collect_shown(const Layout& layout, size_t dim, int64_t offset, std::vector<int64_t>& out) {
  if (dim == layout.sizes.size()) {
    out.push_back(offset);
    return;
  }
  for (int64_t pos : shown_positions(layout.sizes[dim], layout.summarize)) {
    if (pos != kGap) collect_shown(layout, dim + 1, offset + pos * layout.strides[dim], out);
  }
}

// Chooses one text style and width for all shown values (PyTorch's _Formatter).
class Formatter {
 public:
  Formatter(const PrintInput& in, const std::vector<int64_t>& shown) : in_(in) {
    if (in.kind == PrintKind::Floating) {
      fit_floats(shown);
    } else {
      for (int64_t i : shown) width_ = std::max(width_, int_text(int_at(i)).size());
    }
  }

  size_t width() const { return width_; }

  // The element at flat index `i`, right-aligned to width().
  std::string format(int64_t i) const {
    if (in_.kind != PrintKind::Floating) return pad_left(int_text(int_at(i)), width_);
    const double value = float_at(i);
    if (!std::isfinite(value)) return pad_left(nonfinite_text(value), width_);
    return pad_left(float_text(value) + (dot_suffix() ? "." : ""), width_);
  }

 private:
  int64_t int_at(int64_t i) const { return in_.ints[static_cast<size_t>(i)]; }
  double float_at(int64_t i) const { return in_.floats[static_cast<size_t>(i)]; }

  std::string int_text(int64_t value) const {
    if (in_.kind == PrintKind::Bool) return value != 0 ? "True" : "False";
    return std::to_string(value);
  }

  // Integral floats print as "1." unless scientific.
  bool dot_suffix() const { return int_mode_ && !sci_mode_; }

  std::string float_text(double value) const {
    if (sci_mode_) return printf_double("%.4e", value);
    return printf_double(int_mode_ ? "%.0f" : "%.4f", value);
  }

  // Only nonzero finite values choose the style and the width.
  void fit_floats(const std::vector<int64_t>& shown) {
    std::vector<double> values;
    for (int64_t i : shown) {
      if (std::isfinite(float_at(i)) && float_at(i) != 0) values.push_back(float_at(i));
    }
    if (values.empty()) return;
    double min_abs = std::abs(values[0]);
    double max_abs = min_abs;
    for (double v : values) {
      min_abs = std::min(min_abs, std::abs(v));
      max_abs = std::max(max_abs, std::abs(v));
      int_mode_ = int_mode_ && v == std::ceil(v);
    }
    const bool wide = max_abs / min_abs > 1000.0 || max_abs > 1.0e8;
    sci_mode_ = wide || (!int_mode_ && min_abs < 1.0e-4);
    for (double v : values) {
      width_ = std::max(width_, float_text(v).size() + (dot_suffix() ? 1 : 0));
    }
  }

  const PrintInput& in_;
  bool int_mode_ = true;
  bool sci_mode_ = false;
  size_t width_ = 1;
};

// PyTorch's _vector_str: one dimension, wrapped at kLineWidth.
std::string vector_str(const Layout& layout, const Formatter& formatter, int64_t offset,
                       int64_t indent) {
  std::vector<std::string> data;
  for (int64_t pos : shown_positions(layout.sizes.back(), layout.summarize)) {
    data.push_back(pos == kGap ? " ..." : formatter.format(offset + pos));
  }
  const auto element_length = static_cast<int64_t>(formatter.width()) + 2;
  const int64_t fitting = (kLineWidth - indent) / element_length;
  const auto per_line = static_cast<size_t>(std::max<int64_t>(1, fitting));
  std::vector<std::string> lines;
  for (size_t i = 0; i < data.size(); i += per_line) {
    const auto end = data.begin() + static_cast<int64_t>(std::min(data.size(), i + per_line));
    lines.push_back(join({data.begin() + static_cast<int64_t>(i), end}, ", "));
  }
  return "[" + join(lines, ",\n" + spaces(indent + 1)) + "]";
}

// PyTorch's _tensor_str_with_formatter: nested brackets, one blank line per extra dimension.
std::string tensor_str(const Layout& layout, const Formatter& formatter, size_t dim, int64_t offset,
                       int64_t indent) {
  const size_t remaining = layout.sizes.size() - dim;
  if (remaining == 0) return formatter.format(offset);
  if (remaining == 1) return vector_str(layout, formatter, offset, indent);
  std::vector<std::string> slices;
  for (int64_t pos : shown_positions(layout.sizes[dim], layout.summarize)) {
    if (pos == kGap) {
      slices.push_back("...");
    } else {
      const int64_t sub = offset + pos * layout.strides[dim];
      slices.push_back(tensor_str(layout, formatter, dim + 1, sub, indent + 1));
    }
  }
  const std::string separator = "," + std::string(remaining - 1, '\n') + spaces(indent + 1);
  return "[" + join(slices, separator) + "]";
}

// The bracketed values of a non-empty tensor (PyTorch's _tensor_str).
std::string values_str(const PrintInput& in, int64_t indent) {
  Layout layout{in.sizes, row_major_strides(in.sizes), numel(in.sizes) > kThreshold};
  std::vector<int64_t> shown;
  collect_shown(layout, 0, 0, shown);
  const Formatter formatter(in, shown);
  return tensor_str(layout, formatter, 0, 0, indent);
}

std::string size_tuple(const std::vector<int64_t>& sizes) {
  std::vector<std::string> parts;
  for (int64_t s : sizes) parts.push_back(std::to_string(s));
  return "(" + join(parts, ", ") + (sizes.size() == 1 ? ",)" : ")");
}

// The suffixes in PyTorch's order: device, size (empty only), dtype, autograd.
std::vector<std::string> suffixes(const PrintInput& in, bool empty) {
  std::vector<std::string> out;
  if (!in.device.empty()) out.push_back("device='" + in.device + "'");
  // An empty tensor has no values to tell its dtype by, so only the default float goes unsaid.
  const bool say_dtype = empty ? !(in.dtype_is_default && in.kind == PrintKind::Floating)
                               : !in.dtype_is_default;
  if (empty && in.sizes.size() != 1) out.push_back("size=" + size_tuple(in.sizes));
  if (say_dtype) out.push_back("dtype=kiln." + in.dtype_name);
  if (!in.grad_fn.empty()) {
    out.push_back("grad_fn=<" + in.grad_fn + ">");
  } else if (in.requires_grad) {
    out.push_back("requires_grad=True");
  }
  return out;
}

// The length PyTorch measures for a suffix: "dtype=torch.int32" is one character longer than
// "dtype=kiln.int32", and the line breaks follow PyTorch's text so that the outputs match.
int64_t pytorch_length(const std::string& suffix) {
  const bool names_dtype = suffix.rfind("dtype=kiln.", 0) == 0;
  return static_cast<int64_t>(suffix.size()) + (names_dtype ? 1 : 0);
}

// PyTorch's _add_suffixes: ", suffix" on the last line, or a new line when it would pass 80.
std::string add_suffixes(std::string text, const std::vector<std::string>& suffixes,
                         int64_t indent) {
  const size_t newline = text.rfind('\n');
  const int64_t last_newline = newline == std::string::npos ? -1 : static_cast<int64_t>(newline);
  int64_t last_line_len = static_cast<int64_t>(text.size()) - last_newline + 1;
  for (const std::string& suffix : suffixes) {
    const int64_t suffix_len = pytorch_length(suffix);
    if (last_line_len + suffix_len + 2 > kLineWidth) {
      text += ",\n" + spaces(indent) + suffix;
      last_line_len = indent + suffix_len;
    } else {
      text += ", " + suffix;
      last_line_len += suffix_len + 2;
    }
  }
  return text + ")";
}

void check_value_count(const PrintInput& in) {
  const size_t have = in.kind == PrintKind::Floating ? in.floats.size() : in.ints.size();
  if (static_cast<int64_t>(have) != numel(in.sizes)) {
    throw std::invalid_argument("format_tensor: " + std::to_string(have) +
                                " values given for a tensor of size " + size_tuple(in.sizes));
  }
}

}  // namespace

std::string format_tensor(const PrintInput& in) {
  check_value_count(in);
  const std::string prefix = "tensor(";
  const auto indent = static_cast<int64_t>(prefix.size());
  const bool empty = numel(in.sizes) == 0;
  const std::string body = empty ? "[]" : values_str(in, indent);
  return add_suffixes(prefix + body, suffixes(in, empty), indent);
}

}  // namespace kiln::detail
