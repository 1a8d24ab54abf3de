// TensorOptions: dtype, device and requires_grad for factories, as libtorch's
// (`kiln::zeros({2, 2}, kiln::TensorOptions().dtype(kiln::kInt).device("cpu"))`).
#pragma once

#include <kiln/device.h>
#include <kiln/dtype.h>

#include <optional>

namespace kiln {

// How a tensor's elements are laid out: kiln has strided tensors only (libtorch's kStrided).
enum class Layout : int8_t { Strided };
constexpr Layout kStrided = Layout::Strided;

class TensorOptions {
 public:
  TensorOptions() = default;
  TensorOptions(ScalarType dtype) : dtype_(dtype) {}  // NOLINT: as libtorch
  TensorOptions(Device device) : device_(device) {}   // NOLINT: as libtorch
  // explicit: DeviceType is an integer, and `zeros({2}, 1)` must not mean a device
  explicit TensorOptions(DeviceType type) : device_(Device(type)) {}

  TensorOptions dtype(ScalarType d) const {
    TensorOptions o = *this;
    o.dtype_ = d;
    return o;
  }
  TensorOptions device(Device d) const {
    TensorOptions o = *this;
    o.device_ = d;
    return o;
  }
  // Only kStrided exists; the setter is there for code written against libtorch.
  TensorOptions layout(Layout) const { return *this; }
  TensorOptions requires_grad(bool r) const {
    TensorOptions o = *this;
    o.requires_grad_ = r;
    return o;
  }

  std::optional<ScalarType> dtype_opt() const { return dtype_; }
  std::optional<Device> device_opt() const { return device_; }
  // The dtype, or `fallback` (float32 for most factories) when none was given.
  ScalarType dtype_or(ScalarType fallback) const { return dtype_.value_or(fallback); }
  // The device, or the CPU when none was given (as libtorch's factories).
  Device device() const { return device_.value_or(Device(kCPU)); }
  bool requires_grad() const { return requires_grad_; }
  Layout layout() const { return kStrided; }

 private:
  std::optional<ScalarType> dtype_;
  std::optional<Device> device_;
  bool requires_grad_ = false;
};

inline TensorOptions dtype(ScalarType d) { return TensorOptions().dtype(d); }
inline TensorOptions device(Device d) { return TensorOptions().device(d); }
inline TensorOptions requires_grad(bool r = true) { return TensorOptions().requires_grad(r); }
inline TensorOptions layout(Layout l) { return TensorOptions().layout(l); }

}  // namespace kiln
