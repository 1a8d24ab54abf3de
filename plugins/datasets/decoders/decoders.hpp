// kiln's field decoders (kiln_decoders.so): one function per format, each a kiln_decode_fn
// (kiln/sdk/plugin.h) that writes its value through kiln_decode_out and reports bad bytes with
// host->set_error. Registered by the field's last extension, as WebDataset's default decoders:
//   txt text transcript     -> text
//   cls cls2 index inx id   -> int64 tensor [] (a number in ASCII)
//   json jsn                -> nested lists, maps, numbers and text (nlohmann::json)
//   npy                     -> a tensor of the array's dtype and shape
//   png                     -> uint8 tensor [H, W, C], C = 1, 2, 3 or 4 as stored (libpng)
//   jpg jpeg                -> uint8 tensor [H, W, C], C = 1 or 3 (libjpeg-turbo)
#pragma once

#include <kiln/sdk/plugin.h>

#include <cstdint>
#include <string>

namespace kiln::decoders {

// Sets the calling thread's error through the host (after init).
void set_error(const std::string& message);

// The largest image, in pixels, that the png and jpg decoders decode by default: Pillow's
// Image.MAX_IMAGE_PIXELS. See Note [Image size limit] in image.cpp.
constexpr uint64_t kDefaultMaxImagePixels = 89478485;

// The limit in force: KILN_MAX_IMAGE_PIXELS when set (0: none), else the default. False, with an
// error naming the variable, when it is not a non-negative integer.
bool max_image_pixels(const char* name, uint64_t& limit);
// Whether an image of height x width pixels, as its header declares, is within the limit (which
// it returns in `limit`); false with an error naming the size and the limit.
bool check_image_size(const char* name, uint64_t height, uint64_t width, uint64_t& limit);

kiln_status decode_text(const void* data, uint64_t size, const char* name,
                        const kiln_decode_out* out, void* user);
kiln_status decode_class(const void* data, uint64_t size, const char* name,
                         const kiln_decode_out* out, void* user);
kiln_status decode_json(const void* data, uint64_t size, const char* name,
                        const kiln_decode_out* out, void* user);
kiln_status decode_npy(const void* data, uint64_t size, const char* name,
                       const kiln_decode_out* out, void* user);
kiln_status decode_png(const void* data, uint64_t size, const char* name,
                       const kiln_decode_out* out, void* user);
kiln_status decode_jpeg(const void* data, uint64_t size, const char* name,
                        const kiln_decode_out* out, void* user);

}  // namespace kiln::decoders
