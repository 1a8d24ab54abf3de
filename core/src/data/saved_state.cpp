// A DataLoader's saved state: the typed struct and its map (see SavedState in loader_state.h).
#include "loader_state.h"

#include <kiln/error.h>

#include <algorithm>
#include <limits>
#include <optional>

namespace kiln::data::detail {
namespace {

// Reads the fields of one state, each error naming the field.
class Fields {
 public:
  Fields(const Sample& state, const std::string& who) : state_(state), who_(who) {}

  bool has(const char* key) const { return state_.contains(key); }

  // An int in [lo, hi]; `fallback` when absent and not required.
  int64_t integer(const char* key, int64_t lo, int64_t hi, std::optional<int64_t> fallback = {}) {
    if (!has(key) && fallback) return *fallback;
    KILN_CHECK_VALUE(has(key), who_, ": the state has no '", key, "' (not a DataLoader ",
                     "state_dict?)");
    const Sample& v = state_.at(key);
    KILN_CHECK_VALUE(v.is_int(), who_, ": '", key, "' must be an int, got ", v.repr());
    check_range(key, v.to_int(), lo, hi);
    return v.to_int();
  }

  bool boolean(const char* key) {
    if (!has(key)) return false;
    const Sample& v = state_.at(key);
    KILN_CHECK_VALUE(v.is_bool(), who_, ": '", key, "' must be a bool, got ", v.repr());
    return v.to_bool();
  }

  // A list of `size` ints in [lo, hi]; empty when absent.
  std::vector<int64_t> ints(const char* key, int64_t size, int64_t lo, int64_t hi) {
    std::vector<int64_t> out;
    if (!has(key)) return out;
    const Sample& v = state_.at(key);
    KILN_CHECK_VALUE(v.is_list() && v.size() == size, who_, ": '", key, "' must be a list of ",
                     size, " ints (one per reader, workers=", size, "), got ", v.repr());
    for (const Sample& e : v.list()) {
      KILN_CHECK_VALUE(e.is_int(), who_, ": '", key, "' holds ", e.repr(), ", not an int");
      check_range(key, e.to_int(), lo, hi);
      out.push_back(e.to_int());
    }
    return out;
  }

  DeliveredSet ranges(const char* key) {
    return DeliveredSet::from_sample(has(key) ? state_.at(key) : Sample(),
                                     kiln::detail::str(who_, ": '", key, "'"));
  }

 private:
  void check_range(const char* key, int64_t v, int64_t lo, int64_t hi) const {
    KILN_CHECK_VALUE(v >= lo && v <= hi, who_, ": '", key, "' is ", v, ", expected ", lo, " .. ",
                     hi);
  }

  const Sample& state_;
  const std::string& who_;
};

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
// Counters (epoch, batches, samples) go on from the state's values: 2^62 leaves them room.
constexpr int64_t kMaxCount = int64_t{1} << 62;

}  // namespace

SavedState SavedState::check(const Sample& state, const std::string& who) {
  KILN_CHECK_VALUE(state.is_map(), who, ": expects the map that state_dict() returned, got ",
                   state.repr());
  SavedState s;
  s.original = state;
  Fields f(state, who);
  f.integer("version", 1, 1);
  s.epoch = f.integer("epoch", 0, kMaxCount);
  s.in_epoch = f.boolean("in_epoch");
  s.merged = f.boolean("merged");
  if (!s.in_epoch) return s;  // the next begin() starts that epoch: nothing else is read
  s.base_seed = static_cast<uint64_t>(f.integer("base_seed", 0, kMax));
  s.batches = f.integer("batches", 0, kMaxCount);
  s.samples = f.integer("samples", 0, kMaxCount);
  s.workers = f.integer("workers", 0, kMax);
  s.readers = std::max<int64_t>(s.workers, 1);
  if (f.has("batch_size") && !state.at("batch_size").is_none()) {
    s.batch_size = f.integer("batch_size", 1, kMax);
  }
  s.replicas = f.integer("replicas", 1, kMax);
  int64_t global = 0;
  KILN_CHECK_VALUE(!__builtin_mul_overflow(s.samples, s.replicas, &global), who, ": 'samples' ",
                   s.samples, " x 'replicas' ", s.replicas, " overflows int64");
  s.per_reader = f.has("worker_batches") || f.has("worker_samples") || f.has("exhausted") ||
                 f.has("last_worker") || f.has("delivered") || f.has("resumed_from");
  s.worker_batches = f.ints("worker_batches", s.readers, 0, kMaxCount);
  s.worker_samples = f.ints("worker_samples", s.readers, 0, kMaxCount);
  for (int64_t e : f.ints("exhausted", s.readers, 0, 1)) s.exhausted.push_back(e != 0);
  s.last_worker = f.integer("last_worker", -1, s.readers - 1, -1);
  s.delivered = f.ranges("delivered");
  s.resumed_from = f.ranges("resumed_from").to_sample();
  return s;
}

Sample SavedState::to_sample() const {
  Sample::Map m;
  m["version"] = 1;
  m["epoch"] = epoch;
  m["in_epoch"] = in_epoch;
  m["base_seed"] = static_cast<int64_t>(base_seed);
  m["batches"] = batches;
  m["samples"] = samples;
  m["workers"] = workers;
  m["batch_size"] = batch_size ? Sample(*batch_size) : Sample();
  m["replicas"] = replicas;
  if (merged) m["merged"] = true;
  if (!per_reader) return m;
  auto list = [](const auto& values) {
    Sample::List out;
    for (auto v : values) out.emplace_back(static_cast<int64_t>(v));
    return out;
  };
  // (a state made by hand may lack a list: it stays absent)
  if (!worker_batches.empty()) m["worker_batches"] = list(worker_batches);
  if (!worker_samples.empty()) m["worker_samples"] = list(worker_samples);
  if (!exhausted.empty()) m["exhausted"] = list(exhausted);
  m["last_worker"] = last_worker;
  m["delivered"] = delivered.to_sample();
  m["resumed_from"] = resumed_from;
  return m;
}

}  // namespace kiln::data::detail
