// The profiler's recording: a session, per-thread event buffers and stacks of open calls, and
// the Observe layer's scope (kiln/dispatch.h), which also tells whether a trace records a call.
#include "profiler_internal.h"

#include <kiln/dispatch.h>
#include <kiln/error.h>

#include <algorithm>
#include <chrono>
#include <mutex>

namespace kiln::profiler {
namespace detail {
namespace {

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct Frame {
  Event event;
  int64_t start_abs = 0;
  int64_t child_ns = 0;
  uint64_t bytes_at_start = 0;
  int64_t child_bytes = 0;
};

// One thread's events; owned by the session list too, so that it outlives its thread.
struct ThreadBuffer {
  std::mutex mutex;  // events: appended by the thread, taken by stop()
  std::vector<Event> events;
  std::vector<Frame> stack;  // touched by its thread only
  uint64_t session = 0;
  uint64_t thread = 0;
};

struct Session {
  std::mutex mutex;
  uint64_t id = 0;  // of the running session; 0: none ran yet
  bool running = false;
  int64_t start_ns = 0;
  ProfileOptions options;
  std::vector<std::shared_ptr<ThreadBuffer>> buffers;
  uint64_t next_thread = 0;
};

Session& session() {
  static Session* s = new Session();  // outlives threads that end after main
  return *s;
}

std::atomic<uint64_t> running_session{0};  // 0 when none runs

ThreadBuffer* this_thread_buffer() {
  static thread_local std::shared_ptr<ThreadBuffer> buffer;
  uint64_t id = running_session.load(std::memory_order_acquire);
  if (id == 0) return nullptr;
  if (!buffer || buffer->session != id) {
    Session& s = session();
    std::lock_guard<std::mutex> lock(s.mutex);
    if (!s.running || s.id != id) return nullptr;
    uint64_t thread = buffer ? buffer->thread : s.next_thread++;
    buffer = std::make_shared<ThreadBuffer>();
    buffer->session = id;
    buffer->thread = thread;
    s.buffers.push_back(buffer);
  }
  return buffer.get();
}

ThreadBuffer* current_buffer() {
  // the buffer of the frames already open on this thread (a profile may stop meanwhile)
  return this_thread_buffer();
}

}  // namespace

int push_frame(const char* name, bool user_range) {
  ThreadBuffer* b = this_thread_buffer();
  if (b == nullptr) return -1;
  Frame f;
  f.event.name = name;
  f.event.user_range = user_range;
  f.event.thread = b->thread;
  f.event.depth = static_cast<int>(b->stack.size());
  f.bytes_at_start = kiln::detail::thread_allocated_bytes();
  b->stack.push_back(std::move(f));
  b->stack.back().start_abs = now_ns();
  return static_cast<int>(b->stack.size()) - 1;
}

void add_frame_input(int frame, const Tensor* t) {
  ThreadBuffer* b = current_buffer();
  if (b == nullptr || frame >= static_cast<int>(b->stack.size())) return;
  Event& e = b->stack[static_cast<size_t>(frame)].event;
  if (!session().options.record_shapes) {
    if (e.device.empty() && t != nullptr && t->defined()) e.device = t->device().str();
    return;
  }
  if (t == nullptr || !t->defined()) {
    e.input_shapes.emplace_back();
    e.input_dtypes.emplace_back();
    return;
  }
  e.input_shapes.emplace_back(t->sizes().begin(), t->sizes().end());
  e.input_dtypes.emplace_back(dtype_name(t->dtype()));
  if (e.device.empty()) e.device = t->device().str();
}

void pop_frame(int frame) {
  int64_t end = now_ns();
  ThreadBuffer* b = current_buffer();
  if (b == nullptr || frame != static_cast<int>(b->stack.size()) - 1) {
    if (b != nullptr && frame < static_cast<int>(b->stack.size())) {
      b->stack.resize(static_cast<size_t>(frame));
    }
    return;
  }
  Frame f = std::move(b->stack.back());
  b->stack.pop_back();
  Session& s = session();
  f.event.start_ns = f.start_abs - s.start_ns;
  f.event.duration_ns = end - f.start_abs;
  f.event.self_ns = f.event.duration_ns - f.child_ns;
  if (s.options.profile_memory) {
    f.event.bytes = static_cast<int64_t>(kiln::detail::thread_allocated_bytes() - f.bytes_at_start);
    f.event.self_bytes = f.event.bytes - f.child_bytes;
  }
  if (!b->stack.empty()) {
    b->stack.back().child_ns += f.event.duration_ns;
    b->stack.back().child_bytes += f.event.bytes;
  }
  std::lock_guard<std::mutex> lock(b->mutex);
  b->events.push_back(std::move(f.event));
}

}  // namespace detail

bool is_profiling() { return detail::running_session.load(std::memory_order_relaxed) != 0; }

Profile::Profile(ProfileOptions options) : options_(options) {
  detail::Session& s = detail::session();
  std::lock_guard<std::mutex> lock(s.mutex);
  KILN_CHECK(!s.running, "Profile: a profile is already recording; stop it before starting ",
             "another (one profile at a time in a process)");
  s.running = true;
  ++s.id;
  s.options = options;
  s.buffers.clear();
  s.next_thread = 0;
  s.start_ns = detail::now_ns();
  detail::running_session.store(s.id, std::memory_order_release);
  kiln::detail::global_included_keys.fetch_or(key_bit(DispatchKey::Observe));
  active_ = true;
}

Profile::~Profile() { stop(); }

void Profile::stop() {
  if (!active_) return;
  active_ = false;
  detail::Session& s = detail::session();
  std::vector<std::shared_ptr<detail::ThreadBuffer>> buffers;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    kiln::detail::global_included_keys.fetch_and(
        static_cast<uint8_t>(~key_bit(DispatchKey::Observe)));
    detail::running_session.store(0, std::memory_order_release);
    s.running = false;
    buffers.swap(s.buffers);
  }
  for (auto& b : buffers) {
    std::lock_guard<std::mutex> lock(b->mutex);
    for (Event& e : b->events) events_.push_back(std::move(e));
    b->events.clear();
  }
  std::stable_sort(events_.begin(), events_.end(), [](const Event& a, const Event& b) {
    return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.depth < b.depth;
  });
}

const std::vector<Event>& Profile::events() {
  stop();
  return events_;
}

record_function::record_function(std::string name) {
  if (!is_profiling()) return;
  detail::ThreadBuffer* b = detail::this_thread_buffer();
  if (b == nullptr) return;
  frame_ = detail::push_frame("", true);
  if (frame_ >= 0) b->stack[static_cast<size_t>(frame_)].event.name = std::move(name);
}

record_function::~record_function() {
  if (frame_ >= 0) detail::pop_frame(frame_);
}

}  // namespace kiln::profiler

namespace kiln::detail {

ObserveScope::ObserveScope(const OperatorBase& op) {
  LocalDispatchState& s = local_dispatch_state();
  tracing_ = s.tracer != nullptr && s.observe_depth == s.trace_depth;
  ++s.observe_depth;
  if (global_included_keys.load(std::memory_order_relaxed) & key_bit(DispatchKey::Observe)) {
    frame_ = profiler::detail::push_frame(op.name(), false);
  }
}

ObserveScope::~ObserveScope() {
  --local_dispatch_state().observe_depth;
  if (frame_ >= 0) profiler::detail::pop_frame(frame_);
}

void ObserveScope::add_input(const Tensor* t) { profiler::detail::add_frame_input(frame_, t); }

}  // namespace kiln::detail
