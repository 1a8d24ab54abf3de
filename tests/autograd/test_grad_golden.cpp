// Forward results and input gradients of the differentiable operators against PyTorch's, in
// float32, on the inputs of tests/golden/grad_cases.txt (written by make_grad_golden.py, which
// holds the same functions under the same names), many of them broadcasting.
#include <kiln/kiln.h>
#include <kiln/nn.h>

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

using kiln::Tensor;
using Inputs = std::vector<Tensor>;
namespace F = kiln::nn::functional;

namespace {

Tensor long_tensor(const std::vector<int64_t>& shape, const std::vector<int64_t>& values) {
  Tensor t = kiln::empty(shape, kiln::kLong);
  std::copy(values.begin(), values.end(), t.data_ptr<int64_t>());
  return t;
}

// make_grad_golden.py's index_rows, gather_index and class_targets.
Tensor index_rows(int64_t n, int64_t count) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < count; ++i) v.push_back((2 * i) % n);
  return long_tensor({count}, v);
}

Tensor gather_index(const Tensor& x) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < x.size(0); ++i) {
    for (int64_t j = 0; j < 3; ++j) v.push_back((i + 2 * j) % x.size(1));
  }
  return long_tensor({x.size(0), 3}, v);
}

Tensor class_targets(const Tensor& x) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < x.size(0); ++i) v.push_back((3 * i + 1) % x.size(1));
  return long_tensor({x.size(0)}, v);
}

// make_grad_golden.py's batch_indices: [B, K] indices into dim 1, (3b + 2k) mod N.
Tensor batch_indices(const Tensor& x) {
  std::vector<int64_t> v;
  for (int64_t b = 0; b < x.size(0); ++b) {
    for (int64_t k = 0; k < 3; ++k) v.push_back((3 * b + 2 * k) % x.size(1));
  }
  return long_tensor({x.size(0), 3}, v);
}

// The vectorized batch gather of "Effective PyTorch", ported line by line.
Tensor batch_gather_vec(const Tensor& tensor, const Tensor& indices) {
  std::vector<int64_t> shape = tensor.sizes().vec();
  std::vector<int64_t> flat_shape = {shape[0] * shape[1]};
  flat_shape.insert(flat_shape.end(), shape.begin() + 2, shape.end());
  Tensor flat_first = kiln::reshape(tensor, flat_shape);
  std::vector<int64_t> offset_shape(static_cast<size_t>(indices.dim()), 1);
  offset_shape[0] = shape[0];
  Tensor offset = kiln::reshape(kiln::arange(shape[0]) * shape[1], offset_shape);
  Tensor output = flat_first[indices + offset];
  return output;
}

using Op = std::function<Tensor(const Inputs&)>;

const std::map<std::string, Op>& ops() {
  using kiln::indexing::None;
  using kiln::indexing::Slice;
  static const std::map<std::string, Op> table = {
      // unary
      {"neg", [](const Inputs& x) { return -x[0]; }},
      {"abs", [](const Inputs& x) { return kiln::abs(x[0]); }},
      {"exp", [](const Inputs& x) { return kiln::exp(x[0]); }},
      {"log", [](const Inputs& x) { return kiln::log(x[0]); }},
      {"log1p", [](const Inputs& x) { return kiln::log1p(x[0]); }},
      {"expm1", [](const Inputs& x) { return kiln::expm1(x[0]); }},
      {"sqrt", [](const Inputs& x) { return kiln::sqrt(x[0]); }},
      {"rsqrt", [](const Inputs& x) { return kiln::rsqrt(x[0]); }},
      {"sin", [](const Inputs& x) { return kiln::sin(x[0]); }},
      {"cos", [](const Inputs& x) { return kiln::cos(x[0]); }},
      {"tanh", [](const Inputs& x) { return kiln::tanh(x[0]); }},
      {"sigmoid", [](const Inputs& x) { return kiln::sigmoid(x[0]); }},
      {"relu", [](const Inputs& x) { return kiln::relu(x[0]); }},
      {"square", [](const Inputs& x) { return kiln::square(x[0]); }},
      {"pow_3", [](const Inputs& x) { return kiln::pow(x[0], 3); }},
      {"pow_2_5", [](const Inputs& x) { return kiln::pow(x[0], 2.5); }},
      {"scalar_pow", [](const Inputs& x) { return kiln::pow(2.0, x[0]); }},
      {"clamp", [](const Inputs& x) { return kiln::clamp(x[0], -0.5, 0.5); }},
      {"clamp_min", [](const Inputs& x) { return kiln::clamp_min(x[0], 0.1); }},
      {"clamp_max", [](const Inputs& x) { return kiln::clamp_max(x[0], 0.2); }},
      {"add_scalar", [](const Inputs& x) { return x[0] + 1.5; }},
      {"mul_scalar", [](const Inputs& x) { return x[0] * 2.5; }},
      {"div_scalar", [](const Inputs& x) { return x[0] / 3.0; }},
      {"rsub_scalar", [](const Inputs& x) { return 2.0 - x[0]; }},
      {"remainder_scalar", [](const Inputs& x) { return kiln::remainder(x[0] * 3, 1.7); }},
      {"fmod_scalar", [](const Inputs& x) { return kiln::fmod(x[0] * 3, 1.7); }},
      {"masked_fill", [](const Inputs& x) { return kiln::masked_fill(x[0], x[0] > 0.5, 1.0); }},
      {"where_scalar", [](const Inputs& x) { return kiln::where(x[0] > 0, x[0], 0.25); }},
      {"clone", [](const Inputs& x) { return x[0].clone(); }},
      {"to_double", [](const Inputs& x) { return x[0].to(kiln::kDouble) * 3; }},
      // binary, broadcasting
      {"add_alpha", [](const Inputs& x) { return kiln::add(x[0], x[1], 2.5); }},
      {"sub_alpha", [](const Inputs& x) { return kiln::sub(x[0], x[1], 0.5); }},
      {"mul", [](const Inputs& x) { return x[0] * x[1]; }},
      {"div", [](const Inputs& x) { return x[0] / x[1]; }},
      {"pow", [](const Inputs& x) { return kiln::pow(x[0], x[1]); }},
      {"maximum", [](const Inputs& x) { return kiln::maximum(x[0], x[1]); }},
      {"minimum", [](const Inputs& x) { return kiln::minimum(x[0], x[1]); }},
      {"where", [](const Inputs& x) { return kiln::where(x[0] > 0, x[0], x[1] * 2); }},
      {"mul_add_chain", [](const Inputs& x) { return kiln::tanh(x[0] * x[1] + x[1]) * x[0]; }},
      // reductions
      {"sum_all", [](const Inputs& x) { return kiln::sum(x[0]); }},
      {"sum_02", [](const Inputs& x) { return kiln::sum(x[0], {0, 2}); }},
      {"sum_1_keepdim", [](const Inputs& x) { return kiln::sum(x[0], {1}, true); }},
      {"mean_all", [](const Inputs& x) { return kiln::mean(x[0]); }},
      {"mean_1", [](const Inputs& x) { return kiln::mean(x[0], {1}); }},
      {"prod_all", [](const Inputs& x) { return kiln::prod(x[0]); }},
      {"prod_1", [](const Inputs& x) { return kiln::prod(x[0], 1); }},
      {"amax_1", [](const Inputs& x) { return kiln::amax(x[0], {1}); }},
      {"amin_02_keepdim", [](const Inputs& x) { return kiln::amin(x[0], {0, 2}, true); }},
      {"max_all", [](const Inputs& x) { return kiln::max(x[0]); }},
      {"min_all", [](const Inputs& x) { return kiln::min(x[0]); }},
      {"max_dim1", [](const Inputs& x) { return std::get<0>(kiln::max(x[0], 1)); }},
      {"min_dim0_keepdim", [](const Inputs& x) { return std::get<0>(kiln::min(x[0], 0, true)); }},
      {"logsumexp_2", [](const Inputs& x) { return kiln::logsumexp(x[0], {2}); }},
      {"var_1", [](const Inputs& x) { return kiln::var(x[0], {1}); }},
      {"var_all", [](const Inputs& x) { return kiln::var(x[0]); }},
      {"std_1", [](const Inputs& x) { return kiln::std(x[0], {1}); }},
      {"norm_all", [](const Inputs& x) { return kiln::norm(x[0]); }},
      {"norm_dim1", [](const Inputs& x) { return kiln::norm(x[0], 2, {1}); }},
      {"softmax_last", [](const Inputs& x) { return F::softmax(x[0], -1); }},
      {"log_softmax_1", [](const Inputs& x) { return F::log_softmax(x[0], 1); }},
      // linear algebra
      {"mm", [](const Inputs& x) { return kiln::mm(x[0], x[1]); }},
      {"bmm", [](const Inputs& x) { return kiln::bmm(x[0], x[1]); }},
      {"matmul", [](const Inputs& x) { return kiln::matmul(x[0], x[1]); }},
      {"addmm", [](const Inputs& x) { return kiln::addmm(x[0], x[1], x[2], 0.5, 2.0); }},
      {"dot", [](const Inputs& x) { return kiln::dot(x[0], x[1]); }},
      {"linear", [](const Inputs& x) { return F::linear(x[0], x[1], x[2]); }},
      {"linear_nobias", [](const Inputs& x) { return F::linear(x[0], x[1]); }},
      // views and copies
      {"flatten_reshape", [](const Inputs& x) { return x[0].reshape({-1}).reshape({2, -1}); }},
      {"transpose_01", [](const Inputs& x) { return x[0].transpose(0, 1); }},
      {"permute_201", [](const Inputs& x) { return x[0].permute({2, 0, 1}); }},
      {"t_contiguous", [](const Inputs& x) { return x[0].t().contiguous() * 2; }},
      {"expand", [](const Inputs& x) { return x[0].expand({2, 3, 4}); }},
      {"select_narrow", [](const Inputs& x) { return x[0].select(0, 1).narrow(0, 1, 3); }},
      {"slice_step", [](const Inputs& x) { return x[0].slice(1, 0, std::nullopt, 2); }},
      {"index_slice_int", [](const Inputs& x) { return x[0].index({Slice(1, None), 2}); }},
      {"squeeze_unsqueeze", [](const Inputs& x) { return x[0].squeeze().unsqueeze(0) * 2; }},
      {"cat_0", [](const Inputs& x) { return kiln::cat({x[0], x[1]}, 0); }},
      {"cat_1", [](const Inputs& x) { return kiln::cat({x[0], x[1], x[0]}, 1); }},
      {"stack_1", [](const Inputs& x) { return kiln::stack({x[0], x[1]}, 1); }},
      {"repeat", [](const Inputs& x) { return x[0].repeat({2, 1, 2}); }},
      {"tril", [](const Inputs& x) { return kiln::tril(x[0]); }},
      {"triu_1", [](const Inputs& x) { return kiln::triu(x[0], 1); }},
      {"index_select",
       [](const Inputs& x) { return x[0].index_select(0, index_rows(x[0].size(0), 4)); }},
      {"gather_1", [](const Inputs& x) { return x[0].gather(1, gather_index(x[0])); }},
      // nn
      {"conv2d", [](const Inputs& x) { return F::conv2d(x[0], x[1], x[2], 1, 1); }},
      {"conv2d_stride2", [](const Inputs& x) { return F::conv2d(x[0], x[1], x[2], 2); }},
      {"conv2d_groups", [](const Inputs& x) { return F::conv2d(x[0], x[1], x[2], 1, 1, 1, 2); }},
      {"conv2d_dilation", [](const Inputs& x) { return F::conv2d(x[0], x[1], {}, 1, 0, 2); }},
      {"layer_norm", [](const Inputs& x) { return F::layer_norm(x[0], {4}, x[1], x[2]); }},
      {"batch_norm_train",
       [](const Inputs& x) {
         return F::batch_norm(x[0], kiln::zeros({3}), kiln::ones({3}), x[1], x[2], true);
       }},
      {"embedding",
       [](const Inputs& x) { return F::embedding(long_tensor({2, 3}, {1, 3, 3, 0, 9, 2}), x[0]); }},
      {"mse_loss", [](const Inputs& x) { return F::mse_loss(x[0], x[1]); }},
      {"mse_loss_sum",
       [](const Inputs& x) { return F::mse_loss(x[0], x[1], kiln::nn::Reduction::Sum); }},
      {"cross_entropy", [](const Inputs& x) { return F::cross_entropy(x[0], class_targets(x[0])); }},
      {"cross_entropy_probs",
       [](const Inputs& x) { return F::cross_entropy(x[0], F::softmax(x[1], 1)); }},
      {"nll_loss",
       [](const Inputs& x) { return F::nll_loss(F::log_softmax(x[0], 1), class_targets(x[0])); }},
      {"binary_cross_entropy",
       [](const Inputs& x) {
         return F::binary_cross_entropy(kiln::sigmoid(x[0]), kiln::sigmoid(x[1]).detach());
       }},
      {"bce_with_logits",
       [](const Inputs& x) {
         return F::binary_cross_entropy_with_logits(x[0], kiln::sigmoid(x[1]));
       }},
      // in-place operations on views of tensors that require grad (CopySlices)
      {"inplace_row_mul",
       [](const Inputs& x) {
         Tensor b = x[0] * 1;
         b[1].mul_(x[1]);
         return b;
       }},
      {"inplace_narrow_copy",
       [](const Inputs& x) {
         Tensor b = x[0] * 2;
         b.narrow(1, 0, 2).copy_(x[1]);
         return b * x[0];
       }},
      {"inplace_view_chain",
       [](const Inputs& x) {
         Tensor b = kiln::tanh(x[0]) * 3;
         Tensor v = b[0];
         v.narrow(0, 1, 2).add_(x[1], 2);
         v.sigmoid_();
         return b;
       }},
      {"inplace_transposed_view",
       [](const Inputs& x) {
         Tensor b = x[0] * 1;
         b.t()[1].mul_(x[1]);
         return b;
       }},
      {"inplace_strided_view_used",
       [](const Inputs& x) {
         Tensor b = x[0] * 1;
         Tensor v = b.slice(1, 1, std::nullopt, 2);
         v.mul_(x[1]);
         return kiln::sum(v, {0}) * 2 + kiln::sum(b);
       }},
      {"inplace_stale_views",
       [](const Inputs& x) {
         Tensor b = x[0] * 1;
         Tensor v1 = b[0];
         Tensor v2 = b.select(1, 0);
         v1.mul_(x[1]);
         b.add_(1);
         return v2 * v2;
       }},
      {"softplus", [](const Inputs& x) { return F::softplus(x[0]); }},
      {"softplus_beta4_threshold2", [](const Inputs& x) { return F::softplus(x[0], 4, 2); }},
      // in-place fills rebase the history (Note [Every in-place operator has an Autograd kernel])
      {"inplace_fill",
       [](const Inputs& x) {
         Tensor y = x[0] * 1;
         y.fill_(2.5);
         return y * x[0];
       }},
      {"inplace_zero",
       [](const Inputs& x) {
         Tensor y = x[0] * 3;
         y.zero_();
         return y + x[0] * x[0];
       }},
      {"inplace_fill_row",
       [](const Inputs& x) {
         Tensor b = x[0] * 2;
         b[1].fill_(0.5);
         return b * x[1];
       }},
      {"inplace_index_put_scalar",
       [](const Inputs& x) {
         Tensor b = x[0] * 2;
         b.index_put_({0, kiln::indexing::Slice(1, 3)}, 1.5);
         return b * x[0];
       }},
      {"inplace_masked_fill",
       [](const Inputs& x) {
         Tensor b = x[0] * 2;
         b.masked_fill_(x[0].detach() > 0, 0.25);
         return b * x[1];
       }},
      {"inplace_fill_then_mul",
       [](const Inputs& x) {
         Tensor y = x[0] * 1;
         y.fill_(2);
         y.mul_(x[1]);
         return y * x[0];
       }},
      // advanced indexing
      {"index_tensor", [](const Inputs& x) { return x[0].index({index_rows(x[0].size(0), 5)}); }},
      {"index_slice_tensor",
       [](const Inputs& x) { return x[0].index({Slice(), index_rows(x[0].size(1), 5)}); }},
      {"index_separated",
       [](const Inputs& x) { return x[0].index({index_rows(2, 3), Slice(), index_rows(4, 3)}); }},
      {"index_adjacent_broadcast",
       [](const Inputs& x) {
         Tensor rows = index_rows(3, 2).view({2, 1});
         return x[0].index({Slice(), rows, index_rows(4, 3).view({1, 3})});
       }},
      {"index_none_ellipsis",
       [](const Inputs& x) {
         return x[0].index({None, kiln::indexing::Ellipsis, index_rows(x[0].size(-1), 5)});
       }},
      {"index_mask", [](const Inputs& x) { return x[0].index({x[0].detach() > 0}); }},
      {"index_mask_rows",
       [](const Inputs& x) { return x[0].index({x[0].detach().index({Slice(), 0}) > 0}); }},
      {"batch_gather_vec",
       [](const Inputs& x) { return batch_gather_vec(x[0], batch_indices(x[0])); }},
      {"index_put_accumulate",
       [](const Inputs& x) {
         Tensor b = x[0] * 1;
         b.index_put_({index_rows(x[0].size(0), x[1].size(0))}, x[1], /*accumulate=*/true);
         return b * x[0];
       }},
      {"index_put_rows",
       [](const Inputs& x) {
         Tensor b = x[0] * 2;
         b.index_put_({index_rows(x[0].size(0), x[1].size(0))}, x[1]);
         return b * x[0];
       }},
      {"index_put_mask_scalar",
       [](const Inputs& x) {
         Tensor b = x[0] * 2;
         b.index_put_({x[0].detach() > 0}, 0.5);
         return b * x[0];
       }},
      {"index_put_slice_tensor",
       [](const Inputs& x) {
         Tensor b = x[0] * 1;
         b.index_put_({Slice(), index_rows(x[0].size(1), 2)}, x[1]);
         return b * x[0];
       }},
      // in place when the formula allows (Note [In-place without a copy]), on a copy otherwise
      {"inplace_residual_relu",
       [](const Inputs& x) {
         Tensor y = x[0] * 2;
         y.add_(x[1]);
         y.relu_();
         return y * 3;
       }},
      {"inplace_sub_alpha_sigmoid",
       [](const Inputs& x) {
         Tensor y = x[0] * 1;
         y.sub_(x[1], 0.5);
         y.sigmoid_();
         return y * x[1];
       }},
      {"inplace_div_tanh",
       [](const Inputs& x) {
         Tensor y = x[0] * 1;
         y.div_(x[1] + 2);
         y.tanh_();
         return y * y;
       }},
  };
  return table;
}

struct Shaped {
  std::vector<int64_t> sizes;
  std::vector<double> values;
};

struct GradCase {
  std::string op;
  std::vector<Shaped> inputs;
  Shaped gout, out;
  std::vector<std::vector<double>> grads;  // empty: no gradient
  std::vector<bool> has_grad;
};

Shaped read_shaped(std::istringstream& in) {
  Shaped s;
  int ndim = -1;
  in >> ndim;
  BOOST_REQUIRE_GE(ndim, 0);
  s.sizes.resize(static_cast<size_t>(ndim));
  for (int64_t& d : s.sizes) in >> d;
  double v;
  while (in >> v) s.values.push_back(v);
  return s;
}

std::vector<GradCase> read_cases() {
  std::ifstream file(std::string(KILN_GOLDEN_DIR) + "/grad_cases.txt");
  BOOST_REQUIRE_MESSAGE(file, "cannot open " KILN_GOLDEN_DIR "/grad_cases.txt");
  std::vector<GradCase> cases;
  std::string line;
  while (std::getline(file, line)) {
    std::istringstream in(line);
    std::string tag;
    in >> tag;
    if (tag == "case") {
      cases.emplace_back();
      in >> cases.back().op;
    } else if (tag == "in") {
      cases.back().inputs.push_back(read_shaped(in));
    } else if (tag == "gout") {
      cases.back().gout = read_shaped(in);
    } else if (tag == "out") {
      cases.back().out = read_shaped(in);
    } else if (tag == "grad") {
      int i;
      std::string first;
      in >> i >> first;
      std::vector<double> g;
      bool has = first != "none";
      if (has) {
        g.push_back(std::stod(first));
        double v;
        while (in >> v) g.push_back(v);
      }
      cases.back().grads.push_back(g);
      cases.back().has_grad.push_back(has);
    }
  }
  return cases;
}

Tensor make(const Shaped& s, kiln::ScalarType dtype) {
  Tensor t = kiln::empty(s.sizes, kiln::kDouble);
  std::copy(s.values.begin(), s.values.end(), t.data_ptr<double>());
  return t.to(dtype);
}

std::vector<double> values_of(const Tensor& t) {
  Tensor h = t.detach().to(kiln::kDouble).contiguous();
  const double* p = h.data_ptr<double>();
  return std::vector<double>(p, p + h.numel());
}

// Float32 results of different summation orders: within rtol of each value, or of the
// largest value of the tensor for values near zero.
bool close(const std::vector<double>& got, const std::vector<double>& want, double rtol,
           std::string& where) {
  double scale = 1;
  for (double w : want) scale = std::max(scale, std::abs(w));
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::abs(got[i] - want[i]) > rtol * (std::abs(want[i]) + 0.1 * scale)) {
      where = "element " + std::to_string(i) + ": got " + std::to_string(got[i]) + ", PyTorch " +
              std::to_string(want[i]);
      return false;
    }
  }
  return true;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(grad_golden)

BOOST_AUTO_TEST_CASE(forward_and_backward_match_pytorch) {
  const std::vector<GradCase> cases = read_cases();
  BOOST_REQUIRE_GE(cases.size(), 250u);
  std::set<std::string> seen;
  const double rtol = 2e-5;
  for (size_t n = 0; n < cases.size(); ++n) {
    const GradCase& c = cases[n];
    BOOST_TEST_CONTEXT("case " << n << " (" << c.op << ")") {
      auto op = ops().find(c.op);
      BOOST_REQUIRE_MESSAGE(op != ops().end(), "no kiln function for " << c.op);
      seen.insert(c.op);
      Inputs inputs;
      for (const Shaped& s : c.inputs) inputs.push_back(make(s, kiln::kFloat).requires_grad_());
      Tensor out = op->second(inputs);
      BOOST_CHECK(out.sizes().vec() == c.out.sizes);
      std::string where;
      BOOST_CHECK_MESSAGE(close(values_of(out), c.out.values, rtol, where), "output " << where);
      std::vector<Tensor> grads = kiln::autograd::grad({out}, inputs, {make(c.gout, out.dtype())},
                                                       std::nullopt, false, true);
      BOOST_REQUIRE_EQUAL(grads.size(), c.grads.size());
      for (size_t i = 0; i < grads.size(); ++i) {
        BOOST_TEST_CONTEXT("gradient of input " << i) {
          BOOST_REQUIRE_EQUAL(grads[i].defined(), c.has_grad[i]);
          if (!c.has_grad[i]) continue;
          BOOST_CHECK(grads[i].sizes().vec() == c.inputs[i].sizes);
          BOOST_CHECK(grads[i].dtype() == kiln::kFloat);
          BOOST_CHECK_MESSAGE(close(values_of(grads[i]), c.grads[i], rtol, where), where);
        }
      }
    }
  }
  BOOST_CHECK_EQUAL(seen.size(), ops().size());  // every kiln function has cases
  BOOST_TEST_MESSAGE(cases.size() << " cases of " << seen.size() << " operators");
}

BOOST_AUTO_TEST_SUITE_END()
