// gather and index_select: both read x at an index along `dim` for every output element, so both
// run one loop: index_select's 1-D index becomes a view broadcast over the other dimensions.
#include "loops.hpp"
#include "registry.hpp"

#include <cstring>
#include <stdexcept>
#include <string>

namespace kiln::cpu {
namespace {

using sdk::kernel;

[[noreturn]] void throw_out_of_bounds(int64_t index, int64_t dim, int64_t size) {
  throw std::out_of_range("index " + std::to_string(index) + " is out of bounds for dimension " +
                          std::to_string(dim) + " with size " + std::to_string(size));
}

int64_t checked_dim(int64_t dim, const kiln_tensor& x) {
  int64_t rank = x.ndim == 0 ? 1 : x.ndim;
  if (dim < 0 || dim >= rank) {
    throw std::out_of_range("dim " + std::to_string(dim) + " is out of range for a tensor of " +
                            std::to_string(x.ndim) + " dimensions");
  }
  return dim;
}

// out[..., i, ...] = x[..., index[..., i, ...], ...] along `dim`, where `index` has out's sizes.
template <class B>
void take_along(const kiln_tensor& out, const kiln_tensor& x, const kiln_tensor& index,
                int64_t dim) {
  constexpr int64_t kItem = sizeof(B);
  const int64_t size = x.ndim == 0 ? 1 : x.sizes[dim];
  const int64_t jump = (x.ndim == 0 ? 0 : x.strides[dim]) * static_cast<int64_t>(sizeof(B));
  // x seen with out's sizes and no stride along dim: the loop adds index * jump itself
  int64_t strides[sdk::StridedLoop<3>::kMaxDims];
  for (int32_t d = 0; d < x.ndim && d < sdk::StridedLoop<3>::kMaxDims; ++d) {
    strides[d] = d == dim ? 0 : x.strides[d];
  }
  kiln_tensor base = x;
  base.sizes = out.sizes;
  base.strides = strides;
  sdk::StridedLoop<3> loop({&out, &index, &base});
  auto body = [size, jump, dim](char** p, const int64_t* step, int64_t n) {
    if (step[1] == 0) {  // one index for the whole run (index_select, or a broadcast index)
      int64_t i = *reinterpret_cast<const int64_t*>(p[1]);
      if (i < 0 || i >= size) throw_out_of_bounds(i, dim, size);
      const char* src = p[2] + i * jump;
      if (step[0] == kItem && step[2] == kItem) {
        std::memcpy(p[0], src, static_cast<size_t>(n) * sizeof(B));
        return;
      }
      for (int64_t k = 0; k < n; ++k) {
        *reinterpret_cast<B*>(p[0] + k * step[0]) = *reinterpret_cast<const B*>(src + k * step[2]);
      }
      return;
    }
    for (int64_t k = 0; k < n; ++k) {
      int64_t i = *reinterpret_cast<const int64_t*>(p[1] + k * step[1]);
      if (i < 0 || i >= size) throw_out_of_bounds(i, dim, size);
      *reinterpret_cast<B*>(p[0] + k * step[0]) =
          *reinterpret_cast<const B*>(p[2] + k * step[2] + i * jump);
    }
  };
  parallel_for(loop.numel(), kGrain, [&](int64_t b, int64_t e) { loop.run(b, e, body); });
}

void take_along_any(const kiln_tensor& out, const kiln_tensor& x, const kiln_tensor& index,
                    int64_t dim) {
  if (index.dtype != KILN_I64) {
    throw sdk::type_error(std::string("index must be int64, not ") + sdk::dtype_name(index.dtype));
  }
  switch (sdk::dtype_size(x.dtype)) {
    case 1: take_along<uint8_t>(out, x, index, dim); break;
    case 2: take_along<uint16_t>(out, x, index, dim); break;
    case 4: take_along<uint32_t>(out, x, index, dim); break;
    case 8: take_along<uint64_t>(out, x, index, dim); break;
    default: throw_unsupported(x.dtype);
  }
}

// gather(x, index, dim): out[i][j] = x[index[i][j]][j] for dim 0; index and out share sizes.
void gather_kernel(const Call& call) {
  const kiln_tensor& x = call.input(0);
  const kiln_tensor& index = call.input(1);
  const kiln_tensor& out = call.output(0);
  int64_t dim = checked_dim(call.attr_i64(0), x);
  if (index.ndim != x.ndim || out.ndim != x.ndim) {
    throw std::invalid_argument("gather: index has " + std::to_string(index.ndim) +
                                " dimensions and x " + std::to_string(x.ndim));
  }
  for (int32_t d = 0; d < x.ndim; ++d) {
    if (d != dim && index.sizes[d] > x.sizes[d]) {
      throw std::invalid_argument("gather: index size " + std::to_string(index.sizes[d]) +
                                  " exceeds size " + std::to_string(x.sizes[d]) +
                                  " of x in dimension " + std::to_string(d));
    }
  }
  take_along_any(out, x, index, dim);
}

// index_select(x, index, dim): out has x's sizes except len(index) along dim.
void index_select_kernel(const Call& call) {
  const kiln_tensor& x = call.input(0);
  const kiln_tensor& index = call.input(1);
  const kiln_tensor& out = call.output(0);
  int64_t dim = checked_dim(call.attr_i64(0), x);
  if (index.ndim > 1) {
    throw std::invalid_argument("index_select: index must be 1-D, not " +
                                std::to_string(index.ndim) + "-D");
  }
  if (out.ndim > sdk::StridedLoop<3>::kMaxDims) {
    throw sdk::not_implemented("index_select: more than " +
                               std::to_string(sdk::StridedLoop<3>::kMaxDims) + " dimensions");
  }
  // the 1-D index as a view with out's sizes that moves only along dim
  int64_t strides[sdk::StridedLoop<3>::kMaxDims] = {};
  if (out.ndim > 0 && index.ndim == 1) strides[dim] = index.strides[0];
  kiln_tensor view = index;
  view.ndim = out.ndim;
  view.sizes = out.sizes;
  view.strides = strides;
  take_along_any(out, x, view, dim);
}

}  // namespace

void register_index(KernelTable& table) {
  table.add("gather", kernel<gather_kernel>);
  table.add("index_select", kernel<index_select_kernel>);
}

}  // namespace kiln::cpu
