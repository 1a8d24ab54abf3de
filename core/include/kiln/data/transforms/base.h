// The libtorch-shaped transforms (namespace kiln::data::transforms), for dataset.map():
//  - BatchTransform<In, Out>: apply_batch(In batch) -> Out, the whole batch at once;
//  - Transform<In, Out>: apply(In example) -> Out, applied to each example of a
//    std::vector<In> batch.
// Lambda / BatchLambda (lambda.h) wrap functions; Collation / Collate (collate.h) turn a vector
// of examples into one value; Stack (stack.h) stacks Examples' tensors; TensorTransform,
// TensorLambda and Normalize (tensor.h) change an Example's data tensor.
#pragma once

#include <utility>
#include <vector>

namespace kiln::data::transforms {

template <typename InputBatch, typename OutputBatch>
class BatchTransform {
 public:
  using InputBatchType = InputBatch;
  using OutputBatchType = OutputBatch;

  virtual ~BatchTransform() = default;
  // The transformed batch.
  virtual OutputBatch apply_batch(InputBatch input_batch) = 0;
};

template <typename Input, typename Output>
class Transform : public BatchTransform<std::vector<Input>, std::vector<Output>> {
 public:
  using InputType = Input;
  using OutputType = Output;

  // The transformed example.
  virtual OutputType apply(InputType input) = 0;

  // apply() of each example, in order.
  std::vector<Output> apply_batch(std::vector<Input> input_batch) override {
    std::vector<Output> output;
    output.reserve(input_batch.size());
    for (auto& input : input_batch) output.push_back(apply(std::move(input)));
    return output;
  }
};

}  // namespace kiln::data::transforms
