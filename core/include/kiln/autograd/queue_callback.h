// Callbacks at the end of a backward pass, as PyTorch's Engine::queue_callback: code that runs
// during backward (a gradient hook) queues a function that runs once, on the same thread, after
// the pass has run every node, so after every leaf's .grad() is accumulated.
// DistributedDataParallel finishes its gradient reduction there.
#pragma once

#include <kiln/export.h>

#include <functional>

namespace kiln::autograd {

// Queues `callback` for the end of the backward pass running on this thread. Throws kiln::Error
// when no backward pass runs on this thread. Callbacks run in the order queued; one may queue
// another. When the pass fails, the queued callbacks are dropped.
KILN_API void queue_callback(std::function<void()> callback);

}  // namespace kiln::autograd
