#include "../tensor_internal.h"

#include <kiln/gradcheck.h>
#include <kiln/ops.h>

#include <sstream>

namespace kiln::autograd {
namespace {

// A 0-dim view of element `flat` (row-major) of t.
Tensor element(const Tensor& t, int64_t flat) {
  Tensor e = t;
  std::vector<int64_t> index(static_cast<size_t>(t.dim()));
  for (int64_t d = t.dim() - 1; d >= 0; --d) {
    index[d] = flat % t.sizes()[d];
    flat /= t.sizes()[d];
  }
  for (int64_t i : index) e = e.select(0, i);
  return e;
}

// Every output flattened into one float64 vector.
Tensor flat_outputs(const std::vector<Tensor>& outs) {
  std::vector<Tensor> parts;
  for (const Tensor& o : outs) {
    if (o.defined() && o.is_floating_point()) parts.push_back(o.detach().reshape({-1}).to(kDouble));
  }
  return parts.empty() ? zeros({0}, kDouble) : cat(parts, 0);
}

int64_t total_numel(const std::vector<Tensor>& outs) {
  int64_t n = 0;
  for (const Tensor& o : outs) {
    if (o.defined() && o.is_floating_point()) n += o.numel();
  }
  return n;
}

// numerical[j, k] = d output_k / d input_j, by central differences.
Tensor numerical_jacobian(const Fn& fn, const std::vector<Tensor>& inputs, size_t which,
                          int64_t n_out, double eps) {
  const Tensor& x = inputs[which];
  Tensor jac = zeros({x.numel(), n_out}, kDouble);
  auto set = [](const Tensor& e, const Scalar& value) {
    NoGradGuard no_grad;  // perturbing a leaf in place
    const_cast<Tensor&>(e).fill_(value);
  };
  for (int64_t j = 0; j < x.numel(); ++j) {
    Tensor e = element(x.detach(), j);
    Scalar original = e.item();
    set(e, original.to_double() + eps);
    Tensor plus = flat_outputs(fn(inputs));
    set(e, original.to_double() - eps);
    Tensor minus = flat_outputs(fn(inputs));
    set(e, original);
    jac[j].copy_((plus - minus) / (2 * eps));
  }
  return jac;
}

// analytical[j, k], one backward pass per output element.
std::vector<Tensor> analytical_jacobians(const Fn& fn, const std::vector<Tensor>& inputs,
                                         int64_t n_out) {
  std::vector<Tensor> outs = fn(inputs);
  std::vector<Tensor> diff_inputs, diff_outputs;
  for (const Tensor& in : inputs) {
    if (in.defined() && in.requires_grad()) diff_inputs.push_back(in);
  }
  for (const Tensor& o : outs) {
    if (o.defined() && o.is_floating_point()) diff_outputs.push_back(o);
  }
  std::vector<Tensor> jacs;
  for (const Tensor& in : diff_inputs) jacs.push_back(zeros({in.numel(), n_out}, kDouble));
  int64_t k = 0;
  for (const Tensor& o : diff_outputs) {
    for (int64_t e = 0; e < o.numel(); ++e, ++k) {
      if (!o.requires_grad()) continue;
      std::vector<Tensor> grad_outputs;
      for (const Tensor& other : diff_outputs) grad_outputs.push_back(zeros_like(other));
      size_t which = static_cast<size_t>(&o - diff_outputs.data());
      element(grad_outputs[which], e).fill_(1);
      std::vector<Tensor> g = grad(diff_outputs, diff_inputs, grad_outputs, /*retain_graph=*/true,
                                   /*create_graph=*/false, /*allow_unused=*/true);
      for (size_t i = 0; i < g.size(); ++i) {
        if (g[i].defined()) jacs[i].select(1, k).copy_(g[i].reshape({-1}).to(kDouble));
      }
    }
  }
  return jacs;
}

}  // namespace

bool gradcheck(const Fn& fn, const std::vector<Tensor>& inputs, const GradcheckOptions& options) {
  int64_t n_out = total_numel(fn(inputs));
  std::vector<Tensor> analytical = analytical_jacobians(fn, inputs, n_out);
  size_t a = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined() || !inputs[i].requires_grad()) continue;
    KILN_CHECK_TYPE(inputs[i].dtype() == kDouble || !options.raise_exception, "gradcheck: input ",
                    i, " is ", dtype_name(inputs[i].dtype()), "; use float64 inputs for ",
                    "finite differences");
    Tensor numerical = numerical_jacobian(fn, inputs, i, n_out, options.eps);
    Tensor diff = abs(analytical[a] - numerical);
    Tensor tolerance = abs(numerical) * options.rtol + options.atol;
    if (!all(le(diff, tolerance)).item<bool>()) {
      if (!options.raise_exception) return false;
      std::ostringstream msg;
      msg << "gradcheck: Jacobian mismatch for input " << i << " (rows: input elements, "
          << "columns: output elements),\nnumerical:" << numerical
          << "\nanalytical:" << analytical[a];
      throw Error(msg.str());
    }
    ++a;
  }
  return true;
}

bool gradgradcheck(const Fn& fn, const std::vector<Tensor>& inputs,
                   const std::vector<Tensor>& grad_outputs, const GradcheckOptions& options) {
  std::vector<Tensor> outs = fn(inputs);
  std::vector<Tensor> gos = grad_outputs;
  if (gos.empty()) {
    for (const Tensor& o : outs) gos.push_back(randn(o.sizes(), kDouble).requires_grad_());
  }
  size_t n_inputs = inputs.size();
  Fn first_derivatives = [fn, n_inputs](const std::vector<Tensor>& args) {
    std::vector<Tensor> ins(args.begin(), args.begin() + static_cast<long>(n_inputs));
    std::vector<Tensor> g(args.begin() + static_cast<long>(n_inputs), args.end());
    std::vector<Tensor> diff;
    for (const Tensor& in : ins) {
      if (in.requires_grad()) diff.push_back(in);
    }
    std::vector<Tensor> result = grad(fn(ins), diff, g, /*retain_graph=*/true,
                                      /*create_graph=*/true, /*allow_unused=*/true);
    for (size_t i = 0; i < result.size(); ++i) {
      if (!result[i].defined()) result[i] = zeros_like(diff[i]);
    }
    return result;
  };
  std::vector<Tensor> args = inputs;
  args.insert(args.end(), gos.begin(), gos.end());
  return gradcheck(first_derivatives, args, options);
}

}  // namespace kiln::autograd
