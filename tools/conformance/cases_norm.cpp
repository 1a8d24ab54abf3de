// Batch normalization in training mode through nn::functional::batch_norm and batch_norm_relu:
// the optional primitives batch_norm_train and batch_norm_backward on devices that have them,
// core's composite on the others; both against the definition in float64 on the host:
//   mean = sum(x) / M, var = sum((x - mean)^2) / M over the M values of a channel,
//   out = relu?((x - mean) / sqrt(var + eps) * w + b),
//   running_mean = 0.9 * 0 + 0.1 * mean, running_var = 0.9 * 1 + 0.1 * var * M / (M - 1),
// and the gradients of out (with g' = g, or g where out > 0 after the relu):
//   grad_b = sum(g'), grad_w = sum(g' * xhat), grad_x = w / sqrt(var + eps) *
//   (g' - grad_b / M - xhat * grad_w / M).
// Also the normalization composites (group, instance, local response, normalize).
#include "conformance.h"

#include <kiln/nn.h>

#include <cmath>

namespace conformance {
namespace {

using namespace kiln;
namespace F = kiln::nn::functional;

constexpr double kEps = 1e-5;

std::vector<double> host(const Tensor& t) {
  Tensor h = host_double(t);
  const double* p = h.data_ptr<double>();
  return std::vector<double>(p, p + h.numel());
}

// The statistics and the normalized values of x [N, C, ...] per channel.
struct Normalized {
  std::vector<double> mean, var, xhat;
  int64_t channels = 0, run = 0, count = 0;
};

Normalized normalize(const Tensor& x) {
  Normalized r;
  std::vector<double> v = host(x);
  r.channels = x.size(1);
  r.run = x.numel() / (x.size(0) * r.channels);
  r.count = x.size(0) * r.run;
  r.mean.assign(static_cast<size_t>(r.channels), 0);
  r.var.assign(static_cast<size_t>(r.channels), 0);
  r.xhat.assign(v.size(), 0);
  auto channel = [&](size_t i) { return (i / static_cast<size_t>(r.run)) % r.channels; };
  for (size_t i = 0; i < v.size(); ++i) r.mean[channel(i)] += v[i] / r.count;
  for (size_t i = 0; i < v.size(); ++i) {
    double d = v[i] - r.mean[channel(i)];
    r.var[channel(i)] += d * d / r.count;
  }
  for (size_t i = 0; i < v.size(); ++i) {
    r.xhat[i] = (v[i] - r.mean[channel(i)]) / std::sqrt(r.var[channel(i)] + kEps);
  }
  return r;
}

size_t channel_of(const Normalized& n, size_t i) {
  return (i / static_cast<size_t>(n.run)) % static_cast<size_t>(n.channels);
}

// x [N, C, ...], weight [C], bias [C]; the shapes cover a long run per channel (the chunked
// loops), N > 1 and a channel count that is not a multiple of anything.
Args norm_inputs(std::vector<int64_t> sizes, ScalarType d, uint64_t seed) {
  const int64_t c = sizes[1];
  return Args{sample(sizes, d, -3, 5, seed), sample({c}, d, 0.5, 2, seed + 1),
              sample({c}, d, -1, 1, seed + 2)};
}

// F::batch_norm's positional form (it also has an options form).
using BatchNormFn = Tensor (*)(const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                               const Tensor&, bool, double, double);

Outputs forward(const Args& a, bool relu) {
  TensorOptions f32 = TensorOptions().device(a.t(0).device());
  Tensor running_mean = zeros({a.t(0).size(1)}, f32), running_var = ones({a.t(0).size(1)}, f32);
  BatchNormFn call = relu ? F::batch_norm_relu : BatchNormFn(F::batch_norm);
  Tensor out =
      call(a.t(0), running_mean, running_var, a.t(1), a.t(2), /*training=*/true, 0.1, kEps);
  return Outputs{out, running_mean, running_var};
}

Outputs forward_reference(const Args& a, bool relu) {
  Normalized n = normalize(a.t(0));
  std::vector<double> w = host(a.t(1)), b = host(a.t(2));
  std::vector<double> out(n.xhat.size()), rm(n.mean.size()), rv(n.var.size());
  for (size_t i = 0; i < out.size(); ++i) {
    size_t c = channel_of(n, i);
    out[i] = n.xhat[i] * w[c] + b[c];
    if (relu) out[i] = std::max(out[i], 0.0);
  }
  for (size_t c = 0; c < rm.size(); ++c) {
    rm[c] = 0.1 * n.mean[c];
    rv[c] = 0.9 + 0.1 * n.var[c] * n.count / (n.count - 1);
  }
  std::vector<int64_t> sizes(a.t(0).sizes().begin(), a.t(0).sizes().end());
  return Outputs{values(sizes, out, kDouble), values({n.channels}, rm, kDouble),
                 values({n.channels}, rv, kDouble)};
}

// grad_out with zeros where the normalized output is within 0.05 of the relu's kink, where a
// 16-bit composite may round to the other side of zero than the float64 reference.
Tensor away_from_the_kink(const Args& a) {
  Normalized n = normalize(a.t(0));
  std::vector<double> w = host(a.t(1)), b = host(a.t(2)), g = host(a.t(3));
  for (size_t i = 0; i < g.size(); ++i) {
    size_t c = channel_of(n, i);
    if (std::abs(n.xhat[i] * w[c] + b[c]) < 0.05) g[i] = 0;
  }
  std::vector<int64_t> sizes(a.t(3).sizes().begin(), a.t(3).sizes().end());
  return values(sizes, g, a.t(3).dtype());
}

Outputs backward(const Args& a, bool relu) {
  Tensor x = a.t(0).detach().requires_grad_();
  Tensor w = a.t(1).detach().requires_grad_();
  Tensor b = a.t(2).detach().requires_grad_();
  BatchNormFn call = relu ? F::batch_norm_relu : BatchNormFn(F::batch_norm);
  Tensor out = call(x, Tensor(), Tensor(), w, b, /*training=*/true, 0.1, kEps);
  std::vector<Tensor> grads = autograd::grad({out}, {x, w, b}, {a.t(3)});
  return Outputs{grads[0], grads[1], grads[2]};
}

Outputs backward_reference(const Args& a, bool relu) {
  Normalized n = normalize(a.t(0));
  std::vector<double> w = host(a.t(1)), b = host(a.t(2)), g = host(a.t(3));
  std::vector<double> gb(n.mean.size(), 0), gw(n.mean.size(), 0), gx(g.size());
  for (size_t i = 0; i < g.size(); ++i) {
    size_t c = channel_of(n, i);
    if (relu && !(n.xhat[i] * w[c] + b[c] > 0)) g[i] = 0;
    gb[c] += g[i];
    gw[c] += g[i] * n.xhat[i];
  }
  for (size_t i = 0; i < g.size(); ++i) {
    size_t c = channel_of(n, i);
    gx[i] = w[c] / std::sqrt(n.var[c] + kEps) *
            (g[i] - gb[c] / n.count - n.xhat[i] * gw[c] / n.count);
  }
  std::vector<int64_t> sizes(a.t(0).sizes().begin(), a.t(0).sizes().end());
  return Outputs{values(sizes, gx, kDouble), values({n.channels}, gw, kDouble),
                 values({n.channels}, gb, kDouble)};
}

// The composites of nn/functional_norm.cpp (test_nn checks each against PyTorch's goldens).
void register_composites() {
  add_composite_case("group_norm", {{2, 6, 3, 4}, {6}, {6}}, [](const Args& a) {
    return Outputs{F::group_norm(a.t(0), F::GroupNormFuncOptions(3).weight(a.t(1)).bias(a.t(2)))};
  });
  add_composite_case("instance_norm", {{2, 3, 4, 5}, {3}, {3}}, [](const Args& a) {
    return Outputs{
        F::instance_norm(a.t(0), F::InstanceNormFuncOptions().weight(a.t(1)).bias(a.t(2)))};
  });
  add_composite_case("local_response_norm", {{2, 6, 3, 4}}, [](const Args& a) {
    return Outputs{
        F::local_response_norm(a.t(0),
                               F::LocalResponseNormFuncOptions(4).alpha(0.5).beta(0.6).k(2.0))};
  });
  add_composite_case("normalize", {{3, 4, 5}}, [](const Args& a) {
    return Outputs{F::normalize(a.t(0), F::NormalizeFuncOptions().p(3).dim(-1))};
  });
}

// Evaluation mode under NoGradGuard (the optional primitive channel_affine where a device has
// it): inputs x, weight, bias and running statistics (float32, float64 for a float64 x); out =
// relu?((x - mean) / sqrt(var + eps) * w + b).
Args eval_inputs(std::vector<int64_t> sizes, ScalarType d, uint64_t seed) {
  Args a = norm_inputs(sizes, d, seed);
  const ScalarType stats = d == kDouble ? kDouble : kFloat;
  a.tensors.push_back(sample({sizes[1]}, stats, -1, 1, seed + 3));
  a.tensors.push_back(sample({sizes[1]}, stats, 0.2, 3, seed + 4));
  return a;
}

Outputs eval_forward(const Args& a, bool relu) {
  NoGradGuard no_grad;
  BatchNormFn call = relu ? F::batch_norm_relu : BatchNormFn(F::batch_norm);
  return Outputs{call(a.t(0), a.t(3).to(a.t(0).device()), a.t(4).to(a.t(0).device()), a.t(1),
                      a.t(2), /*training=*/false, 0.1, kEps)};
}

Outputs eval_reference(const Args& a, bool relu) {
  std::vector<double> x = host(a.t(0)), w = host(a.t(1)), b = host(a.t(2)), mean = host(a.t(3)),
                      var = host(a.t(4));
  const int64_t channels = a.t(0).size(1);
  const int64_t run = a.t(0).numel() / (a.t(0).size(0) * channels);
  for (size_t i = 0; i < x.size(); ++i) {
    const size_t c = (i / static_cast<size_t>(run)) % static_cast<size_t>(channels);
    x[i] = (x[i] - mean[c]) / std::sqrt(var[c] + kEps) * w[c] + b[c];
    if (relu && x[i] < 0) x[i] = 0;
  }
  Tensor out = from_blob(x.data(), a.t(0).sizes(), kDouble).clone();
  return Outputs{out};
}

}  // namespace

void register_norm_cases() {
  register_composites();
  for (bool relu : {false, true}) {
    add_case({.name = relu ? "batch_norm_relu_eval" : "batch_norm_eval",
              .op = "channel_affine",
              .dtypes = kFloating,
              .inputs =
                  [](ScalarType d) {
                    return eval_inputs({3, 5, 4, 3}, d, 61);
                  },
              .run = [relu](const Args& a) { return eval_forward(a, relu); },
              .reference = [relu](const Args& a, ScalarType) { return eval_reference(a, relu); },
              .tolerance_scale = 4});
  }
  struct Shape {
    const char* suffix;
    std::vector<int64_t> sizes;
  };
  const Shape shapes[] = {{"", {3, 5, 4, 3}}, {"_long_run", {1, 3, 700}}, {"_2d", {6, 4}}};
  for (const Shape& s : shapes) {
    for (bool relu : {false, true}) {
      std::string name = std::string(relu ? "batch_norm_relu" : "batch_norm") + s.suffix;
      std::vector<int64_t> sizes = s.sizes;
      add_case({.name = name + "_train",
                .op = "batch_norm_train",
                .gradient = true,
                .dtypes = kFloating,
                .inputs = [sizes](ScalarType d) { return norm_inputs(sizes, d, 91); },
                .run = [relu](const Args& a) { return forward(a, relu); },
                .reference = [relu](const Args& a,
                                    ScalarType) { return forward_reference(a, relu); },
                .out_dtype = [](ScalarType d, size_t i) { return i == 0 ? d : kFloat; },
                .tolerance_scale = 4});
      add_case({.name = name + "_backward",
                .op = "batch_norm_backward",
                .dtypes = kFloating,
                .inputs =
                    [sizes, relu](ScalarType d) {
                      Args a = norm_inputs(sizes, d, 95);
                      a.tensors.push_back(sample(sizes, d, -1, 1, 98));
                      if (relu) a.tensors[3] = away_from_the_kink(a);
                      return a;
                    },
                .run = [relu](const Args& a) { return backward(a, relu); },
                .reference = [relu](const Args& a,
                                    ScalarType) { return backward_reference(a, relu); },
                .tolerance_scale = 8});
    }
  }
}

}  // namespace conformance
