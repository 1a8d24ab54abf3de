// One reader's stream of a plugin source: decoding its raw samples (source_reader.h) one by one
// or into batches (Note [Decode into the batch] in decode.cpp), the error policy for decoding,
// and the provenance of what it yielded.
#include "decode.h"
#include "internal.h"
#include "source_reader.h"
#include "source_state.h"

#include <kiln/data/collate.h>
#include <kiln/error.h>
#include <kiln/ops.h>

#include <array>

namespace kiln::data::detail {
namespace {

using kiln::detail::str;

// One field of a batch being built.
struct Column {
  std::string name;
  TensorColumn tensors;        // when the values are top-level tensors (written in place)
  std::vector<Sample> values;  // otherwise, one per committed sample
  bool seen = false;           // in the sample being decoded
};

class SourceStream : public SampleStream {
 public:
  SourceStream(std::shared_ptr<SourceState> state, std::vector<int64_t> shards,
               const WorkerInfo& worker)
      : state_(std::move(state)),
        opts_(state_->options),
        planner_(opts_),
        reader_(state_, std::move(shards), worker, planner_) {}

  std::optional<Sample> next() override {
    RawRef r;
    for (;;) {
      if (!reader_.next(r)) return std::nullopt;
      try {
        Sample::Map m;
        for (int32_t i = 0; i < r.n_fields; ++i) {
          const FieldRef& f = r.fields[i];
          const FieldPlan& p = planner_.plan(f.name);
          if (p.kind == FieldPlan::Kind::Skip) continue;
          current_field_ = &f;
          bool in_column = false;
          m.emplace(f.name, decode_field(p, f.name, f.data, static_cast<size_t>(f.size), nullptr, 1,
                                         0, &in_column));
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
    while (count < n && reader_.next(r)) {
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
    while (done < n && reader_.next(r)) {
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

  const std::string& shard_name(int64_t shard) const { return reader_.shard_name(shard); }

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
    apply_policy(opts_.on_error(), where + what + " (sample skipped)");
    record(r);  // consumed: a resumed run must not read it again
  }

  std::shared_ptr<SourceState> state_;
  const SourceOptions& opts_;
  FieldPlanner planner_;
  SourceReader reader_;
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
