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

#include <string>

namespace kiln::decoders {

// Sets the calling thread's error through the host (after init).
void set_error(const std::string& message);

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
