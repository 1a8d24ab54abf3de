// Pinned (page-locked) host memory for batches bound to a GPU: the DataLoader's pin_memory.
// A device plugin offers it through kiln_device_ops::host_alloc (ABI 1.1); where no plugin does
// (the CPU), pinning leaves the sample unchanged.
#pragma once

#include <kiln/data/sample.h>
#include <kiln/device.h>
#include <kiln/export.h>

namespace kiln::data {

// Whether `device`'s plugin offers page-locked host memory.
KILN_API bool pinned_memory_available(Device device);
// `sample` with each CPU tensor copied into page-locked host memory for `device`; the same
// sample (no copy) when the device offers none.
KILN_API Sample pin_memory(const Sample& sample, Device device);

}  // namespace kiln::data
