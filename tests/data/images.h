// PNG and JPEG encoders for the tests' data (libpng's simplified API, libjpeg), so that the
// decoders are checked on real files.
#pragma once

#include <cstdint>
#include <string>

namespace data_test {

// Encodes a [h, w, c] uint8 image; c = 1, 2, 3 or 4 for PNG, 1 or 3 for JPEG.
std::string encode_png(int h, int w, int c, const uint8_t* pixels);
std::string encode_jpeg(int h, int w, int c, const uint8_t* pixels, int quality = 95);

}  // namespace data_test
