// kiln::amp::autocast: the thread-local region state and the weight cast cache.
// See Note [Autocast policies] (policy.h) and Note [Autocast weight cache] (amp/autocast.h).
#include "policy.h"

#include "../runtime.h"

#include <kiln/autograd.h>

#include <memory>
#include <sstream>
#include <unordered_map>

namespace kiln::amp {
namespace {

struct CachedCast {
  std::weak_ptr<TensorImpl> source;  // tells a freed-and-reused address from the same weight
  Tensor cast;
};

struct AutocastState {
  std::optional<ScalarType> dtype[kMaxDeviceTypes];
  bool cache_enabled = true;
  int depth = 0;  // guards alive on this thread, enabled or not
  std::unordered_map<const TensorImpl*, CachedCast> cache;
};

AutocastState& state() {
  static thread_local AutocastState s;
  return s;
}

ScalarType plugin_default_dtype(DeviceType type) {
  const kiln_device_ops* ops = kiln::detail::device_record(type).ops;
  if (ops != nullptr) {
    auto declared = static_cast<ScalarType>(ops->autocast_dtype);
    if (declared == kHalf || declared == kBFloat16) return declared;
  }
  return type == kCPU ? kBFloat16 : kHalf;
}

uint32_t& enabled_bits() { return kiln::detail::local_dispatch_state().autocast_device_types; }

void check_device_type(DeviceType type) {
  KILN_CHECK_VALUE(type >= 0 && type < kMaxDeviceTypes, "autocast: invalid device type ",
                   static_cast<int>(type));
}

}  // namespace

autocast::autocast(DeviceType device_type, std::optional<ScalarType> dtype, bool enabled,
                   std::optional<bool> cache_enabled)
    : device_type_(device_type) {
  check_device_type(device_type);
  detail::install_autocast_layer();
  AutocastState& s = state();
  previous_enabled_ = is_autocast_enabled(device_type);
  previous_dtype_ = get_autocast_dtype(device_type);
  previous_cache_enabled_ = s.cache_enabled;
  ScalarType chosen = dtype.value_or(previous_dtype_);
  if (enabled && chosen != kBFloat16 && chosen != kHalf) {
    kiln::detail::warn("autocast: in the " + device_type_name(device_type) +
                       " autocast region, only bfloat16 and float16 are supported as the lower "
                       "precision dtype, but got " +
                       dtype_name(chosen) + "; autocast is disabled for the region");
    enabled = false;
    chosen = previous_dtype_;
  }
  s.dtype[device_type] = chosen;
  if (cache_enabled) s.cache_enabled = *cache_enabled;
  if (enabled) {
    enabled_bits() |= 1u << device_type;
  } else {
    enabled_bits() &= ~(1u << device_type);
  }
  ++s.depth;
}

autocast::autocast(const char* device_type, std::optional<ScalarType> dtype, bool enabled,
                   std::optional<bool> cache_enabled)
    : autocast(device_type_from_name(device_type), dtype, enabled, cache_enabled) {}

autocast::~autocast() {
  AutocastState& s = state();
  if (--s.depth == 0) s.cache.clear();
  if (previous_enabled_) {
    enabled_bits() |= 1u << device_type_;
  } else {
    enabled_bits() &= ~(1u << device_type_);
  }
  s.dtype[device_type_] = previous_dtype_;
  s.cache_enabled = previous_cache_enabled_;
}

bool is_autocast_enabled(DeviceType device_type) {
  check_device_type(device_type);
  return (enabled_bits() >> device_type) & 1u;
}

ScalarType get_autocast_dtype(DeviceType device_type) {
  check_device_type(device_type);
  const std::optional<ScalarType>& d = state().dtype[device_type];
  return d ? *d : plugin_default_dtype(device_type);
}

void set_autocast_dtype(DeviceType device_type, ScalarType dtype) {
  check_device_type(device_type);
  KILN_CHECK_TYPE(dtype == kBFloat16 || dtype == kHalf, "set_autocast_dtype: the lower ",
                  "precision dtype of ", device_type_name(device_type), " autocast must be ",
                  "bfloat16 or float16, but got ", dtype_name(dtype));
  state().dtype[device_type] = dtype;
}

bool is_autocast_cache_enabled() { return state().cache_enabled; }
void clear_autocast_cache() { state().cache.clear(); }
size_t autocast_cache_size() { return state().cache.size(); }

namespace detail {

Tensor cast_for_autocast(const Tensor& t, DeviceType type, ScalarType dtype) {
  if (!is_eligible(t, type) || t.dtype() == dtype) return t;
  AutocastState& s = state();
  bool cacheable = s.cache_enabled && dtype == get_autocast_dtype(type) && t.dtype() == kFloat &&
                   t.requires_grad() && t.is_leaf() && !t.impl().view &&
                   !InferenceMode::is_enabled();
  if (!cacheable) return t.to(dtype);
  const TensorImpl* key = t.impl_ptr().get();
  auto it = s.cache.find(key);
  if (it != s.cache.end() && it->second.source.lock() == t.impl_ptr() &&
      it->second.cast.dtype() == dtype) {
    return it->second.cast;
  }
  Tensor cast;
  {
    autograd::AutoGradMode grad_on(true);  // Note [Autocast weight cache]
    cast = t.to(dtype);
  }
  s.cache[key] = CachedCast{t.impl_ptr(), cast};
  return cast;
}

void throw_banned(const OperatorBase& op, const std::vector<const Tensor*>& inputs) {
  std::ostringstream what;
  what << banned_message(op.name()) << " (inputs:";
  for (const Tensor* t : inputs) {
    if (!t->defined()) continue;
    what << " " << t->sizes() << " " << dtype_name(t->dtype()) << " on " << t->device() << ";";
  }
  what << " in a " << device_type_name(inputs.empty() ? kCPU : inputs[0]->device().type())
       << " autocast region)";
  throw TypeError(what.str());
}

}  // namespace detail
}  // namespace kiln::amp
