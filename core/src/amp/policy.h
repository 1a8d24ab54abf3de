// The Autocast dispatch layer: cast policies, their tables and the one kernel that applies them
// to an operator of any signature. Internal to libkiln_core.
//
// Note [Autocast policies]: as PyTorch's autocast_mode.cpp, each operator listed for a device
// type has one policy:
//   lower_precision     floating inputs on the device run in the region's dtype (bf16/fp16)
//   fp32                floating inputs run in float32
//   fp32_set_opt_dtype  an unset `dtype` argument becomes float32 when the first input is
//                       eligible; a call with an explicit dtype runs as it is
//   promote             floating inputs are cast to the widest floating dtype among them
//   banned              the call raises (binary_cross_entropy on CUDA)
// An eligible input is a defined floating tensor on the region's device type that is not
// float64. Operators not listed, in-place operators and calls below the layer are not cast.
// An elementwise operator's policy is part of its declaration (See Note [One entry per
// operator]); the others' are in tables: the CPU's is policy_cpu.cpp, and policy_cuda.cpp serves
// CUDA and every other device type.
#pragma once

#include <kiln/amp/autocast.h>
#include <kiln/dispatch.h>
#include <kiln/error.h>

#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace kiln::amp::detail {

enum class CastPolicy : uint8_t {
  none,
  lower_precision,
  fp32,
  fp32_set_opt_dtype,
  promote,
  banned
};

struct PolicyEntry {
  const char* op;  // the operator's name, as all_operators() lists it
  CastPolicy policy;
};

// An operator's policy on the CPU and on every other device type, as its declaration gives it
// (PyTorch's CPU and CUDA lists differ).
struct AutocastPolicy {
  CastPolicy cpu;
  CastPolicy other;
};
inline constexpr AutocastPolicy kNoCast{CastPolicy::none, CastPolicy::none};
// float32 in regions of every device type but the CPU (PyTorch's CUDA fp32 list; its CPU list
// leaves the operator alone): exp, log, pow, ...
inline constexpr AutocastPolicy kFp32OffCpu{CastPolicy::none, CastPolicy::fp32};

// The tables (policy_cpu.cpp, policy_cuda.cpp).
const std::vector<PolicyEntry>& cpu_policy_table();
const std::vector<PolicyEntry>& cuda_policy_table();
// The message of a banned operator on a device type (policy_cuda.cpp).
std::string banned_message(const char* op);

// The policy of `op` on device type `type` (none when its table does not list it).
CastPolicy policy_of(const OperatorBase& op, DeviceType type);
// Installs the Autocast layer on every operator of the tables; runs once, at the runtime's
// start-up (Note [Runtime start-up]); later calls, from the first region, return at once.
void install_autocast_layer();

// Records the policy of an operator that declares it (install.cpp).
void set_declared_policy(const OperatorBase& op, AutocastPolicy policy);

// Whether `t` takes part in casting inside a region for device type `type`.
inline bool is_eligible(const Tensor& t, DeviceType type) {
  return t.defined() && t.device().type() == type && is_floating_point(t.dtype()) &&
         t.dtype() != kDouble;
}

// `t` cast to `dtype` when eligible, through the weight cache when `dtype` is the region's
// lower dtype (Note [Autocast weight cache]).
Tensor cast_for_autocast(const Tensor& t, DeviceType type, ScalarType dtype);

[[noreturn]] void throw_banned(const OperatorBase& op, const std::vector<const Tensor*>& inputs);

// --- the generic kernel ------------------------------------------------------------------------

template <class A>
void collect_tensors(std::vector<const Tensor*>& out, const A& arg) {
  using U = std::decay_t<A>;
  if constexpr (std::is_same_v<U, Tensor>) {
    out.push_back(&arg);
  } else if constexpr (std::is_same_v<U, TensorList>) {
    for (const Tensor& t : arg) out.push_back(&t);
  } else if constexpr (std::is_same_v<U, std::optional<Tensor>>) {
    if (arg) out.push_back(&*arg);
  }
}

// The first device type with autocast enabled among the inputs (the key set guarantees one).
inline DeviceType autocast_device_type(const std::vector<const Tensor*>& inputs) {
  uint32_t enabled = kiln::detail::local_dispatch_state().autocast_device_types;
  for (const Tensor* t : inputs) {
    if (t->defined() && ((enabled >> t->device().type()) & 1u)) return t->device().type();
  }
  return kCPU;
}

// What one call casts to: `dtype` for tensors, or, for fp32_set_opt_dtype, the dtype argument.
struct CastPlan {
  DeviceType type;
  std::optional<ScalarType> tensor_dtype;  // unset: tensors pass unchanged
  bool fill_dtype = false;                 // fp32_set_opt_dtype with an eligible first input
};

template <class A>
auto cast_arg(const A& arg, const CastPlan& plan) {
  using U = std::decay_t<A>;
  if constexpr (std::is_same_v<U, Tensor>) {
    return plan.tensor_dtype ? cast_for_autocast(arg, plan.type, *plan.tensor_dtype) : arg;
  } else if constexpr (std::is_same_v<U, TensorList>) {
    std::vector<Tensor> cast;
    cast.reserve(arg.size());
    for (const Tensor& t : arg) {
      cast.push_back(plan.tensor_dtype ? cast_for_autocast(t, plan.type, *plan.tensor_dtype) : t);
    }
    return cast;
  } else if constexpr (std::is_same_v<U, std::optional<Tensor>>) {
    if (!arg || !plan.tensor_dtype) return arg;
    return std::optional<Tensor>(cast_for_autocast(*arg, plan.type, *plan.tensor_dtype));
  } else if constexpr (std::is_same_v<U, std::optional<ScalarType>>) {
    return plan.fill_dtype && !arg ? std::optional<ScalarType>(kFloat) : arg;
  } else {
    return U(arg);
  }
}

// PyTorch's promote: start from the region's dtype and promote with every eligible input.
inline ScalarType promoted_dtype(const std::vector<const Tensor*>& inputs, DeviceType type,
                                 ScalarType lower) {
  ScalarType result = lower;
  for (const Tensor* t : inputs) {
    if (is_eligible(*t, type)) result = promote_types(result, t->dtype());
  }
  return result;
}

// The Autocast layer of an operator: casts by the operator's policy on the inputs' device type,
// then calls the operator again below this layer.
template <class R, class... Args>
R autocast_kernel(const Operator<R(Args...)>& op, Args... args) {
  std::vector<const Tensor*> inputs;
  (collect_tensors(inputs, args), ...);
  CastPlan plan{autocast_device_type(inputs), std::nullopt, false};
  switch (policy_of(op, plan.type)) {
    case CastPolicy::none: break;
    case CastPolicy::lower_precision: plan.tensor_dtype = get_autocast_dtype(plan.type); break;
    case CastPolicy::fp32: plan.tensor_dtype = kFloat; break;
    case CastPolicy::fp32_set_opt_dtype:
      plan.fill_dtype = !inputs.empty() && is_eligible(*inputs[0], plan.type);
      break;
    case CastPolicy::promote:
      plan.tensor_dtype = promoted_dtype(inputs, plan.type, get_autocast_dtype(plan.type));
      break;
    case CastPolicy::banned: throw_banned(op, inputs);
  }
  // the casts are made above the guard: they are recorded by autograd, and never re-cast
  auto held = std::make_tuple(cast_arg(args, plan)...);
  ExcludeDispatchKeyGuard below(DispatchKey::Autocast);
  return std::apply([&op](auto&... a) -> R { return op(a...); }, held);
}

// Gives op its declared policy and the Autocast kernel (at static initialization, before any
// tensor exists), unless the policy casts nothing.
template <class Signature>
void declare_policy(Operator<Signature>& op, AutocastPolicy policy) {
  if (policy.cpu == CastPolicy::none && policy.other == CastPolicy::none) return;
  set_declared_policy(op, policy);
  op.set_kernel(DispatchKey::Autocast, &autocast_kernel);
}

}  // namespace kiln::amp::detail
