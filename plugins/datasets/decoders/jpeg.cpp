// jpg decoder: uint8 [H, W, C], written straight into the memory the core hands out (a row of the
// batch when decoding into one). Built with libjpeg62-turbo-dev.
#include "decoders.hpp"

#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <string>

#include <jpeglib.h>

namespace kiln::decoders {
namespace {

// See Note [Image size limit] in image.cpp.
constexpr int kMaxScans = 500;
// libjpeg's working memory per pixel of the limit: a progressive image keeps its coefficients,
// 2 bytes per component per pixel (3 components at full resolution: 6).
constexpr uint64_t kJpegBytesPerPixel = 8;

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

// Called by libjpeg as it reads; stops a file of too many scans.
void on_jpeg_progress(j_common_ptr cinfo) {
  if (!cinfo->is_decompressor) return;
  if (reinterpret_cast<j_decompress_ptr>(cinfo)->input_scan_number <= kMaxScans) return;
  auto* err = reinterpret_cast<JpegError*>(cinfo->err);
  std::snprintf(err->message, sizeof err->message,
                "the progressive image has more than %d scans (a guard against images that "
                "take minutes to decode)",
                kMaxScans);
  std::longjmp(err->jump, 1);
}

// Everything between setjmp and a longjmp is plain C data (no destructors to skip). Returns 0,
// 1 with `message` set, or 2 when the reason is already set (the size check or the core).
int decode_jpeg_c(const unsigned char* data, unsigned long size, const char* name,
                  const kiln_decode_out* out, char* message, size_t message_len) {
  jpeg_decompress_struct cinfo;
  JpegError err;
  jpeg_progress_mgr progress;
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
  std::memset(&progress, 0, sizeof progress);
  progress.progress_monitor = on_jpeg_progress;
  cinfo.progress = &progress;
  jpeg_mem_src(&cinfo, data, size);
  jpeg_read_header(&cinfo, TRUE);
  uint64_t limit = 0;
  if (!check_image_size(name, cinfo.image_height, cinfo.image_width, limit)) {
    jpeg_destroy_decompress(&cinfo);
    return 2;
  }
  uint64_t memory = 0;
  if (limit != 0 && !__builtin_mul_overflow(limit, kJpegBytesPerPixel, &memory) &&
      memory < (uint64_t{1} << 62)) {
    cinfo.mem->max_memory_to_use = static_cast<long>(memory + (uint64_t{16} << 20));
  }
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
  char message[JMSG_LENGTH_MAX + 160];
  int r = decode_jpeg_c(static_cast<const unsigned char*>(data), static_cast<unsigned long>(size),
                        name, out, message, sizeof message);
  if (r == 1) {
    std::string why = message;
    if (why.find("Backing store not supported") != std::string::npos) {  // out of its memory
      why = "the image needs more working memory than the limit allows (it follows "
            "KILN_MAX_IMAGE_PIXELS; 0 turns the limit off)";
    }
    set_error(std::string(name) + " decoder: " + why);
  }
  return r == 0 ? 0 : 1;
}

}  // namespace kiln::decoders
