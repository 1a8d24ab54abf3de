// Padding: kiln::constant_pad_nd and nn::functional::pad in its four modes, as PyTorch 1.13's
// torch.nn.functional.pad. All are composites (See Note [Padding as cat and gather]).
//
// Note [Padding as cat and gather]: a constant padding narrows the input where a size is
// negative and concatenates blocks of the value where it is positive, one dimension at a time;
// reflect, replicate and circular list on the host, per padded dimension, the input position
// each output position reads, and gather them with index_select. cat's and narrow's gradients
// slice and pad back, index_select's is index_add (which sums the gradients of the positions a
// reflection or a replication reads twice), so padding differentiates, twice too, on every
// device with no kernel of its own. PyTorch has kernels for the three index modes; here they
// cost one gather per dimension and a host list of output-size integers, measured in
// bench/resample_bench.cpp.
#include "pad.h"

#include <kiln/amp/autocast.h>
#include <kiln/dispatch.h>
#include <kiln/nn/functional/padding.h>
#include <kiln/ops.h>

#include <sstream>
#include <vector>

namespace kiln::detail {
namespace {

std::string pad_list(IntArrayRef v) {
  std::ostringstream s;
  for (size_t i = 0; i < v.size(); ++i) s << (i ? ", " : "") << v[i];
  return s.str();
}

// size + lo + hi, overflow-checked.
int64_t padded_size(const char* op, int64_t size, int64_t lo, int64_t hi, int64_t dim,
                    IntArrayRef input) {
  int64_t out = 0;
  bool overflow = __builtin_add_overflow(size, lo, &out) || __builtin_add_overflow(out, hi, &out);
  KILN_CHECK_VALUE(!overflow, op, ": padding (", lo, ", ", hi, ") of dimension ", dim,
                   " of input of size ", input, " overflows int64");
  return out;
}

// The input position output position i (from -lo) reads in a dimension of `size`.
int64_t source(PadFill fill, int64_t i, int64_t size) {
  switch (fill) {
    case PadFill::kReflect: return i < 0 ? -i : (i >= size ? 2 * (size - 1) - i : i);
    case PadFill::kReplicate: return std::min(std::max<int64_t>(i, 0), size - 1);
    case PadFill::kCircular: return ((i % size) + size) % size;
  }
  return i;
}

const char* fill_name(PadFill fill) {
  const char* names[] = {"reflect", "replicate", "circular"};
  return names[static_cast<int>(fill)];
}

}  // namespace

Tensor pad_by_index(const char* op, const Tensor& input, IntArrayRef before, IntArrayRef after,
                    PadFill fill) {
  const int64_t dims = static_cast<int64_t>(before.size());
  KILN_CHECK_VALUE(input.dim() >= dims, op, ": cannot pad ", dims, " dimensions of input of size ",
                   input.sizes());
  Tensor out = input;
  for (int64_t d = 0; d < dims; ++d) {
    const int64_t dim = input.dim() - dims + d, size = input.size(dim);
    const int64_t lo = before[static_cast<size_t>(d)], hi = after[static_cast<size_t>(d)];
    const int64_t new_size = padded_size(op, size, lo, hi, dim, input.sizes());
    if (fill == PadFill::kReflect) {
      KILN_CHECK_VALUE(lo < size && hi < size, op, ": padding (", lo, ", ", hi, ") with mode ",
                       "'reflect': Padding size should be less than the corresponding input ",
                       "dimension, but got: padding (", lo, ", ", hi, ") at dimension ", dim,
                       " of input of size ", input.sizes());
    }
    if (fill == PadFill::kCircular) {
      KILN_CHECK_VALUE(lo <= size && hi <= size, op, ": padding (", lo, ", ", hi, ") of ",
                       "dimension ", dim, " of input of size ", input.sizes(), " with mode ",
                       "'circular': Padding value causes wrapping around more than once.");
      KILN_CHECK_VALUE(new_size >= 0, op, ": padding (", lo, ", ", hi, ") of dimension ", dim,
                       " of input of size ", input.sizes(), " with mode 'circular': Negative ",
                       "padding value is resulting in an empty dimension");
    } else {
      KILN_CHECK_VALUE(new_size >= 1, op, ": padding (", lo, ", ", hi, ") of dimension ", dim,
                       " with mode '", fill_name(fill), "': input of size ", input.sizes(),
                       " is too small. Calculated output size: ", new_size);
    }
    if (lo == 0 && hi == 0) continue;
    int64_t from = -lo, to = size + hi, period = size;
    if (fill == PadFill::kCircular && (lo < 0 || hi < 0)) {
      // PyTorch crops first and wraps around what is left
      const int64_t start = std::max<int64_t>(-lo, 0);
      period = size - start - std::max<int64_t>(-hi, 0);
      KILN_CHECK_VALUE(period > 0 || new_size == 0, op, ": padding (", lo, ", ", hi,
                       ") of dimension ", dim, " of input of size ", input.sizes(),
                       " with mode 'circular': Negative padding value is resulting in an empty ",
                       "dimension");
      from = -std::max<int64_t>(lo, 0);
      to = period + std::max<int64_t>(hi, 0);
      out = out.narrow(dim, start, std::max<int64_t>(period, 0));
    }
    std::vector<int64_t> at;
    at.reserve(static_cast<size_t>(new_size));
    for (int64_t i = from; i < to; ++i) at.push_back(source(fill, i, period));
    Tensor index = from_blob(at.data(), {new_size}, kLong).to(input.device(), kLong, true);
    out = index_select(out, dim, index);
  }
  return out;
}

}  // namespace kiln::detail

namespace kiln {

Tensor constant_pad_nd(const Tensor& input, IntArrayRef pad, const Scalar& value) {
  const char* op = "constant_pad_nd";
  KILN_CHECK_VALUE(pad.size() % 2 == 0, op, ": Padding length must be divisible by 2, but got ",
                   "pad [", detail::pad_list(pad), "]");
  const int64_t dims = static_cast<int64_t>(pad.size() / 2);
  KILN_CHECK_VALUE(dims <= input.dim(), op, ": Padding length too large: pad [",
                   detail::pad_list(pad), "] pads ", dims, " dimensions of input of size ",
                   input.sizes());
  Tensor out = input;
  // the pad list starts at the last dimension; crops first, so that blocks get the final sizes
  for (int pass = 0; pass < 2; ++pass) {
    for (int64_t k = 0; k < dims; ++k) {
      const int64_t dim = input.dim() - 1 - k, size = out.size(dim);
      const int64_t lo = pad[static_cast<size_t>(2 * k)], hi = pad[static_cast<size_t>(2 * k + 1)];
      if (pass == 0) {
        int64_t kept = size - std::max<int64_t>(-lo, 0);
        KILN_CHECK_VALUE(kept - std::max<int64_t>(-hi, 0) >= 0, op, ": padding (", lo, ", ", hi,
                         ") of dimension ", dim, " of input of size ", input.sizes(),
                         " crops more than its ", size, " elements");
        detail::padded_size(op, input.size(dim), lo, hi, dim, input.sizes());
        if (lo < 0 || hi < 0) {
          out = out.narrow(dim, std::max<int64_t>(-lo, 0), kept - std::max<int64_t>(-hi, 0));
        }
        continue;
      }
      auto block = [&](int64_t n) {
        DimVector sizes(out.sizes());
        sizes[static_cast<size_t>(dim)] = n;
        return full(sizes, value, TensorOptions(out.dtype()).device(out.device()));
      };
      std::vector<Tensor> parts;
      if (lo > 0) parts.push_back(block(lo));
      parts.push_back(out);
      if (hi > 0) parts.push_back(block(hi));
      if (parts.size() > 1) out = cat(parts, dim);
    }
  }
  return out;
}

}  // namespace kiln

namespace kiln::nn::functional {

Tensor pad(const Tensor& input, const PadFuncOptions& options) {
  const char* op = "pad";
  IntArrayRef p = options.pad();
  KILN_CHECK_VALUE(p.size() % 2 == 0, op, ": Padding length must be divisible by 2, but got ",
                   "pad [", kiln::detail::pad_list(p), "]");
  KILN_CHECK_VALUE(static_cast<int64_t>(p.size() / 2) <= input.dim(), op, ": Padding length too ",
                   "large: pad [", kiln::detail::pad_list(p), "] for input of size ",
                   input.sizes());
  if (std::holds_alternative<enumtype::kConstant>(options.mode())) {
    return constant_pad_nd(input, p, options.value());
  }
  using kiln::detail::PadFill;
  const PadFill fill = std::holds_alternative<enumtype::kReflect>(options.mode())
                           ? PadFill::kReflect
                           : (std::holds_alternative<enumtype::kReplicate>(options.mode())
                                  ? PadFill::kReplicate
                                  : PadFill::kCircular);
  const int64_t dims = static_cast<int64_t>(p.size() / 2);
  KILN_CHECK(dims >= 1 && dims <= 3 && (input.dim() == dims + 1 || input.dim() == dims + 2), op,
             ": mode '", kiln::detail::fill_name(fill), "' pads the last 1, 2 or 3 dimensions ",
             "of an unbatched [C, ...] or batched [N, C, ...] input, but got pad [",
             kiln::detail::pad_list(p), "] for input of size ", input.sizes(),
             " (PyTorch: Only 2D, 3D, 4D, 5D padding with non-constant padding are supported ",
             "for now)");
  if (fill == PadFill::kCircular) {
    KILN_CHECK_VALUE(input.dim() == dims + 2, op, ": mode 'circular' expects a batched input ",
                     "[N, C, ...] of ", dims + 2, " dimensions for pad [",
                     kiln::detail::pad_list(p), "], but got input of size ", input.sizes());
  } else {
    for (int64_t d = input.dim() - dims - 1; d < input.dim(); ++d) {
      KILN_CHECK_VALUE(input.size(d) > 0, op, ": mode '", kiln::detail::fill_name(fill),
                       "' expects an input with possibly 0 batch size and other non-zero ",
                       "dimensions, but got input of size ", input.sizes());
    }
  }
  // PyTorch 1.13's CPU autocast runs reflection_pad1d/2d and replication_pad1d/2d/3d in float32
  Tensor x = input;
  const bool fp32 = fill == PadFill::kReplicate || (fill == PadFill::kReflect && dims < 3);
  if (fp32 && x.device().type() == kCPU && amp::is_autocast_enabled(kCPU) &&
      !impl::tls_is_dispatch_key_excluded(DispatchKey::Autocast) &&
      (x.dtype() == kHalf || x.dtype() == kBFloat16)) {
    x = x.to(kFloat);
  }
  DimVector before, after;
  for (int64_t d = dims - 1; d >= 0; --d) {
    before.push_back(p[static_cast<size_t>(2 * d)]);
    after.push_back(p[static_cast<size_t>(2 * d + 1)]);
  }
  return kiln::detail::pad_by_index(op, x, before, after, fill);
}

}  // namespace kiln::nn::functional
