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

#include <kiln/sdk/plugin.h>

#include <archive.h>
#include <fcntl.h>
#include <glob.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

namespace {

const kiln_host* g_host = nullptr;

void set_error(const std::string& message) {
  if (g_host != nullptr) g_host->set_error(message.c_str());
}

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

struct Reader {
  kiln::tar::Grouper grouper;
};

kiln_status list_shards(void*, const char* item, void (*emit)(void*, const char*), void* ctx) {
  if (std::strpbrk(item, "*?[") == nullptr) {
    emit(ctx, item);
    return 0;
  }
  glob_t g{};
  int r = glob(item, GLOB_ERR, nullptr, &g);
  if (r != 0) {
    globfree(&g);
    set_error(std::string("no file matches '") + item + "'");
    return 1;
  }
  for (size_t i = 0; i < g.gl_pathc; ++i) emit(ctx, g.gl_pathv[i]);  // glob sorts them
  globfree(&g);
  return 0;
}

void* open_shard(void*, const char* shard) {
  try {
    return new Reader{kiln::tar::Grouper(open_members(shard))};
  } catch (const std::exception& e) {
    set_error(e.what());
    return nullptr;
  }
}

int32_t next(void* reader, kiln_sample* out) {
  auto* r = static_cast<Reader*>(reader);
  if (out == nullptr || out->struct_size < offsetof(kiln_sample, offset) + sizeof(out->offset)) {
    set_error("tar source: the core's kiln_sample is too small for this plugin");
    return KILN_SAMPLE_ERROR;
  }
  int32_t status = r->grouper.next(out);
  if (status == KILN_SAMPLE_ERROR || status == KILN_SAMPLE_SKIP) set_error(r->grouper.error());
  return status;
}

void close_shard(void* reader) { delete static_cast<Reader*>(reader); }

const kiln_source_ops* source_ops() {
  static const kiln_source_ops ops = [] {
    kiln_source_ops o{};
    o.struct_size = sizeof(kiln_source_ops);
    o.list_shards = list_shards;
    o.open_shard = open_shard;
    o.next = next;
    o.close = close_shard;
    return o;
  }();
  return &ops;
}

}  // namespace

extern "C" {

KILN_PLUGIN_EXPORT const kiln_plugin_info* kiln_plugin_query(void) {
  static const kiln_plugin_info info = {
      sizeof(kiln_plugin_info), KILN_ABI_MAJOR, KILN_ABI_MINOR, "tar", "0.1.0",
      "data source \"tar\": WebDataset shards (.tar read in place; .tar.gz, .tar.zst, "
      ".tar.bz2, .tar.xz through libarchive " ARCHIVE_VERSION_ONLY_STRING ")"};
  return &info;
}

KILN_PLUGIN_EXPORT int32_t kiln_plugin_probe(const kiln_host* host) {
  if (host->struct_size < offsetof(kiln_host, register_source) + sizeof(host->register_source)) {
    host->set_error("this core has no data-source interface (kiln plugin ABI 1.1 or newer)");
    return 0;
  }
  return 1;
}

KILN_PLUGIN_EXPORT kiln_status kiln_plugin_init(const kiln_host* host) {
  g_host = host;
  return host->register_source("tar", source_ops(), nullptr);
}

}  // extern "C"
