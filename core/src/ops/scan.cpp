// Inclusive scans along one dimension: cumsum and cumprod (primitives: a plugin kernel walks each
// line once, where a composite would take a matmul with a triangle or log-many passes).
#include "elementwise.h"

#include "../autograd/function.h"

namespace kiln {
namespace detail {
namespace {

using ScanOp = Operator<Tensor(const Tensor&, int64_t, std::optional<ScalarType>)>;

// The kernel sees x converted to the result dtype and contiguous, and a contiguous output.
Tensor scan_backend(const ScanOp& op, const Tensor& x, int64_t dim,
                    std::optional<ScalarType> dtype) {
  ScalarType t = dtype ? *dtype : is_integral(x.dtype(), true) ? kLong : x.dtype();
  if (t == kBool) throw_dtype_unsupported(op.name(), t);
  dim = wrap_dim(dim, x.dim(), op.name());
  Tensor in = (x.dtype() == t ? x : x.to(t)).contiguous();
  if (x.dim() == 0) return in.is_same(x) ? x.clone() : in;
  Tensor out = empty_tensor(x.sizes(), t, x.device());
  if (out.numel() == 0) return out;
  run_kernel(op, {&in}, {&out}, Attrs().i64("dim", dim));
  return out;
}

}  // namespace

ScanOp cumsum_op("cumsum", "cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor",
                 scan_backend);
ScanOp cumprod_op("cumprod", "cumprod(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor",
                  scan_backend);

}  // namespace detail

Tensor cumsum(const Tensor& x, int64_t dim, std::optional<ScalarType> dtype) {
  return detail::cumsum_op(x, dim, dtype);
}
Tensor cumprod(const Tensor& x, int64_t dim, std::optional<ScalarType> dtype) {
  return detail::cumprod_op(x, dim, dtype);
}

}  // namespace kiln

// --- gradients (Note [Gradients next to operators]) ----------------------------------------------
// out[i] = sum over j <= i of x[j], so x[j]'s gradient sums g[i] over i >= j: a cumsum from the
// end. cumprod's is PyTorch's formula: before a line's first zero z, x[k] gets
// sum over i >= k of g[i] out[i] / x[k]; x[z] gets sum over i >= z of g[i] times the product of
// x[0..i] without x[z]; after z, nothing (every product through k also holds x[z] = 0). That
// formula's own derivative misses the terms through x[z], so double backward takes a loop.
namespace kiln::detail {
namespace {

using autograd::detail::FunctionNode;

// g summed from the end of dim: out[j] = g[j] + g[j + 1] + ...
Tensor reverse_cumsum(const Tensor& g, int64_t dim) {
  return flip(cumsum(flip(g, {dim}), dim), {dim});
}

// The same gradient by a loop along dim that stays differentiable where x has zeros (for double
// backward): x[k] gets E[k] S[k], E[k] the product of x[0..k-1] and S[k] = g[k] + x[k+1] S[k+1].
Tensor cumprod_gradient_twice(const Tensor& g, const Tensor& x, int64_t dim) {
  int64_t n = x.sizes()[dim];
  Tensor first_one = ones_like(x.narrow(dim, 0, 1));
  Tensor before = n > 1 ? cat({first_one, cumprod(x.narrow(dim, 0, n - 1), dim)}, dim) : first_one;
  std::vector<Tensor> s(static_cast<size_t>(n));
  s[n - 1] = g.narrow(dim, n - 1, 1);
  for (int64_t k = n - 2; k >= 0; --k) {
    s[k] = g.narrow(dim, k, 1) + x.narrow(dim, k + 1, 1) * s[k + 1];
  }
  return before * cat(s, dim);
}

Tensor cumprod_gradient(const Tensor& g, const Tensor& x, const Tensor& out, int64_t dim) {
  if (x.dim() == 0) return g;
  Tensor zero = eq(x, 0);
  Tensor zeros_through = cumsum(zero, dim);  // zeros in x[0..k]
  Tensor before = eq(zeros_through, 0);
  Tensor first = logical_and(zero, eq(zeros_through, 1));
  Tensor one = ones({}, x.options());
  Tensor safe = where(zero, one, x);
  Tensor grad = where(before, reverse_cumsum(g * out, dim) / safe, zeros({}, x.options()));
  // only lines with a zero need the second term
  if (!any(first).item<bool>()) return grad;
  if (autograd::GradMode::is_enabled()) return cumprod_gradient_twice(g, x, dim);
  Tensor without_first = cumprod(where(first, one, x), dim);
  return grad + where(first, reverse_cumsum(g * without_first, dim), zeros({}, x.options()));
}

Tensor scan_autograd(const ScanOp& op, const Tensor& x, int64_t dim,
                     std::optional<ScalarType> dtype) {
  Tensor out;
  {
    ExcludeDispatchKeyGuard below(DispatchKey::Autograd);
    out = op(x, dim, dtype);
  }
  int64_t d = wrap_dim(dim, x.dim(), op.name());
  bool is_sum = op.name()[3] == 's';
  ScalarType x_dtype = x.dtype();
  auto node = autograd::detail::record(
      is_sum ? "CumsumBackward0" : "CumprodBackward0", {&x}, {&out},
      [is_sum, d, x_dtype](FunctionNode& n, const std::vector<Tensor>& g) {
        const Tensor& grad = g[0];
        Tensor r = grad.dim() == 0 ? grad
                   : is_sum        ? reverse_cumsum(grad, d)
                            : cumprod_gradient(grad, n.saved(0).to(grad.dtype()), n.saved(1), d);
        return std::vector<Tensor>{r.to(x_dtype)};
      });
  if (node && !is_sum) {
    node->save(x);
    node->save(out, /*is_output=*/true);
  }
  return out;
}

const bool scan_backwards_registered = [] {
  cumsum_op.set_kernel(DispatchKey::Autograd, scan_autograd);
  cumprod_op.set_kernel(DispatchKey::Autograd, scan_autograd);
  return true;
}();

}  // namespace
}  // namespace kiln::detail
