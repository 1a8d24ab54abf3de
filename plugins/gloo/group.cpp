#include "group.hpp"

#include "reduce.hpp"
#include "store.hpp"

#include <gloo/allgather.h>
#include <gloo/common/error.h>
#include <gloo/transport/tcp/device.h>

#include <cstdlib>
#include <cstring>

#include <sched.h>
#include <signal.h>
#include <unistd.h>

namespace kiln_gloo {
namespace {

// Note [Yield between the header and the data]: a collective larger than the header's inline
// bytes is two gloo operations back to back: the header exchange, then gloo's algorithm. gloo's
// TCP transport sends a buffer only after its peer announced the matching receive (a
// notification its device thread handles), and that device thread handles a pair's events only
// when it can take the pair's lock without waiting (else it returns to epoll, which reports the
// same event at once). Right after the header exchange the peers' announcements for the data
// arrive while this thread posts its own sends and receives under those locks; where the two
// threads share a CPU (ranks pinned to one CPU each, as kiln-dist-bench and dist_bench.py do,
// or a loaded machine) the device thread then spins until the scheduler's next tick preempts it,
// and the call stalls for milliseconds. kiln-dist-bench's 256 KiB all_reduce took 3.5 ms at the
// 10th percentile against PyTorch's 0.25 ms (whose ProcessGroupGloo runs one gloo operation per
// call); without the header exchange, 0.25 ms. One sched_yield() between the two operations lets
// the device thread take the announcements first: 0.3 ms, and the header check stays.

// Point-to-point slots: a prefix gloo's collectives do not use, the tag, header or data.
uint64_t p2p_slot(int tag, int part) {
  return (uint64_t{0x20} << 56) | (static_cast<uint64_t>(tag) << 1) | static_cast<uint64_t>(part);
}

// gloo's TCP device: GLOO_SOCKET_IFNAME names an interface (as PyTorch's); otherwise this host's
// name, or the loopback address when the name does not resolve.
std::shared_ptr<gloo::transport::Device> make_device() {
  gloo::transport::tcp::attr attr;
  const char* iface = std::getenv("GLOO_SOCKET_IFNAME");
  if (iface != nullptr && *iface != '\0') {
    attr.iface = iface;
    return gloo::transport::tcp::CreateDevice(attr);
  }
  char name[256] = {0};
  if (::gethostname(name, sizeof name - 1) == 0) {
    try {
      attr.hostname = name;
      return gloo::transport::tcp::CreateDevice(attr);
    } catch (const std::exception&) {  // the name does not resolve: loopback
    }
  }
  attr.hostname = "127.0.0.1";
  return gloo::transport::tcp::CreateDevice(attr);
}

}  // namespace

Work::~Work() {
  if (thread.joinable()) thread.join();
}

void Work::finish(std::string error, int32_t kind) {
  std::lock_guard<std::mutex> lock(mutex_);
  done_ = true;
  error_ = std::move(error);
  kind_ = kind;
  cv_.notify_all();
}

int Work::wait(Millis bound, std::string& error, int32_t& kind) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!done_ && group != nullptr) {  // See Note [Gloo works]
    Group* g = group;
    lock.unlock();
    g->run_inline(shared_from_this());
    lock.lock();
  }
  if (header != nullptr && !done_) {  // a send: wait for both buffers on this thread
    lock.unlock();
    std::string failure;
    try {
      auto deadline = std::chrono::steady_clock::now() + bound;
      header->waitSend(deadline);
      data->waitSend(deadline);
    } catch (const std::exception& e) {
      failure = e.what();
    }
    finish(failure);
    lock.lock();
  }
  if (!cv_.wait_for(lock, bound, [this] { return done_; })) {
    error = "no answer within " + std::to_string(bound.count()) + " ms";
    return 1;
  }
  if (error_.empty()) return 0;
  error = error_;
  kind = kind_;
  return 1;
}

bool Work::completed() {
  std::lock_guard<std::mutex> lock(mutex_);
  return done_;
}

// Note [SIGPIPE]: a rank that died leaves its sockets closed, and gloo writes to them with
// writev, so the first write to one raises SIGPIPE, whose default action ends this process
// before gloo reports the closed connection (a survivor then dies instead of naming the dead
// rank: status 141 under load, when a write comes before the read that sees the end of
// file). As Python does for PyTorch, the plugin ignores SIGPIPE when its action is the default;
// a handler the program installed stays.
static void ignore_sigpipe() {
  struct sigaction current {};
  if (::sigaction(SIGPIPE, nullptr, &current) == 0 && current.sa_handler == SIG_DFL) {
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    ::sigemptyset(&ignore.sa_mask);
    ::sigaction(SIGPIPE, &ignore, nullptr);
  }
}

Group::Group(const kiln_comm_group_options& o)
    : rank_(o.rank), size_(o.world_size), timeout_(o.timeout_ms), name_(o.group_name) {
  ignore_sigpipe();  // See Note [SIGPIPE]
  StoreAdapter store(o.store, timeout_);
  auto device = make_device();
  context_ = std::make_shared<gloo::rendezvous::Context>(rank_, size_);
  context_->setTimeout(timeout_);
  context_->connectFullMesh(store, device);
  worker_ = std::thread([this] { work_loop(); });
}

Group::~Group() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    cv_.notify_all();
  }
  worker_.join();
  for (auto& w : queue_) w->finish("the group was destroyed before the operation ran");
}

std::shared_ptr<Work> Group::launch(const Header& header, const void* inline_data,
                                    size_t inline_bytes,
                                    std::function<void(const Gathered&)> body) {
  auto work = std::make_shared<Work>();
  work->group = this;
  work->run = [this, header, inline_data, inline_bytes, body = std::move(body)] {
    Gathered gathered;
    exchange(header, inline_data, inline_bytes, gathered);
    // gloo's algorithm follows: let gloo's device thread take the peers' first messages for it
    // before this thread posts its own (See Note [Yield between the header and the data])
    if (inline_bytes == 0 && header.kind != kBarrier) ::sched_yield();
    body(gathered);
  };
  std::lock_guard<std::mutex> lock(mutex_);
  queue_.push_back(work);
  cv_.notify_all();
  return work;
}

void Group::work_loop() {
  while (true) {
    std::shared_ptr<Work> work;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      cv_.wait(lock, [this] { return stopping_ || (!queue_.empty() && !running_); });
      if (queue_.empty()) return;
      work = queue_.front();
      queue_.pop_front();
      running_ = true;
    }
    execute(*work);
    std::lock_guard<std::mutex> lock(mutex_);
    running_ = false;
    cv_.notify_all();
  }
}

bool Group::run_inline(const std::shared_ptr<Work>& work) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (running_ || stopping_ || queue_.empty() || queue_.front() != work) return false;
    queue_.pop_front();
    running_ = true;
  }
  execute(*work);
  std::lock_guard<std::mutex> lock(mutex_);
  running_ = false;
  cv_.notify_all();
  return true;
}

void Group::execute(Work& work) {
  if (!broken_.empty()) {
    work.finish("an earlier operation of the group failed (" + broken_ + ")");
    return;
  }
  try {
    work.run();
    work.finish("");
  } catch (const MismatchError& e) {
    work.finish(e.what(), KILN_ERROR_VALUE);  // the pairs stay usable
  } catch (const std::exception& e) {
    std::string why = e.what();
    // a header mismatch leaves the pairs usable; a transport failure does not
    if (dynamic_cast<const gloo::IoException*>(&e) != nullptr) broken_ = why;
    work.finish(why);
  }
}

void Group::exchange(const Header& mine, const void* inline_data, size_t inline_bytes,
                     Gathered& gathered) {
  const size_t slot = sizeof(Header) + kInlineBytes;
  std::vector<char> own(slot, 0);
  std::memcpy(own.data(), &mine, sizeof(Header));
  if (inline_bytes > 0 && inline_bytes <= kInlineBytes) {
    std::memcpy(own.data() + sizeof(Header), inline_data, inline_bytes);
  }
  gathered.slots.assign(slot * static_cast<size_t>(size_), 0);
  gloo::AllgatherOptions opts(context_);
  opts.setInput(own.data(), slot);
  opts.setOutput(gathered.slots.data(), gathered.slots.size());
  opts.setTag(next_tag());
  opts.setTimeout(timeout_);
  gloo::allgather(opts);
  std::vector<Header> all(static_cast<size_t>(size_));
  for (int r = 0; r < size_; ++r) {
    std::memcpy(&all[static_cast<size_t>(r)], gathered.slots.data() + static_cast<size_t>(r) * slot,
                sizeof(Header));
  }
  std::string bad = kiln::sdk::comm::compare_headers(all.data(), size_);
  if (!bad.empty()) throw MismatchError(bad);
}

std::shared_ptr<Work> Group::send(const kiln_tensor& t, int peer, int tag) {
  auto work = std::make_shared<Work>();
  int64_t numel = 1;
  for (int d = 0; d < t.ndim; ++d) numel *= t.sizes[d];
  work->header_bytes = {t.dtype, numel};
  work->header = context_->createUnboundBuffer(&work->header_bytes, sizeof work->header_bytes);
  work->data = context_->createUnboundBuffer(t.data, numel * dtype_size(t.dtype));
  work->header->send(peer, p2p_slot(tag, 0));
  work->data->send(peer, p2p_slot(tag, 1));
  return work;
}

std::shared_ptr<Work> Group::recv(const kiln_tensor& t, int peer, int tag) {
  auto work = std::make_shared<Work>();
  int64_t numel = 1;
  for (int d = 0; d < t.ndim; ++d) numel *= t.sizes[d];
  int32_t dtype = t.dtype;
  void* data = t.data;
  auto context = context_;
  Millis bound = timeout_;
  Work* w = work.get();
  work->thread = std::thread([w, context, bound, numel, dtype, data, peer, tag] {
    std::string failure;
    int32_t kind = KILN_ERROR_OTHER;
    try {
      auto deadline = std::chrono::steady_clock::now() + bound;
      kiln::sdk::comm::P2pHeader theirs{};
      auto header = context->createUnboundBuffer(&theirs, sizeof theirs);
      header->recv(peer, p2p_slot(tag, 0));
      header->waitRecv(deadline);
      auto check = kiln::sdk::comm::check_p2p(theirs, dtype, numel, peer, tag);
      if (check.malformed) throw std::runtime_error(check.error);
      // a mismatch: drain the data (when it fits in memory), then fail
      constexpr int64_t kMaxDrain = int64_t{1} << 30;
      if (!check.error.empty() && check.drain_bytes > kMaxDrain) {
        throw std::runtime_error(check.error + "; its " + std::to_string(check.drain_bytes) +
                                 " bytes are not drained, so the pair is left unusable");
      }
      bool same = check.error.empty();
      std::vector<char> scratch(same ? 0 : static_cast<size_t>(check.drain_bytes));
      auto buffer =
          context->createUnboundBuffer(same ? data : scratch.data(),
                                       same ? static_cast<size_t>(numel) * dtype_size(dtype)
                                            : scratch.size());
      buffer->recv(peer, p2p_slot(tag, 1));
      buffer->waitRecv(deadline);
      if (!same) {
        failure = check.error;
        kind = KILN_ERROR_VALUE;
      }
    } catch (const std::exception& e) {
      failure = e.what();
    }
    w->finish(failure, kind);
  });
  return work;
}

}  // namespace kiln_gloo
