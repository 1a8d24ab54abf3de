#include "kernel_call.h"

#include "jit/tracer.h"
#include "runtime.h"

#include <kiln/autograd.h>
#include <kiln/ops.h>
#include <kiln/plugin.h>

#include <atomic>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace kiln::detail {
namespace {

constexpr int kMaxOperands = 16;

std::string devices_with_kernel(const OperatorBase& op) {
  std::string out;
  for (int t = 0; t < kMaxDeviceTypes; ++t) {
    if (!op.has_plugin_kernel(static_cast<DeviceType>(t))) continue;
    if (!out.empty()) out += ", ";
    out += device_type_name(static_cast<DeviceType>(t));
  }
  return out.empty() ? "none" : out;
}

std::string describe_operands(std::initializer_list<const Tensor*> inputs) {
  std::string out;
  for (const Tensor* t : inputs) {
    if (!out.empty()) out += ", ";
    out += str(dtype_name(t->dtype()), t->sizes());
  }
  return out;
}

void call_plugin(const OperatorBase& op, Device device, const OperatorBase::PluginKernel& k,
                 std::initializer_list<const Tensor*> inputs,
                 std::initializer_list<const Tensor*> outputs, const Attrs& attrs) {
  kiln_tensor in[kMaxOperands];
  kiln_tensor out[kMaxOperands];
  KILN_INTERNAL_ASSERT(inputs.size() <= kMaxOperands && outputs.size() <= kMaxOperands);
  int32_t n_in = 0, n_out = 0;
  for (const Tensor* t : inputs) in[n_in++] = describe(*t);
  for (const Tensor* t : outputs) out[n_out++] = describe(*t);
  kiln_call call{sizeof(kiln_call), op.name(),    in,     n_in, out, n_out,
                 attrs.data(),      attrs.size(), nullptr};
  auto fn = reinterpret_cast<kiln_kernel_fn>(k.fn);
  if (fn(&call, k.user) != 0) {
    throw_plugin_error(str(op.name(), " on ", device.str(), ": "), take_plugin_failure());
  }
}

// The operators that ran on the CPU for want of a kernel, and whether to warn about them: see
// Note [CPU fallback warnings] in kiln/plugin.h.
struct FallbackLog {
  std::mutex mutex;
  std::set<std::string> ops;
  std::optional<bool> enabled;  // set_fallback_warnings(); unset: KILN_FALLBACK_WARNINGS
};

FallbackLog& fallback_log() {
  static auto* log = new FallbackLog();  // leaked: used by operators until process exit
  return *log;
}

// Note [CPU fallback]: a device that sets cpu_fallback runs operators it lacks on the CPU: the
// inputs and outputs are copied to the CPU, the CPU kernel runs into the CPU outputs, and those
// are copied back into the device outputs. It warns once per operator per process.
void run_on_cpu(const OperatorBase& op, Device device, std::initializer_list<const Tensor*> inputs,
                std::initializer_list<const Tensor*> outputs, const Attrs& attrs) {
  bool warn_here = fallback_warnings();  // first: a malformed KILN_FALLBACK_WARNINGS throws
  bool first = false;
  {
    FallbackLog& log = fallback_log();
    std::lock_guard<std::mutex> lock(log.mutex);
    first = log.ops.insert(op.name()).second;
  }
  if (first && warn_here) {
    warn(str("the operator '", op.name(), "' has no kernel for device '",
             device_type_name(device.type()), "'; running it on the CPU (slow: copies data to ",
             "the CPU and back). Shown once per operator; KILN_FALLBACK_WARNINGS=0 or ",
             "kiln::set_fallback_warnings(false) turns these warnings off."));
  }
  // the copies in and out are the kernel's own business, below autograd: the operator that
  // fell back was recorded (or refused) by its own Autograd kernel already
  autograd::NoGradGuard no_grad;
  std::vector<Tensor> cpu_in, cpu_out;
  for (const Tensor* t : inputs) cpu_in.push_back(t->to(Device(kCPU)));
  // The outputs come with their contents: some operators accumulate into them (index_add,
  // scatter_add: "out holds self on entry", docs/primitives.md).
  for (const Tensor* t : outputs) cpu_out.push_back(t->to(Device(kCPU), t->dtype(), true));
  const Tensor* pin[kMaxOperands];
  const Tensor* pout[kMaxOperands];
  for (size_t i = 0; i < cpu_in.size(); ++i) pin[i] = &cpu_in[i];
  for (size_t i = 0; i < cpu_out.size(); ++i) pout[i] = &cpu_out[i];
  // initializer_list cannot be built from a runtime array: dispatch on the counts we use
  auto in_list = [&](auto&& f) {
    switch (cpu_in.size()) {
      case 0: return f(std::initializer_list<const Tensor*>{});
      case 1: return f(std::initializer_list<const Tensor*>{pin[0]});
      case 2: return f(std::initializer_list<const Tensor*>{pin[0], pin[1]});
      case 3: return f(std::initializer_list<const Tensor*>{pin[0], pin[1], pin[2]});
      default: KILN_INTERNAL_ASSERT(false, "CPU fallback supports at most 3 inputs");
    }
  };
  in_list([&](std::initializer_list<const Tensor*> il) {
    const OperatorBase::PluginKernel& k = op.plugin_kernel(kCPU);
    if (cpu_out.size() == 1) {
      call_plugin(op, Device(kCPU), k, il, {pout[0]}, attrs);
    } else {
      KILN_INTERNAL_ASSERT(cpu_out.size() == 2, "CPU fallback supports at most 2 outputs");
      call_plugin(op, Device(kCPU), k, il, {pout[0], pout[1]}, attrs);
    }
  });
  size_t i = 0;
  for (const Tensor* t : outputs) const_cast<Tensor*>(t)->copy_(cpu_out[i++]);
}

std::atomic<int> active_captures{0};
thread_local std::vector<CapturedKernel>* t_capture = nullptr;

template <class Operands>  // an initializer_list or a vector of const Tensor*
void capture_kernel(const OperatorBase& op, Device device, const OperatorBase::PluginKernel& k,
                    const Operands& inputs, const Operands& outputs, const Attrs& attrs) {
  CapturedKernel c;
  c.op = &op;
  c.kernel = k;
  c.device = device;
  for (const Tensor* t : inputs) c.inputs.push_back(*t);
  for (const Tensor* t : outputs) c.outputs.push_back(*t);
  c.attrs.assign(attrs.data(), attrs.data() + attrs.size());
  c.lists.resize(c.attrs.size());
  for (size_t i = 0; i < c.attrs.size(); ++i) {
    kiln_attr& a = c.attrs[i];
    if (a.kind != KILN_ATTR_I64S) continue;
    c.lists[i].assign(a.value.list.v, a.value.list.v + a.value.list.n);
    a.value.list.v = c.lists[i].data();
  }
  t_capture->push_back(std::move(c));
}

}  // namespace

void note_host_read() {
  if (active_captures.load(std::memory_order_relaxed) == 0 || t_capture == nullptr) return;
  t_capture->push_back(CapturedKernel{});  // no kernel: the node is not replayed from kernels
}

std::vector<CapturedKernel>* set_kernel_capture(std::vector<CapturedKernel>* capture) {
  std::vector<CapturedKernel>* previous = t_capture;
  if (previous == nullptr && capture != nullptr) active_captures.fetch_add(1);
  if (previous != nullptr && capture == nullptr) active_captures.fetch_sub(1);
  t_capture = capture;
  return previous;
}

kiln_tensor describe(const Tensor& t) {
  const TensorImpl& impl = t.impl();
  kiln_tensor d;
  d.data = impl.data();
  d.dtype = static_cast<int32_t>(impl.dtype);
  d.ndim = static_cast<int32_t>(impl.sizes.size());
  d.sizes = impl.sizes.data();
  d.strides = impl.strides.data();
  d.device = {impl.device.type(), impl.device.has_index() ? impl.device.index() : 0};
  return d;
}

void run_kernel(const OperatorBase& op, std::initializer_list<const Tensor*> inputs,
                std::initializer_list<const Tensor*> outputs, const Attrs& attrs) {
  const Tensor* first = outputs.size() != 0 ? *outputs.begin() : *inputs.begin();
  Device device = first->device();
  const OperatorBase::PluginKernel& k = op.plugin_kernel(device.type());
  if (active_captures.load(std::memory_order_relaxed) != 0 && t_capture != nullptr) [[unlikely]] {
    // See Note [Kernel capture]
    capture_kernel(op, device, k.fn != nullptr ? k : OperatorBase::PluginKernel{}, inputs, outputs,
                   attrs);
  }
  if (k.fn != nullptr) {
    call_plugin(op, device, k, inputs, outputs, attrs);
    return;
  }
  DeviceTypeRecord& record = device_record(device.type());
  if (record.ops != nullptr && record.ops->cpu_fallback && device.type() != kCPU &&
      op.has_plugin_kernel(kCPU)) {
    run_on_cpu(op, device, inputs, outputs, attrs);
    return;
  }
  throw NotImplementedError(str(op.name(), ": no kernel for device '",
                                device_type_name(device.type()),
                                "' (arguments: ", describe_operands(inputs),
                                "); the operator has kernels for: ", devices_with_kernel(op),
                                ". The plugin of '", device_type_name(device.type()), "' (",
                                plugin_path(record.plugin), ") does not provide '", op.name(),
                                "' and did not opt in to CPU fallback"));
}

void run_kernel_list(const OperatorBase& op, const std::vector<const Tensor*>& inputs,
                     const std::vector<const Tensor*>& outputs, const Attrs& attrs) {
  KILN_INTERNAL_ASSERT(!outputs.empty() && inputs.size() <= kMaxOperands &&
                       outputs.size() <= kMaxOperands);
  const Device device = outputs.front()->device();
  const OperatorBase::PluginKernel& k = op.plugin_kernel(device.type());
  if (k.fn == nullptr) {
    throw NotImplementedError(str(op.name(), ": no kernel for device '",
                                  device_type_name(device.type()),
                                  "'; the operator has kernels for: ", devices_with_kernel(op)));
  }
  if (active_captures.load(std::memory_order_relaxed) != 0 && t_capture != nullptr) [[unlikely]] {
    capture_kernel(op, device, k, inputs, outputs, attrs);  // See Note [Kernel capture]
  }
  kiln_tensor in[kMaxOperands];
  kiln_tensor out[kMaxOperands];
  int32_t n_in = 0, n_out = 0;
  for (const Tensor* t : inputs) in[n_in++] = describe(*t);
  for (const Tensor* t : outputs) out[n_out++] = describe(*t);
  kiln_call call{sizeof(kiln_call), op.name(),    in,     n_in, out, n_out,
                 attrs.data(),      attrs.size(), nullptr};
  auto fn = reinterpret_cast<kiln_kernel_fn>(k.fn);
  if (fn(&call, k.user) != 0) {
    throw_plugin_error(str(op.name(), " on ", device.str(), ": "), take_plugin_failure());
  }
}

}  // namespace kiln::detail

namespace kiln {

void set_fallback_warnings(bool enabled) {
  detail::FallbackLog& log = detail::fallback_log();
  std::lock_guard<std::mutex> lock(log.mutex);
  log.enabled = enabled;
}

bool fallback_warnings() {
  detail::FallbackLog& log = detail::fallback_log();
  {
    std::lock_guard<std::mutex> lock(log.mutex);
    if (log.enabled) return *log.enabled;
  }
  return detail::env_flag("KILN_FALLBACK_WARNINGS", true);
}

std::vector<std::string> fallback_operators() {
  detail::FallbackLog& log = detail::fallback_log();
  std::lock_guard<std::mutex> lock(log.mutex);
  return {log.ops.begin(), log.ops.end()};
}

}  // namespace kiln
