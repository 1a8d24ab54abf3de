// Reductions. Primitives (sum, prod, amax, amin, max_dim, min_dim, all, any) run plugin kernels
// that always see the keepdim shape; composites (mean, var, std, norm, logsumexp, argmax, ...)
// are written from them.
#include "elementwise.h"

#include "../autograd/function.h"

#include <cmath>
#include <limits>

namespace kiln {
namespace detail {
namespace {

using SumOp = Operator<Tensor(const Tensor&, IntArrayRef, bool, std::optional<ScalarType>)>;
using ReduceOp = Operator<Tensor(const Tensor&, IntArrayRef, bool)>;
using ArgReduceOp = Operator<std::tuple<Tensor, Tensor>(const Tensor&, int64_t, bool)>;

// The reduced dimensions, sorted and unique; all of them when `dims` is empty.
DimVector normalize_dims(const char* op, IntArrayRef dims, int64_t ndim) {
  DimVector out;
  if (dims.empty()) {
    for (int64_t d = 0; d < ndim; ++d) out.push_back(d);
    return out;
  }
  std::vector<bool> seen(static_cast<size_t>(std::max<int64_t>(ndim, 1)), false);
  for (int64_t d : dims) {
    int64_t w = wrap_dim(d, ndim, op);
    KILN_CHECK_VALUE(!seen[w], op, ": dim ", w, " appears multiple times in the list of dims");
    seen[w] = true;
  }
  for (int64_t d = 0; d < ndim; ++d) {
    if (seen[d]) out.push_back(d);
  }
  return out;
}

DimVector keepdim_sizes(IntArrayRef sizes, IntArrayRef dims) {
  DimVector out(sizes);
  for (int64_t d : dims) out[d] = 1;
  return out;
}

Tensor drop_dims(const Tensor& out, IntArrayRef dims, bool keepdim) {
  if (keepdim) return out;
  DimVector sizes;
  size_t j = 0;
  for (int64_t d = 0; d < out.dim(); ++d) {
    if (j < dims.size() && dims[j] == d) {
      ++j;
      continue;
    }
    sizes.push_back(out.sizes()[d]);
  }
  return out.view(sizes);
}

void check_nonempty(const char* op, const Tensor& x, IntArrayRef dims) {
  for (int64_t d : dims) {
    KILN_CHECK_INDEX(x.sizes()[d] != 0, op, "(): Expected reduction dim ", d,
                     " to have non-zero size.");
  }
}

// Runs a reduction kernel: input converted to `dtype`, output of the keepdim shape.
Tensor reduce(const OperatorBase& op, const Tensor& x, IntArrayRef dims, bool keepdim,
              ScalarType dtype, ScalarType out_dtype) {
  Tensor in = x.dtype() == dtype ? x : x.to(dtype);
  if (x.dim() == 0) return in.dtype() == out_dtype ? in.clone() : in.to(out_dtype);
  DimVector d = normalize_dims(op.name(), dims, x.dim());
  Tensor out = empty_tensor(keepdim_sizes(x.sizes(), d), out_dtype, x.device());
  run_kernel(op, {&in}, {&out}, Attrs().list("dims", d));
  return drop_dims(out, d, keepdim);
}

ScalarType sum_dtype(const Tensor& x, std::optional<ScalarType> dtype) {
  if (dtype) return *dtype;
  return is_integral(x.dtype(), true) ? kLong : x.dtype();
}

Tensor sum_backend(const SumOp& op, const Tensor& x, IntArrayRef dims, bool keepdim,
                   std::optional<ScalarType> dtype) {
  ScalarType t = sum_dtype(x, dtype);
  if (t == kBool) throw_dtype_unsupported(op.name(), t);
  return reduce(op, x, dims, keepdim, t, t);
}

Tensor extreme_backend(const ReduceOp& op, const Tensor& x, IntArrayRef dims, bool keepdim) {
  if (x.dim() > 0) check_nonempty(op.name(), x, normalize_dims(op.name(), dims, x.dim()));
  return reduce(op, x, dims, keepdim, x.dtype(), x.dtype());
}

Tensor logical_reduce_backend(const ReduceOp& op, const Tensor& x, IntArrayRef dims, bool keepdim) {
  return reduce(op, x, dims, keepdim, kBool, kBool);
}

std::tuple<Tensor, Tensor> arg_reduce_backend(const ArgReduceOp& op, const Tensor& x, int64_t dim,
                                              bool keepdim) {
  if (x.dim() == 0) {
    wrap_dim(dim, 0, op.name());
    return {x.clone(), zeros({}, TensorOptions().dtype(kLong).device(x.device()))};
  }
  dim = wrap_dim(dim, x.dim(), op.name());
  check_nonempty(op.name(), x, {dim});
  DimVector sizes = keepdim_sizes(x.sizes(), {dim});
  Tensor values = empty_tensor(sizes, x.dtype(), x.device());
  Tensor indices = empty_tensor(sizes, kLong, x.device());
  run_kernel(op, {&x}, {&values, &indices}, Attrs().i64("dim", dim));
  return {drop_dims(values, {dim}, keepdim), drop_dims(indices, {dim}, keepdim)};
}

}  // namespace

SumOp sum_op("sum",
             "sum(Tensor self, int[] dim, bool keepdim=False, ScalarType? dtype=None) -> "
             "Tensor",
             sum_backend);
SumOp prod_op("prod",
              "prod(Tensor self, int[] dim, bool keepdim=False, ScalarType? dtype=None) "
              "-> Tensor",
              sum_backend);
ReduceOp amax_op("amax", "amax(Tensor self, int[] dim=[], bool keepdim=False) -> Tensor",
                 extreme_backend);
ReduceOp amin_op("amin", "amin(Tensor self, int[] dim=[], bool keepdim=False) -> Tensor",
                 extreme_backend);
ReduceOp all_op("all", "all(Tensor self, int[] dim, bool keepdim=False) -> Tensor",
                logical_reduce_backend);
ReduceOp any_op("any", "any(Tensor self, int[] dim, bool keepdim=False) -> Tensor",
                logical_reduce_backend);
ArgReduceOp max_dim_op("max_dim",
                       "max.dim(Tensor self, int dim, bool keepdim=False) -> "
                       "(Tensor values, Tensor indices)",
                       arg_reduce_backend);
ArgReduceOp min_dim_op("min_dim",
                       "min.dim(Tensor self, int dim, bool keepdim=False) -> "
                       "(Tensor values, Tensor indices)",
                       arg_reduce_backend);

}  // namespace detail

Tensor sum(const Tensor& x, std::optional<ScalarType> dtype) {
  return detail::sum_op(x, {}, false, dtype);
}
Tensor sum(const Tensor& x, IntArrayRef dims, bool keepdim, std::optional<ScalarType> dtype) {
  return detail::sum_op(x, dims, keepdim, dtype);
}
Tensor prod(const Tensor& x, std::optional<ScalarType> dtype) {
  return detail::prod_op(x, {}, false, dtype);
}
Tensor prod(const Tensor& x, int64_t dim, bool keepdim, std::optional<ScalarType> dtype) {
  return detail::prod_op(x, {dim}, keepdim, dtype);
}

namespace {
int64_t reduced_count(const Tensor& x, IntArrayRef dims) {
  if (dims.empty()) return x.numel();
  int64_t n = 1;
  for (int64_t d : detail::normalize_dims("mean", dims, x.dim())) n *= x.sizes()[d];
  return n;
}
}  // namespace

Tensor mean(const Tensor& x, IntArrayRef dims, bool keepdim, std::optional<ScalarType> dtype) {
  ScalarType t = dtype.value_or(x.dtype());
  KILN_CHECK_TYPE(is_floating_point(t), "mean(): could not infer output dtype. Input dtype must ",
                  "be either a floating point or complex dtype. Got: ", dtype_name(t));
  return sum(x, dims, keepdim, t) / static_cast<double>(reduced_count(x, dims));
}
Tensor mean(const Tensor& x, std::optional<ScalarType> dtype) { return mean(x, {}, false, dtype); }

Tensor amax(const Tensor& x, IntArrayRef dims, bool keepdim) {
  return detail::amax_op(x, dims, keepdim);
}
Tensor amin(const Tensor& x, IntArrayRef dims, bool keepdim) {
  return detail::amin_op(x, dims, keepdim);
}
Tensor max(const Tensor& x) {
  KILN_CHECK_INDEX(x.numel() > 0, "max(): Expected reduction dim to be specified for input.numel() "
                                  "== 0. Specify the reduction dim with the 'dim' argument.");
  return amax(x);
}
Tensor min(const Tensor& x) {
  KILN_CHECK_INDEX(x.numel() > 0, "min(): Expected reduction dim to be specified for input.numel() "
                                  "== 0. Specify the reduction dim with the 'dim' argument.");
  return amin(x);
}
std::tuple<Tensor, Tensor> max(const Tensor& x, int64_t dim, bool keepdim) {
  return detail::max_dim_op(x, dim, keepdim);
}
std::tuple<Tensor, Tensor> min(const Tensor& x, int64_t dim, bool keepdim) {
  return detail::min_dim_op(x, dim, keepdim);
}
Tensor argmax(const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  if (!dim) return std::get<1>(max(x.reshape({-1}), 0, false));
  return std::get<1>(max(x, *dim, keepdim));
}
Tensor argmin(const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  if (!dim) return std::get<1>(min(x.reshape({-1}), 0, false));
  return std::get<1>(min(x, *dim, keepdim));
}

Tensor all(const Tensor& x) { return detail::all_op(x, {}, false); }
Tensor all(const Tensor& x, int64_t dim, bool keepdim) { return detail::all_op(x, {dim}, keepdim); }
Tensor any(const Tensor& x) { return detail::any_op(x, {}, false); }
Tensor any(const Tensor& x, int64_t dim, bool keepdim) { return detail::any_op(x, {dim}, keepdim); }

namespace {
// A composite operator, so that autocast can list it (float32 on CUDA, as PyTorch).
Tensor logsumexp_composite(const detail::ReduceOp&, const Tensor& x, IntArrayRef dims,
                           bool keepdim) {
  Tensor in = x.is_floating_point() ? x : x.to(default_float_dtype());
  if (in.numel() == 0) return log(sum(exp(in), dims, keepdim));
  Tensor m = amax(in, dims, /*keepdim=*/true);
  // an infinite maximum would give inf - inf = nan; shift by 0 there instead
  m = masked_fill(m, eq(abs(m), std::numeric_limits<double>::infinity()), 0);
  Tensor out = log(sum(exp(in - m), dims, /*keepdim=*/true)) + m;
  if (keepdim || in.dim() == 0) return out;
  return detail::drop_dims(out, detail::normalize_dims("logsumexp", dims, in.dim()), false);
}
detail::ReduceOp logsumexp_op("logsumexp",
                              "logsumexp(Tensor self, int[1] dim, bool keepdim=False) -> Tensor",
                              logsumexp_composite, /*primitive=*/false);
}  // namespace

Tensor logsumexp(const Tensor& x, IntArrayRef dims, bool keepdim) {
  return logsumexp_op(x, dims, keepdim);
}

Tensor var(const Tensor& x, IntArrayRef dims, int64_t correction, bool keepdim) {
  KILN_CHECK_TYPE(x.is_floating_point(), "var: only floating point dtypes are supported (got ",
                  dtype_name(x.dtype()), ")");
  Tensor centred = x - mean(x, dims, /*keepdim=*/true);
  int64_t n = reduced_count(x, dims);
  Tensor squares = sum(centred * centred, dims, keepdim);
  return squares / static_cast<double>(std::max<int64_t>(n - correction, 0));
}

Tensor std(const Tensor& x, IntArrayRef dims, int64_t correction, bool keepdim) {
  return sqrt(var(x, dims, correction, keepdim));
}

Tensor norm(const Tensor& x, const Scalar& p, IntArrayRef dims, bool keepdim) {
  KILN_CHECK_TYPE(x.is_floating_point(), "norm: expected a floating point tensor as input (got ",
                  dtype_name(x.dtype()), ")");
  double order = p.to_double();
  if (order == 2) return sqrt(sum(x * x, dims, keepdim));
  if (order == 1) return sum(abs(x), dims, keepdim);
  if (std::isinf(order))
    return order > 0 ? amax(abs(x), dims, keepdim) : amin(abs(x), dims, keepdim);
  if (order == 0) return sum(ne(x, 0).to(x.dtype()), dims, keepdim);
  return pow(sum(pow(abs(x), p), dims, keepdim), 1.0 / order);
}

}  // namespace kiln

// --- gradients (Note [Gradients next to operators]) ----------------------------------------------
namespace kiln::detail {
namespace {

using autograd::detail::FunctionNode;

template <class Op, class... Args>
auto below(const Op& op, Args... args) {
  ExcludeDispatchKeyGuard guard(DispatchKey::Autograd);
  return op(args...);
}

// g of a reduction's output, brought back to the input's sizes.
Tensor expand_reduced(const Tensor& g, IntArrayRef sizes, IntArrayRef dims, bool keepdim) {
  Tensor r = g;
  if (!keepdim && !sizes.empty()) {
    for (int64_t d : dims) r = r.unsqueeze(d);
  }
  return r.expand(sizes);
}

// The normalized dims of a reduction of x (empty for a 0-dim x).
DimVector reduced_dims(const char* op, const Tensor& x, IntArrayRef dims) {
  return x.dim() == 0 ? DimVector() : normalize_dims(op, dims, x.dim());
}

Tensor sum_autograd(const SumOp& op, const Tensor& x, IntArrayRef dims, bool keepdim,
                    std::optional<ScalarType> dtype) {
  Tensor out = below(op, x, dims, keepdim, dtype);
  DimVector sizes(x.sizes()), d = reduced_dims(op.name(), x, dims);
  bool is_prod = op.name()[0] == 'p';
  auto node = autograd::detail::record(
      is_prod ? "ProdBackward1" : "SumBackward1", {&x}, {&out},
      [sizes, d, keepdim, is_prod](FunctionNode& n, const std::vector<Tensor>& g) {
        Tensor grad = expand_reduced(g[0], sizes, d, keepdim);
        if (is_prod) {
          // d(prod)/dx_i = prod / x_i (inputs with zeros are not special-cased)
          grad = grad * expand_reduced(n.saved(1), sizes, d, keepdim) / n.saved(0);
        }
        return std::vector<Tensor>{grad};
      });
  if (node && is_prod) {
    node->save(x);
    node->save(out, /*is_output=*/true);
  }
  return out;
}

// amax/amin: the gradient is shared evenly among the elements equal to the extreme.
Tensor extreme_autograd(const ReduceOp& op, const Tensor& x, IntArrayRef dims, bool keepdim) {
  Tensor out = below(op, x, dims, keepdim);
  DimVector sizes(x.sizes()), d = reduced_dims(op.name(), x, dims);
  auto node = autograd::detail::record(
      op.name()[1] == 'm' && op.name()[2] == 'a' ? "AmaxBackward0" : "AminBackward0", {&x}, {&out},
      [sizes, d, keepdim](FunctionNode& n, const std::vector<Tensor>& g) {
        Tensor x = n.saved(0);
        Tensor mask = eq(x, expand_reduced(n.saved(1), sizes, d, keepdim)).to(g[0].dtype());
        Tensor count = d.empty() ? ones_like(mask) : sum(mask, d, /*keepdim=*/true);
        return std::vector<Tensor>{expand_reduced(g[0], sizes, d, keepdim) * mask / count};
      });
  if (node) {
    node->save(x);
    node->save(out, /*is_output=*/true);
  }
  return out;
}

// max/min along dim: the gradient goes to the index that was picked.
std::tuple<Tensor, Tensor> arg_reduce_autograd(const ArgReduceOp& op, const Tensor& x, int64_t dim,
                                               bool keepdim) {
  auto [values, indices] = below(op, x, dim, keepdim);
  if (x.dim() == 0) {
    autograd::detail::record_simple(
        "MaxBackward0", x, values, [](const Tensor& g) { return g; }, false);
    return {values, indices};
  }
  int64_t d = wrap_dim(dim, x.dim(), op.name());
  DimVector sizes(x.sizes());
  Tensor idx = keepdim ? indices : indices.unsqueeze(d);
  autograd::detail::record_simple(
      op.name()[1] == 'a' ? "MaxBackward0" : "MinBackward0", x, values,
      [sizes, d, keepdim, idx](const Tensor& g) {
        DimVector shape(sizes.size(), 1);
        shape[d] = sizes[d];
        Tensor positions = arange(sizes[d], TensorOptions().dtype(kLong).device(g.device()));
        Tensor picked = eq(positions.view(shape), idx).to(g.dtype());
        return expand_reduced(g, sizes, {d}, keepdim) * picked;
      },
      false);
  return {values, indices};
}

const bool reduce_backwards_registered = [] {
  sum_op.set_kernel(DispatchKey::Autograd, sum_autograd);
  prod_op.set_kernel(DispatchKey::Autograd, sum_autograd);
  amax_op.set_kernel(DispatchKey::Autograd, extreme_autograd);
  amin_op.set_kernel(DispatchKey::Autograd, extreme_autograd);
  max_dim_op.set_kernel(DispatchKey::Autograd, arg_reduce_autograd);
  min_dim_op.set_kernel(DispatchKey::Autograd, arg_reduce_autograd);
  return true;
}();

}  // namespace
}  // namespace kiln::detail
