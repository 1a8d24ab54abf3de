// CustomBatchRequest: the base of a user-defined batch request type, for a Sampler<T> and a
// BatchDataset<..., T> that agree on it (as libtorch's).
#pragma once

#include <cstddef>

namespace kiln::data::samplers {

struct CustomBatchRequest {
  CustomBatchRequest() = default;
  CustomBatchRequest(const CustomBatchRequest&) = default;
  CustomBatchRequest(CustomBatchRequest&&) noexcept = default;
  CustomBatchRequest& operator=(const CustomBatchRequest&) = default;
  CustomBatchRequest& operator=(CustomBatchRequest&&) noexcept = default;
  virtual ~CustomBatchRequest() = default;

  // The number of samples the request asks for.
  virtual size_t size() const = 0;
};

}  // namespace kiln::data::samplers
