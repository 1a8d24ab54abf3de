// Tensor::index with libtorch's TensorIndex list: integers, slices, None and Ellipsis, all views.
#include "tensor_internal.h"

#include <kiln/indexing.h>
#include <kiln/ops.h>

namespace kiln {

Tensor Tensor::index(ArrayRef<TensorIndex> indices) const {
  int64_t consumed = 0;  // dims of self that the indices name
  int ellipses = 0;
  for (const TensorIndex& i : indices) {
    if (i.kind() == TensorIndex::Kind::Integer || i.kind() == TensorIndex::Kind::Slice) ++consumed;
    if (i.kind() == TensorIndex::Kind::Ellipsis) ++ellipses;
  }
  KILN_CHECK_INDEX(ellipses <= 1, "index: an index can only have a single ellipsis ('...')");
  KILN_CHECK_INDEX(consumed <= dim(), "index: too many indices for tensor of dimension ", dim(),
                   " (got ", consumed, ")");
  Tensor out = *this;
  int64_t d = 0;  // current dimension of `out`
  for (const TensorIndex& i : indices) {
    switch (i.kind()) {
      case TensorIndex::Kind::Integer: out = out.select(d, i.integer()); break;
      case TensorIndex::Kind::Slice:
        out = out.slice(d, i.slice().start(), i.slice().stop(), i.slice().step());
        ++d;
        break;
      case TensorIndex::Kind::None:
        out = out.unsqueeze(d);
        ++d;
        break;
      case TensorIndex::Kind::Ellipsis: d += dim() - consumed; break;
    }
  }
  return out;
}

Tensor Tensor::index(std::initializer_list<TensorIndex> indices) const {
  return index(ArrayRef<TensorIndex>(indices.begin(), indices.size()));
}

Tensor& Tensor::index_put_(std::initializer_list<TensorIndex> indices, const Tensor& value) {
  index(indices).copy_(value);
  return *this;
}

Tensor& Tensor::index_put_(std::initializer_list<TensorIndex> indices, const Scalar& value) {
  index(indices).fill_(value);
  return *this;
}

}  // namespace kiln
