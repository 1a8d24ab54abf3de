// kiln::nn::init — in-place initialisations of parameters, as torch::nn::init. Each fills
// `tensor` outside the autograd graph (no_grad) and returns it.
#pragma once

#include <kiln/export.h>
#include <kiln/scalar.h>
#include <kiln/tensor.h>

#include <utility>

namespace kiln::nn::init {

enum class Nonlinearity { Linear, Conv1D, Conv2D, Conv3D, Sigmoid, Tanh, ReLU, LeakyReLU };
enum class FanMode { FanIn, FanOut };

// The recommended gain for a nonlinearity (param: LeakyReLU's negative slope).
KILN_API double calculate_gain(Nonlinearity nonlinearity, double param = 0.01);
// (fan_in, fan_out) of a weight: [out, in, k...] gives in * prod(k), out * prod(k).
KILN_API std::pair<int64_t, int64_t> calculate_fan_in_and_fan_out(const Tensor& tensor);

// Uniform on [low, high).
KILN_API Tensor uniform_(Tensor tensor, double low = 0, double high = 1);
// Normal with mean and std.
KILN_API Tensor normal_(Tensor tensor, double mean = 0, double std = 1);
// Every element `value`.
KILN_API Tensor constant_(Tensor tensor, Scalar value);
KILN_API Tensor ones_(Tensor tensor);
KILN_API Tensor zeros_(Tensor tensor);
// Uniform on +-gain * sqrt(3 / fan) with gain = calculate_gain(nonlinearity, a) (He et al.).
KILN_API Tensor kaiming_uniform_(Tensor tensor, double a = 0, FanMode mode = FanMode::FanIn,
                                 Nonlinearity nonlinearity = Nonlinearity::LeakyReLU);
// Normal with std gain / sqrt(fan).
KILN_API Tensor kaiming_normal_(Tensor tensor, double a = 0, FanMode mode = FanMode::FanIn,
                                Nonlinearity nonlinearity = Nonlinearity::LeakyReLU);
// Uniform on +-gain * sqrt(6 / (fan_in + fan_out)) (Glorot and Bengio).
KILN_API Tensor xavier_uniform_(Tensor tensor, double gain = 1.0);
// Normal with std gain * sqrt(2 / (fan_in + fan_out)).
KILN_API Tensor xavier_normal_(Tensor tensor, double gain = 1.0);

}  // namespace kiln::nn::init
