// Finite-difference gradient checks (first and second derivatives) of every differentiable
// operator, in float64, on every loaded device; and the check that every operator of the registry
// with a backward has a case here.
#define BOOST_TEST_MODULE gradcheck
#include <kiln/custom_function.h>
#include <kiln/gradcheck.h>
#include <kiln/kiln.h>
#include <kiln/nn.h>

#include <boost/test/unit_test.hpp>

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

// An int64 index tensor with these values, on like's device.
Tensor index(const Tensor& like, std::vector<int64_t> sizes, const std::vector<int64_t>& v) {
  return kiln::tensor(v, kiln::kLong).reshape(sizes).to(like.device());
}

std::vector<Case> cases() {
  using V = std::vector<std::vector<int64_t>>;
  return {
      {"neg", V{{2, 3}}, [](const Inputs& x) { return -x[0]; }},
      {"abs", V{{2, 3}}, [](const Inputs& x) { return kiln::abs(x[0] + 2); }},
      {"sign", V{{2, 3}}, [](const Inputs& x) { return kiln::sign(x[0] + 2) * x[0]; }},
      {"exp", V{{2, 3}}, [](const Inputs& x) { return kiln::exp(x[0]); }},
      {"log", V{{2, 3}}, [](const Inputs& x) { return kiln::log(x[0]); }, true},
      {"log1p", V{{2, 3}}, [](const Inputs& x) { return kiln::log1p(x[0]); }, true},
      {"expm1", V{{2, 3}}, [](const Inputs& x) { return kiln::expm1(x[0]); }},
      {"sqrt", V{{2, 3}}, [](const Inputs& x) { return kiln::sqrt(x[0]); }, true},
      {"rsqrt", V{{2, 3}}, [](const Inputs& x) { return kiln::rsqrt(x[0]); }, true},
      {"sin", V{{2, 3}}, [](const Inputs& x) { return kiln::sin(x[0]); }},
      {"cos", V{{2, 3}}, [](const Inputs& x) { return kiln::cos(x[0]); }},
      {"tanh", V{{2, 3}}, [](const Inputs& x) { return kiln::tanh(x[0]); }},
      {"sigmoid", V{{2, 3}}, [](const Inputs& x) { return kiln::sigmoid(x[0]); }},
      {"relu", V{{2, 3}}, [](const Inputs& x) { return kiln::relu(x[0] + 0.05); }, false, false},
      {"add", V{{2, 3}, {3}}, [](const Inputs& x) { return kiln::add(x[0], x[1], 2.5); }},
      {"sub", V{{2, 1}, {3}}, [](const Inputs& x) { return kiln::sub(x[0], x[1], 0.5); }},
      {"mul", V{{2, 3}, {2, 3}}, [](const Inputs& x) { return x[0] * x[1]; }},
      {"div", V{{2, 3}, {3}}, [](const Inputs& x) { return x[0] / x[1]; }, true},
      {"pow", V{{2, 3}, {2, 3}}, [](const Inputs& x) { return kiln::pow(x[0], x[1]); }, true},
      {"pow (scalar exponent)", V{{4}}, [](const Inputs& x) { return kiln::pow(x[0], 3); }},
      {"maximum", V{{2, 3}, {2, 3}}, [](const Inputs& x) { return kiln::maximum(x[0], x[1]); }},
      {"minimum", V{{2, 3}, {2, 3}}, [](const Inputs& x) { return kiln::minimum(x[0], x[1]); }},
      {"remainder", V{{5}}, [](const Inputs& x) { return kiln::remainder(x[0] * 3, 1.7); }},
      {"fmod", V{{5}}, [](const Inputs& x) { return kiln::fmod(x[0] * 3, 1.7); }},
      {"where", V{{2, 3}, {2, 3}},
       [](const Inputs& x) { return kiln::where(x[0] > 0, x[0], x[1] * 2); }},
      {"clamp", V{{2, 3}}, [](const Inputs& x) { return kiln::clamp(x[0], -0.5, 0.5); }},
      {"sum", V{{2, 3, 4}},
       [](const Inputs& x) {
         return kiln::sum(x[0], {0, 2});
       }},
      {"sum (keepdim)", V{{2, 3}}, [](const Inputs& x) { return kiln::sum(x[0], {1}, true); }},
      {"mean", V{{2, 3}}, [](const Inputs& x) { return kiln::mean(x[0], {0}); }},
      {"prod", V{{2, 3}}, [](const Inputs& x) { return kiln::prod(x[0], 1); }, true},
      {"amax", V{{2, 3}}, [](const Inputs& x) { return kiln::amax(x[0], {1}); }},
      {"amin", V{{2, 3}}, [](const Inputs& x) { return kiln::amin(x[0], {0}, true); }},
      {"max_dim", V{{3, 4}}, [](const Inputs& x) { return std::get<0>(kiln::max(x[0], 1)); }},
      {"min_dim", V{{3, 4}}, [](const Inputs& x) { return std::get<0>(kiln::min(x[0], 0, true)); }},
      {"logsumexp", V{{2, 3}}, [](const Inputs& x) { return kiln::logsumexp(x[0], {1}); }},
      {"softplus", V{{2, 3}},
       [](const Inputs& x) { return kiln::nn::functional::softplus(x[0] * 3, 1.5); }},
      {"var", V{{2, 3}}, [](const Inputs& x) { return kiln::var(x[0], {1}); }},
      {"std", V{{2, 3}}, [](const Inputs& x) { return kiln::std(x[0], {1}); }},
      {"norm", V{{2, 3}}, [](const Inputs& x) { return kiln::norm(x[0], 2, {1}); }},
      {"mm", V{{2, 3}, {3, 4}}, [](const Inputs& x) { return kiln::mm(x[0], x[1]); }},
      {"bmm", V{{2, 2, 3}, {2, 3, 2}}, [](const Inputs& x) { return kiln::bmm(x[0], x[1]); }},
      {"matmul (batched)", V{{2, 1, 2, 3}, {3, 3, 2}},
       [](const Inputs& x) { return kiln::matmul(x[0], x[1]); }},
      {"matmul (vector)", V{{3}, {3, 2}}, [](const Inputs& x) { return kiln::matmul(x[0], x[1]); }},
      {"addmm", V{{4}, {2, 3}, {3, 4}},
       [](const Inputs& x) { return kiln::addmm(x[0], x[1], x[2], 0.5, 2.0); }},
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
      {"repeat", V{{2, 3}},
       [](const Inputs& x) {
         return x[0].repeat({2, 1, 2});
       }},
      {"clone, to", V{{2, 3}},
       [](const Inputs& x) { return x[0].t().contiguous().clone().to(kiln::kDouble, true); }},
      {"masked_fill", V{{2, 3}},
       [](const Inputs& x) { return kiln::masked_fill(x[0], x[0] > 0.5, 1.0); }},
      {"tril, triu", V{{3, 3}},
       [](const Inputs& x) { return kiln::tril(x[0]) + kiln::triu(x[0], 1) * 2; }},
      {"gather", V{{3, 4}},
       [](const Inputs& x) {
         return kiln::gather(x[0], 1, index(x[0], {3, 2}, {0, 3, 1, 1, 2, 0}));
       }},
      {"index_select", V{{3, 4}},
       [](const Inputs& x) {
         return kiln::index_select(x[0], 0, index(x[0], {4}, {2, 0, 2, 1}));
       }},
      {"index_add", V{{3, 4}, {2, 4}},
       [](const Inputs& x) {
         return kiln::index_add(x[0], 0, index(x[0], {2}, {2, 2}), x[1]);
       }},
      {"scatter_add", V{{3, 4}, {2, 4}},
       [](const Inputs& x) {
         return kiln::scatter_add(x[0], 0, index(x[0], {2, 4}, {0, 2, 1, 0, 2, 2, 0, 1}), x[1]);
       }},
      // the second derivative runs the backward primitives' own Autograd kernels
      {"conv2d, conv2d_backward_input, conv2d_backward_weight", V{{1, 2, 4, 4}, {3, 2, 2, 2}, {3}},
       [](const Inputs& x) { return kiln::conv2d(x[0], x[1], x[2], 1, 1); }},
      {"index", V{{3, 4}},
       [](const Inputs& x) {
         return x[0].index({kiln::indexing::Slice(1, kiln::indexing::None), 2});
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

// An operator of the registry with a backward (an Autograd kernel; every in-place operator has
// one, and runs its functional operator's formula) has a case above.
BOOST_AUTO_TEST_CASE(every_operator_with_a_backward_has_a_case) {
  // Operators whose Autograd kernel only refuses, each with the reason.
  const std::set<std::string> refused = {
      "as_strided",  // its gradient is not implemented: the kernel raises for a grad input
  };
  std::set<std::string> checked = refused;
  for (const Case& c : cases()) {
    for (const std::string& name : operators_of(c)) checked.insert(name);
  }
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
