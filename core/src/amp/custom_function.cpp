// custom_fwd / custom_bwd: forward records its autocast state in the context; backward re-enters
// it. Keys start with "_amp_" so they do not meet a user's saved_data.
#include <kiln/amp/custom_function.h>
#include <kiln/error.h>

#include "policy.h"

namespace kiln::amp {
namespace {
constexpr const char* kEnabled = "_amp_fwd_enabled";
constexpr const char* kDtype = "_amp_fwd_dtype";
constexpr const char* kDeviceType = "_amp_fwd_device_type";
}  // namespace

custom_fwd::custom_fwd(autograd::AutogradContext* ctx, DeviceType device_type,
                       std::optional<ScalarType> cast_inputs)
    : device_type_(device_type) {
  KILN_CHECK_VALUE(ctx != nullptr, "custom_fwd: the context is null");
  bool enabled = is_autocast_enabled(device_type);
  ctx->saved_data[kDeviceType] = static_cast<int64_t>(device_type);
  ctx->saved_data[kDtype] = static_cast<int64_t>(get_autocast_dtype(device_type));
  if (cast_inputs && enabled) {
    KILN_CHECK_TYPE(is_floating_point(*cast_inputs), "custom_fwd: cast_inputs must be a ",
                    "floating dtype, but got ", dtype_name(*cast_inputs));
    cast_to_ = cast_inputs;
    ctx->saved_data[kEnabled] = false;
    disabled_.emplace(device_type, std::nullopt, /*enabled=*/false);
  } else {
    ctx->saved_data[kEnabled] = enabled;
  }
}

Tensor custom_fwd::cast(const Tensor& x) const {
  if (!cast_to_ || !detail::is_eligible(x, device_type_) || x.dtype() == *cast_to_) return x;
  return x.to(*cast_to_);
}

autograd::variable_list custom_fwd::cast(const autograd::variable_list& xs) const {
  autograd::variable_list out;
  out.reserve(xs.size());
  for (const Tensor& x : xs) out.push_back(cast(x));
  return out;
}

custom_bwd::custom_bwd(autograd::AutogradContext* ctx) {
  KILN_CHECK_VALUE(ctx != nullptr, "custom_bwd: the context is null");
  auto enabled = ctx->saved_data.find(kEnabled);
  KILN_CHECK(enabled != ctx->saved_data.end(), "custom_bwd: forward did not declare custom_fwd, ",
             "so backward has no autocast state to run under");
  auto type = static_cast<DeviceType>(ctx->saved_data.at(kDeviceType).toInt());
  auto dtype = static_cast<ScalarType>(ctx->saved_data.at(kDtype).toInt());
  region_.emplace(type, dtype, enabled->second.toBool());
}

}  // namespace kiln::amp
