// Transforms of an Example's data tensor (the target passes through, whatever its type):
// TensorTransform (implement operator()), TensorLambda (from a function) and Normalize.
#pragma once

#include <kiln/array_ref.h>
#include <kiln/data/example.h>
#include <kiln/data/transforms/base.h>
#include <kiln/error.h>
#include <kiln/tensor_data.h>

#include <functional>
#include <utility>
#include <vector>

namespace kiln::data::transforms {

template <typename Target = Tensor>
class TensorTransform : public Transform<Example<Tensor, Target>, Example<Tensor, Target>> {
 public:
  using E = Example<Tensor, Target>;

  // The new data tensor.
  virtual Tensor operator()(Tensor input) = 0;

  E apply(E input) override {
    input.data = (*this)(std::move(input.data));
    return input;
  }
};

template <typename Target = Tensor>
class TensorLambda : public TensorTransform<Target> {
 public:
  using FunctionType = std::function<Tensor(Tensor)>;

  explicit TensorLambda(FunctionType function) : function_(std::move(function)) {}

  Tensor operator()(Tensor input) override { return function_(std::move(input)); }

 private:
  FunctionType function_;
};

// (data - mean) / stddev per channel, the first dimension of a [C, H, W] (or [H, W]) tensor: one
// value of each for all channels, or one per channel.
template <typename Target = Tensor>
struct Normalize : public TensorTransform<Target> {
  // Throws kiln::ValueError when mean or stddev is empty or a stddev is 0.
  Normalize(ArrayRef<double> mean, ArrayRef<double> stddev)
      : mean(channels("mean", mean)), stddev(channels("stddev", stddev)) {
    for (double s : stddev) {
      KILN_CHECK_VALUE(s != 0.0, "Normalize: stddev must be non-zero, got ", s);
    }
  }

  Tensor operator()(Tensor input) override { return input.sub(mean).div(stddev); }

  Tensor mean, stddev;

 private:
  // The values as a float32 tensor [C, 1, 1].
  static Tensor channels(const char* name, ArrayRef<double> values) {
    KILN_CHECK_VALUE(!values.empty(), "Normalize: ", name, " must have at least one value");
    return kiln::tensor(values.vec(), kFloat).view({static_cast<int64_t>(values.size()), 1, 1});
  }
};

}  // namespace kiln::data::transforms
