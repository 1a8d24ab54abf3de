// ArchiveReader: members through libarchive (see members.hpp). libarchive detects the
// compression from the first bytes and decompresses in-process; byte offsets are those of the
// uncompressed tar stream. A stream without its end-of-archive block is truncated, as for
// TarReader (Note [A shard ends with its end-of-archive block] in tar_reader.cpp).
#include "members.hpp"

#include <archive.h>
#include <archive_entry.h>

#include <algorithm>
#include <cerrno>
#include <vector>

namespace kiln::tar {
namespace {

class ArchiveReader : public MemberReader {
 public:
  ArchiveReader() : a_(archive_read_new()) {
    if (a_ == nullptr) throw TarError("libarchive: out of memory");
    archive_read_support_format_tar(a_);
    archive_read_support_format_gnutar(a_);
    archive_read_support_filter_all(a_);
  }
  ~ArchiveReader() override { archive_read_free(a_); }

  void open_file(const std::string& path) {
    if (archive_read_open_filename(a_, path.c_str(), 1 << 20) != ARCHIVE_OK) {
      throw TarError(open_error());
    }
  }

  void open_memory(const uint8_t* data, uint64_t size) {
    if (archive_read_open_memory(a_, data, size) != ARCHIVE_OK) {
      throw TarError(open_error());
    }
  }

  Lifetime lifetime() const override { return Lifetime::UntilNext; }

  bool next(Member& m) override {
    if (done_) return false;
    for (;;) {
      archive_entry* e = nullptr;
      name_.clear();
      int r = archive_read_next_header(a_, &e);
      if (r == ARCHIVE_EOF) {
        done_ = true;
        // libarchive also ends at a header boundary without the end-of-archive block; it
        // consumed a zero block after the last member only when there was one. See Note [A
        // shard ends with its end-of-archive block] in tar_reader.cpp.
        la_int64_t end = archive_filter_bytes(a_, 0);
        if (end - member_end_ < 512) {
          throw TarError(where(static_cast<uint64_t>(end)) + ": unexpected end of data: the " +
                         "stream ends before the end-of-archive block (truncated shard)");
        }
        return false;
      }
      auto at = static_cast<uint64_t>(archive_read_header_position(a_));
      if (r < ARCHIVE_WARN) {  // ARCHIVE_FAILED or ARCHIVE_FATAL
        done_ = true;
        throw TarError(where(at) + ": " + message());
      }
      const char* path = archive_entry_pathname(e);
      name_ = path ? path : "";
      if (archive_entry_filetype(e) != AE_IFREG) {
        skip_padding(at);
        continue;
      }
      la_int64_t size = archive_entry_size(e);
      if (size < 0) throw TarError(where(at) + ": negative size");
      if (static_cast<uint64_t>(size) > (uint64_t{1} << 40)) {
        throw TarError(where(at) + ": a member of " + std::to_string(size) + " bytes is too large");
      }
      // Grown as data arrives, not to the header's size at once: a corrupt size field in a
      // damaged stream must not allocate what the stream does not hold.
      auto want = static_cast<size_t>(size);
      buffer_.resize(std::min<size_t>(want, size_t{1} << 20));
      size_t got = 0;
      while (got < want) {
        if (got == buffer_.size()) buffer_.resize(std::min(want, 2 * buffer_.size()));
        la_ssize_t n = archive_read_data(a_, buffer_.data() + got, buffer_.size() - got);
        if (n < 0) {
          done_ = true;
          throw TarError(where(at) + ": " + message());
        }
        if (n == 0) {
          done_ = true;
          throw TarError(where(at) + ": unexpected end of data after " + std::to_string(got) +
                         " of " + std::to_string(want) + " bytes (truncated shard)");
        }
        got += static_cast<size_t>(n);
      }
      skip_padding(at);
      m.name = &name_;
      m.data = buffer_.data();
      m.size = buffer_.size();
      m.offset = at;
      return true;
    }
  }

 private:
  // libarchive reads the first header to recognize the format: a stream too short for one, or
  // not a tar, fails here.
  std::string open_error() const {
    int e = archive_errno(a_);
    if (e > 0 && e != EILSEQ) return message();  // a system error (ENOENT); EILSEQ: the format
    return where(0) + ": " + message() + " (not a tar archive, or a truncated shard)";
  }
  std::string message() const {
    const char* s = archive_error_string(a_);
    return s ? s : "libarchive error";
  }
  // Consumes the member's padding (raising when the stream ends in it) and notes where the
  // member ends, for the end-of-archive check.
  void skip_padding(uint64_t at) {
    if (archive_read_data_skip(a_) != ARCHIVE_OK) {
      done_ = true;
      throw TarError(where(at) + ": " + message() + " (truncated shard)");
    }
    member_end_ = archive_filter_bytes(a_, 0);
  }
  std::string where(uint64_t at) const {
    std::string w = name_.empty() ? "header" : "member '" + name_ + "'";
    return w + " at byte offset " + std::to_string(at) + " (of the uncompressed tar stream)";
  }

  archive* a_;
  std::string name_;
  std::vector<uint8_t> buffer_;
  bool done_ = false;
  la_int64_t member_end_ = 0;  // the stream's position after the last member and its padding
};

}  // namespace

std::unique_ptr<MemberReader> read_archive_file(const std::string& path) {
  auto r = std::make_unique<ArchiveReader>();
  r->open_file(path);
  return r;
}

std::unique_ptr<MemberReader> read_archive_memory(const uint8_t* data, uint64_t size) {
  auto r = std::make_unique<ArchiveReader>();
  r->open_memory(data, size);
  return r;
}

}  // namespace kiln::tar
