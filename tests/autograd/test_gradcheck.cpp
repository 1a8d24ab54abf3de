// Finite-difference gradient checks (first and second derivatives) of every differentiable
// operator, in float64, on every loaded device; and the check that every operator of the registry
// with a backward is checked. Every conformance case marked `gradient` (tools/conformance) is
// checked here on its own float64 inputs, so an operator whose case is marked needs nothing in
// this file; the hand-written cases below cover what those cannot: composites of several
// operators, second derivatives through backward primitives, in-place chains.
#define BOOST_TEST_MODULE gradcheck
#include <kiln/custom_function.h>
#include <kiln/gradcheck.h>
#include <kiln/kiln.h>
#include <kiln/nn.h>

#include <boost/test/unit_test.hpp>

#include "conformance.h"

#include <functional>
#include <set>
#include <string>
#include <vector>

using kiln::Tensor;
using Inputs = std::vector<Tensor>;

namespace {

struct Case {
  // The operators it checks, as all_operators() names them, then an optional variant:
  // "pow (scalar exponent)", "view, reshape".
  std::string name;
  std::vector<std::vector<int64_t>> shapes;  // one per input, all require grad
  std::function<Tensor(const Inputs&)> fn;
  bool positive = false;  // inputs in [0.5, 1.5) instead of [-1, 1)
  bool second_order = true;
};

// An int64 tensor of these values on like's device (an index).
Tensor longs(const Tensor& like, const std::vector<int64_t>& v) {
  return kiln::tensor(v, kiln::kLong).to(like.device());
}

std::vector<Case> cases() {
  using V = std::vector<std::vector<int64_t>>;
  return {
      {"pow (scalar exponent)", V{{4}}, [](const Inputs& x) { return kiln::pow(x[0], 3); }},
      {"max_dim", V{{3, 4}}, [](const Inputs& x) { return std::get<0>(kiln::max(x[0], 1)); }},
      {"min_dim", V{{3, 4}}, [](const Inputs& x) { return std::get<0>(kiln::min(x[0], 0, true)); }},
      {"softplus", V{{2, 3}},
       [](const Inputs& x) { return kiln::nn::functional::softplus(x[0] * 3, 1.5); }},
      {"matmul (batched)", V{{2, 1, 2, 3}, {3, 3, 2}},
       [](const Inputs& x) { return kiln::matmul(x[0], x[1]); }},
      {"matmul (vector)", V{{3}, {3, 2}}, [](const Inputs& x) { return kiln::matmul(x[0], x[1]); }},
      {"view, reshape", V{{2, 3}},
       [](const Inputs& x) {
         return x[0].view({3, 2}).reshape({6});
       }},
      {"transpose, permute", V{{2, 3, 4}},
       [](const Inputs& x) {
         return x[0].transpose(0, 2).permute({1, 0, 2});
       }},
      {"expand", V{{3, 1}},
       [](const Inputs& x) {
         return x[0].expand({2, 3, 4});
       }},
      {"select, narrow, slice", V{{4, 5}},
       [](const Inputs& x) {
         return x[0].select(0, 1).narrow(0, 1, 3) + x[0].slice(1, 0, 5, 2)[2];
       }},
      {"squeeze, squeeze.dim, unsqueeze", V{{2, 1, 3}},
       [](const Inputs& x) { return x[0].squeeze().unsqueeze(0).squeeze(0).squeeze(1); }},
      {"cat, stack", V{{2, 3}, {1, 3}},
       [](const Inputs& x) {
         return kiln::stack({kiln::cat({x[0], x[1]}, 0), x[1].expand({3, 3})}, 1);
       }},
      {"clone, to", V{{2, 3}},
       [](const Inputs& x) { return x[0].t().contiguous().clone().to(kiln::kDouble, true); }},
      {"tril, triu", V{{3, 3}},
       [](const Inputs& x) { return kiln::tril(x[0]) + kiln::triu(x[0], 1) * 2; }},
      // the second derivative runs the backward primitives' own Autograd kernels
      {"conv2d, conv2d_backward_input, conv2d_backward_weight", V{{1, 2, 4, 4}, {3, 2, 2, 2}, {3}},
       [](const Inputs& x) { return kiln::conv2d(x[0], x[1], x[2], 1, 1); }},
      {"index", V{{3, 4}},
       [](const Inputs& x) {
         return x[0].index({kiln::indexing::Slice(1, kiln::indexing::None), 2});
       }},
      // advanced indexing, libtorch's forms (composites of index_select, index_add and where)
      {"index (tensor)", V{{4, 3}},
       [](const Inputs& x) {
         return x[0].index({longs(x[0], {0, 2, 0, 2, 1})});
       }},
      {"index (slice, tensor)", V{{3, 4}},
       [](const Inputs& x) {
         return x[0].index({kiln::indexing::Slice(), longs(x[0], {0, 2, 0})});
       }},
      {"index (tensors apart)", V{{2, 3, 4}},
       [](const Inputs& x) {
         return x[0].index({longs(x[0], {0, 0, 1}), kiln::indexing::Slice(),
                            longs(x[0], {0, 2, 0})});
       }},
      {"index (mask)", V{{3, 4}}, [](const Inputs& x) { return x[0].index({x[0].detach() > 0}); }},
      {"index_put_ (accumulate)", V{{5, 3}, {7, 3}},
       [](const Inputs& x) {
         Tensor b = x[0] * 1;
         b.index_put_({longs(x[0], {0, 2, 4, 1, 3, 0, 2})}, x[1], true);
         return b;
       }},
      {"index_put_", V{{5, 3}, {3, 3}},
       [](const Inputs& x) {
         Tensor b = x[0] * 2;
         b.index_put_({longs(x[0], {0, 2, 4})}, x[1]);
         return b;
       }},
      // training mode: the fused kernels on the CPU, differentiable operators for the second
      // derivatives (create_graph)
      {"batch_norm_train (batch_norm)", V{{2, 3, 4}, {3}, {3}},
       [](const Inputs& x) {
         return kiln::nn::functional::batch_norm(x[0], Tensor(), Tensor(), x[1], x[2], true);
       }},
      {"batch_norm_train (batch_norm_relu)", V{{3, 2, 5}, {2}, {2}},
       [](const Inputs& x) {
         return kiln::nn::functional::batch_norm_relu(x[0], Tensor(), Tensor(), x[1], x[2], true);
       }},
      {"inplace_on_non_leaf", V{{2, 3}},
       [](const Inputs& x) {
         Tensor y = x[0] * 1;
         y.mul_(x[0]).add_(x[0], 2).sigmoid_();
         return y;
       }},
  };
}

// The operator names a case checks: its name up to " (", split at ", ".
std::set<std::string> operators_of(const Case& c) {
  std::string list = c.name.substr(0, c.name.find(" ("));
  std::set<std::string> names;
  for (size_t start = 0; start <= list.size();) {
    size_t end = list.find(", ", start);
    if (end == std::string::npos) end = list.size();
    names.insert(list.substr(start, end - start));
    start = end + 2;
  }
  return names;
}

Inputs make_inputs(const Case& c, kiln::Device device) {
  Inputs in;
  for (const auto& shape : c.shapes) {
    Tensor t = kiln::rand(shape, kiln::TensorOptions().dtype(kiln::kDouble));
    t = c.positive ? t + 0.5 : t * 2 - 1;
    in.push_back(t.to(device).requires_grad_());
  }
  return in;
}

}  // namespace

// The conformance cases marked `gradient` (and not excused from finite differences), run here on
// their own inputs in float64.
std::vector<const conformance::Case*> conformance_cases() {
  std::vector<const conformance::Case*> out;
  for (const conformance::Case& c : conformance::all_cases()) {
    if (c.gradient && c.finite_differences && !c.golden && c.inputs && c.run) out.push_back(&c);
  }
  return out;
}

// A conformance case as a function of its floating inputs (moved to `device`, float64), with
// its floating outputs as results.
struct ConformanceFn {
  const conformance::Case* c;
  conformance::Args args;  // on the device; the floating tensors are replaced per call

  Inputs variables() const {
    Inputs v;
    for (const Tensor& t : args.tensors) {
      if (kiln::is_floating_point(t.dtype())) v.push_back(t.clone().requires_grad_());
    }
    return v;
  }
  Inputs operator()(const Inputs& x) const {
    conformance::Args a = args;
    size_t next = 0;
    for (Tensor& t : a.tensors) {
      if (kiln::is_floating_point(t.dtype())) t = x.at(next++);
    }
    if (c->on_device) a = c->on_device(a);
    Inputs out;
    for (const Tensor& o : c->run(a)) {
      if (o.defined() && o.requires_grad() && kiln::is_floating_point(o.dtype())) out.push_back(o);
    }
    return out;
  }
};

BOOST_AUTO_TEST_CASE(every_differentiable_operator_on_every_device) {
  for (const kiln::Device& device : kiln::devices()) {
    for (const Case& c : cases()) {
      BOOST_TEST_CONTEXT(c.name << " on " << device) {
        kiln::manual_seed(7);
        Inputs in = make_inputs(c, device);
        kiln::autograd::Fn fn = [&c](const Inputs& x) { return Inputs{c.fn(x)}; };
        try {
          BOOST_TEST(kiln::autograd::gradcheck(fn, in));
          if (c.second_order) BOOST_TEST(kiln::autograd::gradgradcheck(fn, in));
        } catch (const kiln::Error& e) {
          BOOST_ERROR(c.name << " on " << device << ": " << e.what());
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(every_conformance_gradient_case_on_every_device) {
  int checked = 0;
  for (const kiln::Device& device : kiln::devices()) {
    for (const conformance::Case* c : conformance_cases()) {
      BOOST_TEST_CONTEXT(c->name << " (" << c->file << ":" << c->line << ") on " << device) {
        try {
          conformance::Args args = c->inputs(kiln::kDouble);
          for (Tensor& t : args.tensors) t = t.to(device);
          ConformanceFn fn{c, args};
          Inputs in = fn.variables();
          BOOST_TEST_REQUIRE(!in.empty(), "a gradient case without a floating input");
          BOOST_TEST(kiln::autograd::gradcheck(fn, in));
          BOOST_TEST(kiln::autograd::gradgradcheck(fn, in));
          ++checked;
        } catch (const kiln::Error& e) {
          BOOST_ERROR(c->name << " on " << device << ": " << e.what());
        }
      }
    }
  }
  BOOST_TEST(checked > 0);
}

// An operator of the registry with a backward (an Autograd kernel; every in-place operator has
// one, and runs its functional operator's formula) has a case above or a conformance case marked
// `gradient`.
BOOST_AUTO_TEST_CASE(every_operator_with_a_backward_has_a_case) {
  // Operators whose Autograd kernel only refuses, each with the reason.
  const std::set<std::string> refused = {
      "as_strided",  // its gradient is not implemented: the kernel raises for a grad input
  };
  std::set<std::string> checked = refused;
  for (const Case& c : cases()) {
    for (const std::string& name : operators_of(c)) checked.insert(name);
  }
  for (const conformance::Case* c : conformance_cases()) checked.insert(c->op);
  int differentiable = 0;
  for (const kiln::OperatorBase* op : kiln::all_operators()) {
    if (op->is_inplace() || !op->has_layer(kiln::DispatchKey::Autograd)) continue;
    ++differentiable;
    BOOST_CHECK_MESSAGE(checked.count(op->name()), op->name()
                                                       << " has a backward and no gradcheck case");
  }
  BOOST_TEST(differentiable > 0);
}

BOOST_AUTO_TEST_CASE(gradcheck_catches_a_wrong_formula) {
  struct Wrong : kiln::autograd::Function<Wrong> {
    static Tensor forward(kiln::autograd::AutogradContext*, Tensor x) { return x * x; }
    static kiln::autograd::variable_list backward(kiln::autograd::AutogradContext*,
                                                  kiln::autograd::variable_list g) {
      return {g[0]};  // should be 2x * g
    }
  };
  Tensor x = kiln::rand({3}, kiln::kDouble).requires_grad_();
  kiln::autograd::Fn fn = [](const Inputs& in) { return Inputs{Wrong::apply(in[0])}; };
  BOOST_CHECK_THROW(kiln::autograd::gradcheck(fn, {x}), kiln::Error);
  kiln::autograd::GradcheckOptions quiet;
  quiet.raise_exception = false;
  BOOST_TEST(!kiln::autograd::gradcheck(fn, {x}, quiet));
}
