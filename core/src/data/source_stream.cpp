// One reader's stream of a plugin source: its shards in order, the error policy, the sample
// shuffle buffer, decoding (into batches: Note [Decode into the batch] in decode.cpp) and the
// provenance of what it yielded.
#include "decode.h"
#include "internal.h"
#include "source_state.h"

#include "../runtime.h"

#include <kiln/data/collate.h>
#include <kiln/error.h>
#include <kiln/ops.h>

#include <algorithm>
#include <array>
#include <cstring>

namespace kiln::data::detail {
namespace {

using kiln::detail::str;

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

  void assign(const RawRef& r, FieldPlanner& planner) {
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

  RawRef view() {
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
};

// One field of a batch being built.
struct Column {
  std::string name;
  TensorColumn tensors;   // when the values are top-level tensors (written in place)
  std::vector<Sample> values;  // otherwise, one per committed sample
  bool seen = false;      // in the sample being decoded
};

class SourceStream : public SampleStream {
 public:
  SourceStream(std::shared_ptr<SourceState> state, std::vector<int64_t> shards,
               const WorkerInfo& worker)
      : state_(std::move(state)), opts_(state_->options), plan_(std::move(shards)),
        exclude_(state_->exclude()), planner_(opts_),
        rng_(opts_.seed() ? mix_seed(mix_seed(*opts_.seed(), static_cast<uint64_t>(worker.epoch)),
                                     static_cast<uint64_t>(opts_.rank() * 1000003 + worker.id))
                          : mix_seed(worker.seed, static_cast<uint64_t>(opts_.rank()))) {
    buffer_size_ = opts_.shuffle_buffer();
    initial_ = std::min(opts_.shuffle_initial(), buffer_size_);
  }

  ~SourceStream() override { close_reader(); }

  std::optional<Sample> next() override {
    RawRef r;
    for (;;) {
      if (!next_raw(r)) return std::nullopt;
      try {
        Sample::Map m;
        for (int32_t i = 0; i < r.n_fields; ++i) {
          const FieldRef& f = r.fields[i];
          const FieldPlan& p = planner_.plan(f.name);
          if (p.kind == FieldPlan::Kind::Skip) continue;
          current_field_ = &f;
          bool in_column = false;
          m.emplace(f.name, decode_field(p, f.name, f.data, static_cast<size_t>(f.size), nullptr,
                                         1, 0, &in_column));
        }
        current_field_ = nullptr;
        if (opts_.meta()) {
          m["__key__"] = std::string(r.key);
          m["__url__"] = shard_name(r.shard);
        }
        record(r);
        std::optional<Sample> out(std::in_place, std::move(m));
        return out;
      } catch (...) {
        handle_decode_error(r, std::current_exception());
      }
    }
  }

  int64_t next_batch(int64_t n, Sample& batch) override {
    std::vector<Column> columns;
    std::vector<Sample> keys, urls;
    int64_t count = 0;
    RawRef r;
    while (count < n && next_raw(r)) {
      try {
        for (Column& c : columns) c.seen = false;
        for (int32_t i = 0; i < r.n_fields; ++i) {
          const FieldRef& f = r.fields[i];
          const FieldPlan& p = planner_.plan(f.name);
          if (p.kind == FieldPlan::Kind::Skip) continue;
          Column* c = find_column(columns, f.name);
          if (c == nullptr) {
            if (count > 0) continue;  // not in the first sample: left out, as PyTorch's collate
            columns.emplace_back();
            c = &columns.back();
            c->name = f.name;
            c->tensors.ragged_ok = p.kind == FieldPlan::Kind::Bytes;
          }
          current_field_ = &f;
          bool had_tensors = c->tensors.buffer.defined();
          bool in_column = false;
          Sample v = decode_field(p, f.name, f.data, static_cast<size_t>(f.size), &c->tensors, n,
                                  count, &in_column);
          if (count > 0 && in_column != had_tensors) {
            throw TypeError(str("collate: field '", f.name, "' of entry ", count, " is ",
                                in_column ? "a Tensor" : kind_name(v.kind()), " but entry 0's ",
                                had_tensors ? "is a Tensor" : "is not"));
          }
          if (!in_column) {
            c->values.resize(static_cast<size_t>(count));
            c->values.push_back(std::move(v));
          }
          c->seen = true;
        }
        current_field_ = nullptr;
        for (const Column& c : columns) {
          KILN_CHECK_INDEX(c.seen, "collate: entry ", count, " (key '", r.key, "') has no field '",
                           c.name, "' that entry 0 has");
        }
        if (opts_.meta()) {
          keys.emplace_back(std::string(r.key));
          urls.emplace_back(state_->shards[static_cast<size_t>(r.shard)]);
        }
        record(r);
        ++count;
      } catch (...) {
        for (Column& c : columns) c.values.resize(static_cast<size_t>(count));
        if (count == 0) columns.clear();
        handle_decode_error(r, std::current_exception());
      }
    }
    if (count == 0) return 0;
    Sample::Map out;
    for (Column& c : columns) {
      if (c.tensors.buffer.defined()) {
        if (!c.tensors.ragged.empty()) {
          c.tensors.ragged.resize(static_cast<size_t>(count));
          Sample::List l;
          for (Tensor& t : c.tensors.ragged) l.emplace_back(std::move(t));
          out.emplace(c.name, std::move(l));
        } else {
          Tensor t = c.tensors.buffer;
          out.emplace(c.name, count < n ? t.narrow(0, 0, count) : t);
        }
      } else {
        c.values.resize(static_cast<size_t>(count));
        out.emplace(c.name, collate(c.values));
      }
    }
    if (opts_.meta()) {
      out.emplace("__key__", collate(keys));
      out.emplace("__url__", collate(urls));
    }
    batch = Sample(std::move(out));
    return count;
  }

  int64_t skip(int64_t n) override {
    int64_t done = 0;
    RawRef r;
    while (done < n && next_raw(r)) {
      record(r);
      ++done;
    }
    return done;
  }

  Sample take_provenance() override {
    Sample::List out;
    for (const auto& run : runs_) out.push_back(Sample::List{run[0], run[1], run[2]});
    runs_.clear();
    return out;
  }

 private:
  static Column* find_column(std::vector<Column>& columns, const char* name) {
    for (Column& c : columns) {
      if (c.name == name) return &c;
    }
    return nullptr;
  }

  void record(const RawRef& r) {
    if (!runs_.empty()) {
      auto& last = runs_.back();
      if (last[0] == r.shard && last[1] + last[2] == r.ordinal) {
        last[2] += 1;
        return;
      }
    }
    runs_.push_back({r.shard, r.ordinal, 1});
  }

  const std::string& shard_name(int64_t shard) const {
    return state_->shards[static_cast<size_t>(shard)];
  }

  // Applies the policy to a message; returns when the stream should go on.
  void policy(const std::string& message, bool decode_error, std::exception_ptr error) {
    switch (opts_.on_error()) {
      case ErrorPolicy::Raise:
        if (decode_error && error) rethrow_with_context(error, message);
        throw Error(message);
      case ErrorPolicy::Warn:
        kiln::detail::warn(message + (decode_error ? " (sample skipped)" : ""));
        return;
      case ErrorPolicy::Ignore: return;
    }
  }

  void handle_decode_error(const RawRef& r, std::exception_ptr error) {
    std::string where = str(state_->label(), ": shard '", shard_name(r.shard), "': ");
    if (current_field_ != nullptr) {
      where += str("member '", r.key, ".", current_field_->name, "' at byte offset ",
                   current_field_->offset, ": ");
    } else {
      where += str("sample '", r.key, "' at byte offset ", r.offset, ": ");
    }
    current_field_ = nullptr;
    if (opts_.on_error() == ErrorPolicy::Raise) rethrow_with_context(error, where);
    std::string what;
    try {
      std::rethrow_exception(error);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
      what = "unknown exception";
    }
    policy(where + what, true, nullptr);
    record(r);  // consumed: a resumed run must not read it again
  }

  void close_reader() {
    if (reader_ != nullptr) {
      state_->source->ops->close(reader_);
      reader_ = nullptr;
    }
  }

  bool excluded(int64_t shard, int64_t ordinal) {
    if (!exclude_) return false;
    const auto* ranges = exclude_->ranges(shard);
    if (ranges == nullptr) return false;
    // the last range that begins at or before `ordinal`
    auto it = std::upper_bound(ranges->begin(), ranges->end(), ordinal,
                               [](int64_t o, const std::pair<int64_t, int64_t>& r) {
                                 return o < r.first;
                               });
    return it != ranges->begin() && ordinal < std::prev(it)->second;
  }

  // The next sample of the plan's shards, in order.
  bool read_source(RawRef& out) {
    const kiln_source_ops* ops = state_->source->ops;
    for (;;) {
      if (reader_ == nullptr) {
        if (plan_pos_ >= plan_.size()) return false;
        shard_ = plan_[plan_pos_++];
        ordinal_ = 0;
        kiln::detail::take_plugin_error();
        reader_ = ops->open_shard(state_->source->self, shard_name(shard_).c_str());
        if (reader_ == nullptr) {
          std::string why = kiln::detail::take_plugin_error();
          policy(str(state_->label(), ": shard '", shard_name(shard_), "': cannot open: ",
                     why.empty() ? "(no message)" : why),
                 false, nullptr);
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
        std::string message = str(state_->label(), ": shard '", shard_name(shard_), "': ",
                                  why.empty() ? "read error (no message)" : why);
        if (status == KILN_SAMPLE_SKIP) {
          ++ordinal_;
          policy(message, false, nullptr);
          continue;
        }
        close_reader();
        policy(message + (opts_.on_error() == ErrorPolicy::Raise ? "" : " (rest of shard lost)"),
               false, nullptr);
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

  bool buffer_one() {
    RawRef r;
    if (!read_source(r)) return false;
    buffer_.emplace_back();
    buffer_.back().assign(r, planner_);
    return true;
  }

  // WebDataset's shuffle: append one (two while filling), yield a random one once `initial_`
  // are in; drain at the end.
  bool next_raw(RawRef& out) {
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

  std::shared_ptr<SourceState> state_;
  const SourceOptions& opts_;
  std::vector<int64_t> plan_;
  size_t plan_pos_ = 0;
  std::shared_ptr<const DeliveredSet> exclude_;
  FieldPlanner planner_;
  Rng rng_;
  int64_t buffer_size_ = 0, initial_ = 0;
  void* reader_ = nullptr;
  int64_t shard_ = 0, ordinal_ = 0;
  kiln_sample sample_{};
  std::vector<FieldRef> fields_;
  std::vector<OwnedSample> buffer_;
  OwnedSample current_;
  bool source_done_ = false;
  const FieldRef* current_field_ = nullptr;
  std::vector<std::array<int64_t, 3>> runs_;
};

}  // namespace

std::unique_ptr<SampleStream> make_source_stream(std::shared_ptr<SourceState> state,
                                                 std::vector<int64_t> shards,
                                                 const WorkerInfo& worker) {
  return std::make_unique<SourceStream>(std::move(state), std::move(shards), worker);
}

}  // namespace kiln::data::detail
