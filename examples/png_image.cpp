#include "png_image.h"

#include <kiln/error.h>
#include <kiln/kiln.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>

#ifdef KILN_EXAMPLE_PNG
#include <png.h>
#endif

namespace example_image {

namespace {

// 5x7 glyphs, rows top to bottom, '#' drawn.
struct Glyph {
  char c;
  const char* rows[7];
};
constexpr Glyph kFont[] = {
    {' ', {".....", ".....", ".....", ".....", ".....", ".....", "....."}},
    {'.', {".....", ".....", ".....", ".....", ".....", ".##..", ".##.."}},
    {'0', {".###.", "#...#", "#..##", "#.#.#", "##..#", "#...#", ".###."}},
    {'1', {"..#..", ".##..", "..#..", "..#..", "..#..", "..#..", ".###."}},
    {'2', {".###.", "#...#", "....#", "...#.", "..#..", ".#...", "#####"}},
    {'3', {"#####", "...#.", "..#..", "...#.", "....#", "#...#", ".###."}},
    {'4', {"...#.", "..##.", ".#.#.", "#..#.", "#####", "...#.", "...#."}},
    {'5', {"#####", "#....", "####.", "....#", "....#", "#...#", ".###."}},
    {'6', {"..##.", ".#...", "#....", "####.", "#...#", "#...#", ".###."}},
    {'7', {"#####", "....#", "...#.", "..#..", ".#...", ".#...", ".#..."}},
    {'8', {".###.", "#...#", "#...#", ".###.", "#...#", "#...#", ".###."}},
    {'9', {".###.", "#...#", "#...#", ".####", "....#", "...#.", ".##.."}},
    {'A', {".###.", "#...#", "#...#", "#####", "#...#", "#...#", "#...#"}},
    {'C', {".###.", "#...#", "#....", "#....", "#....", "#...#", ".###."}},
    {'E', {"#####", "#....", "#....", "####.", "#....", "#....", "#####"}},
    {'F', {"#####", "#....", "#....", "####.", "#....", "#....", "#...."}},
    {'G', {".###.", "#...#", "#....", "#.###", "#...#", "#...#", ".####"}},
    {'L', {"#....", "#....", "#....", "#....", "#....", "#....", "#####"}},
    {'O', {".###.", "#...#", "#...#", "#...#", "#...#", "#...#", ".###."}},
    {'P', {"####.", "#...#", "#...#", "####.", "#....", "#....", "#...."}},
    {'R', {"####.", "#...#", "#...#", "####.", "#.#..", "#..#.", "#...#"}},
    {'S', {".####", "#....", "#....", ".###.", "....#", "....#", "####."}},
    {'T', {"#####", "..#..", "..#..", "..#..", "..#..", "..#..", "..#.."}},
    {'U', {"#...#", "#...#", "#...#", "#...#", "#...#", "#...#", ".###."}},
};

const Glyph& glyph(char c) {
  char upper = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (const Glyph& g : kFont) {
    if (g.c == upper) return g;
  }
  throw kiln::ValueError(kiln::detail::str("Image::text: no glyph for '", c,
                                           "' (digits, '.', ' ', and the letters of "
                                           "\"float32 autocast target loss step\")"));
}

}  // namespace

Image::Image(int64_t width, int64_t height, Rgb background) : width_(width), height_(height) {
  KILN_CHECK_VALUE(width > 0 && height > 0, "Image: size ", width, "x", height, " is not positive");
  int64_t pixels = 0, bytes = 0;
  KILN_CHECK_VALUE(!__builtin_mul_overflow(width, height, &pixels) &&
                       !__builtin_mul_overflow(pixels, int64_t{3}, &bytes),
                   "Image: size ", width, "x", height, " overflows");
  pixels_.resize(static_cast<size_t>(bytes));
  for (int64_t i = 0; i < pixels; ++i) {
    pixels_[static_cast<size_t>(3 * i)] = background.r;
    pixels_[static_cast<size_t>(3 * i + 1)] = background.g;
    pixels_[static_cast<size_t>(3 * i + 2)] = background.b;
  }
}

Rgb Image::at(int64_t x, int64_t y) const {
  KILN_CHECK_INDEX(x >= 0 && x < width_ && y >= 0 && y < height_, "Image::at: (", x, ", ", y,
                   ") is outside ", width_, "x", height_);
  size_t i = static_cast<size_t>(3 * (y * width_ + x));
  return {pixels_[i], pixels_[i + 1], pixels_[i + 2]};
}

void Image::set(int64_t x, int64_t y, Rgb colour) {
  if (x < 0 || x >= width_ || y < 0 || y >= height_) return;
  size_t i = static_cast<size_t>(3 * (y * width_ + x));
  pixels_[i] = colour.r;
  pixels_[i + 1] = colour.g;
  pixels_[i + 2] = colour.b;
}

void Image::fill(int64_t x, int64_t y, int64_t w, int64_t h, Rgb colour) {
  for (int64_t row = std::max<int64_t>(y, 0); row < std::min(y + h, height_); ++row) {
    for (int64_t col = std::max<int64_t>(x, 0); col < std::min(x + w, width_); ++col) {
      set(col, row, colour);
    }
  }
}

void Image::line(double x0, double y0, double x1, double y1, Rgb colour, int thickness) {
  // Points every half pixel along the segment, each a thickness x thickness square.
  double length = std::hypot(x1 - x0, y1 - y0);
  int64_t points = static_cast<int64_t>(std::ceil(length * 2)) + 1;
  for (int64_t i = 0; i <= points; ++i) {
    double t = static_cast<double>(i) / static_cast<double>(points);
    int64_t x = std::llround(x0 + t * (x1 - x0)) - thickness / 2;
    int64_t y = std::llround(y0 + t * (y1 - y0)) - thickness / 2;
    fill(x, y, thickness, thickness, colour);
  }
}

void Image::draw_grey(const kiln::Tensor& values, int64_t x, int64_t y) {
  KILN_CHECK_VALUE(values.dim() == 2, "Image::draw_grey: expected a [H, W] tensor, got ",
                   values.sizes());
  kiln::Tensor grey = kiln::clamp(values.to(kiln::kFloat).cpu(), 0.0, 1.0).contiguous();
  const float* data = grey.data_ptr<float>();
  int64_t h = grey.size(0), w = grey.size(1);
  for (int64_t row = 0; row < h; ++row) {
    for (int64_t col = 0; col < w; ++col) {
      auto level = static_cast<uint8_t>(data[row * w + col] * 255.0f + 0.5f);
      set(x + col, y + row, {level, level, level});
    }
  }
}

void Image::text(int64_t x, int64_t y, const std::string& text, Rgb colour, int scale) {
  for (size_t i = 0; i < text.size(); ++i) {
    const Glyph& g = glyph(text[i]);
    int64_t left = x + static_cast<int64_t>(i) * 6 * scale;
    for (int64_t row = 0; row < 7; ++row) {
      for (int64_t col = 0; col < 5; ++col) {
        if (g.rows[row][col] != '#') continue;
        fill(left + col * scale, y + row * scale, scale, scale, colour);
      }
    }
  }
}

int64_t text_width(const std::string& text, int scale) {
  return text.empty() ? 0 : static_cast<int64_t>(text.size()) * 6 * scale - scale;
}

bool png_available() {
#ifdef KILN_EXAMPLE_PNG
  return true;
#else
  return false;
#endif
}

#ifdef KILN_EXAMPLE_PNG
namespace {

// libpng's part, apart so that setjmp's frame holds no C++ objects. Returns the error or null.
const char* write_rows(std::FILE* file, png_bytep* rows, int64_t width, int64_t height) {
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png != nullptr ? png_create_info_struct(png) : nullptr;
  if (png == nullptr || info == nullptr) {
    png_destroy_write_struct(&png, &info);
    return "libpng could not start (out of memory)";
  }
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    return "libpng failed while writing";
  }
  png_init_io(png, file);
  png_set_IHDR(png, info, static_cast<png_uint_32>(width), static_cast<png_uint_32>(height), 8,
               PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  png_write_image(png, rows);
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return nullptr;
}

}  // namespace
#endif

void Image::write_png(const std::string& path) const {
#ifdef KILN_EXAMPLE_PNG
  KILN_CHECK_VALUE(width_ <= int64_t{0x7fffffff} && height_ <= int64_t{0x7fffffff},
                   "Image::write_png: ", path, ": size ", width_, "x", height_,
                   " is beyond PNG's limit");
  std::vector<png_bytep> rows(static_cast<size_t>(height_));
  for (int64_t y = 0; y < height_; ++y) {
    rows[static_cast<size_t>(y)] =
        const_cast<png_bytep>(&pixels_[static_cast<size_t>(3 * y * width_)]);
  }
  std::FILE* file = std::fopen(path.c_str(), "wb");
  KILN_CHECK(file != nullptr, "Image::write_png: cannot create ", path, ": ", std::strerror(errno),
             " (is its folder there and writable?)");
  const char* error = write_rows(file, rows.data(), width_, height_);
  bool written = std::ferror(file) == 0;
  bool closed = std::fclose(file) == 0;
  KILN_CHECK(error == nullptr, "Image::write_png: ", path, ": ", error);
  KILN_CHECK(written && closed, "Image::write_png: ", path, ": write failed (disk full?)");
#else
  KILN_CHECK(false, "Image::write_png: ", path,
             ": the examples were built without libpng "
             "(apt-get install libpng-dev, then configure again)");
#endif
}

Image side_by_side(const std::vector<kiln::Tensor>& panels, const std::vector<std::string>& labels,
                   int64_t gap, Rgb gap_colour) {
  KILN_CHECK_VALUE(!panels.empty(), "side_by_side: no panels");
  KILN_CHECK_VALUE(labels.empty() || labels.size() == panels.size(),
                   "side_by_side: ", labels.size(), " labels for ", panels.size(), " panels");
  KILN_CHECK_VALUE(gap >= 0, "side_by_side: gap ", gap, " is negative");
  int64_t h = panels[0].size(0), w = panels[0].size(1);
  for (const kiln::Tensor& p : panels) {
    KILN_CHECK_VALUE(p.dim() == 2 && p.size(0) == h && p.size(1) == w,
                     "side_by_side: panels must all be [", h, ", ", w, "], got ", p.sizes());
  }
  auto n = static_cast<int64_t>(panels.size());
  int64_t width = 0;
  KILN_CHECK_VALUE(!__builtin_mul_overflow(n, w + gap, &width), "side_by_side: ", n,
                   " panels of width ", w, " overflow");
  const int64_t band = labels.empty() ? 0 : 24;  // the labels' strip, 2x font with margins
  Image image(width - gap, h + band, gap_colour);
  for (int64_t i = 0; i < n; ++i) {
    image.draw_grey(panels[static_cast<size_t>(i)], i * (w + gap), band);
    if (band > 0) {
      image.fill(i * (w + gap), 0, w, band, {255, 255, 255});
      image.text(i * (w + gap) + 4, 5, labels[static_cast<size_t>(i)], {0, 0, 0}, 2);
    }
  }
  return image;
}

Image line_chart(const std::vector<Series>& series, int64_t width, int64_t height, double y_max,
                 double y_grid) {
  KILN_CHECK_VALUE(y_max > 0 && y_grid > 0, "line_chart: y_max ", y_max, " and y_grid ", y_grid,
                   " must be positive");
  const Rgb white{255, 255, 255}, grid{215, 215, 215}, black{0, 0, 0};
  Image image(width, height, white);
  double left = 40, right = static_cast<double>(width - 12);
  double top = 30, bottom = static_cast<double>(height - 20);
  size_t longest = 2;
  for (const Series& s : series) longest = std::max(longest, s.y.size());
  auto to_x = [&](size_t i) {
    return left + (right - left) * static_cast<double>(i) / static_cast<double>(longest - 1);
  };
  auto to_y = [&](double v) { return bottom - (bottom - top) * std::clamp(v / y_max, 0.0, 1.0); };
  char number[32];
  for (int64_t k = 0; static_cast<double>(k) * y_grid <= y_max * (1 + 1e-9); ++k) {
    double v = static_cast<double>(k) * y_grid, y = to_y(v);
    if (k > 0) image.line(left, y, right, y, grid);
    std::snprintf(number, sizeof number, "%.2f", v);
    image.text(static_cast<int64_t>(left) - 4 - text_width(number), std::llround(y) - 3, number,
               black);
  }
  for (const Series& s : series) {
    for (size_t i = 1; i < s.y.size(); ++i) {
      image.line(to_x(i - 1), to_y(s.y[i - 1]), to_x(i), to_y(s.y[i]), s.colour, 2);
    }
  }
  image.line(left, top, left, bottom, black);
  image.line(left, bottom, right, bottom, black);
  std::snprintf(number, sizeof number, "step %zu", longest);
  image.text(static_cast<int64_t>(right) - text_width(number), static_cast<int64_t>(bottom) + 6,
             number, black);
  image.text(static_cast<int64_t>(left), static_cast<int64_t>(bottom) + 6, "1", black);
  // The legend on one line above the chart, right-aligned: a stroke and the name of each curve.
  int64_t x = static_cast<int64_t>(right);
  for (auto s = series.rbegin(); s != series.rend(); ++s) {
    if (s->name.empty()) continue;
    x -= text_width(s->name, 2);
    image.text(x, 8, s->name, s->colour, 2);
    image.fill(x - 26, 13, 20, 4, s->colour);
    x -= 46;
  }
  return image;
}

}  // namespace example_image
