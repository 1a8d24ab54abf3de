// Matrix products. mm and bmm are primitives; matmul, addmm and dot are composites (a plugin may
// still register a fused addmm kernel, which then runs instead of the composite).
#include "elementwise.h"

#include "../autograd/function.h"

namespace kiln {
namespace detail {
namespace {

using MatOp = Operator<Tensor(const Tensor&, const Tensor&)>;
using AddmmOp =
    Operator<Tensor(const Tensor&, const Tensor&, const Tensor&, const Scalar&, const Scalar&)>;

void check_matmul_operands(const char* op, const Tensor& a, const Tensor& b, int64_t rank) {
  KILN_CHECK_VALUE(a.dim() == rank && b.dim() == rank, op, ": expected ", rank, "-D tensors, ",
                   "but got ", a.dim(), "-D and ", b.dim(), "-D (shapes ", a.sizes(), " and ",
                   b.sizes(), ")");
  KILN_CHECK_TYPE(a.dtype() == b.dtype(), op, ": expected mat1 and mat2 to have the same dtype, ",
                  "but got: ", dtype_name(a.dtype()), " != ", dtype_name(b.dtype()));
  if (a.dtype() == kBool) throw_dtype_unsupported(op, a.dtype());
  common_device(op, {&a, &b});
}

Tensor mm_backend(const MatOp& op, const Tensor& a, const Tensor& b) {
  check_matmul_operands(op.name(), a, b, 2);
  KILN_CHECK_VALUE(a.sizes()[1] == b.sizes()[0], op.name(), ": mat1 and mat2 shapes cannot be ",
                   "multiplied (", a.sizes()[0], "x", a.sizes()[1], " and ", b.sizes()[0], "x",
                   b.sizes()[1], ")");
  Tensor out = empty_tensor({a.sizes()[0], b.sizes()[1]}, a.dtype(), a.device());
  run_kernel(op, {&a, &b}, {&out});
  return out;
}

Tensor bmm_backend(const MatOp& op, const Tensor& a, const Tensor& b) {
  check_matmul_operands(op.name(), a, b, 3);
  KILN_CHECK_VALUE(a.sizes()[0] == b.sizes()[0], op.name(), ": batch sizes differ (", a.sizes(),
                   " and ", b.sizes(), ")");
  KILN_CHECK_VALUE(a.sizes()[2] == b.sizes()[1], op.name(), ": expected size ", a.sizes()[2],
                   " for dimension 1 of batch2, but got ", b.sizes()[1], " (shapes ", a.sizes(),
                   " and ", b.sizes(), ")");
  Tensor out = empty_tensor({a.sizes()[0], a.sizes()[1], b.sizes()[2]}, a.dtype(), a.device());
  run_kernel(op, {&a, &b}, {&out});
  return out;
}

MatOp mm_op_decl("mm", "mm(Tensor self, Tensor mat2) -> Tensor", mm_backend);

Tensor addmm_backend(const AddmmOp& op, const Tensor& self, const Tensor& a, const Tensor& b,
                     const Scalar& beta, const Scalar& alpha) {
  Tensor product = mm_op_decl(a, b);
  if (op.has_plugin_kernel(a.device().type())) {
    Tensor bias = prepare_input(self, product.dtype(), product.device(), product.sizes());
    run_kernel(op, {&bias, &a, &b}, {&product},
               Attrs().scalar("beta", beta).scalar("alpha", alpha));
    return product;
  }
  Tensor scaled = alpha.to_double() == 1.0 ? product : product * alpha;
  if (beta.to_double() == 0.0) return scaled + zeros_like(self);
  return beta.to_double() == 1.0 ? self + scaled : self * beta + scaled;
}

}  // namespace

MatOp& mm_op = mm_op_decl;
MatOp bmm_op("bmm", "bmm(Tensor self, Tensor mat2) -> Tensor", bmm_backend);
AddmmOp addmm_op("addmm",
                 "addmm(Tensor self, Tensor mat1, Tensor mat2, Scalar beta=1, "
                 "Scalar alpha=1) -> Tensor",
                 addmm_backend, false);

}  // namespace detail

Tensor mm(const Tensor& a, const Tensor& b) { return detail::mm_op(a, b); }
Tensor bmm(const Tensor& a, const Tensor& b) { return detail::bmm_op(a, b); }
Tensor addmm(const Tensor& self, const Tensor& a, const Tensor& b, const Scalar& beta,
             const Scalar& alpha) {
  return detail::addmm_op(self, a, b, beta, alpha);
}

Tensor dot(const Tensor& a, const Tensor& b) {
  KILN_CHECK_VALUE(a.dim() == 1 && b.dim() == 1, "dot: 1D tensors expected, but got ", a.dim(),
                   "D and ", b.dim(), "D tensors");
  KILN_CHECK_VALUE(a.numel() == b.numel(), "dot: inconsistent tensor size, expected tensor [",
                   a.numel(), "] and src [", b.numel(), "] to have the same number of elements, ",
                   "but got ", a.numel(), " and ", b.numel(), " elements respectively");
  KILN_CHECK_TYPE(a.dtype() == b.dtype(), "dot: expected both vectors to have same dtype, but ",
                  "found ", dtype_name(a.dtype()), " and ", dtype_name(b.dtype()));
  return mm(a.unsqueeze(0), b.unsqueeze(1)).reshape({});
}

// PyTorch's matmul: dot, matrix-vector, vector-matrix, matrix-matrix, and batched products with
// the batch dimensions broadcast.
Tensor matmul(const Tensor& a, const Tensor& b) {
  KILN_CHECK_VALUE(a.dim() > 0 && b.dim() > 0, "matmul: both arguments to matmul need to be at ",
                   "least 1D, but they are ", a.dim(), "D and ", b.dim(), "D");
  if (a.dim() == 1 && b.dim() == 1) return dot(a, b);
  if (a.dim() == 2 && b.dim() == 1) return mm(a, b.unsqueeze(1)).squeeze(1);
  if (a.dim() == 1 && b.dim() == 2) return mm(a.unsqueeze(0), b).squeeze(0);
  if (a.dim() == 2 && b.dim() == 2) return mm(a, b);
  if (a.dim() >= 3 && b.dim() <= 2) {
    // fold the batch into the rows: [..., n, k] @ [k, p] is one mm
    Tensor b2 = b.dim() == 1 ? b.unsqueeze(1) : b;
    DimVector out_sizes(a.sizes());
    Tensor product = mm(a.reshape({-1, a.sizes().back()}), b2);
    out_sizes[out_sizes.size() - 1] = b2.sizes()[1];
    if (b.dim() == 1) out_sizes.erase(out_sizes.size() - 1);
    return product.view(out_sizes);
  }
  Tensor a3 = a.dim() == 1 ? a.unsqueeze(0) : a;
  Tensor b3 = b.dim() == 1 ? b.unsqueeze(1) : b;
  int64_t n = a3.sizes()[a3.dim() - 2], k = a3.sizes().back();
  int64_t k2 = b3.sizes()[b3.dim() - 2], p = b3.sizes().back();
  KILN_CHECK_VALUE(k == k2, "matmul: shapes ", a.sizes(), " and ", b.sizes(),
                   " cannot be multiplied (", k, " != ", k2, ")");
  IntArrayRef a_batch(a3.sizes().data(), a3.dim() - 2);
  IntArrayRef b_batch(b3.sizes().data(), b3.dim() - 2);
  DimVector batch = detail::broadcast_dims(a_batch, b_batch);
  int64_t batch_numel = detail::product(batch);
  DimVector a_sizes(batch), b_sizes(batch);
  a_sizes.push_back(n);
  a_sizes.push_back(k);
  b_sizes.push_back(k);
  b_sizes.push_back(p);
  Tensor out = bmm(a3.expand(a_sizes).reshape({batch_numel, n, k}),
                   b3.expand(b_sizes).reshape({batch_numel, k, p}));
  DimVector out_sizes(batch);
  if (a.dim() > 1) out_sizes.push_back(n);
  if (b.dim() > 1) out_sizes.push_back(p);
  return out.view(out_sizes);
}

Tensor Tensor::matmul(const Tensor& other) const { return kiln::matmul(*this, other); }
Tensor Tensor::mm(const Tensor& other) const { return kiln::mm(*this, other); }
Tensor Tensor::bmm(const Tensor& other) const { return kiln::bmm(*this, other); }

}  // namespace kiln

// --- gradients (Note [Gradients next to operators]) ----------------------------------------------
namespace kiln::detail {
namespace {

using autograd::detail::FunctionNode;

// Whether the matrices of t (its last two dimensions) are stored column by column.
bool column_major(const Tensor& t) {
  const int64_t d = t.dim();
  return t.size(d - 2) > 1 && t.size(d - 1) > 1 && t.stride(d - 2) == 1 && t.stride(d - 1) != 1;
}

Tensor matmul_autograd(const MatOp& op, const Tensor& a, const Tensor& b) {
  Tensor out;
  {
    ExcludeDispatchKeyGuard below(DispatchKey::Autograd);
    out = op(a, b);
  }
  bool batched = a.dim() == 3;
  auto node = autograd::detail::record(
      batched ? "BmmBackward0" : "MmBackward0", {&a, &b}, {&out},
      [batched](FunctionNode& n, const std::vector<Tensor>& g) {
        Tensor x = n.saved(0), y = n.saved(1);
        int64_t r = batched ? 1 : 0;
        std::vector<Tensor> grads(2);
        // a column-major operand (w.t() in linear) gets its gradient as the transpose of a
        // row-major product: the gradient has the operand's layout, so the transpose's backward
        // and what follows it (a cast, the accumulation) see contiguous memory (PyTorch does
        // the same)
        if (n.needs_input_grad(0)) {
          grads[0] = column_major(x) ? matmul(y, g[0].transpose(r, r + 1)).transpose(r, r + 1)
                                     : matmul(g[0], y.transpose(r, r + 1));
        }
        if (n.needs_input_grad(1)) {
          grads[1] = column_major(y) ? matmul(g[0].transpose(r, r + 1), x).transpose(r, r + 1)
                                     : matmul(x.transpose(r, r + 1), g[0]);
        }
        return grads;
      });
  if (node) {
    node->save(a);
    node->save(b);
  }
  return out;
}

const bool linalg_backwards_registered = [] {
  mm_op.set_kernel(DispatchKey::Autograd, matmul_autograd);
  bmm_op.set_kernel(DispatchKey::Autograd, matmul_autograd);
  return true;
}();

}  // namespace
}  // namespace kiln::detail
