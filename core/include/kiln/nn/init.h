// kiln::nn::init — in-place initialisations of parameters, as torch::nn::init. Each fills
// `tensor` outside the autograd graph (no_grad) and returns it.
#pragma once

#include <kiln/export.h>
#include <kiln/nn/options/conv.h>
#include <kiln/scalar.h>
#include <kiln/tensor.h>

#include <utility>

// libtorch's tags for init's arguments: calculate_gain(kiln::kReLU), as torch::kReLU.
namespace kiln {
namespace enumtype {
struct kConv1D {};
struct kConv2D {};
struct kConv3D {};
struct kConvTranspose1D {};
struct kConvTranspose2D {};
struct kConvTranspose3D {};
struct kSigmoid {};
struct kLeakyReLU {};
struct kFanIn {};
struct kFanOut {};
}  // namespace enumtype
inline constexpr enumtype::kConv1D kConv1D{};
inline constexpr enumtype::kConv2D kConv2D{};
inline constexpr enumtype::kConv3D kConv3D{};
inline constexpr enumtype::kConvTranspose1D kConvTranspose1D{};
inline constexpr enumtype::kConvTranspose2D kConvTranspose2D{};
inline constexpr enumtype::kConvTranspose3D kConvTranspose3D{};
inline constexpr enumtype::kSigmoid kSigmoid{};
inline constexpr enumtype::kLeakyReLU kLeakyReLU{};
inline constexpr enumtype::kFanIn kFanIn{};
inline constexpr enumtype::kFanOut kFanOut{};
}  // namespace kiln

namespace kiln::nn::init {

enum class Nonlinearity { Linear, Conv1D, Conv2D, Conv3D, Sigmoid, Tanh, ReLU, LeakyReLU };
enum class FanMode { FanIn, FanOut };

// A nonlinearity given as kiln's enum (Nonlinearity::ReLU) or libtorch's tag (kiln::kReLU);
// the transposed convolutions' gain is the convolutions' (1).
class NonlinearityType {
 public:
  constexpr NonlinearityType(Nonlinearity value) : value_(value) {}  // NOLINT
  constexpr NonlinearityType(enumtype::kLinear) : value_(Nonlinearity::Linear) {}
  constexpr NonlinearityType(enumtype::kConv1D) : value_(Nonlinearity::Conv1D) {}
  constexpr NonlinearityType(enumtype::kConv2D) : value_(Nonlinearity::Conv2D) {}
  constexpr NonlinearityType(enumtype::kConv3D) : value_(Nonlinearity::Conv3D) {}
  constexpr NonlinearityType(enumtype::kConvTranspose1D) : value_(Nonlinearity::Conv1D) {}
  constexpr NonlinearityType(enumtype::kConvTranspose2D) : value_(Nonlinearity::Conv2D) {}
  constexpr NonlinearityType(enumtype::kConvTranspose3D) : value_(Nonlinearity::Conv3D) {}
  constexpr NonlinearityType(enumtype::kSigmoid) : value_(Nonlinearity::Sigmoid) {}
  constexpr NonlinearityType(enumtype::kTanh) : value_(Nonlinearity::Tanh) {}
  constexpr NonlinearityType(enumtype::kReLU) : value_(Nonlinearity::ReLU) {}
  constexpr NonlinearityType(enumtype::kLeakyReLU) : value_(Nonlinearity::LeakyReLU) {}
  constexpr Nonlinearity value() const { return value_; }

 private:
  Nonlinearity value_;
};
// A fan mode given as kiln's enum or libtorch's tag (kiln::kFanIn).
class FanModeType {
 public:
  constexpr FanModeType(FanMode value) : value_(value) {}  // NOLINT
  constexpr FanModeType(enumtype::kFanIn) : value_(FanMode::FanIn) {}
  constexpr FanModeType(enumtype::kFanOut) : value_(FanMode::FanOut) {}
  constexpr FanMode value() const { return value_; }

 private:
  FanMode value_;
};

// The recommended gain for a nonlinearity (param: LeakyReLU's negative slope).
KILN_API double calculate_gain(NonlinearityType nonlinearity, double param = 0.01);
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
KILN_API Tensor kaiming_uniform_(Tensor tensor, double a = 0, FanModeType mode = FanMode::FanIn,
                                 NonlinearityType nonlinearity = Nonlinearity::LeakyReLU);
// Normal with std gain / sqrt(fan).
KILN_API Tensor kaiming_normal_(Tensor tensor, double a = 0, FanModeType mode = FanMode::FanIn,
                                NonlinearityType nonlinearity = Nonlinearity::LeakyReLU);
// Uniform on +-gain * sqrt(6 / (fan_in + fan_out)) (Glorot and Bengio).
KILN_API Tensor xavier_uniform_(Tensor tensor, double gain = 1.0);
// Normal with std gain * sqrt(2 / (fan_in + fan_out)).
KILN_API Tensor xavier_normal_(Tensor tensor, double gain = 1.0);
// The identity matrix (a 2-D tensor).
KILN_API Tensor eye_(Tensor matrix);
// A convolution weight [out, in, k...] (3 to 5 dimensions) that passes its input through: in
// each of `groups` groups, output channel i gets a 1 at the centre of input channel i.
KILN_API Tensor dirac_(Tensor tensor, int64_t groups = 1);
// A (semi-)orthogonal matrix times gain, as the tensor flattened to [size(0), numel / size(0)]
// (2 or more dimensions): Q of the QR factorization of a standard normal matrix, R's diagonal
// made positive (Saxe et al.), as PyTorch's.
KILN_API Tensor orthogonal_(Tensor tensor, double gain = 1.0);

}  // namespace kiln::nn::init
