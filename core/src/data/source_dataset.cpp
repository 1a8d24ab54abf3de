// open() and SourceDataset: the shard list and its split by rank and worker. Reading is in
// source_stream.cpp.
#include <kiln/data/source.h>

#include "../runtime.h"
#include "internal.h"
#include "source_state.h"

#include <kiln/distributed.h>
#include <kiln/error.h>

#include <limits>

namespace kiln::data {
namespace {

using kiln::detail::str;

std::string scheme_list() {
  std::string out;
  for (const detail::SourceEntry& e : detail::all_sources()) {
    out += (out.empty() ? "" : ", ") + e.scheme;
  }
  return out.empty() ? "none: no data-source plugin is loaded (run kiln-info)" : out;
}

struct ListContext {
  std::vector<std::string>* out;
};

void emit_shard(void* ctx, const char* shard) {
  try {
    if (shard != nullptr) static_cast<ListContext*>(ctx)->out->emplace_back(shard);
  } catch (...) {
    // out of memory while listing: the shard is missing; nothing may cross into the plugin
  }
}

}  // namespace

SourceDataset::SourceDataset(std::string scheme, std::string spec, SourceOptions options)
    : state_(std::make_shared<SourceState>()) {
  SourceState& s = *state_;
  s.scheme = std::move(scheme);
  s.spec = std::move(spec);
  s.options = std::move(options);
  if (distributed::is_initialized()) {  // the default group's rank and size, unless given
    if (!s.options.has_rank()) s.options.rank(distributed::get_rank());
    if (!s.options.has_world_size()) s.options.world_size(distributed::get_world_size());
  }
  KILN_CHECK_VALUE(s.options.world_size() > 0, s.label(), ": world_size must be positive, got ",
                   s.options.world_size());
  KILN_CHECK_VALUE(s.options.rank() >= 0 && s.options.rank() < s.options.world_size(), s.label(),
                   ": Invalid rank ", s.options.rank(), ", rank should be in the interval [0, ",
                   s.options.world_size() - 1, "]");
  KILN_CHECK_VALUE(s.options.shuffle_buffer() >= 0 && s.options.shuffle_initial() >= 0, s.label(),
                   ": the shuffle buffer and its initial fill must be non-negative");
  s.source = detail::find_source(s.scheme);
  KILN_CHECK_VALUE(s.source != nullptr, "open: no data source for scheme '", s.scheme,
                   "' (sources: ", scheme_list(), ")");
  for (const std::string& item : expand_braces(s.spec)) {
    if (s.source->ops->list_shards == nullptr) {
      s.shards.push_back(item);
      continue;
    }
    ListContext ctx{&s.shards};
    kiln::detail::take_plugin_error();
    kiln_status status = s.source->ops->list_shards(s.source->self, item.c_str(), emit_shard, &ctx);
    if (status != 0) {
      std::string why = kiln::detail::take_plugin_error();
      throw Error(str(s.label(), ": cannot list '", item,
                      "': ", why.empty() ? "(no message)" : why));
    }
  }
  KILN_CHECK(!s.shards.empty(), s.label(), ": the spec names no shard");
}

SourceDataset::~SourceDataset() = default;

const std::vector<std::string>& SourceDataset::shards() const { return state_->shards; }
const std::string& SourceDataset::scheme() const { return state_->scheme; }
const std::string& SourceDataset::spec() const { return state_->spec; }
const SourceOptions& SourceDataset::options() const { return state_->options; }

std::vector<int64_t> SourceDataset::shards_for(int64_t worker, int64_t num_workers,
                                               int64_t epoch) const {
  const SourceState& s = *state_;
  auto n = static_cast<int64_t>(s.shards.size());
  std::vector<int64_t> order;
  if (s.options.shuffle_shards()) {
    order = detail::permutation(n, detail::mix_seed(s.options.seed().value_or(0),
                                                    static_cast<uint64_t>(epoch)));
  } else {
    for (int64_t i = 0; i < n; ++i) order.push_back(i);
  }
  // every world_size-th shard from the rank, then every num_workers-th of those from the worker
  std::vector<int64_t> out;
  int64_t k = 0;
  for (int64_t i = s.options.rank(); i < n; ++k) {
    if (k % num_workers == worker) out.push_back(order[static_cast<size_t>(i)]);
    if (s.options.world_size() > n - i) break;  // (i + world_size may overflow)
    i += s.options.world_size();
  }
  return out;
}

std::unique_ptr<SampleStream> SourceDataset::iter(const WorkerInfo& worker) {
  SourceState& s = *state_;
  int64_t readers = 0;
  if (__builtin_mul_overflow(s.options.world_size(), worker.num_workers, &readers)) {
    readers = std::numeric_limits<int64_t>::max();
  }
  auto n = static_cast<int64_t>(s.shards.size());
  if (n < readers && !s.warned_few_shards.exchange(true)) {
    kiln::detail::warn(str(s.label(), ": ", n, " shard", n == 1 ? "" : "s", " for ",
                           s.options.world_size(), " rank", s.options.world_size() == 1 ? "" : "s",
                           " x ", worker.num_workers, " worker", worker.num_workers == 1 ? "" : "s",
                           " = ", readers, " readers: ", readers - n, " reader",
                           readers - n == 1 ? " gets" : "s get", " no shard and read",
                           readers - n == 1 ? "s" : "", " nothing (each sample is still read ",
                           "once); use at least ", readers, " shards (kiln-shard writes them)"));
  }
  return detail::make_source_stream(state_, shards_for(worker.id, worker.num_workers, worker.epoch),
                                    worker);
}

void SourceDataset::resume_from(const Sample& delivered) {
  if (delivered.is_none()) {
    state_->set_exclude(nullptr);
    return;
  }
  state_->set_exclude(std::make_shared<const detail::DeliveredSet>(
      detail::DeliveredSet::from_sample(delivered, state_->label() + ": resume_from")));
}

std::shared_ptr<SourceDataset> open(const std::string& scheme, const std::string& spec,
                                    SourceOptions options) {
  return std::make_shared<SourceDataset>(scheme, spec, std::move(options));
}

std::shared_ptr<SourceDataset> open(const std::string& url, SourceOptions options) {
  size_t colon = url.find(':');
  KILN_CHECK_VALUE(colon != std::string::npos && colon > 0, "open: '", url, "' names no source: ",
                   "write \"scheme:spec\", e.g. \"tar:data/train-{000..127}.tar\" (sources: ",
                   scheme_list(), ")");
  std::string scheme = url.substr(0, colon);
  std::string spec = url.substr(colon + 1);
  if (spec.rfind("//", 0) == 0) spec = spec.substr(2);
  return open(scheme, spec, std::move(options));
}

std::vector<SourceInfo> sources() {
  std::vector<SourceInfo> out;
  for (const detail::SourceEntry& e : detail::all_sources()) {
    out.push_back({e.scheme, kiln::detail::plugin_path(e.plugin)});
  }
  return out;
}

std::vector<SourceInfo> decoders() {
  std::vector<SourceInfo> out;
  for (const detail::DecoderEntry& e : detail::all_decoders()) {
    out.push_back({e.extension, kiln::detail::plugin_path(e.plugin)});
  }
  return out;
}

}  // namespace kiln::data
