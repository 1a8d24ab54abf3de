// kiln's tar source plugin (kiln_tar.so): the "tar" data source, WebDataset-style shards.
//
//   kiln::data::open("tar:data/train-{000..127}.tar")
//
// An uncompressed shard is read through a sliding window and parsed in place (tar_reader.cpp):
// members go to the core without a copy. Compressed shards (.tar.gz, .tar.zst, .tar.bz2,
// .tar.xz) go through libarchive (archive_reader.cpp); KILN_TAR_READER=libarchive sends every
// shard there. Members become samples by WebDataset's rules (grouper.hpp). Its sample corpus
// (sample_shards) is what kiln-plugin-check reads and fuzzes from. Items of the spec with glob
// characters
// ("data/*.tar") list the files that match, sorted.
#include "grouper.hpp"
#include "members.hpp"

#include <kiln/sdk/source.hpp>

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <glob.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

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

// One shard in memory through libarchive's writer: `format` as archive_write_set_format_by_name
// takes it ("ustar", "pax", "gnutar"), `filter` "none", "gzip" or "zstd".
std::string write_shard(const std::vector<std::pair<std::string, std::string>>& members,
                        const char* format, const char* filter) {
  archive* a = archive_write_new();
  if (a == nullptr) throw std::runtime_error("libarchive: out of memory");
  std::string out(1 << 16, '\0');
  size_t used = 0;
  archive_write_set_format_by_name(a, format);
  if (std::strcmp(filter, "none") != 0) archive_write_add_filter_by_name(a, filter);
  archive_write_set_bytes_in_last_block(a, 1);
  bool ok = archive_write_open_memory(a, out.data(), out.size(), &used) == ARCHIVE_OK;
  for (const auto& [name, data] : members) {
    archive_entry* e = archive_entry_new();
    archive_entry_set_pathname(e, name.c_str());
    bool folder = !name.empty() && name.back() == '/';
    archive_entry_set_filetype(e, folder ? AE_IFDIR : AE_IFREG);
    archive_entry_set_perm(e, 0644);
    archive_entry_set_size(e, static_cast<la_int64_t>(data.size()));
    ok = ok && archive_write_header(a, e) == ARCHIVE_OK;
    ok = ok &&
         archive_write_data(a, data.data(), data.size()) == static_cast<la_ssize_t>(data.size());
    archive_entry_free(e);
  }
  ok = archive_write_close(a) == ARCHIVE_OK && ok;
  std::string error = ok ? "" : archive_error_string(a) ? archive_error_string(a) : "failed";
  archive_write_free(a);
  if (!ok) throw std::runtime_error(std::string("tar sample shard (") + format + "): " + error);
  out.resize(used);
  return out;
}

struct TarSource {
  static constexpr const char* scheme = "tar";
  using Reader = TarReader;

  // kiln-plugin-check's sample corpus: the formats and compressions the source reads.
  static std::vector<std::string> sample_shards() {
    std::string long_key(120, 'k');
    std::vector<std::pair<std::string, std::string>> plain = {
        {"__meta__/info.json", "{}"},
        {"000000.txt", "a sample"},
        {"000000.cls", "3"},
        {"000000.json", R"({"a": [1, 2.5, "x", null, true]})"},
        {"d/", ""},
        {"000001.txt", "another"},
        {"000001.cls", "7"},
        {"000001.bin", std::string(1500, 'b')}};
    std::vector<std::pair<std::string, std::string>> long_names = {
        {"dir/" + long_key + ".txt", "a long name"}, {"dir/" + long_key + ".cls", "1"}};
    return {write_shard(plain, "ustar", "none"), write_shard(long_names, "pax", "none"),
            write_shard(long_names, "gnutar", "none"), write_shard(plain, "ustar", "gzip"),
            write_shard(plain, "pax", "zstd")};
  }

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
