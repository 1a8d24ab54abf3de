// The gradient reducer of DistributedDataParallel. Internal to libkiln_core. See Note [Gradient
// buckets] in reducer.cpp.
#pragma once

#include <kiln/distributed.h>
#include <kiln/nn/parallel/comm_hooks.h>
#include <kiln/tensor.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kiln::nn::parallel {

class Reducer : public std::enable_shared_from_this<Reducer> {
 public:
  Reducer(std::vector<std::string> names, std::vector<Tensor> params,
          distributed::ProcessGroupPtr group, int64_t first_bucket_bytes, int64_t bucket_bytes,
          bool find_unused, bool gradient_as_bucket_view);
  // Registers a post-accumulation gradient hook on every parameter (holding a weak reference).
  void install_hooks();
  // After a forward: the next backward synchronises (sync) or only accumulates locally.
  void prepare(const std::vector<Tensor>& outputs, bool sync);
  std::vector<int64_t> bucket_sizes() const;
  // Replaces the all-reduce of each bucket (once, before the first backward).
  void set_comm_hook(CommHook hook);

 private:
  struct Bucket {
    Tensor buffer;               // the gradients of its parameters, flat
    std::vector<size_t> params;  // indices into params_
    size_t pending = 0;          // parameters whose gradient has not arrived
    distributed::WorkPtr work;   // its all-reduce, once launched
    BucketFuturePtr future;      // or its communication hook's future
  };
  struct Slot {
    size_t bucket = 0;
    int64_t offset = 0, numel = 0;
  };

  void on_accumulated(size_t index);
  void mark_ready(size_t index, const Tensor& value);
  void launch_ready();
  void launch(size_t index);
  void finalize();
  Tensor slot_view(size_t index) const;

  std::vector<std::string> names_;
  std::vector<Tensor> params_;
  distributed::ProcessGroupPtr group_;
  bool find_unused_;
  bool as_view_;
  CommHook hook_;
  bool backward_seen_ = false;
  std::vector<Bucket> buckets_;
  std::vector<Slot> slots_;
  std::vector<uint8_t> ready_, used_;
  size_t next_launch_ = 0;
  bool expect_backward_ = false;  // prepared for a synchronised backward
  bool queued_ = false;           // finalize is queued for the running backward
};

}  // namespace kiln::nn::parallel
