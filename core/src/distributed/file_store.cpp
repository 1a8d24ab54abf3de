// The FileStore ("file:///path"), the PrefixStore of sub-groups and the C view of a store that
// backends receive. See Note [Rendezvous stores] in store.h.
#include "store.h"
#include "store_wire.h"

#include "../runtime.h"

#include <kiln/error.h>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <thread>

namespace kiln::distributed::detail {
namespace {

using kiln::detail::str;

// Records "u32 key size, key, u64 value size, value" appended under flock; the last record of a
// key is its value.
class FileStore : public Store {
 public:
  FileStore(const std::string& path, Millis timeout) : path_(path) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    KILN_CHECK(fd_ >= 0, "init_process_group: cannot open the file store '", path,
               "' of init_method file://", path, ": ", std::strerror(errno),
               " (every rank must reach the same file)");
    (void)timeout;
    add("kiln/file_store/users", 1);
  }

  ~FileStore() override {
    try {
      if (add("kiln/file_store/users", -1) == 0) ::unlink(path_.c_str());
    } catch (const Error&) {  // a failing disk at exit: leave the file
    }
    ::close(fd_);
  }

  void set(const std::string& key, const std::string& value) override {
    Lock lock(fd_, LOCK_EX, path_);
    append(key, value);
  }

  std::optional<std::string> get(const std::string& key, Millis timeout) override {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
      {
        Lock lock(fd_, LOCK_SH, path_);
        std::map<std::string, std::string> all = read_all_records();
        auto it = all.find(key);
        if (it != all.end()) return it->second;
      }
      if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
      std::this_thread::sleep_for(Millis(5));
    }
  }

  int64_t add(const std::string& key, int64_t delta) override {
    Lock lock(fd_, LOCK_EX, path_);
    std::map<std::string, std::string> all = read_all_records();
    int64_t value = 0;
    auto it = all.find(key);
    if (it != all.end() && it->second.size() == 8) std::memcpy(&value, it->second.data(), 8);
    KILN_CHECK(!__builtin_add_overflow(value, delta, &value), "the file store ", path_,
               ": the counter '", key, "' overflows int64 (a corrupted file?)");
    append(key, std::string(reinterpret_cast<const char*>(&value), 8));
    return value;
  }

  std::string describe() const override { return str("the file store ", path_); }

 private:
  struct Lock {
    Lock(int fd, int how, const std::string& path) : fd(fd) {
      while (::flock(fd, how) != 0) {
        KILN_CHECK(errno == EINTR, "the file store ", path,
                   ": cannot lock it: ", std::strerror(errno));
      }
    }
    ~Lock() { ::flock(fd, LOCK_UN); }
    int fd;
  };

  std::map<std::string, std::string> read_all_records() {
    std::map<std::string, std::string> out;
    off_t end = ::lseek(fd_, 0, SEEK_END);
    std::string bytes(static_cast<size_t>(std::max<off_t>(end, 0)), '\0');
    size_t done = 0;
    while (done < bytes.size()) {
      ssize_t n = ::pread(fd_, bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
      KILN_CHECK(n > 0 || (n < 0 && errno == EINTR), "the file store ", path_,
                 ": cannot read it: ", n < 0 ? std::strerror(errno) : "it shrank");
      if (n > 0) done += static_cast<size_t>(n);
    }
    std::string bad = wire::parse_file_records(bytes, out);
    KILN_CHECK(bad.empty(), "the file store ", path_, " is corrupted: ", bad,
               " (is it another program's file? remove it, or choose another init_method path)");
    return out;
  }

  void append(const std::string& key, const std::string& value) {
    std::string record(4, '\0');
    uint32_t key_size = static_cast<uint32_t>(key.size());
    uint64_t value_size = value.size();
    std::memcpy(record.data(), &key_size, 4);
    record += key;
    record.append(reinterpret_cast<const char*>(&value_size), 8);
    record += value;
    off_t end = ::lseek(fd_, 0, SEEK_END);
    ssize_t n = ::pwrite(fd_, record.data(), record.size(), end);
    KILN_CHECK(n == static_cast<ssize_t>(record.size()), "the file store ", path_,
               ": cannot write to it: ", n < 0 ? std::strerror(errno) : "short write");
  }

  std::string path_;
  int fd_ = -1;
};

class PrefixStore : public Store {
 public:
  PrefixStore(std::shared_ptr<Store> inner, std::string prefix)
      : inner_(std::move(inner)), prefix_(std::move(prefix) + "/") {}
  void set(const std::string& key, const std::string& value) override {
    inner_->set(prefix_ + key, value);
  }
  std::optional<std::string> get(const std::string& key, Millis timeout) override {
    return inner_->get(prefix_ + key, timeout);
  }
  int64_t add(const std::string& key, int64_t delta) override {
    return inner_->add(prefix_ + key, delta);
  }
  std::string describe() const override { return inner_->describe(); }

 private:
  std::shared_ptr<Store> inner_;
  std::string prefix_;
};

CStore* as_c(void* self) { return static_cast<CStore*>(self); }

kiln_status c_set(void* self, const char* key, const void* data, uint64_t size) {
  try {
    as_c(self)->store->set(key, std::string(static_cast<const char*>(data), size));
    return 0;
  } catch (const std::exception& e) {
    kiln::detail::set_plugin_error(KILN_ERROR_OTHER, e.what());
    return 1;
  }
}

kiln_status c_get(void* self, const char* key, int64_t timeout_ms,
                  void (*emit)(void* ctx, const void* data, uint64_t size), void* ctx) {
  try {
    CStore* s = as_c(self);
    std::optional<std::string> value = s->store->get(key, Millis(std::max<int64_t>(timeout_ms, 0)));
    KILN_CHECK(value.has_value(), "the key '", key, "' did not appear in ", s->store->describe(),
               " within ", timeout_ms, " ms");
    emit(ctx, value->data(), value->size());
    return 0;
  } catch (const std::exception& e) {
    kiln::detail::set_plugin_error(KILN_ERROR_OTHER, e.what());
    return 1;
  }
}

kiln_status c_add(void* self, const char* key, int64_t delta, int64_t* value) {
  try {
    *value = as_c(self)->store->add(key, delta);
    return 0;
  } catch (const std::exception& e) {
    kiln::detail::set_plugin_error(KILN_ERROR_OTHER, e.what());
    return 1;
  }
}

}  // namespace

std::shared_ptr<Store> make_file_store(const std::string& path, Millis timeout) {
  return std::make_shared<FileStore>(path, timeout);
}

std::shared_ptr<Store> make_prefix_store(std::shared_ptr<Store> inner, const std::string& prefix) {
  return std::make_shared<PrefixStore>(std::move(inner), prefix);
}

std::unique_ptr<CStore> make_c_store(std::shared_ptr<Store> store) {
  auto c = std::make_unique<CStore>();
  c->table = {sizeof(kiln_store), c.get(), c_set, c_get, c_add};
  c->store = std::move(store);
  return c;
}

}  // namespace kiln::distributed::detail
