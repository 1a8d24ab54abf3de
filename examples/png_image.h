// An 8-bit RGB picture for the examples' results (tensors as grey panels, loss curves), written
// as PNG with libpng, as the decoders plugin reads them.
//
//   Image img = side_by_side({output, target}, 4, kGapColour);
//   img.write_png("learned.png");
#pragma once

#include <kiln/tensor.h>

#include <cstdint>
#include <string>
#include <vector>

namespace example_image {

struct Rgb {
  uint8_t r = 0, g = 0, b = 0;
};

class Image {
 public:
  // A width x height picture filled with `background`; throws kiln::ValueError for a size
  // that is not positive or whose bytes overflow.
  Image(int64_t width, int64_t height, Rgb background);

  int64_t width() const { return width_; }
  int64_t height() const { return height_; }
  Rgb at(int64_t x, int64_t y) const;
  // Sets one pixel; pixels outside the picture are ignored.
  void set(int64_t x, int64_t y, Rgb colour);
  // A w x h rectangle with its top left at (x, y).
  void fill(int64_t x, int64_t y, int64_t w, int64_t h, Rgb colour);
  // A straight line `thickness` pixels wide between two points.
  void line(double x0, double y0, double x1, double y1, Rgb colour, int thickness = 1);
  // A [H, W] floating tensor as grey (0 black, 1 white, clamped) with its top left at (x, y).
  void draw_grey(const kiln::Tensor& values, int64_t x, int64_t y);
  // `text` in capitals of a 5x7-pixel font, each pixel scale x scale, with its top left at
  // (x, y). Knows digits, '.', ' ' and the letters of "float32 autocast target loss step";
  // throws kiln::ValueError naming any other character.
  void text(int64_t x, int64_t y, const std::string& text, Rgb colour, int scale = 1);

  // Writes the picture as an RGB PNG; throws kiln::Error naming the file when it cannot be
  // written, or when the examples were built without libpng.
  void write_png(const std::string& path) const;

 private:
  int64_t width_, height_;
  std::vector<uint8_t> pixels_;  // rows of r, g, b
};

// Whether write_png can work (the examples were built with libpng).
bool png_available();

// Width in pixels of `text` drawn by Image::text at `scale`.
int64_t text_width(const std::string& text, int scale = 1);

// [H, W] tensors of one size as grey panels in a row, `gap` pixels of `gap_colour` apart, each
// with its label (if any are given) above it in black on white.
Image side_by_side(const std::vector<kiln::Tensor>& panels, const std::vector<std::string>& labels,
                   int64_t gap, Rgb gap_colour);

// One curve of a line chart: y of steps 1, 2, 3, ...; a name puts it in the legend.
struct Series {
  std::vector<double> y;
  Rgb colour;
  std::string name;
};

// A width x height chart on white: the curves from y = 0 (bottom) to y_max (top), the x range
// fitting the longest one ("1" and "step n" below the axis), with grey horizontal lines
// every y_grid labelled on the left, black axes, and the named curves' legend above.
Image line_chart(const std::vector<Series>& series, int64_t width, int64_t height, double y_max,
                 double y_grid);

}  // namespace example_image
