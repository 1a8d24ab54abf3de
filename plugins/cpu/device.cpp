// The "cpu" device: one device whose memory is ordinary host memory, 64-byte aligned.
#include "loops.hpp"
#include "registry.hpp"
#include <tbb/scalable_allocator.h>

#include <oneapi/dnnl/dnnl.hpp>
#include <tbb/info.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

namespace kiln::cpu {
namespace {

// The instruction set oneDNN dispatches to (after ONEDNN_MAX_CPU_ISA), and what it means for
// the 16-bit products of mixed precision: AMX tiles, AVX512-BF16 dot products, or bfloat16
// converted to float32 and multiplied on AVX-512/AVX2 FMA units.
std::string onednn_isa() {
  switch (dnnl::get_effective_cpu_isa()) {
    case dnnl::cpu_isa::avx512_core_amx: return "oneDNN avx512_core_amx (bf16 on AMX tiles)";
    case dnnl::cpu_isa::avx512_core_bf16:
      return "oneDNN avx512_core_bf16 (bf16 dot products, no AMX)";
    case dnnl::cpu_isa::avx512_core_vnni: return "oneDNN avx512_core_vnni (bf16 through float32)";
    case dnnl::cpu_isa::avx512_core: return "oneDNN avx512_core (bf16 through float32)";
    case dnnl::cpu_isa::avx2_vnni: return "oneDNN avx2_vnni (bf16 through float32)";
    case dnnl::cpu_isa::avx2: return "oneDNN avx2 (bf16 through float32)";
    default: return "oneDNN below avx2 (bf16 through float32)";
  }
}

// "AMD EPYC; 2 threads; avx2 fma f16c avx512f ...; oneDNN avx512_core_bf16 (...)" from
// /proc/cpuinfo, TBB and oneDNN.
std::string read_description() {
  static const char* const kFlags[] = {"sse4_2",      "avx",         "avx2",     "fma",
                                       "f16c",        "avx512f",     "avx512bw", "avx512_vnni",
                                       "avx512_bf16", "avx512_fp16", "amx_tile", "amx_bf16",
                                       "amx_int8"};
  std::string model = "unknown CPU", flags;
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    auto value = [&line] {
      size_t start = line.find(':');
      if (start == std::string::npos) return std::string();
      start = line.find_first_not_of(' ', start + 1);
      return start == std::string::npos ? std::string() : line.substr(start);
    };
    if (line.rfind("model name", 0) == 0 && model == "unknown CPU") model = value();
    if (line.rfind("flags", 0) == 0 && flags.empty()) {
      flags = value();  // padded with spaces so that " flag " matches whole words
      flags.append(" ").insert(0, 1, ' ');
    }
  }
  std::string isa;
  for (const char* flag : kFlags) {
    if (flags.find(std::string(" ") + flag + " ") == std::string::npos) continue;
    isa += isa.empty() ? "" : " ";
    isa += flag;
  }
  return model + "; " + std::to_string(tbb::info::default_concurrency()) + " threads; " +
         (isa.empty() ? std::string("baseline x86-64") : isa) + "; " + onednn_isa();
}

int32_t count(void*) { return 1; }

void describe(void*, int32_t, char* buf, size_t len) {
  static const std::string text = read_description();
  if (len > 0) std::snprintf(buf, len, "%s", text.c_str());
}

// TBB's scalable allocator: per-thread size-class caches, so the small tensors of a training
// loop cost tens of instructions instead of glibc's aligned-malloc path (several hundred,
// measured with callgrind on a 1-element add).
void* alloc(void*, int32_t, size_t bytes) {
  // never NULL for 0 bytes: a fresh empty tensor still gets a distinct valid pointer
  void* p = bytes > SIZE_MAX - 64 ? nullptr
                                  : scalable_aligned_malloc(std::max<size_t>(bytes, 1), 64);
  if (p == nullptr) {
    sdk::set_error(KILN_ERROR_OUT_OF_MEMORY,
                   "out of memory: cannot allocate " + std::to_string(bytes) + " bytes");
  }
  return p;
}

void free_(void*, int32_t, void* ptr) { scalable_aligned_free(ptr); }

// The host side of a copy may come without strides (it is always contiguous).
const int64_t* strides_or_contiguous(const kiln_tensor& t, int64_t* storage) {
  if (t.strides != nullptr) return t.strides;
  int64_t expected = 1;
  for (int32_t d = t.ndim - 1; d >= 0; --d) {
    storage[d] = expected;
    expected *= t.sizes[d];
  }
  return storage;
}

kiln_status copy(void*, const kiln_tensor* dst, const kiln_tensor* src) {
  try {
    bool same = dst->dtype == src->dtype && dst->ndim == src->ndim;
    for (int32_t d = 0; same && d < dst->ndim; ++d) same = dst->sizes[d] == src->sizes[d];
    if (!same) {
      throw std::invalid_argument(std::string("copy: dtypes ") + sdk::dtype_name(dst->dtype) +
                                  " and " + sdk::dtype_name(src->dtype) + ", " +
                                  std::to_string(dst->ndim) + " and " + std::to_string(src->ndim) +
                                  " dimensions: sizes must match");
    }
    if (dst->ndim > sdk::StridedLoop<2>::kMaxDims) {
      throw std::invalid_argument("copy: too many dimensions");
    }
    int64_t dst_strides[sdk::StridedLoop<2>::kMaxDims], src_strides[sdk::StridedLoop<2>::kMaxDims];
    kiln_tensor d = *dst, s = *src;
    d.strides = strides_or_contiguous(*dst, dst_strides);
    s.strides = strides_or_contiguous(*src, src_strides);
    copy_same_dtype(d, s);
    return 0;
  } catch (...) {
    sdk::report_exception();
    return 1;
  }
}

kiln_status synchronize(void*, int32_t) { return 0; }  // kernels finish before they return

}  // namespace

const kiln_device_ops* device_ops() {
  static const kiln_device_ops ops = [] {
    kiln_device_ops o{};
    o.struct_size = sizeof(kiln_device_ops);
    o.count = count;
    o.describe = describe;
    o.alloc = alloc;
    o.free = free_;
    o.copy = copy;
    o.synchronize = synchronize;
    o.host_accessible = 1;
    o.autocast_dtype = KILN_BF16;
    o.cpu_fallback = 0;
    o.priority = 0;
    return o;
  }();
  return &ops;
}

}  // namespace kiln::cpu
