// Autocast: automatic mixed precision regions, as torch.autocast.
//
//   {
//     kiln::amp::autocast region(kiln::kCPU);        // bfloat16 on the CPU by default
//     kiln::Tensor y = model->forward(x);             // matmuls and convs run in bfloat16
//     kiln::Tensor loss = kiln::nn::functional::mse_loss(y, t);  // losses run in float32
//   }
//   loss.backward();                                  // backward runs in the dtypes forward chose
//
// A region is thread-local and belongs to one device type: operators whose tensors live on that
// device type are cast by the operator's policy (core/src/amp/policy_cpu.cpp for the CPU,
// policy_cuda.cpp for every other device type), then run below the Autocast layer, so nothing
// they call is cast again. Regions nest; `enabled=false` turns autocast off inside an enabled
// region, and each guard restores the outer state (enabled flag, dtype, cache flag) on exit,
// exceptions included. A thread starts with autocast off, whatever the thread that started it
// had (enable it inside the thread's work).
//
// Note [Autocast weight cache]: the lower-precision copy of a float32 leaf that requires grad
// (a module's weight; not a tensor made by a view operator, even a leaf one, as in PyTorch) is
// made once per outermost region and reused by every operator in it; the cache is cleared when
// the outermost region of the thread exits. The copy is always made with grad mode on, so a
// no-grad forward earlier in the region does not leave a copy without history that a later
// forward with grad would reuse (PyTorch issue 112583).
#pragma once

#include <kiln/device.h>
#include <kiln/dtype.h>
#include <kiln/export.h>

#include <optional>

namespace kiln::amp {

// A scoped autocast region for one device type. dtype: the lower-precision dtype (bfloat16 or
// float16; default: this thread's get_autocast_dtype). cache_enabled: the weight cache (default:
// on, or the enclosing region's setting). Any other dtype warns and leaves autocast disabled for
// the region, as PyTorch's CPU autocast does.
class KILN_API autocast {
 public:
  explicit autocast(DeviceType device_type, std::optional<ScalarType> dtype = std::nullopt,
                    bool enabled = true, std::optional<bool> cache_enabled = std::nullopt);
  // The device type by name: "cpu", "cuda".
  explicit autocast(const char* device_type, std::optional<ScalarType> dtype = std::nullopt,
                    bool enabled = true, std::optional<bool> cache_enabled = std::nullopt);
  ~autocast();
  autocast(const autocast&) = delete;
  autocast& operator=(const autocast&) = delete;

 private:
  DeviceType device_type_;
  bool previous_enabled_;
  ScalarType previous_dtype_;
  bool previous_cache_enabled_;
};

// Whether this thread is in an enabled autocast region for the device type.
KILN_API bool is_autocast_enabled(DeviceType device_type);
// The lower-precision dtype autocast uses for the device type on this thread: the innermost
// region's, else the device plugin's declared default (bfloat16 for the CPU, float16 for CUDA).
KILN_API ScalarType get_autocast_dtype(DeviceType device_type);
// Sets this thread's default lower-precision dtype for the device type (bfloat16 or float16).
KILN_API void set_autocast_dtype(DeviceType device_type, ScalarType dtype);
// Whether regions on this thread cache the casts of weights (Note [Autocast weight cache]).
KILN_API bool is_autocast_cache_enabled();
// Drops this thread's cached weight casts (the outermost region's exit does it too).
KILN_API void clear_autocast_cache();
// The number of weight casts this thread's cache holds (for tests and diagnostics).
KILN_API size_t autocast_cache_size();

}  // namespace kiln::amp
