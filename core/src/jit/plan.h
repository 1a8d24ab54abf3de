// The replay plan of one traced graph: what each node does below its Backend kernel, learnt once
// (Note [Kernel capture] in core/src/kernel_call.h), so that replay calls the plugin kernels
// straight with argument blocks built once, into buffers a memory plan preallocated. See Note
// [Replay plan] in plan.cpp.
#pragma once

#include <kiln/jit.h>

#include <memory>
#include <vector>

namespace kiln::detail {
struct CapturedKernel;
}

namespace kiln::jit::detail {

struct FastNode;

class ReplayPlan {
 public:
  // Made at the start of a planning run (a replay without grad, profile or trace).
  ReplayPlan(const Graph& graph, const std::vector<Tensor>& inputs);
  ~ReplayPlan();
  ReplayPlan(const ReplayPlan&) = delete;
  ReplayPlan& operator=(const ReplayPlan&) = delete;

  // During the planning run: node i's call runs between begin_node and end_node, which reads
  // the kernels it called (its slots still hold its inputs; `outputs` are what it returned).
  void begin_node();
  void end_node(size_t i, const std::vector<Tensor>& outputs);
  // Abandons the capture of a node that threw.
  void abort_node();
  // After the planning run: liveness, the buffers and their sharing.
  void finish();

  // Whether a call with these inputs may use the plan (the inputs' sizes and strides and the
  // parameters' strides are the planned ones; the signature checked the rest).
  bool matches(const std::vector<Tensor>& inputs) const;
  bool is_fast(size_t i) const { return i < fast_.size() && fast_[i] != nullptr; }
  // Runs fast node i: its kernels, into its planned buffers; sets its outputs in env.
  void run_node(size_t i, std::vector<Tensor>& env) const;
  // How many nodes run fast, and the bytes the shared buffers hold (tests, kiln-graph).
  size_t num_fast() const;
  size_t pooled_bytes() const { return pooled_bytes_; }

 private:
  const Graph& graph_;
  std::vector<std::vector<int64_t>> input_sizes_, input_strides_;
  std::vector<std::pair<int, std::vector<int64_t>>> parameter_strides_;
  std::vector<kiln::detail::CapturedKernel>* capture_ = nullptr;
  std::vector<kiln::detail::CapturedKernel>* previous_capture_ = nullptr;
  std::vector<std::unique_ptr<FastNode>> fast_;
  size_t pooled_bytes_ = 0;
};

}  // namespace kiln::jit::detail
