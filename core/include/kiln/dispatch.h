// Operators and the dispatcher.
//
// An operator is declared once in core as an `Operator<Signature>` object with a name, a schema
// string and its backend function. A call walks four dispatch layers, highest first:
//
//   Autocast  — active when this thread has an autocast region enabled for the device type of a
//               tensor argument (casts inputs, then re-dispatches);
//   Autograd  — active when an argument requires grad (records the graph, then re-dispatches);
//   Observe   — active while a profile (every thread) or a trace (this thread) is running:
//               records the call, then calls the Backend layer directly
//               (See Note [The Observe layer]);
//   Backend   — always active: a view or composite written in core, or a plugin kernel
//               (detail::run_kernel) for the tensors' device.
//
// A call's key set is the union of its arguments' keys, plus the thread-local included keys,
// minus the thread-local excluded keys, masked by the keys the operator has a kernel for. A
// layer without a kernel for an operator is a fallthrough: its bit is never set, so it costs
// nothing. A layer that has done its job re-dispatches with its key excluded
// (ExcludeDispatchKeyGuard), which the guard restores on scope exit, exceptions included.
// Grad mode and autocast state are thread-local.
//
// Note [The Observe layer]: the profiler (kiln/profiler.h) and graph capture (kiln/jit.h) share
// one layer, which no operator knows about: every Operator gets its kernel (observe_kernel
// below) at construction, and its key is set only while a profile runs (a process-wide bit, so
// that data-loader workers and other threads are profiled too) or a trace runs on this thread
// (a thread-local included bit). Off, the dispatcher computes the same bit operations as before
// (one more relaxed load of the process-wide bits), so it costs nothing measurable.
// It sits BELOW Autocast and Autograd, just above Backend, for three reasons:
//   - a trace must record the casts autocast inserts and the lower-precision operator it picks
//     (autocast decisions are taken at trace time and recorded, so replay needs no autocast):
//     below Autocast, the casts and the re-dispatched operator reach the layer as calls;
//   - every layer above re-dispatches through operator() with its key excluded, while Observe
//     calls the Backend kernel directly: a call reaches Observe exactly once however many
//     layers sit above, so nothing is recorded twice and no exclusion is needed (the operators a
//     composite calls from its Backend are observed again, as children);
//   - autograd's graph recording stays out of the traced graph: replay under grad mode goes
//     through the Autograd layer again (docs/graphs.md).
// The cost: an operator's profiled time excludes its Autograd and Autocast work (the casts
// show as their own calls), and a call made straight to a lower layer (call_layer) is not seen.
//
// Note [Dispatch hot path]: no string work, no hashing and no allocation happens between an
// operator call and its backend: the key set is a few bit operations, each layer a function
// pointer on the operator object, and plugin kernels are indexed by device type.
#pragma once

#include <kiln/export.h>
#include <kiln/jit/recorded_call.h>
#include <kiln/tensor.h>

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace kiln {

enum class DispatchKey : uint8_t { Backend = 0, Autograd = 1, Autocast = 2, Observe = 3 };
constexpr int kNumDispatchKeys = 4;
constexpr uint8_t key_bit(DispatchKey k) { return static_cast<uint8_t>(1u << static_cast<int>(k)); }
KILN_API const char* dispatch_key_name(DispatchKey k);

// A set of dispatch keys, as libtorch's DispatchKeySet. kiln's keys are the four above: one
// Autograd key serves every device (libtorch's AutogradCPU, AutogradCUDA, ...), and kiln has no
// InplaceOrView key (views and version counters are handled in the Backend layer).
class DispatchKeySet {
 public:
  constexpr DispatchKeySet() = default;
  constexpr explicit DispatchKeySet(DispatchKey k) : bits_(key_bit(k)) {}
  static constexpr DispatchKeySet from_bits(uint8_t bits) {
    DispatchKeySet s;
    s.bits_ = bits;
    return s;
  }
  constexpr bool has(DispatchKey k) const { return (bits_ & key_bit(k)) != 0; }
  constexpr bool empty() const { return bits_ == 0; }
  constexpr bool isSupersetOf(DispatchKeySet o) const { return (bits_ & o.bits_) == o.bits_; }
  constexpr uint8_t raw_repr() const { return bits_; }
  constexpr DispatchKeySet operator|(DispatchKeySet o) const { return from_bits(bits_ | o.bits_); }
  constexpr DispatchKeySet operator&(DispatchKeySet o) const { return from_bits(bits_ & o.bits_); }
  constexpr DispatchKeySet operator-(DispatchKeySet o) const {
    return from_bits(static_cast<uint8_t>(bits_ & ~o.bits_));
  }
  constexpr DispatchKeySet add(DispatchKey k) const { return *this | DispatchKeySet(k); }
  constexpr DispatchKeySet remove(DispatchKey k) const { return *this - DispatchKeySet(k); }
  friend constexpr bool operator==(DispatchKeySet a, DispatchKeySet b) = default;

 private:
  uint8_t bits_ = 0;
};
// The keys of autograd (libtorch's autograd_dispatch_keyset).
constexpr DispatchKeySet autograd_dispatch_keyset{DispatchKey::Autograd};

namespace detail {
// Per-thread dispatch state. Grad mode off = Autograd excluded.
struct LocalDispatchState {
  uint8_t included = 0;
  uint8_t excluded = 0;
  // GradMode off (NoGradGuard, InferenceMode), which excludes Autograd too; unlike a layer's
  // ExcludeDispatchKeyGuard (which also excludes it), it means views are made without history.
  bool grad_mode_off = false;
  uint32_t autocast_device_types = 0;  // bit t: autocast enabled for device type t
  // The Observe layer (See Note [The Observe layer]): observed calls open on this thread, the
  // trace recording on this thread (a jit::detail::Tracer, null when none) and the depth at
  // which it records (the calls its function makes, not the ones they make in turn).
  int observe_depth = 0;
  void* tracer = nullptr;
  int trace_depth = 0;
};
KILN_API LocalDispatchState& local_dispatch_state();
// Keys included on every thread (the Observe key while a profile runs).
KILN_API extern std::atomic<uint8_t> global_included_keys;
}  // namespace detail

// This thread's included and excluded keys (libtorch's c10::impl TLS queries): a key set is
// included (excluded) when all its keys are. Grad mode off excludes Autograd.
namespace impl {
inline DispatchKeySet tls_local_included() {
  return DispatchKeySet::from_bits(detail::local_dispatch_state().included);
}
inline DispatchKeySet tls_local_excluded() {
  return DispatchKeySet::from_bits(detail::local_dispatch_state().excluded);
}
inline bool tls_is_dispatch_key_included(DispatchKey k) { return tls_local_included().has(k); }
inline bool tls_is_dispatch_key_excluded(DispatchKey k) { return tls_local_excluded().has(k); }
inline bool tls_is_dispatch_keyset_included(DispatchKeySet ks) {
  return tls_local_included().isSupersetOf(ks);
}
inline bool tls_is_dispatch_keyset_excluded(DispatchKeySet ks) {
  return tls_local_excluded().isSupersetOf(ks);
}
}  // namespace impl

// Adds `key` to this thread's excluded set for the guard's lifetime.
class KILN_API ExcludeDispatchKeyGuard {
 public:
  explicit ExcludeDispatchKeyGuard(DispatchKey key);
  ~ExcludeDispatchKeyGuard();
  ExcludeDispatchKeyGuard(const ExcludeDispatchKeyGuard&) = delete;
  ExcludeDispatchKeyGuard& operator=(const ExcludeDispatchKeyGuard&) = delete;

 private:
  uint8_t saved_;
};

// Adds `key` to this thread's included set for the guard's lifetime.
class KILN_API IncludeDispatchKeyGuard {
 public:
  explicit IncludeDispatchKeyGuard(DispatchKey key);
  ~IncludeDispatchKeyGuard();
  IncludeDispatchKeyGuard(const IncludeDispatchKeyGuard&) = delete;
  IncludeDispatchKeyGuard& operator=(const IncludeDispatchKeyGuard&) = delete;

 private:
  uint8_t saved_;
};

// What every operator has, whatever its signature: a name, a schema and the plugin kernels
// registered for it, one slot per device type.
class KILN_API OperatorBase {
 public:
  struct PluginKernel {
    void* fn = nullptr;  // a kiln_kernel_fn
    void* user = nullptr;
    int plugin = -1;  // index into the loader's plugin list
  };

  OperatorBase(const char* name, const char* schema, bool primitive);
  virtual ~OperatorBase();
  OperatorBase(const OperatorBase&) = delete;
  OperatorBase& operator=(const OperatorBase&) = delete;

  const char* name() const { return name_; }
  const char* schema() const { return schema_; }
  // Primitives need a plugin kernel; composites and views run from core on any device.
  bool is_primitive() const { return primitive_; }
  // An optional primitive (a fused kernel such as batch_norm_train): core calls it only on
  // devices that have a kernel for it, and composes the same computation from other primitives
  // elsewhere, so a device plugin need not provide it (docs/primitives.md).
  bool is_optional() const { return optional_; }
  void set_optional() { optional_ = true; }
  const PluginKernel& plugin_kernel(DeviceType type) const { return kernels_[type]; }
  bool has_plugin_kernel(DeviceType type) const { return kernels_[type].fn != nullptr; }
  void set_plugin_kernel(DeviceType type, PluginKernel kernel) { kernels_[type] = kernel; }
  virtual bool has_layer(DispatchKey key) const = 0;
  // For an in-place variant ("add_"): the operator whose plugin kernel it runs ("add").
  const OperatorBase* functional() const { return functional_ ? functional_ : this; }
  // Whether the operator writes its first argument in place: its schema marks it `Tensor(a!)`.
  // See Note [Every in-place operator has an Autograd kernel] (core/src/autograd/inplace.cpp).
  bool is_inplace() const { return inplace_; }
  void set_functional(const OperatorBase* op) { functional_ = op; }

 protected:
  uint8_t active_keys_ = key_bit(DispatchKey::Backend);

 private:
  const char* name_;
  const char* schema_;
  bool primitive_;
  bool inplace_;
  bool optional_ = false;
  const OperatorBase* functional_ = nullptr;
  PluginKernel kernels_[kMaxDeviceTypes];
};

// Every operator core declared, in declaration order; and lookup by name (nullptr if none).
KILN_API const std::vector<OperatorBase*>& all_operators();
KILN_API OperatorBase* find_operator(const std::string& name);

namespace detail {

// The checks every in-place operator makes before it writes `self` (an inference tensor outside
// InferenceMode is refused), whatever layers are active.
KILN_API void check_inplace_target(const OperatorBase& op, const Tensor& self);
// The Autograd kernel of an in-place operator that has no derivative formula: it refuses to
// write a tensor that requires grad (or from one), instead of keeping a stale history.
[[noreturn]] KILN_API void throw_no_inplace_formula(const OperatorBase& op);

template <class... Args>
const Tensor* first_tensor(const Tensor& t, const Args&...) {
  return &t;
}
inline const Tensor* first_tensor() { return nullptr; }
template <class T, class... Args>
const Tensor* first_tensor(const T&, const Args&... rest) {
  return first_tensor(rest...);
}

inline uint8_t tensor_keys(const Tensor& t, uint32_t autocast_types) {
  if (!t.defined()) return 0;
  uint8_t keys = 0;
  if (t.requires_grad()) keys |= key_bit(DispatchKey::Autograd);
  if ((autocast_types >> t.device().type()) & 1u) keys |= key_bit(DispatchKey::Autocast);
  return keys;
}

template <class T>
uint8_t arg_keys(const T& arg, uint32_t autocast_types) {
  using U = std::decay_t<T>;
  if constexpr (std::is_same_v<U, Tensor>) {
    return tensor_keys(arg, autocast_types);
  } else if constexpr (std::is_same_v<U, TensorList> || std::is_same_v<U, std::vector<Tensor>>) {
    uint8_t keys = 0;
    for (const Tensor& t : arg) keys |= tensor_keys(t, autocast_types);
    return keys;
  } else if constexpr (std::is_same_v<U, std::optional<Tensor>>) {
    return arg ? tensor_keys(*arg, autocast_types) : 0;
  } else {
    return 0;
  }
}

// The highest key of a key set that always contains Backend.
inline DispatchKey highest_key(uint8_t keys) {
  if (keys & key_bit(DispatchKey::Autocast)) return DispatchKey::Autocast;
  if (keys & key_bit(DispatchKey::Autograd)) return DispatchKey::Autograd;
  if (keys & key_bit(DispatchKey::Observe)) return DispatchKey::Observe;
  return DispatchKey::Backend;
}

// One call in the Observe layer: opens a profiler event when a profile runs and tells whether
// the call is one a trace records (core/src/profiler/observe.cpp).
class KILN_API ObserveScope {
 public:
  explicit ObserveScope(const OperatorBase& op);
  ~ObserveScope();
  ObserveScope(const ObserveScope&) = delete;
  ObserveScope& operator=(const ObserveScope&) = delete;
  bool profiling() const { return frame_ >= 0; }
  bool tracing() const { return tracing_; }
  // The profiler's description of the inputs, one per argument ([] for a non-tensor).
  void add_input(const Tensor* t);

 private:
  int frame_ = -1;
  bool tracing_ = false;
};

template <class T>
void describe_arg(ObserveScope& scope, const T& arg) {
  using U = std::decay_t<T>;
  if constexpr (std::is_same_v<U, Tensor>) {
    scope.add_input(&arg);
  } else if constexpr (std::is_same_v<U, TensorList> || std::is_same_v<U, std::vector<Tensor>>) {
    for (const Tensor& t : arg) scope.add_input(&t);
  } else if constexpr (std::is_same_v<U, std::optional<Tensor>>) {
    scope.add_input(arg ? &*arg : nullptr);
  } else {
    scope.add_input(nullptr);
  }
}

}  // namespace detail

template <class Signature>
class Operator;

// The backward formula of an operator of this signature, in the form its family's autograd
// kernel reads; core defines it for the signatures of its families (core/src/autograd/families.h).
template <class Signature>
struct BackwardFormula;

// An operator with a C++ signature, e.g. Operator<Tensor(const Tensor&, const Tensor&)>. Each
// layer's kernel receives the operator first, so one function can serve many operators.
template <class R, class... Args>
class Operator<R(Args...)> final : public OperatorBase {
 public:
  using Kernel = R (*)(const Operator&, Args...);
  using Formula = BackwardFormula<R(Args...)>;

  // `functional`: for an in-place variant, the operator whose plugin kernel it runs.
  Operator(const char* name, const char* schema, Kernel backend, bool primitive = true,
           const OperatorBase* functional = nullptr)
      : OperatorBase(name, schema, primitive) {
    kernels_[static_cast<int>(DispatchKey::Backend)] = backend;
    kernels_[static_cast<int>(DispatchKey::Observe)] = observe_kernel;
    active_keys_ |= key_bit(DispatchKey::Observe);
    set_functional(functional);
    if (is_inplace()) set_kernel(DispatchKey::Autograd, refuse_untracked_inplace);
  }

  // Dispatches a call: see the top of this file.
  R operator()(Args... args) const {
    if (is_inplace()) [[unlikely]] {
      if (const Tensor* self = detail::first_tensor(args...)) {
        detail::check_inplace_target(*this, *self);
      }
    }
    const detail::LocalDispatchState& tls = detail::local_dispatch_state();
    uint8_t keys = (detail::arg_keys(args, tls.autocast_device_types) | ... | uint8_t{0});
    uint8_t global = detail::global_included_keys.load(std::memory_order_relaxed);
    keys = static_cast<uint8_t>(((keys | tls.included | global) & ~tls.excluded & active_keys_) |
                                key_bit(DispatchKey::Backend));
    Kernel k = kernels_[static_cast<int>(detail::highest_key(keys))];
    return k(*this, std::forward<Args>(args)...);
  }

  // Calls one layer directly (tests, and layers that know what lies below them).
  R call_layer(DispatchKey key, Args... args) const {
    return kernels_[static_cast<int>(key)](*this, std::forward<Args>(args)...);
  }

  // Installs the kernel of a layer (nullptr: fallthrough; the Backend layer cannot be removed)
  // and returns the previous one.
  Kernel set_kernel(DispatchKey key, Kernel kernel) {
    int k = static_cast<int>(key);
    KILN_CHECK(key != DispatchKey::Backend || kernel != nullptr, name(),
               ": the Backend layer cannot be a fallthrough");
    Kernel previous = kernels_[k];
    kernels_[k] = kernel;
    if (kernel != nullptr) {
      active_keys_ |= key_bit(key);
    } else {
      active_keys_ &= static_cast<uint8_t>(~key_bit(key));
    }
    return previous;
  }
  Kernel kernel(DispatchKey key) const { return kernels_[static_cast<int>(key)]; }
  bool has_layer(DispatchKey key) const override { return kernels_[static_cast<int>(key)]; }
  // The backward formula its Autograd kernel applies; null when it has none.
  const Formula* backward_formula() const { return backward_; }
  void set_backward_formula(const Formula* formula) { backward_ = formula; }

 private:
  static R refuse_untracked_inplace(const Operator& op, Args...) {
    detail::throw_no_inplace_formula(op);
  }

  // The Observe layer's kernel: See Note [The Observe layer].
  static R observe_kernel(const Operator& op, Args... args) {
    detail::ObserveScope scope(op);
    if (scope.profiling()) (detail::describe_arg(scope, args), ...);
    Kernel backend = op.kernels_[static_cast<int>(DispatchKey::Backend)];
    if (scope.tracing()) [[unlikely]] {
      return jit::detail::record_call<Operator, R, Args...>(op, backend, args...);
    }
    return backend(op, std::forward<Args>(args)...);
  }

  Kernel kernels_[kNumDispatchKeys] = {};
  const Formula* backward_ = nullptr;
};

// Installs a layer kernel for a scope and restores the previous one (tests, plugins of layers).
template <class Op>
class ScopedKernel {
 public:
  ScopedKernel(Op& op, DispatchKey key, typename Op::Kernel kernel)
      : op_(op), key_(key), previous_(op.set_kernel(key, kernel)) {}
  ~ScopedKernel() { op_.set_kernel(key_, previous_); }
  ScopedKernel(const ScopedKernel&) = delete;
  ScopedKernel& operator=(const ScopedKernel&) = delete;

 private:
  Op& op_;
  DispatchKey key_;
  typename Op::Kernel previous_;
};

}  // namespace kiln
