// Test image encoders. See images.h.
#include "images.h"

#include <cstdio>  // first: jpeglib.h uses FILE and size_t without declaring them

#include <jpeglib.h>
#include <png.h>
#include <zlib.h>

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
  image.format = c == 1   ? PNG_FORMAT_GRAY
                 : c == 2 ? PNG_FORMAT_GA
                 : c == 3 ? PNG_FORMAT_RGB
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

std::string encode_jpeg(int h, int w, int c, const uint8_t* pixels, int quality, bool progressive) {
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
  if (progressive) jpeg_simple_progression(&cinfo);
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

namespace {

void put32(std::string& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out += static_cast<char>((v >> shift) & 0xff);
}

void png_chunk(std::string& out, const char* type, const std::string& body) {
  put32(out, static_cast<uint32_t>(body.size()));
  std::string typed = std::string(type, 4) + body;
  out += typed;
  put32(out, static_cast<uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(typed.data()),
                                         typed.size())));
}

// Where the JPEG marker `code` (0xC2: a progressive frame, 0xDA: a scan) starts, last or first.
size_t find_marker(const std::string& jpeg, unsigned char code, bool last) {
  std::string m = {static_cast<char>(0xff), static_cast<char>(code)};
  size_t at = last ? jpeg.rfind(m) : jpeg.find(m);
  if (at == std::string::npos) throw std::runtime_error("no JPEG marker " + std::to_string(code));
  return at;
}

}  // namespace

std::string png_bomb(uint32_t h, uint32_t w) {
  std::string out = "\x89PNG\r\n\x1a\n";
  std::string ihdr;
  put32(ihdr, w);
  put32(ihdr, h);
  ihdr += std::string("\x08\x00\x00\x00\x00", 5);  // 8-bit gray, deflate, no interlace
  png_chunk(out, "IHDR", ihdr);
  std::string row(w + 1, '\0');  // the filter byte and one row of black
  uLongf size = compressBound(row.size());
  std::string idat(size, '\0');
  compress2(reinterpret_cast<Bytef*>(idat.data()), &size,
            reinterpret_cast<const Bytef*>(row.data()), row.size(), 9);
  idat.resize(size);
  png_chunk(out, "IDAT", idat);
  png_chunk(out, "IEND", "");
  return out;
}

std::string jpeg_bomb(uint16_t h, uint16_t w) {
  std::vector<uint8_t> px(8 * 8 * 3, 128);
  std::string jpeg = encode_jpeg(8, 8, 3, px.data(), 90, true);
  size_t sof = find_marker(jpeg, 0xc2, false);  // FF C2, length (2), precision (1), Y, X
  jpeg[sof + 5] = static_cast<char>(h >> 8);
  jpeg[sof + 6] = static_cast<char>(h & 0xff);
  jpeg[sof + 7] = static_cast<char>(w >> 8);
  jpeg[sof + 8] = static_cast<char>(w & 0xff);
  return jpeg;
}

std::string jpeg_with_scans(const std::string& jpeg, int scans) {
  size_t last = find_marker(jpeg, 0xda, true);
  size_t end = jpeg.size() - 2;  // FF D9
  std::string scan = jpeg.substr(last, end - last);
  int have = 0;
  for (size_t at = jpeg.find("\xff\xda"); at != std::string::npos;
       at = jpeg.find("\xff\xda", at + 1)) {
    ++have;
  }
  std::string out = jpeg.substr(0, end);
  for (int i = have; i < scans; ++i) out += scan;
  return out + jpeg.substr(end);
}

}  // namespace data_test
