// Data sources from plugins: kiln::data::open("tar:data/train-{000..127}.tar").
//
// A source plugin (kiln/sdk/plugin.h, "Data sources and decoders"; docs/writing-a-data-source.md)
// registers a scheme and reads one shard at a time; core does the rest, identically for every
// source:
//  - the shard list: brace patterns expanded ("train-{000..127}.tar" keeps the zero padding,
//    "{a,b}" alternatives, "::" joins patterns), then the source's own listing of each item;
//  - the split: shards in order (shuffled with (seed, epoch) when shuffle_shards), every
//    world_size-th from `rank`, then every num_workers-th from the worker's id, so that each
//    sample is read exactly once per epoch across ranks x workers (a warning says when there
//    are fewer shards than readers: the extra readers read nothing);
//  - a sample shuffle buffer (WebDataset's algorithm: fill to `initial`, then yield a random
//    sample from up to `buffer` as each new one arrives), seeded per epoch and per reader;
//  - decoding each field by the decoder registered for its last extension ("seg.png" -> png),
//    or as the options say; fields without a decoder stay bytes (a uint8 tensor);
//  - the error policy: Raise (default) names the source, the shard, the member and its byte
//    offset; Warn and Ignore go on with the next sample (a bad sample) or the next shard (a shard
//    that cannot be read further);
//  - resumption: streams report which samples they delivered (take_provenance), so a DataLoader
//    state resumes with any worker count.
//
// A sample is a map: "__key__" (string), "__url__" (the shard), and one entry per field named by
// its extension ("jpg", "cls", "seg.png").
#pragma once

#include <kiln/data/dataset.h>
#include <kiln/export.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kiln::data {

// What a source does with an error (WebDataset's handlers).
enum class ErrorPolicy {
  Raise,  // throw kiln::Error naming the shard, the member and the byte offset (default)
  Warn,   // print a warning and go on with the next sample or shard
  Ignore  // go on silently
};

// Turns one field's bytes into a value; used by SourceOptions::decode(extension, fn).
using FieldDecoder = std::function<Sample(const uint8_t* data, size_t size)>;

class SourceOptions {
 public:
  // This process's rank and the number of ranks. By default the default process group's
  // (kiln::distributed) when one is initialized as the source opens, else 0 and 1.
  SourceOptions& rank(int64_t v) {
    rank_ = v;
    return *this;
  }
  int64_t rank() const { return rank_.value_or(0); }
  bool has_rank() const { return rank_.has_value(); }
  SourceOptions& world_size(int64_t v) {
    world_size_ = v;
    return *this;
  }
  int64_t world_size() const { return world_size_.value_or(1); }
  bool has_world_size() const { return world_size_.has_value(); }
  // Shuffle the shard list each epoch with (seed, epoch): the same order on every rank.
  SourceOptions& shuffle_shards(bool v) {
    shuffle_shards_ = v;
    return *this;
  }
  bool shuffle_shards() const { return shuffle_shards_; }
  // A sample shuffle buffer of `buffer` samples, yielding once `initial` are in (0: off).
  SourceOptions& shuffle(int64_t buffer, int64_t initial = 100) {
    shuffle_buffer_ = buffer;
    shuffle_initial_ = initial;
    return *this;
  }
  int64_t shuffle_buffer() const { return shuffle_buffer_; }
  int64_t shuffle_initial() const { return shuffle_initial_; }
  // Seed of the shard order (0 by default, as DistributedSampler's) and of the sample buffer
  // (by default the DataLoader's epoch seed, so reproducible from kiln::manual_seed).
  SourceOptions& seed(std::optional<uint64_t> v) {
    seed_ = v;
    return *this;
  }
  std::optional<uint64_t> seed() const { return seed_; }
  SourceOptions& on_error(ErrorPolicy v) {
    on_error_ = v;
    return *this;
  }
  ErrorPolicy on_error() const { return on_error_; }
  // false: every field stays bytes (a uint8 tensor), no decoder runs.
  SourceOptions& decode(bool v) {
    decode_ = v;
    return *this;
  }
  bool decode() const { return decode_; }
  // How fields named `name` (the full extension "seg.png", or a last extension "png") decode:
  // "bytes" (uint8 tensor), "text" (string), "skip" (dropped), or the name of a registered
  // decoder ("json" parses, "txt" keeps text).
  SourceOptions& decode(const std::string& name, const std::string& how) {
    decode_as_[name] = how;
    return *this;
  }
  // Fields named `name` decode with `fn`.
  SourceOptions& decode(const std::string& name, FieldDecoder fn) {
    decode_fn_[name] = std::move(fn);
    return *this;
  }
  const std::map<std::string, std::string>& decode_as() const { return decode_as_; }
  const std::map<std::string, FieldDecoder>& decode_fn() const { return decode_fn_; }
  // Keep only these fields (full extensions); empty keeps all.
  SourceOptions& fields(std::vector<std::string> v) {
    fields_ = std::move(v);
    return *this;
  }
  const std::vector<std::string>& fields() const { return fields_; }
  // Add "__key__" and "__url__" to each sample (true by default).
  SourceOptions& meta(bool v) {
    meta_ = v;
    return *this;
  }
  bool meta() const { return meta_; }

 private:
  std::optional<int64_t> rank_, world_size_;
  bool shuffle_shards_ = false;
  int64_t shuffle_buffer_ = 0, shuffle_initial_ = 100;
  std::optional<uint64_t> seed_;
  ErrorPolicy on_error_ = ErrorPolicy::Raise;
  bool decode_ = true;
  std::map<std::string, std::string> decode_as_;
  std::map<std::string, FieldDecoder> decode_fn_;
  std::vector<std::string> fields_;
  bool meta_ = true;
};

class SourceState;  // shared by a SourceDataset and its streams

// An iterable dataset over a plugin source's shards (what open() returns).
class KILN_API SourceDataset : public IterableDataset {
 public:
  SourceDataset(std::string scheme, std::string spec, SourceOptions options);
  ~SourceDataset() override;
  std::unique_ptr<SampleStream> iter(const WorkerInfo& worker) override;
  bool tracks_provenance() const override { return true; }
  void resume_from(const Sample& delivered) override;

  // The expanded shard list, in its canonical order (shard ids in provenance index it).
  const std::vector<std::string>& shards() const;
  const std::string& scheme() const;
  const std::string& spec() const;
  const SourceOptions& options() const;
  // The shards reader (rank, worker) reads in `epoch`, as indices into shards().
  std::vector<int64_t> shards_for(int64_t worker, int64_t num_workers, int64_t epoch) const;

 private:
  std::shared_ptr<SourceState> state_;
};

// A source from "scheme:spec" or "scheme://spec" ("tar:/data/train-{000..127}.tar"). Throws
// kiln::ValueError naming the schemes there are when none matches, and kiln::Error when the
// spec has no shards.
KILN_API std::shared_ptr<SourceDataset> open(const std::string& url, SourceOptions options = {});
// The same with the scheme apart: open("tar", "/data/train-{000..127}.tar").
KILN_API std::shared_ptr<SourceDataset> open(const std::string& scheme, const std::string& spec,
                                             SourceOptions options = {});

// Brace expansion as the braceexpand package: "a{0..2}" -> a0 a1 a2, "{08..10}" -> 08 09 10,
// "{a,b}c" -> ac bc, nested and repeated groups; "::" separates patterns.
KILN_API std::vector<std::string> expand_braces(const std::string& pattern);

// A registered source or decoder and the plugin file that provides it.
struct SourceInfo {
  std::string name;  // scheme or extension
  std::string plugin;
};
// Registered source schemes, sorted.
KILN_API std::vector<SourceInfo> sources();
// Registered decoder extensions, sorted.
KILN_API std::vector<SourceInfo> decoders();

}  // namespace kiln::data
