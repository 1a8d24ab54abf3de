// The TCPStore: rank 0 serves a key-value map on a port, every rank is a client. See Note
// [Rendezvous stores] in store.h. The wire format is private to kiln (both ends are this file):
// a request is an opcode byte, a u32 key length and the key, a u64 value length and the value;
// the answer depends on the opcode. Requests of one client are answered in order.
#include "store.h"

#include <kiln/error.h>

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

namespace kiln::distributed::detail {
namespace {

using kiln::detail::str;

enum Op : uint8_t { kSet = 1, kGet = 2, kAdd = 3, kHello = 4, kBye = 5 };

bool write_all(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = ::send(fd, p, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool read_all(int fd, void* data, size_t size) {
  char* p = static_cast<char*>(data);
  while (size > 0) {
    ssize_t n = ::recv(fd, p, size, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

struct Request {
  uint8_t op = 0;
  std::string key, value;
};

bool read_request(int fd, Request& r) {
  uint32_t key_size = 0;
  uint64_t value_size = 0;
  if (!read_all(fd, &r.op, 1) || !read_all(fd, &key_size, 4)) return false;
  if (key_size > (1u << 20)) return false;
  r.key.resize(key_size);
  if (!read_all(fd, r.key.data(), key_size) || !read_all(fd, &value_size, 8)) return false;
  if (value_size > (uint64_t{1} << 30)) return false;
  r.value.resize(value_size);
  return read_all(fd, r.value.data(), value_size);
}

// The server: an accepting thread and a thread per client (a job has few ranks).
class Server {
 public:
  Server(int port, Millis timeout) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    KILN_CHECK(fd_ >= 0, "init_process_group: rank 0 cannot open a socket for the TCP store: ",
               std::strerror(errno));
    int one = 1;
    ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_ANY);
    addr.sin_port = htons(static_cast<uint16_t>(port));
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(fd_, 128) != 0) {
      int err = errno;
      ::close(fd_);
      KILN_CHECK(false, "init_process_group: rank 0 cannot serve the TCP store on port ", port,
                 ": ", std::strerror(err),
                 err == EADDRINUSE ? " (another program, or a job still running, holds the port: "
                                     "choose another MASTER_PORT)"
                                   : "");
    }
    (void)timeout;
    accepter_ = std::thread([this] { accept_loop(); });
  }

  ~Server() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
      for (int c : clients_) ::shutdown(c, SHUT_RDWR);
    }
    ::shutdown(fd_, SHUT_RDWR);
    accepter_.join();
    for (std::thread& t : threads_) t.join();
    ::close(fd_);
  }

 private:
  void accept_loop() {
    while (true) {
      int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      std::lock_guard<std::mutex> lock(mutex_);
      if (stopping_) {
        if (c >= 0) ::close(c);
        return;
      }
      if (c < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        return;
      }
      int one = 1;
      ::setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      clients_.push_back(c);
      threads_.emplace_back([this, c] { serve(c); });
    }
  }

  void serve(int fd) {
    int64_t rank = -1;
    bool said_bye = false;
    Request r;
    while (read_request(fd, r)) {
      std::unique_lock<std::mutex> lock(mutex_);
      bool ok = true;
      if (r.op == kSet) {
        data_[r.key] = r.value;
        lock.unlock();
        uint8_t done = 0;
        ok = write_all(fd, &done, 1);
      } else if (r.op == kGet) {
        auto it = data_.find(r.key);
        uint8_t found = it != data_.end() ? 1 : 0;
        std::string value = found ? it->second : std::string();
        lock.unlock();
        uint64_t size = value.size();
        ok = write_all(fd, &found, 1) &&
             (!found || (write_all(fd, &size, 8) && write_all(fd, value.data(), value.size())));
      } else if (r.op == kAdd && r.value.size() == 8) {
        int64_t delta = 0, value = 0;
        std::memcpy(&delta, r.value.data(), 8);
        auto it = data_.find(r.key);
        if (it != data_.end() && it->second.size() == 8) std::memcpy(&value, it->second.data(), 8);
        value += delta;
        data_[r.key] = std::string(reinterpret_cast<const char*>(&value), 8);
        lock.unlock();
        ok = write_all(fd, &value, 8);
      } else if ((r.op == kHello && r.value.size() == 8) || r.op == kBye) {
        if (r.op == kHello) std::memcpy(&rank, r.value.data(), 8);
        said_bye = r.op == kBye;
        lock.unlock();
        uint8_t done = 0;
        ok = write_all(fd, &done, 1);
      } else {
        break;  // not kiln's protocol: drop the client
      }
      if (!ok) break;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (rank >= 0 && !said_bye && !stopping_) data_[kDeadKeyPrefix + std::to_string(rank)] = "1";
  }

  int fd_ = -1;
  std::thread accepter_;
  std::mutex mutex_;
  bool stopping_ = false;
  std::vector<int> clients_;
  std::vector<std::thread> threads_;
  std::map<std::string, std::string> data_;
};

class TcpStore;

// Note [Leaving at exit]: a process that exits through exit() (or returns from main) without
// destroy_process_group has left, not died: an atexit hook says goodbye for every live client,
// so the server marks dead only the ranks that crashed, were killed or called _exit.
struct Clients {
  std::mutex mutex;
  std::vector<TcpStore*> live;
};

Clients& clients() {
  static auto* c = new Clients();  // leaked: used by the atexit hook
  return *c;
}

void say_goodbye_at_exit();

class TcpStore : public Store {
 public:
  TcpStore(const std::string& host, int port, int rank, bool is_server, Millis timeout)
      : host_(host), port_(port), timeout_(timeout) {
    if (is_server) server_ = std::make_unique<Server>(port, timeout);
    connect(timeout);
    int64_t r = rank;
    request(kHello, "", std::string(reinterpret_cast<const char*>(&r), 8));
    uint8_t done = 0;
    receive(&done, 1);
    static std::once_flag hook;
    std::call_once(hook, [] { std::atexit(say_goodbye_at_exit); });
    std::lock_guard<std::mutex> lock(clients().mutex);
    clients().live.push_back(this);
  }

  ~TcpStore() override {
    {
      std::lock_guard<std::mutex> lock(clients().mutex);
      auto& live = clients().live;
      live.erase(std::remove(live.begin(), live.end(), this), live.end());
    }
    goodbye();
    if (fd_ >= 0) ::close(fd_);
  }

  // Tells the server this rank leaves (not dies); once.
  void goodbye() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (fd_ < 0 || said_goodbye_) return;
    said_goodbye_ = true;
    uint8_t done = 0;
    if (send_request(kBye, "", "")) read_all(fd_, &done, 1);
  }

  void set(const std::string& key, const std::string& value) override {
    std::lock_guard<std::mutex> lock(mutex_);
    request(kSet, key, value);
    uint8_t done = 0;
    receive(&done, 1);
  }

  std::optional<std::string> get(const std::string& key, Millis timeout) override {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    Millis pause(1);
    while (true) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        request(kGet, key, "");
        uint8_t found = 0;
        receive(&found, 1);
        if (found) {
          uint64_t size = 0;
          receive(&size, 8);
          std::string value(size, '\0');
          receive(value.data(), size);
          return value;
        }
      }
      auto now = std::chrono::steady_clock::now();
      if (now >= deadline) return std::nullopt;
      std::this_thread::sleep_for(
          std::min<Millis>(pause, std::chrono::duration_cast<Millis>(deadline - now)));
      pause = std::min<Millis>(pause * 2, Millis(20));
    }
  }

  int64_t add(const std::string& key, int64_t delta) override {
    std::lock_guard<std::mutex> lock(mutex_);
    request(kAdd, key, std::string(reinterpret_cast<const char*>(&delta), 8));
    int64_t value = 0;
    receive(&value, 8);
    return value;
  }

  std::string describe() const override {
    return str("the TCP store at ", host_, ":", port_, " (served by rank 0)");
  }

 private:
  void connect(Millis timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    std::string last_error = "no answer";
    while (true) {
      addrinfo hints{};
      hints.ai_family = AF_INET;
      hints.ai_socktype = SOCK_STREAM;
      addrinfo* found = nullptr;
      int rc = ::getaddrinfo(host_.c_str(), std::to_string(port_).c_str(), &hints, &found);
      KILN_CHECK(rc == 0, "init_process_group: cannot resolve the store's host '", host_,
                 "': ", ::gai_strerror(rc), " (check MASTER_ADDR or the tcp:// address)");
      for (addrinfo* a = found; a != nullptr && fd_ < 0; a = a->ai_next) {
        int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) continue;
        if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
          fd_ = fd;
        } else {
          last_error = std::strerror(errno);
          ::close(fd);
        }
      }
      ::freeaddrinfo(found);
      if (fd_ >= 0) break;
      KILN_CHECK(std::chrono::steady_clock::now() < deadline, "init_process_group: no TCP store ",
                 "answered at ", host_, ":", port_, " within ", timeout.count(), " ms (",
                 last_error, "): rank 0 serves it; is rank 0 running, and are MASTER_ADDR and ",
                 "MASTER_PORT the same on every rank?");
      std::this_thread::sleep_for(Millis(20));
    }
    int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    // every answer is bounded: a server that stops answering is an error, not a hang
    timeval tv{};
    tv.tv_sec = static_cast<time_t>(timeout_.count() / 1000);
    tv.tv_usec = static_cast<suseconds_t>((timeout_.count() % 1000) * 1000);
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }

  bool send_request(uint8_t op, const std::string& key, const std::string& value) {
    uint32_t key_size = static_cast<uint32_t>(key.size());
    uint64_t value_size = value.size();
    return write_all(fd_, &op, 1) && write_all(fd_, &key_size, 4) &&
           write_all(fd_, key.data(), key.size()) && write_all(fd_, &value_size, 8) &&
           write_all(fd_, value.data(), value.size());
  }

  void request(uint8_t op, const std::string& key, const std::string& value) {
    KILN_CHECK(send_request(op, key, value), lost());
  }
  void receive(void* data, size_t size) { KILN_CHECK(read_all(fd_, data, size), lost()); }

  std::string lost() const {
    return str(describe(), " closed the connection or stopped answering: rank 0 has died or ",
               "left the job");
  }

  std::string host_;
  int port_;
  Millis timeout_;
  std::unique_ptr<Server> server_;
  std::mutex mutex_;
  int fd_ = -1;
  bool said_goodbye_ = false;
};

void say_goodbye_at_exit() {
  std::lock_guard<std::mutex> lock(clients().mutex);
  for (TcpStore* s : clients().live) s->goodbye();
}

}  // namespace

std::shared_ptr<Store> make_tcp_store(const std::string& host, int port, int rank, bool is_server,
                                      Millis timeout) {
  return std::make_shared<TcpStore>(host, port, rank, is_server, timeout);
}

}  // namespace kiln::distributed::detail
