// PNG and JPEG encoders for the tests' data (libpng's simplified API, libjpeg), so that the
// decoders are checked on real files.
#pragma once

#include <cstdint>
#include <string>

namespace data_test {

// Encodes a [h, w, c] uint8 image; c = 1, 2, 3 or 4 for PNG, 1 or 3 for JPEG (progressive: in
// several scans, libjpeg's jpeg_simple_progression).
std::string encode_png(int h, int w, int c, const uint8_t* pixels);
std::string encode_jpeg(int h, int w, int c, const uint8_t* pixels, int quality = 95,
                        bool progressive = false);

// Decompression bombs, tiny files whose headers declare a large image (item 16 of issue 13):
// a gray PNG of h x w whose IDAT holds one row, and a progressive 8x8 JPEG whose frame header
// is rewritten to h x w.
std::string png_bomb(uint32_t h, uint32_t w);
std::string jpeg_bomb(uint16_t h, uint16_t w);
// `jpeg` with its last scan repeated until it has `scans` scans in all (a slow file).
std::string jpeg_with_scans(const std::string& jpeg, int scans);

}  // namespace data_test
