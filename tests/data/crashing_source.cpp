// A test plugin whose data source crashes on some bytes: kiln-plugin-check's fuzzing of the
// source must report the crash and save the input (check_plugin_check_crash.cmake). The scheme
// "crashing" reads a file whose bytes hold 0xff by raising SIGSEGV, as a wild write would (a real
// null write is undefined behaviour, which UBSan reports and may step over in sanitizer builds).
#include <kiln/sdk/source.hpp>

#include <csignal>
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
    if (bytes.find('\xff') != std::string::npos) std::raise(SIGSEGV);
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
