#include "widen.hpp"

#include <tbb/scalable_allocator.h>

#include <algorithm>
#include <new>
#include <stdexcept>

namespace kiln::cpu {

void WideTensor::Free::operator()(float* p) const { scalable_aligned_free(p); }

WideTensor::WideTensor(const kiln_tensor& t) {
  if (t.ndim > kMaxDims) throw std::invalid_argument("WideTensor: too many dimensions");
  int64_t count = 1;
  for (int32_t d = t.ndim - 1; d >= 0; --d) {
    sizes_[d] = t.sizes[d];
    strides_[d] = count;
    count *= t.sizes[d];
  }
  void* p = scalable_aligned_malloc(static_cast<size_t>(std::max<int64_t>(count, 1)) * 4, 64);
  if (p == nullptr) throw std::bad_alloc();
  data_.reset(static_cast<float*>(p));
  tensor_ = kiln_tensor{p, KILN_F32, t.ndim, sizes_, strides_, {0, 0}};
}

WideTensor::WideTensor(WideTensor&& other) noexcept
    : data_(std::move(other.data_)), tensor_(other.tensor_) {
  std::copy(other.sizes_, other.sizes_ + kMaxDims, sizes_);
  std::copy(other.strides_, other.strides_ + kMaxDims, strides_);
  tensor_.sizes = sizes_;
  tensor_.strides = strides_;
}

WideTensor WideTensor::like(const kiln_tensor& t) { return WideTensor(t); }

WideTensor WideTensor::copy_of(const kiln_tensor& t) {
  WideTensor w(t);
  visit<Dtypes::floating>(t.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    map<float, T>([](compute_t<T> x) { return static_cast<float>(x); }, w.tensor_, {&t});
  });
  return w;
}

void WideTensor::round_into(const kiln_tensor& dst) const {
  visit<Dtypes::floating>(dst.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    map<T, float>([](float x) { return static_cast<compute_t<T>>(x); }, dst, {&tensor_});
  });
}

}  // namespace kiln::cpu
