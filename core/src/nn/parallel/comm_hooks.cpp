// DistributedDataParallel's communication hooks: BucketFuture and PyTorch's default_hooks
// (allreduce, fp16 and bf16 compression), after torch/distributed/algorithms/ddp_comm_hooks/
// default_hooks.py.
#include <kiln/autograd.h>
#include <kiln/nn/parallel/comm_hooks.h>
#include <kiln/ops.h>

namespace kiln::nn::parallel {

namespace dist = kiln::distributed;

BucketFuture::BucketFuture(dist::WorkPtr work, Tensor value)
    : get_([work = std::move(work), value = std::move(value)] {
        if (work != nullptr) work->wait();
        return value;
      }) {}

Tensor BucketFuture::wait() { return get_(); }

std::shared_ptr<BucketFuture> BucketFuture::then(std::function<Tensor(const Tensor&)> fn) {
  return std::make_shared<BucketFuture>(std::function<Tensor()>([get = get_, fn = std::move(fn)] {
    return fn(get());
  }));
}

namespace default_hooks {
namespace {

// Casts to `dtype`, divides by the world size, all-reduces (SUM), and copies the result back
// into the bucket when waited for.
BucketFuturePtr compress_hook(const dist::ProcessGroupPtr& group, GradBucket& bucket,
                              ScalarType dtype) {
  NoGradGuard no_grad;
  int world_size = dist::get_world_size(group);
  Tensor compressed = bucket.buffer().to(dtype).div_(world_size);
  auto work = dist::all_reduce(compressed, dist::ReduceOp::SUM, group, /*async_op=*/true);
  Tensor buffer = bucket.buffer();
  return std::make_shared<BucketFuture>(work, compressed)->then([buffer](const Tensor& reduced) {
    NoGradGuard no_grad;
    buffer.copy_(reduced);
    return buffer;
  });
}

}  // namespace

BucketFuturePtr allreduce_hook(const dist::ProcessGroupPtr& group, GradBucket& bucket) {
  NoGradGuard no_grad;
  Tensor buffer = bucket.buffer();
  buffer.div_(dist::get_world_size(group));
  auto work = dist::all_reduce(buffer, dist::ReduceOp::SUM, group, /*async_op=*/true);
  return std::make_shared<BucketFuture>(work, buffer);
}

BucketFuturePtr fp16_compress_hook(const dist::ProcessGroupPtr& group, GradBucket& bucket) {
  return compress_hook(group, bucket, kHalf);
}

BucketFuturePtr bf16_compress_hook(const dist::ProcessGroupPtr& group, GradBucket& bucket) {
  return compress_hook(group, bucket, kBFloat16);
}

}  // namespace default_hooks
}  // namespace kiln::nn::parallel
