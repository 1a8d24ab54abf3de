// Communication hooks of DistributedDataParallel, as PyTorch's (register_comm_hook, GradBucket,
// torch.distributed.algorithms.ddp_comm_hooks.default_hooks): a hook receives each gradient
// bucket as it fills during backward, starts its reduction and returns a future of the reduced
// (averaged) bucket, which DistributedDataParallel writes back into the gradients.
//
//   ddp->register_comm_hook(nullptr, kiln::nn::parallel::default_hooks::fp16_compress_hook);
//   ddp->register_comm_hook([](GradBucket& bucket) {  // a hook of one's own
//     auto work = dist::all_reduce(bucket.buffer(), dist::ReduceOp::AVG, nullptr, true);
//     return std::make_shared<BucketFuture>(work, bucket.buffer());
//   });
#pragma once

#include <kiln/distributed.h>
#include <kiln/export.h>
#include <kiln/tensor.h>

#include <functional>
#include <memory>
#include <vector>

namespace kiln::nn::parallel {

// One bucket of gradients, handed to a communication hook (PyTorch's GradBucket).
class KILN_API GradBucket {
 public:
  GradBucket(size_t index, size_t num_buckets, Tensor buffer, std::vector<Tensor> gradients,
             std::vector<Tensor> parameters)
      : index_(index),
        num_buckets_(num_buckets),
        buffer_(std::move(buffer)),
        gradients_(std::move(gradients)),
        parameters_(std::move(parameters)) {}
  // The bucket's position in reduction order (0 first).
  size_t index() const { return index_; }
  // The bucket's gradients, flat (1-D, one dtype and device): the hook reduces this.
  Tensor& buffer() { return buffer_; }
  const Tensor& buffer() const { return buffer_; }
  // Each parameter's gradient, a view of buffer() shaped as the parameter.
  const std::vector<Tensor>& gradients() const { return gradients_; }
  // The parameters whose gradients the bucket holds, in the order of gradients().
  const std::vector<Tensor>& parameters() const { return parameters_; }
  // Whether this is the last bucket reduced in the iteration.
  bool is_last() const { return index_ + 1 == num_buckets_; }

 private:
  size_t index_, num_buckets_;
  Tensor buffer_;
  std::vector<Tensor> gradients_, parameters_;
};

// What a hook returns (PyTorch's Future[Tensor]): wait() gives the reduced bucket, a flat tensor
// of the bucket's size (any dtype: DistributedDataParallel casts it into the bucket).
class KILN_API BucketFuture {
 public:
  // The value `value`, ready once `work` completes (null: ready now).
  BucketFuture(distributed::WorkPtr work, Tensor value);
  explicit BucketFuture(std::function<Tensor()> get) : get_(std::move(get)) {}
  // Waits (bounded by the group's timeout) and returns the value; throws the work's error.
  Tensor wait();
  // A future of fn(this one's value), computed when it is waited for (PyTorch's Future.then).
  std::shared_ptr<BucketFuture> then(std::function<Tensor(const Tensor&)> fn);

 private:
  std::function<Tensor()> get_;
};
using BucketFuturePtr = std::shared_ptr<BucketFuture>;

// A communication hook: starts the bucket's reduction, returns its future.
using CommHook = std::function<BucketFuturePtr(GradBucket& bucket)>;

// PyTorch's default_hooks, each taking the process group (null: the default group) as its state.
namespace default_hooks {
// Divides the bucket by the world size and all-reduces it (SUM): what DistributedDataParallel
// does without a hook.
KILN_API BucketFuturePtr allreduce_hook(const distributed::ProcessGroupPtr& group,
                                        GradBucket& bucket);
// Casts the bucket to float16, divides it by the world size (in float16), all-reduces it (SUM,
// each step rounded to float16) and casts the result back: half the bytes on the wire.
KILN_API BucketFuturePtr fp16_compress_hook(const distributed::ProcessGroupPtr& group,
                                            GradBucket& bucket);
// The same in bfloat16.
KILN_API BucketFuturePtr bf16_compress_hook(const distributed::ProcessGroupPtr& group,
                                            GradBucket& bucket);
}  // namespace default_hooks

}  // namespace kiln::nn::parallel
