// The recorded call of a fused group (kiln::jit::fuse_pointwise): it runs its pointwise program
// through the optional primitive fused_pointwise, or, when autograd must record (grad mode and an
// input that requires grad), the original unfused nodes it keeps.
#pragma once

#include <kiln/jit.h>
#include <kiln/jit/fused_pointwise.h>

#include <utility>
#include <vector>

namespace kiln::jit::detail {

class FusedPointwiseCall final : public RecordedCall {
 public:
  // `nodes`: the group's nodes in order; `input_values`: the graph values of the program's
  // inputs (the slots); `constants`: the graph constants the nodes read that are not inputs (they
  // became CONST steps); `output_values`: the values the call returns.
  FusedPointwiseCall(int group, PointwiseProgram program, std::vector<Node> nodes,
                     std::vector<int> input_values, std::vector<std::pair<int, Tensor>> constants,
                     std::vector<int> output_values);

  const OperatorBase& op() const override;
  std::vector<Tensor*> tensor_slots() override;
  void run(bool dispatch, std::vector<Tensor>& outputs) override;
  void print_arguments(std::ostream& out,
                       const std::vector<std::string>& slot_names) const override;
  std::unique_ptr<RecordedCall> clone() const override;

  const PointwiseProgram& program() const { return program_; }
  const std::vector<Node>& unfused_nodes() const { return nodes_; }

 private:
  void run_unfused(std::vector<Tensor>& outputs);

  int group_;
  PointwiseProgram program_;
  std::vector<int64_t> flat_;
  std::vector<Tensor> inputs_;
  std::vector<Node> nodes_;
  std::vector<int> input_values_;
  std::vector<std::pair<int, Tensor>> constants_;
  std::vector<int> output_values_;
};

}  // namespace kiln::jit::detail
