// The TCPStore: rank 0 serves a key-value map on a port, every rank is a client. See Note
// [Rendezvous stores] in store.h. The wire format is private to kiln (store_wire.h, both ends are
// kiln's); requests of one client are answered in order.
#include "store.h"
#include "store_wire.h"

#include <kiln/error.h>

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

namespace kiln::distributed::detail {
namespace {

using kiln::detail::str;
using namespace wire;  // NOLINT: the opcodes

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

class SocketReader : public ByteReader {
 public:
  explicit SocketReader(int fd) : fd_(fd) {}
  bool read(void* data, size_t size) override { return read_all(fd_, data, size); }

 private:
  int fd_;
};

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

  // Note [The store outlives the failure]: rank 0 serves the store, and the survivors of a
  // failure ask it who died (diagnose in process_group.cpp). A rank 0 that leaves at once would
  // take the store with it, and a slower survivor would name rank 0 instead of the rank that
  // died. So rank 0, leaving, waits (at most `bound`) until every other rank has left or died.
  void linger(Millis bound) {
    std::unique_lock<std::mutex> lock(mutex_);
    ended_.wait_for(lock, bound, [this] { return others_ == 0; });
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
    Session session;
    Request r;
    SocketReader in(fd);
    std::string error;
    bool counted = false;
    while (true) {
      ReadStatus status = read_request(in, r, error);
      if (status == ReadStatus::kClosed) break;
      std::string reply;
      if (status == ReadStatus::kOk) {
        std::lock_guard<std::mutex> lock(mutex_);
        error = serve_request(data_, session, r, reply);
        if (session.rank > 0 && !counted && !session.said_bye) {
          counted = true;
          ++others_;
        } else if (counted && session.said_bye) {  // it has left
          counted = false;
          --others_;
          ended_.notify_all();
        }
      }
      if (!error.empty()) {  // not kiln's protocol: drop the client, and say why
        std::fprintf(stderr, "kiln: the TCP store (rank 0) dropped a client: %s\n", error.c_str());
        break;
      }
      if (!write_all(fd, reply.data(), reply.size())) break;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (session.rank >= 0 && !session.said_bye && !stopping_) {
      data_[kDeadKeyPrefix + std::to_string(session.rank)] = "1";
    }
    if (counted) --others_;
    ended_.notify_all();
  }

  int fd_ = -1;
  std::thread accepter_;
  std::mutex mutex_;
  bool stopping_ = false;
  std::vector<int> clients_;
  std::vector<std::thread> threads_;
  std::map<std::string, std::string> data_;
  int others_ = 0;  // connections of ranks other than 0 still open
  std::condition_variable ended_;
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
    receive_done();
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
    if (send_request(kBye, "", "")) {
      SocketReader in(fd_);
      bool closed = false;
      (void)read_done_reply(in, closed);
    }
  }

  // At exit, rank 0 keeps serving until the others have left, 30 s at most (whatever the
  // group's timeout: a survivor may call its next collective late). See Note [The store outlives
  // the failure].
  void linger() {
    if (server_ != nullptr) server_->linger(Millis(30000));
  }

  void set(const std::string& key, const std::string& value) override {
    std::lock_guard<std::mutex> lock(mutex_);
    request(kSet, key, value);
    receive_done();
  }

  std::optional<std::string> get(const std::string& key, Millis timeout) override {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    Millis pause(1);
    while (true) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        request(kGet, key, "");
        SocketReader in(fd_);
        std::optional<std::string> value;
        bool closed = false;
        std::string bad = read_get_reply(in, value, closed);
        check_reply(bad, closed, "get", key);
        if (value) return value;
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
    SocketReader in(fd_);
    int64_t value = 0;
    bool closed = false;
    std::string bad = read_add_reply(in, value, closed);
    check_reply(bad, closed, "add", key);
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
    std::string bytes = encode_request(op, key, value);
    return write_all(fd_, bytes.data(), bytes.size());
  }

  void request(uint8_t op, const std::string& key, const std::string& value) {
    KILN_CHECK(key.size() <= kMaxKeyBytes, "the rendezvous store: key '", key.substr(0, 64),
               "...' is ", key.size(), " bytes (at most ", kMaxKeyBytes, ")");
    KILN_CHECK(value.size() <= kMaxValueBytes, "the rendezvous store: the value of key '", key,
               "' is ", value.size(), " bytes (at most ", kMaxValueBytes, ")");
    KILN_CHECK(send_request(op, key, value), lost());
  }
  void receive_done() {
    SocketReader in(fd_);
    bool closed = false;
    std::string bad = read_done_reply(in, closed);
    check_reply(bad, closed, "a request", "");
  }
  void check_reply(const std::string& bad, bool closed, const char* op, const std::string& key) {
    KILN_CHECK(!closed, lost());
    KILN_CHECK(bad.empty(), describe(), " answered ", op, key.empty() ? "" : " '", key,
               key.empty() ? "" : "'", " with bytes that are not kiln's protocol: ", bad,
               " (is MASTER_PORT another program's port?)");
  }

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
  for (TcpStore* s : clients().live) s->linger();
}

}  // namespace

std::shared_ptr<Store> make_tcp_store(const std::string& host, int port, int rank, bool is_server,
                                      Millis timeout) {
  return std::make_shared<TcpStore>(host, port, rank, is_server, timeout);
}

}  // namespace kiln::distributed::detail
