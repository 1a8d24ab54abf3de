// png decoder: uint8 [H, W, C], written straight into the memory the core hands out (a row of the
// batch when decoding into one). Built with libpng-dev.
#include "decoders.hpp"

#include <png.h>

#include <cstring>
#include <string>

namespace kiln::decoders {

// libpng's simplified API: channels as stored (gray, gray+alpha, RGB, RGBA), palettes expanded,
// 16-bit samples reduced to 8. The header (IHDR) is read first: its size is checked against the
// limit (Note [Image size limit]) before the output is allocated.
kiln_status decode_png(const void* data, uint64_t size, const char* name,
                       const kiln_decode_out* out, void*) {
  png_image image;
  std::memset(&image, 0, sizeof image);
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_memory(&image, data, size)) {
    set_error(std::string(name) + " decoder: " + image.message);
    return 1;
  }
  uint64_t limit = 0;
  if (!check_image_size(name, image.height, image.width, limit)) {
    png_image_free(&image);
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

}  // namespace kiln::decoders
