// One reader's raw samples of a plugin source: its shards in order through the plugin's
// kiln_source_ops, the error policy for shards that cannot be opened or read, the samples a
// resumed run leaves out, and WebDataset's sample shuffle buffer. Decoding and batching are
// source_stream.cpp's. Internal to libkiln_core.
#pragma once

#include "decode.h"
#include "internal.h"
#include "source_state.h"

#include <memory>
#include <string>
#include <vector>

namespace kiln::data::detail {

// A view of one sample: into the plugin's buffers, or into an owned copy (shuffle buffer).
struct FieldRef {
  const char* name;
  const void* data;
  uint64_t size;
  uint64_t offset;
};

struct RawRef {
  const char* key = "";
  int64_t shard = 0;
  int64_t ordinal = 0;
  uint64_t offset = 0;
  const FieldRef* fields = nullptr;
  int32_t n_fields = 0;
};

// A sample copied out of the plugin's buffers, for the shuffle buffer.
struct OwnedSample {
  std::string key;
  int64_t shard = 0, ordinal = 0;
  uint64_t offset = 0;
  std::vector<std::string> names;
  std::vector<std::vector<uint8_t>> data;
  std::vector<uint64_t> offsets;
  std::vector<FieldRef> refs;  // into names/data, rebuilt by view()

  // Copies r's fields that `planner` does not skip.
  void assign(const RawRef& r, FieldPlanner& planner);
  // A view of the copy (valid while it lives and is not assigned again).
  RawRef view();
};

// Applies `policy` to a problem: throws kiln::Error (Raise), prints a warning (Warn), or
// nothing (Ignore).
void apply_policy(ErrorPolicy policy, const std::string& message);

class SourceReader {
 public:
  // Reads `shards` (indices into state->shards), in order; `planner` says which fields the
  // shuffle buffer copies.
  SourceReader(std::shared_ptr<SourceState> state, std::vector<int64_t> shards,
               const WorkerInfo& worker, FieldPlanner& planner);
  ~SourceReader();
  SourceReader(const SourceReader&) = delete;
  SourceReader& operator=(const SourceReader&) = delete;

  // The next sample (through the shuffle buffer when there is one); false at the end. Its
  // bytes stay valid until the next call.
  bool next(RawRef& out);
  const std::string& shard_name(int64_t shard) const {
    return state_->shards[static_cast<size_t>(shard)];
  }

 private:
  void close_reader();
  bool excluded(int64_t shard, int64_t ordinal);
  bool read_source(RawRef& out);
  bool buffer_one();

  std::shared_ptr<SourceState> state_;
  const SourceOptions& opts_;
  FieldPlanner& planner_;
  std::vector<int64_t> plan_;
  size_t plan_pos_ = 0;
  std::shared_ptr<const DeliveredSet> exclude_;
  Rng rng_;
  int64_t buffer_size_ = 0, initial_ = 0;
  void* reader_ = nullptr;
  int64_t shard_ = 0, ordinal_ = 0;
  kiln_sample sample_{};
  std::vector<FieldRef> fields_;
  std::vector<OwnedSample> buffer_;
  OwnedSample current_;
  bool source_done_ = false;
};

}  // namespace kiln::data::detail
