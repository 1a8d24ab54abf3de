// Stack: a Collation that stacks a batch of Examples into one, along a new first dimension:
// data [B, *] (and target [B, *] for Example<>). The tensors of a batch must have equal shapes.
// It stacks with collation's stack_tensors (kiln/data/collate.h): a copy loop for contiguous CPU
// tensors that need no gradient, kiln::stack otherwise.
#pragma once

#include <kiln/data/collate.h>
#include <kiln/data/example.h>
#include <kiln/data/transforms/collate.h>

#include <vector>

namespace kiln::data::transforms {

template <typename T = Example<>>
struct Stack;

template <>
struct Stack<Example<>> : public Collation<Example<>> {
  Example<> apply_batch(std::vector<Example<>> examples) override {
    std::vector<Tensor> data, targets;
    data.reserve(examples.size());
    targets.reserve(examples.size());
    for (auto& example : examples) {
      data.push_back(std::move(example.data));
      targets.push_back(std::move(example.target));
    }
    return {stack_tensors(data), stack_tensors(targets)};
  }
};

template <>
struct Stack<TensorExample> : public Collation<TensorExample> {
  TensorExample apply_batch(std::vector<TensorExample> examples) override {
    std::vector<Tensor> data;
    data.reserve(examples.size());
    for (auto& example : examples) data.push_back(std::move(example.data));
    return stack_tensors(data);
  }
};

}  // namespace kiln::data::transforms
