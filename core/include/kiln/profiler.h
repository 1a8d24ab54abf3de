// The profiler, as PyTorch's torch.profiler / torch.autograd.profiler: while a Profile guard
// lives, every operator call on every thread is recorded (name, input shapes and dtypes,
// device, start, duration, bytes allocated), with record_function ranges for user code:
//
//   kiln::profiler::Profile prof;
//   {
//     kiln::profiler::record_function range("forward");
//     y = model->forward(x);
//   }
//   prof.stop();
//   std::cout << prof.key_averages().table("cpu_time_total", 10);
//   prof.export_chrome_trace("trace.json");  // open in Perfetto or chrome://tracing
//
// Calls are recorded in the Observe dispatch layer (See Note [The Observe layer] in
// kiln/dispatch.h): an operator a composite calls shows as its child, and self time excludes
// the children. Without a Profile the layer is off and costs nothing measurable.
#pragma once

#include <kiln/export.h>

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace kiln::profiler {

// One recorded call or record_function range.
struct Event {
  std::string name;
  bool user_range = false;                         // a record_function range, not an operator
  std::vector<std::vector<int64_t>> input_shapes;  // one per argument; [] for a non-tensor
  std::vector<std::string> input_dtypes;           // "" for a non-tensor
  std::string device;                              // of the first tensor argument
  int64_t start_ns = 0;                            // since the profile started
  int64_t duration_ns = 0;
  int64_t self_ns = 0;     // duration minus the children's
  int64_t bytes = 0;       // storage bytes allocated during the call, children included
  int64_t self_bytes = 0;  // ... without the children's
  uint64_t thread = 0;     // a small number per thread, in order of first use
  int depth = 0;           // nesting on its thread (0: called from user code)
};

// One row of key_averages(): the events of one name (and input shapes, when grouped so).
struct KeyAverage {
  std::string key;
  std::string input_shapes;  // "[[2, 3], [3]]"; empty unless grouped by input shape
  int64_t count = 0;
  int64_t self_cpu_time_total_ns = 0;
  int64_t cpu_time_total_ns = 0;
  int64_t cpu_memory_usage = 0;
  int64_t self_cpu_memory_usage = 0;
  double cpu_time_avg_ns() const { return count ? double(cpu_time_total_ns) / count : 0.0; }
};

class KILN_API KeyAverages {
 public:
  KeyAverages(std::vector<KeyAverage> rows, bool by_shape, bool memory)
      : rows_(std::move(rows)), by_shape_(by_shape), memory_(memory) {}
  const std::vector<KeyAverage>& rows() const { return rows_; }
  // PyTorch's table: rows sorted by `sort_by` (descending), at most row_limit of them (-1: all).
  // sort_by: self_cpu_time_total (default), cpu_time_total, cpu_time (average), count,
  // cpu_memory_usage, self_cpu_memory_usage; another name is a ValueError.
  std::string table(const std::string& sort_by = "self_cpu_time_total", int row_limit = -1) const;

 private:
  std::vector<KeyAverage> rows_;
  bool by_shape_;
  bool memory_;
};
KILN_API std::ostream& operator<<(std::ostream& out, const KeyAverages& averages);

struct ProfileOptions {
  bool record_shapes = true;   // input shapes and dtypes
  bool profile_memory = true;  // bytes allocated
};

// Records while it lives (or until stop()). One profile at a time in a process: a second is a
// kiln::Error.
class KILN_API Profile {
 public:
  explicit Profile(ProfileOptions options = {});
  ~Profile();
  Profile(const Profile&) = delete;
  Profile& operator=(const Profile&) = delete;

  // Stops recording (the destructor does it too) and gathers every thread's events.
  void stop();
  bool active() const { return active_; }
  // The recorded events, ordered by start; stops the profile first when it runs.
  const std::vector<Event>& events();
  KeyAverages key_averages(bool group_by_input_shape = false);
  // Writes the Chrome trace JSON (complete events, microseconds) that Perfetto opens.
  void export_chrome_trace(const std::string& path);

 private:
  ProfileOptions options_;
  bool active_ = false;
  std::vector<Event> events_;
};

// A named range of user code, recorded as an event while a profile runs (RAII; nests).
class KILN_API record_function {
 public:
  explicit record_function(std::string name);
  ~record_function();
  record_function(const record_function&) = delete;
  record_function& operator=(const record_function&) = delete;

 private:
  int frame_ = -1;
};

// Whether a profile is recording.
KILN_API bool is_profiling();

}  // namespace kiln::profiler
