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
// thread, bounded. A thread that waits for a collective still queued, next in line, while the
// worker is idle runs it itself: a blocking collective then costs no thread switch (the worker
// and the waiter never run two works at once, and the order stays the launch order).
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

class Group;

class Work : public std::enable_shared_from_this<Work> {
 public:
  virtual ~Work();
  // Marks the work finished; `error` empty for success; `kind` a kiln_error_kind.
  void finish(std::string error, int32_t kind = KILN_ERROR_OTHER);
  // 0 when it succeeded; 1 with `error` and `kind` set when it failed or is not done in time.
  int wait(Millis timeout, std::string& error, int32_t& kind);
  bool completed();

  std::function<void()> run;  // a queued collective's body; throws on failure
  // A queued collective's group, set before the work is queued (wait() may run it: Note [Gloo
  // works]); the group outlives its works' waits.
  Group* group = nullptr;
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

// Note [Small collectives ride the header]: the header exchange is an all-gather of a fixed-size
// slot per rank, the same size whatever the call (so ranks whose calls differ still exchange
// equal sizes): the 32-byte header, then up to kInlineBytes of the caller's data. A collective
// whose data fits (all_reduce, broadcast, all_gather, reduce_scatter of a few KiB) is complete
// after that one exchange: each rank reduces or copies the slots locally, in rank order, so every
// rank gets the same bits. Larger ones run gloo's algorithm after the check; a barrier is the
// exchange alone.
inline constexpr size_t kInlineBytes = 16 << 10;

// The slots every rank contributed to the header exchange.
struct Gathered {
  std::vector<char> slots;
  // Rank r's inline data (kInlineBytes; the caller's bytes first).
  const char* data(int r) const {
    return slots.data() + static_cast<size_t>(r) * (sizeof(Header) + kInlineBytes) + sizeof(Header);
  }
};

class Group {
 public:
  Group(const kiln_comm_group_options& options);
  ~Group();

  // Queues a collective: `body` runs on the worker after the header exchange, which carried
  // `inline_bytes` (at most kInlineBytes, else 0) from `inline_data` in this rank's slot. See
  // Note [Small collectives ride the header].
  std::shared_ptr<Work> launch(const Header& header, const void* inline_data, size_t inline_bytes,
                               std::function<void(const Gathered&)> body);
  std::shared_ptr<Work> send(const kiln_tensor& t, int peer, int tag);
  std::shared_ptr<Work> recv(const kiln_tensor& t, int peer, int tag);
  // Runs `work` on the calling thread when it is next in the queue and the worker is idle (a
  // waiting thread saves two thread switches); false otherwise.
  bool run_inline(const std::shared_ptr<Work>& work);

  const std::shared_ptr<gloo::rendezvous::Context>& context() const { return context_; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  Millis timeout() const { return timeout_; }
  uint32_t next_tag() { return tag_++; }

 private:
  void work_loop();
  void execute(Work& work);
  void exchange(const Header& mine, const void* inline_data, size_t inline_bytes,
                Gathered& gathered);

  std::shared_ptr<gloo::rendezvous::Context> context_;
  int rank_, size_;
  Millis timeout_;
  std::string name_;
  uint32_t tag_ = 1;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<Work>> queue_;
  bool stopping_ = false;
  bool running_ = false;  // a work is running (on the worker or a waiting thread)
  std::string broken_;    // after a failure gloo's pairs are unusable: later works fail at once
  std::thread worker_;
};

}  // namespace kiln_gloo
