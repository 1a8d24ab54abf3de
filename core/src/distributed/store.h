// The rendezvous stores of kiln::distributed: key-value stores that every rank of a job reaches,
// through which ranks join a group and backends exchange their addresses. Internal to
// libkiln_core. See Note [Rendezvous stores].
//
// Note [Rendezvous stores]: init_method picks the store. "env://" and "tcp://host:port" use a
// TCPStore: rank 0 serves it on the port (a thread of its process) and every rank, rank 0
// included, is a client with one connection. The server also knows which ranks are alive: a rank
// whose connection closes without saying goodbye is marked dead under kDeadKeyPrefix + rank, so a
// failed collective can name the rank that died. "file:///path" uses a FileStore: records
// appended to one file under an exclusive lock (flock), read by polling; the last process to
// leave removes the file, and a file left by a crashed job must be removed before the next (as
// PyTorch's). Gloo has FileStore and HashStore but no TCP store, and kiln's store must serve any
// backend, so both stores are kiln's: a few hundred lines, used only at rendezvous and on errors,
// never on the data path.
#pragma once

#include <kiln/sdk/plugin.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace kiln::distributed::detail {

using Millis = std::chrono::milliseconds;

// The key under which a TCPStore server marks rank r dead: kDeadKeyPrefix + "r".
inline constexpr const char* kDeadKeyPrefix = "kiln/dead/";

class Store {
 public:
  virtual ~Store() = default;
  virtual void set(const std::string& key, const std::string& value) = 0;
  // The value of `key` once it exists, waiting at most `timeout`; nullopt when it does not
  // appear in time. Throws kiln::Error when the store itself is lost.
  virtual std::optional<std::string> get(const std::string& key, Millis timeout) = 0;
  // Adds delta to the integer at `key` (0 when absent) and returns the new value.
  virtual int64_t add(const std::string& key, int64_t delta) = 0;
  // "the TCP store at 127.0.0.1:29500", for messages.
  virtual std::string describe() const = 0;
};

// Rank 0 serves (port 0: any free port), every rank connects; waits at most `timeout` for the
// server. Throws kiln::Error naming the address (port in use, no server).
std::shared_ptr<Store> make_tcp_store(const std::string& host, int port, int rank, bool is_server,
                                      Millis timeout);
std::shared_ptr<Store> make_file_store(const std::string& path, Millis timeout);
// Keys of `inner` under "prefix/".
std::shared_ptr<Store> make_prefix_store(std::shared_ptr<Store> inner, const std::string& prefix);

// A kiln_store for a plugin over `store`; the Store must outlive it. Errors become the calling
// thread's plugin error (the backend returns it as its own).
struct CStore {
  kiln_store table;
  std::shared_ptr<Store> store;
  Millis timeout;
};
std::unique_ptr<CStore> make_c_store(std::shared_ptr<Store> store);

}  // namespace kiln::distributed::detail
