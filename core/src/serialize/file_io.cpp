// POSIX file access for kiln::save and kiln::load (see file_io.h).
#include "file_io.h"

#include <kiln/error.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <limits>
#include <mutex>
#include <set>
#include <string_view>
#include <vector>

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

namespace kiln::fileio {
namespace {

// Note [Stale temporaries]: a save that dies (killed, out of power) leaves its temporary
// `<path>.tmp-<host>-<pid>-<n>` behind, and a checkpoint loop killed 30 times kept 1.3 GB of
// them. Each save to <path> first removes the temporaries of <path> that can no longer finish:
//   - ones whose last write is over kAbandonedSeconds (a day) old, from any host; and
//   - ones idle for over kIdleSeconds from this host whose process is gone (kill(pid, 0) says
//     ESRCH), or whose pid is this process's and that this process is not writing.
// A live save writes continuously, so the idle time spares a save in another PID namespace on
// this host whose pid looks dead from here; a save on another host sharing the directory is
// judged by age alone. Older kiln wrote `<path>.tmp-<pid>-<n>`, taken as from this host.
constexpr time_t kIdleSeconds = 60;
constexpr time_t kAbandonedSeconds = 24 * 60 * 60;

std::string reason() { return std::strerror(errno); }

// The directory holding `path` ("." for a bare file name).
std::string parent_directory(const std::string& path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// The host part of temporary names: the host name up to 32 characters, '-' and '/' replaced.
const std::string& host_tag() {
  static const std::string tag = [] {
    char name[256] = {};
    if (::gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return std::string("host");
    std::string t(name, ::strnlen(name, 32));
    for (char& c : t) c = c == '-' || c == '/' ? '_' : c;
    return t;
  }();
  return tag;
}

// The temporary files this process is writing now (never destroyed: saves may run at exit).
struct LiveTemporaries {
  std::mutex mutex;
  std::set<std::string> names;
};
LiveTemporaries& live_temporaries() {
  static auto* live = new LiveTemporaries;
  return *live;
}

bool digits(std::string_view s) {
  return !s.empty() && s.size() < 19 &&
         std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// See Note [Stale temporaries]: whether the entry `name` of the open directory `dir`, which
// starts with `prefix`, is a temporary of a save that can no longer finish.
bool is_stale(int dir, const std::string& name, const std::string& prefix, time_t now) {
  std::string_view rest = std::string_view(name).substr(prefix.size());  // [host-]pid-counter
  size_t last = rest.rfind('-');
  if (last == std::string_view::npos || !digits(rest.substr(last + 1))) return false;
  size_t second = last == 0 ? std::string_view::npos : rest.rfind('-', last - 1);
  bool old_format = second == std::string_view::npos;  // <pid>-<counter>
  std::string_view pid_text = old_format ? rest.substr(0, last)
                                         : rest.substr(second + 1, last - second - 1);
  std::string_view host = old_format ? std::string_view(host_tag()) : rest.substr(0, second);
  if (!digits(pid_text)) return false;
  struct stat st {};
  if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) {
    return false;
  }
  time_t idle = now - st.st_mtime;
  if (idle > kAbandonedSeconds) return true;
  if (idle <= kIdleSeconds || host != host_tag()) return false;
  long long number = std::stoll(std::string(pid_text));  // digits(): fewer than 19
  if (number <= 0 || number > std::numeric_limits<pid_t>::max()) return false;
  auto pid = static_cast<pid_t>(number);
  if (pid == ::getpid()) {
    LiveTemporaries& live = live_temporaries();
    std::lock_guard<std::mutex> lock(live.mutex);
    return live.names.count(name) == 0;
  }
  return ::kill(pid, 0) != 0 && errno == ESRCH;
}

// Removes the stale temporaries of saves to `path`; best effort, errors are ignored.
void remove_stale_temporaries(const std::string& path) {
  size_t slash = path.find_last_of('/');
  std::string prefix = (slash == std::string::npos ? path : path.substr(slash + 1)) + ".tmp-";
  int dir = ::open(parent_directory(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return;
  DIR* listing = ::fdopendir(dir);
  if (listing == nullptr) {
    ::close(dir);
    return;
  }
  time_t now = ::time(nullptr);
  std::vector<std::string> stale;
  while (const dirent* e = ::readdir(listing)) {
    std::string name = e->d_name;
    if (name.compare(0, prefix.size(), prefix) == 0 && is_stale(dir, name, prefix, now)) {
      stale.push_back(name);
    }
  }
  for (const std::string& name : stale) ::unlinkat(dir, name.c_str(), 0);
  ::closedir(listing);  // closes dir too
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
  remove_stale_temporaries(path);
  std::string tmp;
  int fd = -1;
  for (int attempt = 0; fd < 0; ++attempt) {
    tmp = detail::str(path, ".tmp-", host_tag(), "-", ::getpid(), "-", counter.fetch_add(1));
    // 0666 less the umask: the file gets the permissions a plain open would give it.
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    KILN_CHECK(fd >= 0 || (errno == EEXIST && attempt < 100), who, ": cannot write '", path,
               "': cannot create '", tmp, "': ", reason());
  }
  size_t slash = tmp.find_last_of('/');
  std::string tmp_name = slash == std::string::npos ? tmp : tmp.substr(slash + 1);
  {
    LiveTemporaries& live = live_temporaries();
    std::lock_guard<std::mutex> lock(live.mutex);
    live.names.insert(tmp_name);
  }
  struct Done {  // takes tmp_name off the live list however the save ends
    const std::string& name;
    ~Done() {
      LiveTemporaries& live = live_temporaries();
      std::lock_guard<std::mutex> lock(live.mutex);
      live.names.erase(name);
    }
  } done{tmp_name};
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
