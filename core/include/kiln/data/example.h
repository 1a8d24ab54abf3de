// Example: one data point of the libtorch-shaped datasets (kiln/data/datasets/base.h), a `data`
// and a `target`, as libtorch's torch::data::Example.
//
//   kiln::data::Example<> e{image, label};          // Tensor data, Tensor target
//   kiln::data::Example<kiln::Tensor, std::string>  // any target type
//   kiln::data::TensorExample t{image};             // no target; converts to the Tensor
#pragma once

#include <kiln/tensor.h>

#include <utility>

namespace kiln::data {

template <typename Data = Tensor, typename Target = Tensor>
struct Example {
  using DataType = Data;
  using TargetType = Target;

  Example() = default;
  Example(Data data, Target target) : data(std::move(data)), target(std::move(target)) {}

  Data data;
  Target target;
};

namespace example {
// The Target of an Example that has none.
using NoTarget = void;
}  // namespace example

// An Example without a target: only `data`, to which it converts.
template <typename Data>
struct Example<Data, example::NoTarget> {
  using DataType = Data;
  using TargetType = example::NoTarget;

  Example() = default;
  Example(Data data) : data(std::move(data)) {}  // NOLINT: implicit, as libtorch's

  operator Data&() { return data; }              // NOLINT
  operator const Data&() const { return data; }  // NOLINT

  Data data;
};

using TensorExample = Example<Tensor, example::NoTarget>;

}  // namespace kiln::data
