// png and jpg decoders: uint8 [H, W, C], written straight into the memory the core hands out
// (a row of the batch when decoding into one).
#include "decoders.hpp"

#include <cstdio>
#include <cstring>
#include <string>

#ifdef KILN_DECODERS_PNG
#include <png.h>
#endif
#ifdef KILN_DECODERS_JPEG
#include <csetjmp>
#include <jpeglib.h>
#endif

namespace kiln::decoders {

#ifdef KILN_DECODERS_PNG
// libpng's simplified API: channels as stored (gray, gray+alpha, RGB, RGBA), palettes expanded,
// 16-bit samples reduced to 8.
kiln_status decode_png(const void* data, uint64_t size, const char* name,
                       const kiln_decode_out* out, void*) {
  png_image image;
  std::memset(&image, 0, sizeof image);
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_memory(&image, data, size)) {
    set_error(std::string(name) + " decoder: " + image.message);
    return 1;
  }
  png_uint_32 channels = PNG_IMAGE_SAMPLE_CHANNELS(image.format);
  image.format = channels == 1   ? PNG_FORMAT_GRAY
                 : channels == 2 ? PNG_FORMAT_GA
                 : channels == 3 ? PNG_FORMAT_RGB
                                 : PNG_FORMAT_RGBA;
  channels = PNG_IMAGE_SAMPLE_CHANNELS(image.format);
  int64_t sizes[3] = {image.height, image.width, channels};
  void* dst = out->tensor(out->ctx, KILN_U8, 3, sizes);
  if (dst == nullptr) {
    png_image_free(&image);
    return 1;
  }
  if (!png_image_finish_read(&image, nullptr, dst, 0, nullptr)) {
    set_error(std::string(name) + " decoder: " + image.message);
    png_image_free(&image);
    return 1;
  }
  return 0;
}
#else
kiln_status decode_png(const void*, uint64_t, const char*, const kiln_decode_out*, void*) {
  set_error("png decoder: built without libpng");
  return 1;
}
#endif

#ifdef KILN_DECODERS_JPEG
namespace {

struct JpegError {
  jpeg_error_mgr mgr;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

void on_jpeg_error(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<JpegError*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, err->message);
  std::longjmp(err->jump, 1);
}

void on_jpeg_message(j_common_ptr, int) {}  // warnings (corrupt data that decodes) stay quiet

// Everything between setjmp and a longjmp is plain C data (no destructors to skip).
int decode_jpeg_c(const unsigned char* data, unsigned long size, const kiln_decode_out* out,
                  char* message, size_t message_len) {
  jpeg_decompress_struct cinfo;
  JpegError err;
  cinfo.err = jpeg_std_error(&err.mgr);
  err.mgr.error_exit = on_jpeg_error;
  err.mgr.emit_message = on_jpeg_message;
  err.message[0] = 0;
  if (setjmp(err.jump)) {
    std::snprintf(message, message_len, "%s", err.message);
    jpeg_destroy_decompress(&cinfo);
    return 1;
  }
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, data, size);
  jpeg_read_header(&cinfo, TRUE);
  if (cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK) {
    std::snprintf(message, message_len, "CMYK JPEG images are not supported");
    jpeg_destroy_decompress(&cinfo);
    return 1;
  }
  cinfo.out_color_space = cinfo.num_components == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_start_decompress(&cinfo);
  int64_t sizes[3] = {cinfo.output_height, cinfo.output_width, cinfo.output_components};
  auto* dst = static_cast<unsigned char*>(out->tensor(out->ctx, KILN_U8, 3, sizes));
  if (dst == nullptr) {
    message[0] = 0;  // the core holds the reason
    jpeg_destroy_decompress(&cinfo);
    return 2;
  }
  size_t row = static_cast<size_t>(cinfo.output_width) * cinfo.output_components;
  while (cinfo.output_scanline < cinfo.output_height) {
    JSAMPROW rows[1] = {dst + static_cast<size_t>(cinfo.output_scanline) * row};
    jpeg_read_scanlines(&cinfo, rows, 1);
  }
  jpeg_finish_decompress(&cinfo);
  jpeg_destroy_decompress(&cinfo);
  return 0;
}

}  // namespace

kiln_status decode_jpeg(const void* data, uint64_t size, const char* name,
                        const kiln_decode_out* out, void*) {
  char message[JMSG_LENGTH_MAX + 64];
  int r = decode_jpeg_c(static_cast<const unsigned char*>(data), static_cast<unsigned long>(size),
                        out, message, sizeof message);
  if (r == 1) set_error(std::string(name) + " decoder: " + message);
  return r == 0 ? 0 : 1;
}
#else
kiln_status decode_jpeg(const void*, uint64_t, const char*, const kiln_decode_out*, void*) {
  set_error("jpg decoder: built without libjpeg");
  return 1;
}
#endif

#ifndef KILN_DECODERS_JSON
kiln_status decode_json(const void*, uint64_t, const char*, const kiln_decode_out*, void*) {
  set_error("json decoder: built without nlohmann::json");
  return 1;
}
#endif

}  // namespace kiln::decoders
