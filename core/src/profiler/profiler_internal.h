// The profiler's recording entry points, for the Observe layer's scope and record_function.
#pragma once

#include <kiln/profiler.h>
#include <kiln/tensor.h>

#include <cstdint>

namespace kiln::detail {
// Bytes of storage this thread has allocated since it started (core/src/storage.cpp).
uint64_t thread_allocated_bytes();
}  // namespace kiln::detail

namespace kiln::profiler::detail {

// Opens an event on this thread's stack; its index, or -1 when no profile records.
int push_frame(const char* name, bool user_range);
// Describes one argument of the open event `frame` (nullptr: a non-tensor).
void add_frame_input(int frame, const Tensor* t);
// Closes the event `frame` (the top of the stack) and files it.
void pop_frame(int frame);

}  // namespace kiln::profiler::detail
