// Calling plugin kernels from core's backend functions. See docs/primitives.md for what each
// primitive receives; the functions here build the kiln_call and turn a failure into kiln::Error.
#pragma once

#include <kiln/dispatch.h>
#include <kiln/sdk/plugin.h>
#include <kiln/tensor.h>

#include <initializer_list>
#include <vector>

namespace kiln::detail {

// A call's attributes, in the order the operator documents. Lists must outlive the call.
class Attrs {
 public:
  static constexpr int kMax = 8;
  Attrs& i64(const char* name, int64_t v) { return add(name, KILN_ATTR_I64).set_i(v); }
  Attrs& f64(const char* name, double v) {
    add(name, KILN_ATTR_F64);
    items_[n_ - 1].value.f = v;
    return *this;
  }
  Attrs& boolean(const char* name, bool v) { return add(name, KILN_ATTR_BOOL).set_i(v ? 1 : 0); }
  Attrs& list(const char* name, IntArrayRef v) {
    add(name, KILN_ATTR_I64S);
    items_[n_ - 1].value.list.v = v.data();
    items_[n_ - 1].value.list.n = static_cast<int32_t>(v.size());
    return *this;
  }
  // I64 for integral and bool values, F64 for floating ones (docs/primitives.md).
  Attrs& scalar(const char* name, const Scalar& s) {
    return s.is_floating_point() ? f64(name, s.to_double()) : i64(name, s.to_long());
  }
  Attrs& none(const char* name) { return add(name, KILN_ATTR_NONE); }

  const kiln_attr* data() const { return items_; }
  int32_t size() const { return n_; }

 private:
  Attrs& add(const char* name, kiln_attr_kind kind) {
    KILN_INTERNAL_ASSERT(n_ < kMax, "too many attributes");
    items_[n_].name = name;
    items_[n_].kind = kind;
    items_[n_].value.i = 0;
    ++n_;
    return *this;
  }
  Attrs& set_i(int64_t v) {
    items_[n_ - 1].value.i = v;
    return *this;
  }
  kiln_attr items_[kMax];
  int32_t n_ = 0;
};

// Runs op's plugin kernel for the device of the tensors. Inputs and outputs are checked and
// allocated by the caller. Falls back to the CPU when the device opted in; otherwise a missing
// kernel raises NotImplementedError naming the devices that have one.
void run_kernel(const OperatorBase& op, std::initializer_list<const Tensor*> inputs,
                std::initializer_list<const Tensor*> outputs, const Attrs& attrs = Attrs());

// The same for operand counts known at run time (at most 16 of each; fused_pointwise). No CPU
// fallback: callers check that the device has the kernel.
void run_kernel_list(const OperatorBase& op, const std::vector<const Tensor*>& inputs,
                     const std::vector<const Tensor*>& outputs, const Attrs& attrs = Attrs());
// Note [Kernel capture]: graph replay (core/src/jit/plan.cpp) learns what a recorded call does
// below its Backend kernel by running it once with a capture set on this thread: run_kernel then
// appends each plugin kernel it calls (with its tensors and attributes) to the capture. Off, it
// costs one relaxed load of a process-wide count.
struct CapturedKernel {
  const OperatorBase* op = nullptr;
  OperatorBase::PluginKernel kernel;  // fn null: the call fell back to the CPU or failed
  Device device = kCPU;
  std::vector<Tensor> inputs, outputs;
  std::vector<kiln_attr> attrs;  // list values point into `lists`
  std::vector<std::vector<int64_t>> lists;
};
// Sets this thread's capture (null: none) and returns the previous one.
std::vector<CapturedKernel>* set_kernel_capture(std::vector<CapturedKernel>* capture);

// Fills a descriptor viewing t (no copies).
kiln_tensor describe(const Tensor& t);

}  // namespace kiln::detail
