// Temporary files and folders: mkstemp/mkdtemp under $TMPDIR, removed by their owner.
#include <kiln/error.h>
#include <kiln/util/tempfile.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

#include <unistd.h>

namespace kiln {

namespace {

// "$TMPDIR/<prefix>XXXXXX" as a writable buffer for mkstemp/mkdtemp.
std::vector<char> name_template(const std::string& prefix) {
  const char* dir = std::getenv("TMPDIR");
  std::string path = (dir != nullptr && *dir != '\0') ? dir : "/tmp";
  if (path.back() != '/') path += '/';
  path += prefix + "XXXXXX";
  return std::vector<char>(path.c_str(), path.c_str() + path.size() + 1);
}

// Makes the file; its name, and the error text when it fails (errno's).
std::optional<TempFile> create_file(const std::string& prefix, std::string& tried,
                                    std::string& reason) {
  std::vector<char> name = name_template(prefix);
  tried = name.data();
  int fd = mkstemp(name.data());
  if (fd == -1) {
    reason = std::strerror(errno);
    return std::nullopt;
  }
  return TempFile(name.data(), fd);
}

std::optional<TempDir> create_dir(const std::string& prefix, std::string& tried,
                                  std::string& reason) {
  std::vector<char> name = name_template(prefix);
  tried = name.data();
  if (mkdtemp(name.data()) == nullptr) {
    reason = std::strerror(errno);
    return std::nullopt;
  }
  return TempDir(name.data());
}

}  // namespace

TempFile::TempFile(TempFile&& other) noexcept
    : name(std::exchange(other.name, std::string())), fd(std::exchange(other.fd, -1)) {}

TempFile& TempFile::operator=(TempFile&& other) noexcept {
  if (this != &other) {
    TempFile old(std::move(*this));  // removes what this owned
    name = std::exchange(other.name, std::string());
    fd = std::exchange(other.fd, -1);
  }
  return *this;
}

TempFile::~TempFile() {
  if (!name.empty()) unlink(name.c_str());
  if (fd >= 0) close(fd);
}

TempDir::TempDir(TempDir&& other) noexcept : name(std::exchange(other.name, std::string())) {}

TempDir& TempDir::operator=(TempDir&& other) noexcept {
  if (this != &other) {
    TempDir old(std::move(*this));
    name = std::exchange(other.name, std::string());
  }
  return *this;
}

TempDir::~TempDir() {
  if (!name.empty()) rmdir(name.c_str());
}

std::optional<TempFile> try_make_tempfile(std::string name_prefix) {
  std::string tried, reason;
  return create_file(name_prefix, tried, reason);
}

TempFile make_tempfile(std::string name_prefix) {
  std::string tried, reason;
  std::optional<TempFile> file = create_file(name_prefix, tried, reason);
  KILN_CHECK(file, "make_tempfile: cannot create the temporary file '", tried, "': ", reason,
             " (set TMPDIR to a writable folder)");
  return std::move(*file);
}

std::optional<TempDir> try_make_tempdir(std::string name_prefix) {
  std::string tried, reason;
  return create_dir(name_prefix, tried, reason);
}

TempDir make_tempdir(std::string name_prefix) {
  std::string tried, reason;
  std::optional<TempDir> dir = create_dir(name_prefix, tried, reason);
  KILN_CHECK(dir, "make_tempdir: cannot create the temporary folder '", tried, "': ", reason,
             " (set TMPDIR to a writable folder)");
  return std::move(*dir);
}

}  // namespace kiln
