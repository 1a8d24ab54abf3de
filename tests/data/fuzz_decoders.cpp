// libFuzzer targets for the decoders that parse outside bytes: png, jpg and json (built with
// clang when it is installed, one binary per decoder, the decoder's function given as
// KILN_FUZZ_DECODER; see tests/data/CMakeLists.txt). The input is one field's bytes, decoded
// into a kiln_decode_out that hands out memory as the core does (exactly the asked size, so the
// sanitizers see a write past it). Any outcome but a crash, a hang or a sanitizer report is a
// pass. With KILN_FUZZ_WRITE_SEEDS=<folder>, it first writes a few valid files of its format
// there, made by libpng's and libjpeg's own encoders, for run_fuzz.cmake's seed corpus.
#include "../../plugins/datasets/decoders/decoders.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#if KILN_FUZZ_PNG
#include <png.h>
#endif
#if KILN_FUZZ_JPEG
#include <jpeglib.h>
#endif

namespace kiln::decoders {
void set_error(const std::string&) {}  // the plugin's goes to the host; no host here
}  // namespace kiln::decoders

namespace {

constexpr uint64_t kMaxTensorBytes = uint64_t{1} << 28;

struct Memory {
  std::vector<std::vector<uint8_t>> tensors;
  uint64_t touched = 0;
};

Memory& memory(void* ctx) { return *static_cast<Memory*>(ctx); }

void* on_tensor(void* ctx, int32_t dtype, int32_t ndim, const int64_t* sizes) {
  static const uint64_t kItem[] = {1, 1, 1, 2, 4, 8, 2, 2, 4, 8};
  if (dtype < 0 || dtype >= 10 || ndim < 0 || ndim > 16) return nullptr;
  uint64_t bytes = kItem[dtype];
  for (int32_t i = 0; i < ndim; ++i) {
    if (sizes[i] < 0) return nullptr;
    if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(sizes[i]), &bytes)) return nullptr;
  }
  if (bytes > kMaxTensorBytes) return nullptr;  // the core would fail to allocate
  memory(ctx).tensors.emplace_back(bytes);
  return memory(ctx).tensors.back().data();
}

int32_t on_text(void* ctx, const char* data, uint64_t size) {
  for (uint64_t i = 0; i < size; ++i) memory(ctx).touched += static_cast<uint8_t>(data[i]);
  return 0;
}
int32_t on_integer(void* ctx, int64_t v) {
  memory(ctx).touched += static_cast<uint64_t>(v);
  return 0;
}
int32_t on_real(void*, double) { return 0; }
int32_t on_boolean(void*, int32_t) { return 0; }
int32_t on_none(void*) { return 0; }
int32_t on_begin(void*) { return 0; }
int32_t on_end(void*) { return 0; }

void write_seed(const std::string& folder, const std::string& name, const std::string& bytes) {
  std::ofstream(folder + "/" + name, std::ios::binary)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::vector<uint8_t> pattern(size_t n) {
  std::vector<uint8_t> p(n);
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<uint8_t>(i * 37 + i / 7);
  return p;
}

#if KILN_FUZZ_PNG
std::string png_file(int h, int w, png_uint_32 format) {
  png_image image;
  std::memset(&image, 0, sizeof image);
  image.version = PNG_IMAGE_VERSION;
  image.width = static_cast<png_uint_32>(w);
  image.height = static_cast<png_uint_32>(h);
  image.format = format;
  std::vector<uint8_t> px = pattern(PNG_IMAGE_SIZE(image));
  std::vector<uint8_t> colormap = pattern(256 * 4);
  png_alloc_size_t size = 0;
  png_image_write_to_memory(&image, nullptr, &size, 0, px.data(), 0, colormap.data());
  std::string out(size, '\0');
  png_image_write_to_memory(&image, out.data(), &size, 0, px.data(), 0, colormap.data());
  out.resize(size);
  return out;
}
#endif

#if KILN_FUZZ_JPEG
std::string jpeg_file(int h, int w, int c, bool progressive, int restart) {
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
  jpeg_set_quality(&cinfo, 80, TRUE);
  if (progressive) jpeg_simple_progression(&cinfo);
  cinfo.restart_in_rows = restart;
  jpeg_start_compress(&cinfo, TRUE);
  std::vector<uint8_t> px = pattern(static_cast<size_t>(h * w * c));
  while (cinfo.next_scanline < cinfo.image_height) {
    JSAMPROW row = px.data() + static_cast<size_t>(cinfo.next_scanline) * w * c;
    jpeg_write_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_compress(&cinfo);
  std::string out(reinterpret_cast<char*>(buf), size);
  jpeg_destroy_compress(&cinfo);
  std::free(buf);
  return out;
}
#endif

void write_seeds(const std::string& folder) {
#if KILN_FUZZ_PNG
  write_seed(folder, "gray.png", png_file(8, 8, PNG_FORMAT_GRAY));
  write_seed(folder, "ga.png", png_file(3, 5, PNG_FORMAT_GA));
  write_seed(folder, "rgba.png", png_file(6, 4, PNG_FORMAT_RGBA));
  write_seed(folder, "rgb16.png", png_file(4, 4, PNG_FORMAT_RGB | PNG_FORMAT_FLAG_LINEAR));
  write_seed(folder, "palette.png", png_file(9, 7, PNG_FORMAT_RGB_COLORMAP));
#endif
#if KILN_FUZZ_JPEG
  write_seed(folder, "gray.jpg", jpeg_file(8, 8, 1, false, 0));
  write_seed(folder, "rgb.jpg", jpeg_file(17, 9, 3, false, 1));
  write_seed(folder, "progressive.jpg", jpeg_file(16, 24, 3, true, 0));
#endif
#if KILN_FUZZ_JSON
  write_seed(folder, "map.json", R"({"a": [1, 2.5, "x", null, true, false], "b": {"c": -3}})");
  write_seed(folder, "numbers.json", "[18446744073709551615, -9223372036854775808, 1e308, 0.5]");
  write_seed(folder, "text.json", R"("\u00e9\ud83d\ude00 \n")");
#endif
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (const char* folder = std::getenv("KILN_FUZZ_WRITE_SEEDS")) write_seeds(folder);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Memory m;
  kiln_decode_out out{sizeof out, &m,      on_tensor, on_text,  on_integer, on_real,
                      on_boolean, on_none, on_begin,  on_begin, on_text,    on_end};
  kiln::decoders::KILN_FUZZ_DECODER(data, size, "field", &out, nullptr);
  return 0;
}
