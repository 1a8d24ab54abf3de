// The libtorch-shaped samplers (kiln/data/samplers/*.h): sequential, random, distributed, stream.
// Their saved states are read back with every field checked (kiln::ValueError naming it).
#include <kiln/data/samplers.h>

#include "internal.h"

#include <kiln/error.h>
#include <kiln/ops.h>
#include <kiln/serialize/archive.h>
#include <kiln/tensor_data.h>

#include <algorithm>
#include <limits>
#include <numeric>

namespace kiln::data::samplers {
namespace {

void check_batch_size(const char* who, size_t batch_size) {
  KILN_CHECK_VALUE(batch_size > 0, who, "::next: batch_size must be positive, got 0");
}

// A scalar int64 tensor holding `value`.
Tensor index_scalar(size_t value) {
  KILN_CHECK_VALUE(value <= static_cast<size_t>(std::numeric_limits<int64_t>::max()),
                   "sampler save: index ", value, " does not fit int64");
  return kiln::tensor(static_cast<int64_t>(value));
}

// The int64 values of `key` in `archive`: a tensor of int64 with `want_scalar` one element.
std::vector<int64_t> read_ints(const serialize::InputArchive& archive, const char* who,
                               const std::string& key, bool want_scalar) {
  Tensor t;
  archive.read(key, t);
  KILN_CHECK_VALUE(t.scalar_type() == kLong && (!want_scalar || t.numel() == 1), who, "::load: '",
                   key, "' must be ", want_scalar ? "one int64" : "int64", " value(s), got a ",
                   t.scalar_type(), " tensor of ", t.numel(), " element(s)");
  Tensor c = t.contiguous();
  const int64_t* p = c.data_ptr<int64_t>();
  std::vector<int64_t> out(p, p + c.numel());
  for (int64_t v : out) {
    KILN_CHECK_VALUE(v >= 0, who, "::load: '", key, "' holds the negative value ", v);
  }
  return out;
}

size_t read_index(const serialize::InputArchive& archive, const char* who, const std::string& key) {
  return static_cast<size_t>(read_ints(archive, who, key, true)[0]);
}

// The next min(batch_size, end - *position) entries of `indices` from *position.
std::optional<std::vector<size_t>> take(const std::vector<size_t>& indices, size_t* position,
                                        size_t end, size_t batch_size) {
  if (*position >= end) return std::nullopt;
  size_t n = std::min(batch_size, end - *position);
  auto first = indices.begin() + static_cast<std::ptrdiff_t>(*position);
  std::vector<size_t> out(first, first + static_cast<std::ptrdiff_t>(n));
  *position += n;
  return out;
}

// A permutation of 0 .. n-1 from `seed` (kiln's portable shuffle).
std::vector<size_t> shuffled(size_t n, uint64_t seed) {
  KILN_CHECK_VALUE(n <= static_cast<size_t>(std::numeric_limits<int64_t>::max()), "sampler: size ",
                   n, " does not fit int64");
  std::vector<int64_t> p = data::detail::permutation(static_cast<int64_t>(n), seed);
  return std::vector<size_t>(p.begin(), p.end());
}

}  // namespace

// --- SequentialSampler ------------------------------------------------------------------------

SequentialSampler::SequentialSampler(size_t size) : size_(size) {}

void SequentialSampler::reset(std::optional<size_t> new_size) {
  if (new_size) size_ = *new_size;
  index_ = 0;
}

std::optional<std::vector<size_t>> SequentialSampler::next(size_t batch_size) {
  check_batch_size("SequentialSampler", batch_size);
  if (index_ >= size_) return std::nullopt;
  std::vector<size_t> out(std::min(batch_size, size_ - index_));
  std::iota(out.begin(), out.end(), index_);
  index_ += out.size();
  return out;
}

void SequentialSampler::save(serialize::OutputArchive& archive) const {
  archive.write("index", index_scalar(index_), true);
  archive.write("size", index_scalar(size_), true);
}

void SequentialSampler::load(serialize::InputArchive& archive) {
  size_t index = read_index(archive, "SequentialSampler", "index");
  Tensor unused;
  size_t size = archive.try_read("size", unused) ? read_index(archive, "SequentialSampler", "size")
                                                 : size_;
  KILN_CHECK_VALUE(index <= size, "SequentialSampler::load: 'index' ", index, " exceeds the size ",
                   size);
  index_ = index;
  size_ = size;
}

// --- RandomSampler ----------------------------------------------------------------------------

RandomSampler::RandomSampler(int64_t size) {
  KILN_CHECK_VALUE(size >= 0, "RandomSampler: size must be non-negative, got ", size);
  reset(static_cast<size_t>(size));
}

void RandomSampler::reset(std::optional<size_t> new_size) {
  indices_ = shuffled(new_size.value_or(indices_.size()), data::detail::draw_seed());
  index_ = 0;
}

std::optional<std::vector<size_t>> RandomSampler::next(size_t batch_size) {
  check_batch_size("RandomSampler", batch_size);
  return take(indices_, &index_, indices_.size(), batch_size);
}

void RandomSampler::save(serialize::OutputArchive& archive) const {
  std::vector<int64_t> values(indices_.begin(), indices_.end());
  archive.write("index", index_scalar(index_), true);
  archive.write("indices", values.empty() ? kiln::empty({0}, kLong) : kiln::tensor(values, kLong),
                true);
}

void RandomSampler::load(serialize::InputArchive& archive) {
  std::vector<int64_t> values = read_ints(archive, "RandomSampler", "indices", false);
  size_t index = read_index(archive, "RandomSampler", "index");
  std::vector<bool> seen(values.size(), false);
  for (int64_t v : values) {
    auto i = static_cast<size_t>(v);
    KILN_CHECK_VALUE(i < values.size() && !seen[i], "RandomSampler::load: 'indices' is not a ",
                     "permutation of 0..", values.size(), " (", v, " is out of range or repeated)");
    seen[i] = true;
  }
  KILN_CHECK_VALUE(index <= values.size(), "RandomSampler::load: 'index' ", index, " exceeds the ",
                   values.size(), " indices");
  indices_.assign(values.begin(), values.end());
  index_ = index;
}

// --- StreamSampler ----------------------------------------------------------------------------

StreamSampler::StreamSampler(size_t epoch_size) : epoch_size_(epoch_size) {}

void StreamSampler::reset(std::optional<size_t> new_size) {
  if (new_size) epoch_size_ = *new_size;
  examples_retrieved_so_far_ = 0;
}

std::optional<BatchSize> StreamSampler::next(size_t batch_size) {
  check_batch_size("StreamSampler", batch_size);
  if (examples_retrieved_so_far_ >= epoch_size_) return std::nullopt;
  size_t n = std::min(batch_size, epoch_size_ - examples_retrieved_so_far_);
  examples_retrieved_so_far_ += n;
  return BatchSize(n);
}

void StreamSampler::save(serialize::OutputArchive& archive) const {
  archive.write("examples_retrieved_so_far", index_scalar(examples_retrieved_so_far_), true);
  archive.write("epoch_size", index_scalar(epoch_size_), true);
}

void StreamSampler::load(serialize::InputArchive& archive) {
  size_t so_far = read_index(archive, "StreamSampler", "examples_retrieved_so_far");
  size_t epoch_size = read_index(archive, "StreamSampler", "epoch_size");
  KILN_CHECK_VALUE(so_far <= epoch_size, "StreamSampler::load: 'examples_retrieved_so_far' ",
                   so_far, " exceeds 'epoch_size' ", epoch_size);
  examples_retrieved_so_far_ = so_far;
  epoch_size_ = epoch_size;
}

// --- Distributed samplers ---------------------------------------------------------------------

void check_distributed_arguments(size_t size, size_t num_replicas, size_t rank) {
  KILN_CHECK_VALUE(num_replicas > 0, "DistributedSampler: num_replicas must be positive, got 0");
  KILN_CHECK_VALUE(rank < num_replicas, "DistributedSampler: rank ", rank,
                   " is out of range for num_replicas ", num_replicas);
  size_t per_rank = size / num_replicas + 1;
  KILN_CHECK_VALUE(per_rank <= std::numeric_limits<size_t>::max() / num_replicas,
                   "DistributedSampler: size ", size, " padded for ", num_replicas,
                   " replicas overflows");
}

DistributedRandomSampler::DistributedRandomSampler(size_t size, size_t num_replicas, size_t rank,
                                                   bool allow_duplicates)
    : DistributedSampler(size, num_replicas, rank, allow_duplicates) {
  reset(size_);
}

void DistributedRandomSampler::populate_indices() {
  size_t local = local_sample_count();
  size_t total = num_replicas_ == 1 ? size_ : local * num_replicas_;
  all_indices_.resize(total);
  // 0 .. size-1, then the first indices again to pad (or fewer: the tail is dropped).
  for (size_t i = 0; i < total; ++i) all_indices_[i] = i < size_ ? i : i - size_;
  begin_index_ = rank_ * local;
  end_index_ = begin_index_ + local;
  sample_index_ = begin_index_;
}

void DistributedRandomSampler::reset(std::optional<size_t> new_size) {
  if (new_size) {
    check_distributed_arguments(*new_size, num_replicas_, rank_);
    size_ = *new_size;
  }
  populate_indices();
  // Every rank draws the same permutation of the padded list for the same epoch.
  std::vector<size_t> order = shuffled(all_indices_.size(), data::detail::mix64(epoch_));
  std::vector<size_t> permuted(all_indices_.size());
  for (size_t i = 0; i < order.size(); ++i) permuted[i] = all_indices_[order[i]];
  all_indices_ = std::move(permuted);
}

std::optional<std::vector<size_t>> DistributedRandomSampler::next(size_t batch_size) {
  check_batch_size("DistributedRandomSampler", batch_size);
  return take(all_indices_, &sample_index_, end_index_, batch_size);
}

void DistributedRandomSampler::save(serialize::OutputArchive& archive) const {
  archive.write("sample_index_", index_scalar(sample_index_), true);
  archive.write("epoch_", index_scalar(epoch_), true);
}

void DistributedRandomSampler::load(serialize::InputArchive& archive) {
  size_t epoch = read_index(archive, "DistributedRandomSampler", "epoch_");
  size_t index = read_index(archive, "DistributedRandomSampler", "sample_index_");
  size_t begin = rank_ * local_sample_count();
  size_t end = begin + local_sample_count();
  KILN_CHECK_VALUE(index >= begin && index <= end,
                   "DistributedRandomSampler::load: ", "'sample_index_' ", index,
                   " lies outside rank ", rank_, "'s block [", begin, ", ", end, "]");
  epoch_ = epoch;
  reset(size_);
  sample_index_ = index;
}

DistributedSequentialSampler::DistributedSequentialSampler(size_t size, size_t num_replicas,
                                                           size_t rank, bool allow_duplicates)
    : DistributedSampler(size, num_replicas, rank, allow_duplicates) {
  populate_indices();
}

void DistributedSequentialSampler::populate_indices() {
  begin_index_ = rank_ * local_sample_count();
  end_index_ = begin_index_ + local_sample_count();
  sample_index_ = begin_index_;
}

void DistributedSequentialSampler::reset(std::optional<size_t> new_size) {
  if (new_size && *new_size != size_) {
    check_distributed_arguments(*new_size, num_replicas_, rank_);
    size_ = *new_size;
  }
  populate_indices();
}

std::optional<std::vector<size_t>> DistributedSequentialSampler::next(size_t batch_size) {
  check_batch_size("DistributedSequentialSampler", batch_size);
  if (sample_index_ >= end_index_) return std::nullopt;
  std::vector<size_t> out(std::min(batch_size, end_index_ - sample_index_));
  std::iota(out.begin(), out.end(), sample_index_);
  for (size_t& i : out) i %= size_;  // the padding repeats the first indices
  sample_index_ += out.size();
  return out;
}

void DistributedSequentialSampler::save(serialize::OutputArchive& archive) const {
  archive.write("sample_index_", index_scalar(sample_index_), true);
}

void DistributedSequentialSampler::load(serialize::InputArchive& archive) {
  size_t index = read_index(archive, "DistributedSequentialSampler", "sample_index_");
  KILN_CHECK_VALUE(index >= begin_index_ && index <= end_index_,
                   "DistributedSequentialSampler::load: 'sample_index_' ", index,
                   " lies outside rank ", rank_, "'s block [", begin_index_, ", ", end_index_, "]");
  sample_index_ = index;
}

}  // namespace kiln::data::samplers
