// TarReader: an uncompressed tar parsed in place (see members.hpp), from memory or from a file
// read through a sliding window. It follows POSIX ustar with the GNU and pax extensions that tar
// writers use for long names and large files:
//   '0', '\0', '7' and unknown types: regular files ('7' contiguous, unknown as POSIX says);
//   'L': the next member's name (GNU); 'K': a long link name (ignored);
//   'x': pax records for the next member (path, size); 'g': global pax records (ignored);
//   '1' '2' '3' '4' '5' '6' 'V': links, devices, folders, FIFOs, labels: skipped, no data.
// 'S' (GNU sparse) and 'M' (multi-volume) raise: training shards hold neither.
// The end is a zero block; see Note [A shard ends with its end-of-archive block].
//
// Note [A shard ends with its end-of-archive block]
// A tar archive ends with two 512-byte zero blocks (POSIX; GNU tar, bsdtar, Python's tarfile and
// kiln's TarShardWriter write them, tar programs then pad to a 10240-byte record). A shard is
// complete when every member's data and padding are there and a whole zero block follows the last
// member: what comes after that first zero block is not read (libarchive and tarfile also stop
// there). Anything shorter is a truncated shard and raises, naming the byte offset, under the
// user's error policy: a file that ends inside a header, a member's data or its padding, or at a
// header boundary without the zero block (a copy cut after a member). libarchive and tarfile
// accept that last case ("some writers omit the block of nulls"), and tarfile also a partial
// last header, so a cut between members there loses the rest of the shard silently; kiln reads
// shards that a training run must not shorten without a word, so it asks for the end marker.
// The libarchive path (archive_reader.cpp) applies the same rule to compressed shards.
//
// Note [Read, not mapped]
// A file is read with pread() in 1 MiB chunks into a window that slides over the shard, keeping
// the bytes from keep_from() on (the sample being grouped), rather than memory-mapped: mapping
// costs a page fault per few pages and an munmap (with TLB shootdowns across the DataLoader's
// threads) per shard: on the benchmark's 3 KB samples (bench/data_bench.cpp) a mapped shard read
// at 570k samples/s inline and 720k with two workers, pread() at 850k and 1.05M. From the
// window, member data goes to the core without another copy.
#include "members.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>
#include <vector>

namespace kiln::tar {
namespace {

constexpr uint64_t kBlock = 512;

std::string where(const std::string& name, uint64_t offset) {
  if (name.empty()) return "header at byte offset " + std::to_string(offset);
  return "member '" + name + "' at byte offset " + std::to_string(offset);
}

// A NUL-terminated field of at most n bytes.
std::string_view field(const uint8_t* p, size_t n) {
  const auto* c = reinterpret_cast<const char*>(p);
  const void* nul = std::memchr(c, 0, n);
  return std::string_view(c, nul ? static_cast<const char*>(nul) - c : n);
}

// An octal number field (spaces and NULs around it), or base-256 (GNU) when the top bit is set.
bool parse_number(const uint8_t* p, size_t n, uint64_t& out) {
  out = 0;
  if (p[0] & 0x80) {
    if (p[0] != 0x80) return false;  // negative, or too large for us
    for (size_t i = 1; i < n; ++i) {
      if (out >> 56) return false;
      out = (out << 8) | p[i];
    }
    return true;
  }
  size_t i = 0;
  while (i < n && (p[i] == ' ' || p[i] == 0)) ++i;
  for (; i < n && p[i] >= '0' && p[i] <= '7'; ++i) {
    if (out >> 60) return false;
    out = out * 8 + (p[i] - '0');
  }
  for (; i < n; ++i) {
    if (p[i] != ' ' && p[i] != 0) return false;
  }
  return true;  // an all-blank field is 0
}

// The header's sum with the checksum field counted as spaces: unsigned (POSIX), or signed (old
// tars). Written as whole-block loops the compiler vectorizes: this runs once per member.
bool checksum_ok(const uint8_t* h) {
  uint64_t stored = 0;
  if (!parse_number(h + 148, 8, stored)) return false;
  uint32_t unsigned_sum = 0;
  for (uint64_t i = 0; i < kBlock; ++i) unsigned_sum += h[i];
  for (uint64_t i = 148; i < 156; ++i) unsigned_sum -= h[i];
  unsigned_sum += 8 * ' ';
  if (stored == unsigned_sum) return true;
  int32_t signed_sum = 0;
  for (uint64_t i = 0; i < kBlock; ++i) signed_sum += static_cast<int8_t>(h[i]);
  for (uint64_t i = 148; i < 156; ++i) signed_sum -= static_cast<int8_t>(h[i]);
  signed_sum += 8 * ' ';
  return static_cast<int64_t>(stored) == signed_sum;
}

bool zero_block(const uint8_t* h) {
  uint8_t any = 0;
  for (uint64_t i = 0; i < kBlock; ++i) any |= h[i];
  return any == 0;
}

// Applies pax records ("<len> key=value\n"...) of one extended header.
void parse_pax(const uint8_t* p, uint64_t n, std::string& path, uint64_t& size, bool& has_size,
               const std::string& at) {
  uint64_t i = 0;
  while (i < n) {
    uint64_t len = 0, j = i;
    while (j < n && p[j] >= '0' && p[j] <= '9') {
      len = len * 10 + (p[j] - '0');
      if (len > n) break;
      ++j;
    }
    if (j >= n || p[j] != ' ' || len == 0 || i + len > n || p[i + len - 1] != '\n') {
      if (len == 0 && j < n && p[j] == 0) return;  // NUL padding
      throw TarError(at + ": malformed pax extended header record");
    }
    std::string_view rec(reinterpret_cast<const char*>(p + j + 1), i + len - 1 - (j + 1));
    size_t eq = rec.find('=');
    if (eq == std::string_view::npos) throw TarError(at + ": pax record without '='");
    std::string_view key = rec.substr(0, eq), value = rec.substr(eq + 1);
    if (key == "path") {
      path.assign(value);
    } else if (key == "size") {
      uint64_t v = 0;
      for (char c : value) {
        if (c < '0' || c > '9' || (v >> 59)) throw TarError(at + ": bad pax size record");
        v = v * 10 + static_cast<uint64_t>(c - '0');
      }
      size = v;
      has_size = true;
    }
    i += len;
  }
}

// Where the parser's bytes come from: [0, size) of a memory block or a file.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  uint64_t size() const { return size_; }
  // [offset, offset + n) readable, n <= size - offset; valid until the next ensure() that
  // slides the window (bytes from keep_from() on are kept, moved).
  virtual const uint8_t* ensure(uint64_t offset, uint64_t n) = 0;
  // Bytes before `offset` are no longer needed.
  virtual void keep_from(uint64_t offset) { (void)offset; }

 protected:
  uint64_t size_ = 0;
};

class MemorySource : public ByteSource {
 public:
  MemorySource(const uint8_t* data, uint64_t size) : data_(data) { size_ = size; }
  const uint8_t* ensure(uint64_t offset, uint64_t) override { return data_ + offset; }

 private:
  const uint8_t* data_;
};

// See Note [Read, not mapped].
class FileSource : public ByteSource {
 public:
  FileSource(int fd, uint64_t size) : fd_(fd), buffer_(kChunk) { size_ = size; }
  ~FileSource() override { ::close(fd_); }

  const uint8_t* ensure(uint64_t offset, uint64_t n) override {
    if (offset >= start_ && offset + n <= end_) return buffer_.data() + (offset - start_);
    uint64_t from = std::min(keep_, offset);
    if (from >= end_) {  // nothing kept: start afresh at `from`
      start_ = end_ = from;
    } else if (from > start_) {  // slide: move the kept bytes to the front
      std::memmove(buffer_.data(), buffer_.data() + (from - start_), end_ - from);
      start_ = from;
    }
    uint64_t need = offset + n - start_;
    if (need > buffer_.size()) buffer_.resize(std::max<uint64_t>(need, 2 * buffer_.size()));
    while (end_ < offset + n) {
      uint64_t room = std::min<uint64_t>(buffer_.size() - (end_ - start_), size_ - end_);
      ssize_t got = ::pread(fd_, buffer_.data() + (end_ - start_), room, static_cast<off_t>(end_));
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        throw TarError("read error at byte offset " + std::to_string(end_) + ": " +
                       (got < 0 ? std::strerror(errno) : "the file became shorter"));
      }
      end_ += static_cast<uint64_t>(got);
    }
    return buffer_.data() + (offset - start_);
  }
  void keep_from(uint64_t offset) override { keep_ = offset; }

 private:
  static constexpr uint64_t kChunk = uint64_t{1} << 20;
  int fd_;
  std::vector<uint8_t> buffer_;
  uint64_t start_ = 0, end_ = 0, keep_ = 0;  // the window holds file bytes [start_, end_)
};

class TarReader : public MemberReader {
 public:
  explicit TarReader(std::unique_ptr<ByteSource> source)
      : source_(std::move(source)), size_(source_->size()) {}

  Lifetime lifetime() const override { return Lifetime::Window; }
  void keep_from(uint64_t offset) override { source_->keep_from(offset); }
  const uint8_t* data_at(uint64_t offset, uint64_t size) override {
    return source_->ensure(offset, size);
  }

  bool next(Member& m) override {
    std::string long_name, pax_path;
    uint64_t pax_size = 0;
    bool has_long_name = false, has_pax_size = false;
    for (;;) {
      if (done_) return false;
      uint64_t at = pos_;
      if (at == size_) {  // See Note [A shard ends with its end-of-archive block].
        done_ = true;
        throw TarError(where("", at) + ": unexpected end of data: the file ends before the " +
                       "end-of-archive block (truncated shard)");
      }
      if (size_ - at < kBlock) {
        done_ = true;
        throw TarError(where("", at) + ": unexpected end of data: the file ends " +
                       std::to_string(size_ - at) + " bytes into a header or the " +
                       "end-of-archive block (truncated shard)");
      }
      const uint8_t* h = source_->ensure(at, kBlock);
      if (zero_block(h)) {
        done_ = true;
        return false;
      }
      if (!checksum_ok(h)) {
        throw TarError(where("", at) + ": bad header checksum (not a tar file, or corrupt)");
      }
      uint64_t size = 0;
      if (!parse_number(h + 124, 12, size)) {
        throw TarError(where(std::string(field(h, 100)), at) + ": bad size field");
      }
      char type = static_cast<char>(h[156]);
      // the name: pax path > GNU long name > ustar prefix/name
      name_.clear();
      if (!pax_path.empty()) {
        name_ = pax_path;
      } else if (has_long_name) {
        name_ = long_name;
      } else {
        std::string_view magic(reinterpret_cast<const char*>(h + 257), 6);
        std::string_view prefix = magic == std::string_view("ustar\0", 6) ? field(h + 345, 155)
                                                                          : std::string_view();
        if (!prefix.empty()) {
          name_.assign(prefix);
          name_ += '/';
        }
        name_ += field(h, 100);
      }
      if (has_pax_size) size = pax_size;
      uint64_t data_pos = at + kBlock;
      uint64_t padded = 0;
      if (__builtin_add_overflow(size, (kBlock - size % kBlock) % kBlock, &padded)) {
        throw TarError(where(name_, at) + ": bad size field " + std::to_string(size));
      }
      bool has_data =
          !(type == '1' || type == '2' || type == '3' || type == '4' || type == '5' || type == '6');
      if (has_data && padded > size_ - data_pos) {
        done_ = true;
        std::string part = size > size_ - data_pos ? "data" : "padding";
        throw TarError(where(name_, at) + ": unexpected end of data: the member has " +
                       std::to_string(size) + " bytes (" + std::to_string(padded) +
                       " with padding), the file ends " + std::to_string(size_ - data_pos) +
                       " bytes after its header, in its " + part + " (truncated shard)");
      }
      pos_ = has_data ? data_pos + padded : data_pos;
      switch (type) {
        case 'L':
          if (size > (uint64_t{1} << 20)) throw TarError(where(name_, at) + ": long name > 1 MiB");
          long_name.assign(field(source_->ensure(data_pos, size), size));
          has_long_name = true;
          continue;
        case 'x':
          if (size > (uint64_t{1} << 20)) throw TarError(where(name_, at) + ": pax header > 1 MiB");
          parse_pax(source_->ensure(data_pos, size), size, pax_path, pax_size, has_pax_size,
                    where(name_, at));
          continue;
        case 'K':
        case 'g':
        case 'V':
        case '1':
        case '2':
        case '3':
        case '4':
        case '5':
        case '6':
          pax_path.clear();
          has_long_name = has_pax_size = false;
          continue;
        case 'S':
        case 'M':
          throw TarError(where(name_, at) + ": unsupported tar member type '" +
                         std::string(1, type) + "' (GNU sparse or multi-volume)");
        default:
          source_->ensure(data_pos, size);  // resident for the grouper (data_at() resolves it)
          m.name = &name_;
          m.data = nullptr;
          m.data_offset = data_pos;
          m.size = size;
          m.offset = at;
          return true;
      }
    }
  }

 private:
  std::unique_ptr<ByteSource> source_;
  uint64_t size_;
  uint64_t pos_ = 0;
  bool done_ = false;
  std::string name_;
};

}  // namespace

std::unique_ptr<MemberReader> read_tar_memory(const uint8_t* data, uint64_t size) {
  return std::make_unique<TarReader>(std::make_unique<MemorySource>(data, size));
}

std::unique_ptr<MemberReader> read_tar_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw TarError(std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    int e = errno;
    ::close(fd);
    throw TarError(std::string("cannot stat: ") + std::strerror(e));
  }
  if (!S_ISREG(st.st_mode) || st.st_size == 0) {
    ::close(fd);
    if (!S_ISREG(st.st_mode)) throw TarError("not a regular file");
    throw TarError("header at byte offset 0: empty file (a tar archive holds at least its " +
                   std::string("end-of-archive block; truncated shard?)"));
  }
  posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  return std::make_unique<TarReader>(
      std::make_unique<FileSource>(fd, static_cast<uint64_t>(st.st_size)));
}

bool looks_compressed(const uint8_t* h, uint64_t n) {
  auto starts = [&](std::initializer_list<uint8_t> magic) {
    if (n < magic.size()) return false;
    size_t i = 0;
    for (uint8_t b : magic) {
      if (h[i++] != b) return false;
    }
    return true;
  };
  return starts({0x1f, 0x8b}) || starts({0x28, 0xb5, 0x2f, 0xfd}) || starts({'B', 'Z', 'h'}) ||
         starts({0xfd, '7', 'z', 'X', 'Z', 0x00}) || starts({0x04, 0x22, 0x4d, 0x18}) ||
         starts({0x1f, 0x9d});
}

}  // namespace kiln::tar
