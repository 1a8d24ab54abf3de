// What a SourceDataset shares with its streams: the source, the options, the shard list and the
// samples to leave out when resuming. Internal to libkiln_core.
#pragma once

#include "loader_state.h"
#include "registry.h"

#include <kiln/data/source.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace kiln::data {

class SourceState {
 public:
  std::string scheme, spec;
  SourceOptions options;
  const detail::SourceEntry* source = nullptr;
  std::vector<std::string> shards;
  std::atomic<bool> warned_few_shards{false};

  // "tar source 'data/train-{0..7}.tar'", the start of every message.
  std::string label() const { return scheme + " source '" + spec + "'"; }

  // The samples resume_from() said to leave out (null when none); streams take it at iter().
  std::shared_ptr<const detail::DeliveredSet> exclude() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return exclude_;
  }
  void set_exclude(std::shared_ptr<const detail::DeliveredSet> e) {
    std::lock_guard<std::mutex> lock(mutex_);
    exclude_ = std::move(e);
  }

 private:
  mutable std::mutex mutex_;
  std::shared_ptr<const detail::DeliveredSet> exclude_;
};

namespace detail {
// A stream of one reader's samples of `state`'s source for one epoch (source_stream.cpp).
std::unique_ptr<SampleStream> make_source_stream(std::shared_ptr<SourceState> state,
                                                 std::vector<int64_t> shards,
                                                 const WorkerInfo& worker);
}  // namespace detail

}  // namespace kiln::data
