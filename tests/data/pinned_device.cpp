// A test device plugin whose kiln_device_ops offers host_alloc/host_free (ABI 1.1), standing in
// for a GPU plugin with page-locked memory: the DataLoader's pin_memory goes through it. Its
// memory is ordinary host memory; host_alloc fills new blocks with 0xAB so a test can tell
// pinned copies apart, and counts live blocks (kiln_test_pinned_live, looked up with dlsym).
#include <kiln/sdk/plugin.h>

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace {

std::atomic<int> g_live{0};

int32_t count(void*) { return 1; }
void* alloc(void*, int32_t, size_t bytes) { return std::malloc(bytes == 0 ? 1 : bytes); }
void release(void*, int32_t, void* p) { std::free(p); }
kiln_status copy(void*, const kiln_tensor*, const kiln_tensor*) { return 1; }  // unused

void* host_alloc(void*, size_t bytes) {
  void* p = std::malloc(bytes);
  if (p != nullptr) {
    std::memset(p, 0xAB, bytes);
    g_live.fetch_add(1);
  }
  return p;
}

void host_free(void*, void* p) {
  g_live.fetch_sub(1);
  std::free(p);
}

}  // namespace

extern "C" {

KILN_PLUGIN_EXPORT int kiln_test_pinned_live() { return g_live.load(); }

KILN_PLUGIN_EXPORT const kiln_plugin_info* kiln_plugin_query(void) {
  static const kiln_plugin_info info = {
      sizeof(kiln_plugin_info), KILN_ABI_MAJOR, KILN_ABI_MINOR,
      "pinned_device",          "0.1.0",        "test device \"pintest\" with host_alloc"};
  return &info;
}

KILN_PLUGIN_EXPORT int32_t kiln_plugin_probe(const kiln_host*) { return 1; }

KILN_PLUGIN_EXPORT kiln_status kiln_plugin_init(const kiln_host* host) {
  static kiln_device_ops ops = [] {
    kiln_device_ops o{};
    o.struct_size = sizeof(kiln_device_ops);
    o.count = count;
    o.alloc = alloc;
    o.free = release;
    o.copy = copy;
    o.host_accessible = 1;
    o.autocast_dtype = KILN_F16;
    o.priority = -1;  // never the default device
    o.host_alloc = host_alloc;
    o.host_free = host_free;
    return o;
  }();
  return host->register_device("pintest", &ops, nullptr) < 0 ? 1 : 0;
}

}  // extern "C"
