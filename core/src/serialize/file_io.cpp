// POSIX file access for kiln::save and kiln::load (see file_io.h).
#include "file_io.h"

#include <kiln/error.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace kiln::fileio {
namespace {

std::string reason() { return std::strerror(errno); }

// The directory holding `path` ("." for a bare file name).
std::string parent_directory(const std::string& path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// Flushes the directory entry of a rename; best effort (some file systems refuse it).
void sync_directory(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

InputFile::InputFile(const char* who, const std::string& path) : who_(who), path_(path) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  KILN_CHECK(fd_ >= 0, who_, ": cannot open '", path_, "': ", reason());
  struct stat st {};
  std::string why;
  if (::fstat(fd_, &st) != 0) {
    why = reason();
  } else if (S_ISDIR(st.st_mode)) {
    why = "it is a directory";
  } else if (!S_ISREG(st.st_mode)) {
    why = "it is not a regular file";
  }
  if (!why.empty()) {
    ::close(fd_);
    KILN_CHECK(false, who_, ": cannot read '", path_, "': ", why);
  }
  size_ = static_cast<uint64_t>(st.st_size);
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

size_t InputFile::read_at(void* out, size_t n, uint64_t offset) const {
  size_t done = 0;
  auto* bytes = static_cast<char*>(out);
  while (done < n) {
    ssize_t got = ::pread(fd_, bytes + done, n - done, static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR) continue;
    KILN_CHECK(got >= 0, who_, ": cannot read '", path_, "': ", reason());
    if (got == 0) break;
    done += static_cast<size_t>(got);
  }
  return done;
}

void OutputFile::write(const void* data, size_t n) {
  const auto* bytes = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t put = ::write(fd_, bytes, n);
    if (put < 0 && errno == EINTR) continue;
    KILN_CHECK(put > 0, who_, ": cannot write '", path_, "': ", reason());
    bytes += put;
    n -= static_cast<size_t>(put);
  }
}

void write_atomically(const char* who, const std::string& path,
                      const std::function<void(OutputFile&)>& write_contents) {
  static std::atomic<uint64_t> counter{0};
  std::string tmp;
  int fd = -1;
  for (int attempt = 0; fd < 0; ++attempt) {
    tmp = detail::str(path, ".tmp-", ::getpid(), "-", counter.fetch_add(1));
    // 0666 less the umask: the file gets the permissions a plain open would give it.
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    KILN_CHECK(fd >= 0 || (errno == EEXIST && attempt < 100), who, ": cannot write '", path,
               "': cannot create '", tmp, "': ", reason());
  }
  try {
    OutputFile out(who, path, fd);
    write_contents(out);
    KILN_CHECK(::fsync(fd) == 0, who, ": cannot write '", path, "': fsync: ", reason());
    int closed = ::close(fd);
    fd = -1;
    KILN_CHECK(closed == 0, who, ": cannot write '", path, "': close: ", reason());
    KILN_CHECK(::rename(tmp.c_str(), path.c_str()) == 0, who, ": cannot write '", path,
               "': rename from '", tmp, "': ", reason());
  } catch (...) {
    if (fd >= 0) ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  sync_directory(parent_directory(path));
}

}  // namespace kiln::fileio
