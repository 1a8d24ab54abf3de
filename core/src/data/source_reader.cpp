// One reader's raw samples of a plugin source. See source_reader.h.
#include "source_reader.h"

#include "../runtime.h"

#include <kiln/error.h>

#include <algorithm>

namespace kiln::data::detail {

using kiln::detail::str;

void OwnedSample::assign(const RawRef& r, FieldPlanner& planner) {
  key = r.key;
  shard = r.shard;
  ordinal = r.ordinal;
  offset = r.offset;
  size_t n = 0;
  for (int32_t i = 0; i < r.n_fields; ++i) {
    const FieldRef& f = r.fields[i];
    if (planner.plan(f.name).kind == FieldPlan::Kind::Skip) continue;  // never copied
    if (names.size() <= n) {
      names.emplace_back();
      data.emplace_back();
      offsets.emplace_back();
    }
    names[n] = f.name;
    const auto* p = static_cast<const uint8_t*>(f.data);
    data[n].assign(p, p + f.size);
    offsets[n] = f.offset;
    ++n;
  }
  names.resize(n);
  data.resize(n);
  offsets.resize(n);
}

RawRef OwnedSample::view() {
  refs.resize(names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    refs[i] = FieldRef{names[i].c_str(), data[i].data(), data[i].size(), offsets[i]};
  }
  RawRef r;
  r.key = key.c_str();
  r.shard = shard;
  r.ordinal = ordinal;
  r.offset = offset;
  r.fields = refs.data();
  r.n_fields = static_cast<int32_t>(refs.size());
  return r;
}

void apply_policy(ErrorPolicy policy, const std::string& message) {
  switch (policy) {
    case ErrorPolicy::Raise: throw Error(message);
    case ErrorPolicy::Warn: kiln::detail::warn(message); return;
    case ErrorPolicy::Ignore: return;
  }
}

SourceReader::SourceReader(std::shared_ptr<SourceState> state, std::vector<int64_t> shards,
                           const WorkerInfo& worker, FieldPlanner& planner)
    : state_(std::move(state)),
      opts_(state_->options),
      planner_(planner),
      plan_(std::move(shards)),
      exclude_(state_->exclude()),
      rng_(opts_.seed() ? mix_seed(mix_seed(*opts_.seed(), static_cast<uint64_t>(worker.epoch)),
                                   static_cast<uint64_t>(opts_.rank()) * 1000003u +
                                       static_cast<uint64_t>(worker.id))
                        : mix_seed(worker.seed, static_cast<uint64_t>(opts_.rank()))) {
  buffer_size_ = opts_.shuffle_buffer();
  initial_ = std::min(opts_.shuffle_initial(), buffer_size_);
}

SourceReader::~SourceReader() { close_reader(); }

void SourceReader::close_reader() {
  if (reader_ != nullptr) {
    state_->source->ops->close(reader_);
    reader_ = nullptr;
  }
}

bool SourceReader::excluded(int64_t shard, int64_t ordinal) {
  if (!exclude_) return false;
  const auto* ranges = exclude_->ranges(shard);
  if (ranges == nullptr) return false;
  // the last range that begins at or before `ordinal`
  auto it =
      std::upper_bound(ranges->begin(), ranges->end(), ordinal,
                       [](int64_t o, const std::pair<int64_t, int64_t>& r) { return o < r.first; });
  return it != ranges->begin() && ordinal < std::prev(it)->second;
}

// The next sample of the plan's shards, in order.
bool SourceReader::read_source(RawRef& out) {
  const kiln_source_ops* ops = state_->source->ops;
  for (;;) {
    check_cancelled();  // each raw sample, skipped ones too
    if (reader_ == nullptr) {
      if (plan_pos_ >= plan_.size()) return false;
      shard_ = plan_[plan_pos_++];
      ordinal_ = 0;
      kiln::detail::take_plugin_error();
      reader_ = ops->open_shard(state_->source->self, shard_name(shard_).c_str());
      if (reader_ == nullptr) {
        std::string why = kiln::detail::take_plugin_error();
        apply_policy(opts_.on_error(), str(state_->label(), ": shard '", shard_name(shard_),
                                           "': cannot open: ", why.empty() ? "(no message)" : why));
        continue;
      }
    }
    sample_ = kiln_sample{};
    sample_.struct_size = sizeof(kiln_sample);
    int32_t status = ops->next(reader_, &sample_);
    if (status == KILN_SAMPLE_END) {
      close_reader();
      continue;
    }
    if (status != KILN_SAMPLE_OK) {
      std::string why = kiln::detail::take_plugin_error();
      std::string message = str(state_->label(), ": shard '", shard_name(shard_),
                                "': ", why.empty() ? "read error (no message)" : why);
      if (status == KILN_SAMPLE_SKIP) {
        ++ordinal_;
        apply_policy(opts_.on_error(), message);
        continue;
      }
      close_reader();
      apply_policy(opts_.on_error(),
                   message +
                       (opts_.on_error() == ErrorPolicy::Raise ? "" : " (rest of shard lost)"));
      continue;
    }
    int64_t ordinal = ordinal_++;
    if (excluded(shard_, ordinal)) continue;
    fields_.resize(static_cast<size_t>(std::max(sample_.n_fields, 0)));
    for (int32_t i = 0; i < sample_.n_fields; ++i) {
      const kiln_field& f = sample_.fields[i];
      fields_[static_cast<size_t>(i)] = FieldRef{f.name ? f.name : "", f.data, f.size, f.offset};
    }
    out.key = sample_.key ? sample_.key : "";
    out.shard = shard_;
    out.ordinal = ordinal;
    out.offset = sample_.offset;
    out.fields = fields_.data();
    out.n_fields = static_cast<int32_t>(fields_.size());
    return true;
  }
}

bool SourceReader::buffer_one() {
  RawRef r;
  if (!read_source(r)) return false;
  buffer_.emplace_back();
  buffer_.back().assign(r, planner_);
  return true;
}

// WebDataset's shuffle: append one (two while filling), yield a random one once `initial_`
// are in; drain at the end.
bool SourceReader::next(RawRef& out) {
  if (buffer_size_ <= 1) return read_source(out);
  while (!source_done_) {
    if (!buffer_one()) {
      source_done_ = true;
      break;
    }
    if (static_cast<int64_t>(buffer_.size()) < buffer_size_ && !buffer_one()) {
      source_done_ = true;
    }
    if (static_cast<int64_t>(buffer_.size()) >= initial_) break;
  }
  if (buffer_.empty()) return false;
  size_t k = static_cast<size_t>(rng_.below(buffer_.size()));
  std::swap(current_, buffer_[k]);
  std::swap(buffer_[k], buffer_.back());
  buffer_.pop_back();
  out = current_.view();
  return true;
}

}  // namespace kiln::data::detail
