// Collation: a BatchTransform from a batch of T (a std::vector<T> by default) to one T; Collate
// is one from a function.
//   dataset.map(kiln::data::transforms::Collate<int>([](std::vector<int> v) { return sum(v); }))
#pragma once

#include <kiln/data/transforms/lambda.h>

#include <vector>

namespace kiln::data::transforms {

template <typename T, typename BatchType = std::vector<T>>
using Collation = BatchTransform<BatchType, T>;

template <typename T, typename BatchType = std::vector<T>>
using Collate = BatchLambda<BatchType, T>;

}  // namespace kiln::data::transforms
