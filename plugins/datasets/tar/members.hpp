// Readers of a tar shard's members, one at a time, in file order. Two implementations:
//   TarReader      an uncompressed tar parsed here (ustar, GNU long names, pax path/size
//                  records), from memory or from a file read through a sliding window: member
//                  data stays where it was read, and goes to the core without a copy;
//   ArchiveReader  anything libarchive reads (.tar.gz, .tar.zst, .tar.bz2, .tar.xz, and plain
//                  tar when asked), member data copied into a reused buffer.
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
  const uint8_t* data = nullptr;      // UntilNext readers: the bytes, valid until next()
  uint64_t data_offset = 0;           // Window readers: where the bytes are (data_at())
  uint64_t size = 0;
  uint64_t offset = 0;  // of its header, in the (uncompressed) tar stream
};

class MemberReader {
 public:
  // How long a member's bytes stay readable.
  enum class Lifetime {
    UntilNext,  // Member::data, until the next call to next(): copy what you keep
    Window      // data_at(data_offset), for every member from the last keep_from() on
  };
  virtual ~MemberReader() = default;
  // The next regular-file member (directories, links and metadata headers are skipped); false
  // at the end of the archive. Throws TarError on corrupt or truncated data.
  virtual bool next(Member& member) = 0;
  virtual Lifetime lifetime() const = 0;
  // Window readers: members before file offset `offset` are no longer needed.
  virtual void keep_from(uint64_t offset) { (void)offset; }
  // Window readers: where a kept member's bytes are now (valid until the next call to next()).
  virtual const uint8_t* data_at(uint64_t offset, uint64_t size) {
    (void)offset;
    (void)size;
    return nullptr;
  }
};

// Parses an uncompressed tar held in memory [data, data + size) (not owned).
std::unique_ptr<MemberReader> read_tar_memory(const uint8_t* data, uint64_t size);
// Reads the file at `path` as an uncompressed tar (see Note [Read, not mapped]).
std::unique_ptr<MemberReader> read_tar_file(const std::string& path);
// Reads through libarchive: a file, or memory (not owned) for tests and fuzzing.
std::unique_ptr<MemberReader> read_archive_file(const std::string& path);
std::unique_ptr<MemberReader> read_archive_memory(const uint8_t* data, uint64_t size);

// Whether these first bytes start a compressed stream (gzip, zstd, bzip2, xz, lz4, compress).
bool looks_compressed(const uint8_t* head, uint64_t size);

}  // namespace kiln::tar
