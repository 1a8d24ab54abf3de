// Test image encoders. See images.h.
#include "images.h"

#include <png.h>
#include <jpeglib.h>

#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace data_test {

std::string encode_png(int h, int w, int c, const uint8_t* pixels) {
  png_image image;
  std::memset(&image, 0, sizeof image);
  image.version = PNG_IMAGE_VERSION;
  image.width = static_cast<png_uint_32>(w);
  image.height = static_cast<png_uint_32>(h);
  image.format = c == 1 ? PNG_FORMAT_GRAY : c == 2 ? PNG_FORMAT_GA : c == 3 ? PNG_FORMAT_RGB
                                                                            : PNG_FORMAT_RGBA;
  png_alloc_size_t size = 0;
  if (!png_image_write_to_memory(&image, nullptr, &size, 0, pixels, 0, nullptr)) {
    throw std::runtime_error(image.message);
  }
  std::string out(size, '\0');
  if (!png_image_write_to_memory(&image, out.data(), &size, 0, pixels, 0, nullptr)) {
    throw std::runtime_error(image.message);
  }
  out.resize(size);
  return out;
}

std::string encode_jpeg(int h, int w, int c, const uint8_t* pixels, int quality) {
  jpeg_compress_struct cinfo;
  jpeg_error_mgr err;
  cinfo.err = jpeg_std_error(&err);
  jpeg_create_compress(&cinfo);
  unsigned char* buf = nullptr;
  unsigned long size = 0;
  jpeg_mem_dest(&cinfo, &buf, &size);
  cinfo.image_width = static_cast<JDIMENSION>(w);
  cinfo.image_height = static_cast<JDIMENSION>(h);
  cinfo.input_components = c;
  cinfo.in_color_space = c == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults(&cinfo);
  jpeg_set_quality(&cinfo, quality, TRUE);
  jpeg_start_compress(&cinfo, TRUE);
  std::vector<uint8_t> row(static_cast<size_t>(w * c));
  while (cinfo.next_scanline < cinfo.image_height) {
    std::memcpy(row.data(), pixels + static_cast<size_t>(cinfo.next_scanline) * w * c, row.size());
    JSAMPROW rows[1] = {row.data()};
    jpeg_write_scanlines(&cinfo, rows, 1);
  }
  jpeg_finish_compress(&cinfo);
  std::string out(reinterpret_cast<char*>(buf), size);
  jpeg_destroy_compress(&cinfo);
  std::free(buf);
  return out;
}

}  // namespace data_test
