// kiln's tar source plugin (kiln_tar.so): the "tar" data source, WebDataset-style shards.
//
//   kiln::data::open("tar:data/train-{000..127}.tar")
//
// An uncompressed shard is read through a sliding window and parsed in place (tar_reader.cpp):
// members go to the core without a copy. Compressed shards (.tar.gz, .tar.zst, .tar.bz2, .tar.xz) go through
// libarchive (archive_reader.cpp); KILN_TAR_READER=libarchive sends every shard there. Members
// become samples by WebDataset's rules (grouper.hpp). Items of the spec with glob characters
// ("data/*.tar") list the files that match, sorted.
#include "grouper.hpp"
#include "members.hpp"

#include <kiln/sdk/source.hpp>

#include <archive.h>
#include <fcntl.h>
#include <glob.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

namespace {

// Picks the reader from the file's first bytes.
std::unique_ptr<kiln::tar::MemberReader> open_members(const std::string& path) {
  const char* forced = std::getenv("KILN_TAR_READER");
  bool use_archive = forced != nullptr && std::strcmp(forced, "libarchive") == 0;
  if (!use_archive) {
    uint8_t head[8] = {};
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return kiln::tar::read_tar_file(path);  // reports the errno message
    ssize_t n = ::read(fd, head, sizeof head);
    ::close(fd);
    use_archive = n > 0 && kiln::tar::looks_compressed(head, static_cast<uint64_t>(n));
  }
  return use_archive ? kiln::tar::read_archive_file(path) : kiln::tar::read_tar_file(path);
}

struct TarReader {
  explicit TarReader(const std::string& shard) : grouper(open_members(shard)) {}

  int32_t next(kiln_sample& out) {
    int32_t status = grouper.next(&out);
    if (status == KILN_SAMPLE_ERROR || status == KILN_SAMPLE_SKIP) {
      kiln::sdk::set_error(grouper.error());
    }
    return status;
  }

  kiln::tar::Grouper grouper;
};

struct TarSource {
  static constexpr const char* scheme = "tar";
  using Reader = TarReader;

  static void list_shards(const std::string& item, const kiln::sdk::EmitShard& emit) {
    if (item.find_first_of("*?[") == std::string::npos) {
      emit(item);
      return;
    }
    glob_t g{};
    int r = glob(item.c_str(), GLOB_ERR, nullptr, &g);
    if (r != 0) {
      globfree(&g);
      throw std::runtime_error("no file matches '" + item + "'");
    }
    for (size_t i = 0; i < g.gl_pathc; ++i) emit(g.gl_pathv[i]);  // glob sorts them
    globfree(&g);
  }
};

}  // namespace

KILN_SOURCE_PLUGIN(TarSource, "tar", "0.1.0",
                   "data source \"tar\": WebDataset shards (.tar read in place; .tar.gz, .tar.zst, "
                   ".tar.bz2, .tar.xz through libarchive " ARCHIVE_VERSION_ONLY_STRING ")")
