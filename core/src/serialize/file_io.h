// POSIX file access for kiln::save and kiln::load: reads at offsets, and atomic writes (a
// temporary file in the same directory, fsync, rename). Errors name the file and the failing
// call. Not a public API.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace kiln::fileio {

// A file opened for reading; closed by the destructor.
class InputFile {
 public:
  // Opens `path`; throws "<who>: cannot open '<path>': <reason>".
  InputFile(const char* who, const std::string& path);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  uint64_t size() const { return size_; }
  // Reads n bytes at `offset` into out; returns the count read (less than n only at the end of
  // the file). Throws on an I/O error.
  size_t read_at(void* out, size_t n, uint64_t offset) const;

 private:
  const char* who_;
  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

// Writes sequentially to a file descriptor.
class OutputFile {
 public:
  OutputFile(const char* who, const std::string& path, int fd) : who_(who), path_(path), fd_(fd) {}
  // Writes all n bytes; throws on an I/O error.
  void write(const void* data, size_t n);

 private:
  const char* who_;
  const std::string& path_;
  int fd_;
};

// Creates `path` with the contents `write_contents` produces, atomically: a reader sees the old
// file or the complete new one. Throws "<who>: cannot write '<path>': <reason>"; the temporary
// file is removed on any error, and the stale temporaries of earlier saves to `path` that died
// are removed first (see Note [Stale temporaries] in file_io.cpp).
void write_atomically(const char* who, const std::string& path,
                      const std::function<void(OutputFile&)>& write_contents);

}  // namespace kiln::fileio
