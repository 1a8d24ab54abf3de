// TensorDataset: the rows of one tensor (its first dimension), each a TensorExample.
#pragma once

#include <kiln/data/datasets/base.h>
#include <kiln/error.h>
#include <kiln/ops.h>

#include <vector>

namespace kiln::data::datasets {

class TensorDataset : public Dataset<TensorDataset, TensorExample> {
 public:
  // The rows of `tensors` stacked (they must have equal shapes).
  explicit TensorDataset(const std::vector<Tensor>& tensors)
      : TensorDataset(kiln::stack(tensors)) {}
  // The rows of `tensor` (at least one dimension).
  explicit TensorDataset(Tensor tensor) : tensor(std::move(tensor)) {
    KILN_CHECK_VALUE(this->tensor.defined() && this->tensor.dim() > 0, "TensorDataset: expected ",
                     "a tensor with at least one dimension");
  }

  // Row `index`; throws kiln::IndexError past the end.
  TensorExample get(size_t index) override {
    KILN_CHECK_INDEX(index < static_cast<size_t>(tensor.size(0)), "TensorDataset: index ", index,
                     " is out of range for ", tensor.size(0), " rows");
    return tensor[static_cast<int64_t>(index)];
  }
  std::optional<size_t> size() const override { return static_cast<size_t>(tensor.size(0)); }

  Tensor tensor;
};

}  // namespace kiln::data::datasets
