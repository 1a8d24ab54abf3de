// The image decoders' size limit. See decoders.hpp.
//
// Note [Image size limit]
// An image header declares its size, and a few hundred bytes can declare gigapixels: a 208-byte
// progressive JPEG made libjpeg allocate 8.5 GB, and a 389 KB PNG decodes to 400 MB. The png and
// jpg decoders read the header first and refuse an image of more pixels than the limit before
// anything of that size is allocated, as Pillow does with Image.MAX_IMAGE_PIXELS ("Decompression
// bomb protection", Pillow's Image.open reference); the default is Pillow's, 89,478,485 pixels
// (a 1 GiB image at 4 bytes for 3 channels). KILN_MAX_IMAGE_PIXELS sets another limit (0: none).
// The same limit bounds libjpeg's own working memory (a progressive JPEG keeps every
// coefficient of the image), and a JPEG of more than 500 scans is refused, as TurboJPEG's
// TJFLAG_LIMITSCANS does: each scan walks the whole image again.
#include "decoders.hpp"

#include <cstdlib>
#include <string>

namespace kiln::decoders {

bool max_image_pixels(const char* name, uint64_t& limit) {
  limit = kDefaultMaxImagePixels;
  const char* text = std::getenv("KILN_MAX_IMAGE_PIXELS");
  if (text == nullptr || *text == '\0') return true;
  uint64_t v = 0;
  bool ok = true;
  for (const char* p = text; *p != '\0'; ++p) {
    if (*p < '0' || *p > '9' || __builtin_mul_overflow(v, 10, &v) ||
        __builtin_add_overflow(v, static_cast<uint64_t>(*p - '0'), &v)) {
      ok = false;
      break;
    }
  }
  if (!ok) {
    set_error(std::string(name) + " decoder: KILN_MAX_IMAGE_PIXELS='" + text +
              "' is not a number of pixels (a non-negative integer; 0 turns the limit off)");
    return false;
  }
  limit = v;
  return true;
}

bool check_image_size(const char* name, uint64_t height, uint64_t width, uint64_t& limit) {
  if (!max_image_pixels(name, limit)) return false;
  uint64_t pixels = 0;
  bool overflow = __builtin_mul_overflow(height, width, &pixels);
  if (limit != 0 && (overflow || pixels > limit)) {
    set_error(std::string(name) + " decoder: the image is " + std::to_string(width) + " x " +
              std::to_string(height) + " pixels, more than the limit of " + std::to_string(limit) +
              " pixels (a guard against decompression bombs; set " +
              "KILN_MAX_IMAGE_PIXELS to a larger number of pixels, or 0 for no limit)");
    return false;
  }
  return true;
}

}  // namespace kiln::decoders
