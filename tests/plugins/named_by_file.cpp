// A plugin whose name and device type are its file's name ("named_by_file" here; a copy saved
// as many_07.so is the plugin "many_07" with the device type "many_07"), so that a test can load
// many distinct plugins from copies of one file. A copy whose name ends in "_fails" registers
// its device type and then fails.
#include "host_device.hpp"

#include <dlfcn.h>

#include <string>

namespace {

const std::string& own_name() {
  static const std::string name = [] {
    Dl_info dl{};
    if (dladdr(reinterpret_cast<void*>(&own_name), &dl) == 0 || dl.dli_fname == nullptr) {
      return std::string("named_by_file");
    }
    std::string file = dl.dli_fname;
    file = file.substr(file.find_last_of('/') + 1);
    return file.substr(0, file.find('.'));
  }();
  return name;
}

bool ends_with(const std::string& s, const std::string& end) {
  return s.size() >= end.size() && s.compare(s.size() - end.size(), end.size(), end) == 0;
}

}  // namespace

extern "C" {

const kiln_plugin_info* kiln_plugin_query(void) {
  static const kiln_plugin_info info = {
      sizeof(kiln_plugin_info), KILN_ABI_MAJOR, KILN_ABI_MINOR,
      own_name().c_str(),       "0.1.0",        "named after its file"};
  return &info;
}

int32_t kiln_plugin_probe(const kiln_host* /*host*/) { return 1; }

kiln_status kiln_plugin_init(const kiln_host* host) {
  static const kiln_device_ops ops = kiln_test::host_device_ops(/*cpu_fallback=*/0);
  kiln::sdk::host() = host;
  const std::string& name = own_name();
  if (host->register_device(name.c_str(), &ops, const_cast<char*>(name.c_str())) < 0) return 1;
  if (!ends_with(name, "_fails")) return 0;
  host->set_error((name + ": fails after registering its device type").c_str());
  return 1;
}

}  // extern "C"
