// DistributedDataParallel: construction (broadcast from rank 0, the reducer), the forward's
// bookkeeping and no_sync. The gradients' path is the reducer's: Note [Gradient buckets] in
// reducer.cpp.
#include "reducer.h"

#include <kiln/autograd.h>
#include <kiln/error.h>
#include <kiln/nn/parallel/distributed.h>

namespace kiln::nn::parallel {

namespace dist = kiln::distributed;

namespace {

// The global rank that parameters and buffers are broadcast from: the group's first.
int source_rank(const dist::ProcessGroupPtr& group) {
  return group != nullptr ? group->ranks().front() : 0;
}

void broadcast_all(const std::vector<Tensor>& tensors, const dist::ProcessGroupPtr& group) {
  NoGradGuard no_grad;
  int src = source_rank(group);
  std::vector<dist::WorkPtr> works;
  for (Tensor t : tensors) {
    if (t.defined()) works.push_back(dist::broadcast(t, src, group, /*async_op=*/true));
  }
  for (auto& w : works) w->wait();
}

}  // namespace

void DistributedDataParallelImpl::init(std::shared_ptr<Module> module,
                                       const DistributedDataParallelOptions& options) {
  options_ = options;
  KILN_CHECK(module != nullptr, "DistributedDataParallel: the module is null");
  module_ = module;
  KILN_CHECK_VALUE(options.bucket_cap_mb() > 0, "DistributedDataParallel: bucket_cap_mb ",
                   options.bucket_cap_mb(), " is not positive");
  // the group must exist now: the error names what to call first
  dist::get_world_size(options.process_group());
  register_module("module", module);
  std::vector<std::string> names;
  std::vector<Tensor> params;
  for (const auto& item : module->named_parameters()) {
    if (!item.value().requires_grad()) continue;
    names.push_back("module." + item.key());
    params.push_back(item.value());
  }
  broadcast_all(module->parameters(), options.process_group());
  broadcast_all(module->buffers(), options.process_group());
  auto bucket_bytes = static_cast<int64_t>(options.bucket_cap_mb() * 1024 * 1024);
  int64_t first_bytes = std::min<int64_t>(1024 * 1024, bucket_bytes);
  reducer_ = std::make_shared<Reducer>(std::move(names), std::move(params), options.process_group(),
                                       first_bytes, bucket_bytes, options.find_unused_parameters(),
                                       options.gradient_as_bucket_view());
  reducer_->install_hooks();
}

void DistributedDataParallelImpl::before_forward() {
  if (options_.broadcast_buffers()) broadcast_all(module_->buffers(), options_.process_group());
}

void DistributedDataParallelImpl::after_forward(const std::vector<Tensor>& outputs) {
  bool records = false;
  for (const Tensor& t : outputs) records = records || (t.defined() && t.requires_grad());
  bool sync = require_sync_ && autograd::GradMode::is_enabled() && (records || outputs.empty());
  reducer_->prepare(outputs, sync);
}

void DistributedDataParallelImpl::register_comm_hook(CommHook hook) {
  reducer_->set_comm_hook(std::move(hook));
}

std::vector<int64_t> DistributedDataParallelImpl::bucket_sizes() const {
  return reducer_->bucket_sizes();
}

void DistributedDataParallelImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::parallel::DistributedDataParallel(bucket_cap_mb=" << options_.bucket_cap_mb()
         << ", find_unused_parameters=" << (options_.find_unused_parameters() ? "true" : "false")
         << ", broadcast_buffers=" << (options_.broadcast_buffers() ? "true" : "false")
         << ", gradient_as_bucket_view=" << (options_.gradient_as_bucket_view() ? "true" : "false")
         << ")";
}

DistributedDataParallelImpl::NoSyncGuard::NoSyncGuard(DistributedDataParallelImpl& ddp)
    : ddp_(ddp), previous_(ddp.require_sync_) {
  ddp_.require_sync_ = false;
}

DistributedDataParallelImpl::NoSyncGuard::~NoSyncGuard() { ddp_.require_sync_ = previous_; }

}  // namespace kiln::nn::parallel
