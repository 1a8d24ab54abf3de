// The delivered-sample record of iterable sources. See loader_state.h.
#include "loader_state.h"

#include <kiln/error.h>

#include <algorithm>

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
    KILN_CHECK_VALUE(ok && !__builtin_add_overflow(run.list()[1].to_int(), run.list()[2].to_int(),
                                                   &end),
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

}  // namespace kiln::data::detail
