// The delivered-sample record of iterable sources. See loader_state.h.
#include "loader_state.h"

#include <kiln/error.h>

#include <algorithm>
#include <limits>
#include <optional>

namespace kiln::data::detail {

void DeliveredSet::add(int64_t shard, int64_t first, int64_t count) {
  if (count <= 0) return;
  auto& v = ranges_[shard];
  std::pair<int64_t, int64_t> r{first, first + count};
  // Fast path: runs mostly arrive in order at the end.
  if (!v.empty() && v.back().second == r.first) {
    v.back().second = r.second;
    return;
  }
  auto it = std::lower_bound(v.begin(), v.end(), r);
  it = v.insert(it, r);
  // merge with neighbours that touch or overlap
  if (it != v.begin() && std::prev(it)->second >= it->first) {
    --it;
    it->second = std::max(it->second, std::next(it)->second);
    v.erase(std::next(it));
  }
  while (std::next(it) != v.end() && it->second >= std::next(it)->first) {
    it->second = std::max(it->second, std::next(it)->second);
    v.erase(std::next(it));
  }
}

void DeliveredSet::add_runs(const Sample& runs) {
  if (runs.is_none()) return;
  KILN_CHECK_VALUE(runs.is_list(), "take_provenance: expects a list of [shard, first, count] ",
                   "runs or None, got ", runs.repr());
  for (const Sample& run : runs.list()) {
    bool ok = run.is_list() && run.list().size() == 3;
    for (size_t i = 0; ok && i < 3; ++i) {
      ok = run.list()[i].is_int() && run.list()[i].to_int() >= 0;
    }
    int64_t end = 0;
    KILN_CHECK_VALUE(ok && !__builtin_add_overflow(run.list()[1].to_int(),
                                                   run.list()[2].to_int(), &end),
                     "take_provenance: expects [shard, first, count] runs of non-negative ",
                     "ints (first + count in int64), got ", run.repr());
    add(run.list()[0].to_int(), run.list()[1].to_int(), run.list()[2].to_int());
  }
}

void DeliveredSet::add_all(const DeliveredSet& other) {
  for (const auto& [shard, v] : other.ranges_) {
    for (const auto& [b, e] : v) add(shard, b, e - b);
  }
}

Sample DeliveredSet::to_sample() const {
  if (ranges_.empty()) return Sample();
  Sample::List out;
  for (const auto& [shard, v] : ranges_) {
    for (const auto& [b, e] : v) out.push_back(Sample::List{shard, b, e});
  }
  return out;
}

DeliveredSet DeliveredSet::from_sample(const Sample& s, const std::string& what) {
  DeliveredSet out;
  if (s.is_none()) return out;
  KILN_CHECK_VALUE(s.is_list(), what, " expects a list of [shard, begin, end] triples or ",
                   "None, got ", s.repr());
  for (const Sample& t : s.list()) {
    bool ok = t.is_list() && t.list().size() == 3;
    for (size_t i = 0; ok && i < 3; ++i) ok = t.list()[i].is_int();
    ok = ok && t.list()[0].to_int() >= 0 && t.list()[1].to_int() >= 0 &&
         t.list()[1].to_int() <= t.list()[2].to_int();
    KILN_CHECK_VALUE(ok, what, " expects [shard, begin, end] triples of ints with ",
                     "0 <= shard and 0 <= begin <= end, got ", t.repr());
    out.add(t.list()[0].to_int(), t.list()[1].to_int(),
            t.list()[2].to_int() - t.list()[1].to_int());
  }
  return out;
}

// --- SavedState -------------------------------------------------------------------------------

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
    KILN_CHECK_VALUE(v >= lo && v <= hi, who_, ": '", key, "' is ", v, ", expected ", lo,
                     " .. ", hi);
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
  if (f.has("batch_size") && !state.at("batch_size").is_none()) f.integer("batch_size", 1, kMax);
  s.replicas = f.integer("replicas", 1, kMax);
  int64_t global = 0;
  KILN_CHECK_VALUE(!__builtin_mul_overflow(s.samples, s.replicas, &global), who, ": 'samples' ",
                   s.samples, " x 'replicas' ", s.replicas, " overflows int64");
  s.worker_batches = f.ints("worker_batches", s.readers, 0, kMaxCount);
  s.worker_samples = f.ints("worker_samples", s.readers, 0, kMaxCount);
  for (int64_t e : f.ints("exhausted", s.readers, 0, 1)) s.exhausted.push_back(e != 0);
  s.last_worker = f.integer("last_worker", -1, s.readers - 1, -1);
  s.delivered = f.ranges("delivered");
  s.resumed_from = f.ranges("resumed_from").to_sample();
  return s;
}

}  // namespace kiln::data::detail
