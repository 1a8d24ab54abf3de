// ArchiveReader: members through libarchive (see members.hpp). libarchive detects the
// compression from the first bytes and decompresses in-process; byte offsets are those of the
// uncompressed tar stream.
#include "members.hpp"

#include <archive.h>
#include <archive_entry.h>

#include <algorithm>
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
      throw TarError(message());
    }
  }

  void open_memory(const uint8_t* data, uint64_t size) {
    if (archive_read_open_memory(a_, data, size) != ARCHIVE_OK) {
      throw TarError(message());
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
        return false;
      }
      auto at = static_cast<uint64_t>(archive_read_header_position(a_));
      if (r < ARCHIVE_WARN) {  // ARCHIVE_FAILED or ARCHIVE_FATAL
        done_ = true;
        throw TarError(where(at) + ": " + message());
      }
      const char* path = archive_entry_pathname(e);
      name_ = path ? path : "";
      if (archive_entry_filetype(e) != AE_IFREG) continue;
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
      m.name = &name_;
      m.data = buffer_.data();
      m.size = buffer_.size();
      m.offset = at;
      return true;
    }
  }

 private:
  std::string message() const {
    const char* s = archive_error_string(a_);
    return s ? s : "libarchive error";
  }
  std::string where(uint64_t at) const {
    std::string w = name_.empty() ? "header" : "member '" + name_ + "'";
    return w + " at byte offset " + std::to_string(at) + " (of the uncompressed tar stream)";
  }

  archive* a_;
  std::string name_;
  std::vector<uint8_t> buffer_;
  bool done_ = false;
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
