// A gloo process group: a gloo context over TCP, a worker thread that runs the collectives in
// the order they were launched (every rank launches the same sequence), and works to wait on.
// See Note [Gloo works].
//
// Note [Gloo works]: a collective is queued and runs on the group's worker thread: first a
// header exchange (an all-gather of what each rank called: operation, dtype, elements, root or
// reduction), so that ranks whose calls differ fail with a message naming them before any data
// moves, then gloo's algorithm, bounded by the group's timeout (gloo's own). Point-to-point calls
// do not queue behind collectives (a send and a recv between two ranks would deadlock): a send
// posts its header and data at once; a recv runs on a thread of its own, reads the header,
// checks it, then reads the data. A work records its outcome; wait() reports it on the waiting
// thread, bounded.
#pragma once

#include <kiln/sdk/comm.hpp>
#include <kiln/sdk/plugin.h>

#include <gloo/rendezvous/context.h>
#include <gloo/transport/unbound_buffer.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace kiln_gloo {

using Millis = std::chrono::milliseconds;

// Ranks whose calls differ (sizes, dtypes, operations): reported as KILN_ERROR_VALUE.
struct MismatchError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Work {
 public:
  virtual ~Work();
  // Marks the work finished; `error` empty for success; `kind` a kiln_error_kind.
  void finish(std::string error, int32_t kind = KILN_ERROR_OTHER);
  // 0 when it succeeded; 1 with `error` and `kind` set when it failed or is not done in time.
  int wait(Millis timeout, std::string& error, int32_t& kind);
  bool completed();

  std::function<void()> run;  // a queued collective's body; throws on failure
  std::unique_ptr<gloo::transport::UnboundBuffer> header, data;  // a send's buffers
  kiln::sdk::comm::P2pHeader header_bytes{};
  std::thread thread;  // a recv's
  Millis timeout{0};

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;
  std::string error_;
  int32_t kind_ = KILN_ERROR_OTHER;
};

// What one rank called, compared across ranks before a collective moves data. See Note [Comm
// headers] in kiln/sdk/comm.hpp.
using kiln::sdk::comm::Header;
using kiln::sdk::comm::kAllGather;
using kiln::sdk::comm::kAllReduce;
using kiln::sdk::comm::kBarrier;
using kiln::sdk::comm::kBroadcast;
using kiln::sdk::comm::kind_name;
using kiln::sdk::comm::kReduceScatter;

class Group {
 public:
  Group(const kiln_comm_group_options& options);
  ~Group();

  // Queues a collective: `body` runs on the worker after the header check.
  std::shared_ptr<Work> launch(const Header& header, std::function<void()> body);
  std::shared_ptr<Work> send(const kiln_tensor& t, int peer, int tag);
  std::shared_ptr<Work> recv(const kiln_tensor& t, int peer, int tag);

  const std::shared_ptr<gloo::rendezvous::Context>& context() const { return context_; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  Millis timeout() const { return timeout_; }
  uint32_t next_tag() { return tag_++; }

 private:
  void work_loop();
  void check_headers(const Header& mine);

  std::shared_ptr<gloo::rendezvous::Context> context_;
  int rank_, size_;
  Millis timeout_;
  std::string name_;
  uint32_t tag_ = 1;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<Work>> queue_;
  bool stopping_ = false;
  std::string broken_;  // after a failure gloo's pairs are unusable: later works fail at once
  std::thread worker_;
};

}  // namespace kiln_gloo
