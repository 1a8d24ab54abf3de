// Readers of a tar shard's members, one at a time, in file order. Two implementations:
//   MappedTarReader  an uncompressed tar, memory-mapped and parsed here (ustar, GNU long names,
//                    pax path/size records): member data is a pointer into the mapping, no copy;
//   ArchiveReader    anything libarchive reads (.tar.gz, .tar.zst, .tar.bz2, .tar.xz, and plain
//                    tar when asked), member data copied into a reused buffer.
// Both report problems as TarError with the member's name and byte offset.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

namespace kiln::tar {

// A corrupt or truncated shard; the message names the member and the byte offset.
class TarError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One regular-file member.
struct Member {
  const std::string* name = nullptr;  // valid until the next call to next()
  const uint8_t* data = nullptr;      // valid until next() (or the reader's end, if stable())
  uint64_t size = 0;
  uint64_t offset = 0;  // of its header, in the (uncompressed) tar stream
};

class MemberReader {
 public:
  virtual ~MemberReader() = default;
  // The next regular-file member (directories, links and metadata headers are skipped); false
  // at the end of the archive. Throws TarError on corrupt or truncated data.
  virtual bool next(Member& member) = 0;
  // Whether member data stays valid for the reader's whole life (not only until next()).
  virtual bool stable() const = 0;
};

// Parses an uncompressed tar held in memory [data, data + size) (not owned).
std::unique_ptr<MemberReader> read_tar_memory(const uint8_t* data, uint64_t size);
// Memory-maps the file at `path` and parses it as above. Throws TarError when it cannot.
std::unique_ptr<MemberReader> read_tar_file_mapped(const std::string& path);
// Reads through libarchive: a file, or memory (not owned) for tests and fuzzing.
std::unique_ptr<MemberReader> read_archive_file(const std::string& path);
std::unique_ptr<MemberReader> read_archive_memory(const uint8_t* data, uint64_t size);

// Whether these first bytes start a compressed stream (gzip, zstd, bzip2, xz, lz4, compress).
bool looks_compressed(const uint8_t* head, uint64_t size);

}  // namespace kiln::tar
