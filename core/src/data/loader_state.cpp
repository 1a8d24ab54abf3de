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
  for (const Sample& run : runs.list()) {
    const Sample::List& t = run.list();
    KILN_CHECK_VALUE(t.size() == 3, "provenance: expects [shard, first, count] runs, got ",
                     run.repr());
    add(t[0].to_int(), t[1].to_int(), t[2].to_int());
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

DeliveredSet DeliveredSet::from_sample(const Sample& s) {
  DeliveredSet out;
  if (s.is_none()) return out;
  for (const Sample& t : s.list()) {
    const Sample::List& l = t.list();
    KILN_CHECK_VALUE(l.size() == 3, "DataLoader state: 'delivered' expects [shard, begin, end] ",
                     "triples, got ", t.repr());
    out.add(l[0].to_int(), l[1].to_int(), l[2].to_int() - l[1].to_int());
  }
  return out;
}

}  // namespace kiln::data::detail
