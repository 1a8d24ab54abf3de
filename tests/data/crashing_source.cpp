// A test plugin whose data source crashes on some bytes: kiln-plugin-check's fuzzing of the
// source must report the crash and save the input (check_plugin_check_crash.cmake). The scheme
// "crashing" reads a file whose bytes hold 0xff by writing through a null pointer.
#include <kiln/sdk/source.hpp>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

class CrashingReader {
 public:
  explicit CrashingReader(const std::string& shard) {
    std::ifstream in(shard, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (bytes.find('\xff') != std::string::npos) *static_cast<volatile int*>(nullptr) = 1;
  }
  int32_t next(kiln_sample&) { return KILN_SAMPLE_END; }
};

struct CrashingSource {
  static constexpr const char* scheme = "crashing";
  using Reader = CrashingReader;
  static std::vector<std::string> sample_shards() { return {"a valid shard"}; }
};

}  // namespace

KILN_SOURCE_PLUGIN(CrashingSource, "crashing", "0.1.0", "test: a source that crashes")
