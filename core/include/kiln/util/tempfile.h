// Temporary files and folders that remove themselves, as libtorch's c10/util/tempfile.h:
// `auto file = kiln::make_tempfile(); kiln::save(model, file.name);`. They are made in $TMPDIR
// (or /tmp when it is unset or empty) with a unique name that starts with the given prefix, and
// removed when the object that owns them is destroyed.
#pragma once

#include <kiln/export.h>

#include <optional>
#include <string>

namespace kiln {

// A file created empty and open for reading and writing (`fd`); removed and closed on
// destruction. Movable, not copyable: one owner removes it.
struct KILN_API TempFile {
  TempFile(std::string name, int fd) : name(std::move(name)), fd(fd) {}
  TempFile(TempFile&& other) noexcept;
  TempFile& operator=(TempFile&& other) noexcept;
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile();

  std::string name;  // the full path; empty once moved from
  int fd = -1;
};

// A folder created empty; removed on destruction (it must be empty again by then, as
// libtorch's: files left in it keep it).
struct KILN_API TempDir {
  explicit TempDir(std::string name) : name(std::move(name)) {}
  TempDir(TempDir&& other) noexcept;
  TempDir& operator=(TempDir&& other) noexcept;
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir();

  std::string name;
};

// A new temporary file, or nullopt when it cannot be created.
KILN_API std::optional<TempFile> try_make_tempfile(std::string name_prefix = "kiln-file-");
// A new temporary file; throws kiln::Error naming the path tried and the system's reason.
KILN_API TempFile make_tempfile(std::string name_prefix = "kiln-file-");
// A new temporary folder, or nullopt when it cannot be created.
KILN_API std::optional<TempDir> try_make_tempdir(std::string name_prefix = "kiln-dir-");
// A new temporary folder; throws kiln::Error naming the path tried and the system's reason.
KILN_API TempDir make_tempdir(std::string name_prefix = "kiln-dir-");

}  // namespace kiln
