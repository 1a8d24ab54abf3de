// kiln::nn::init.
#include <kiln/autograd.h>
#include <kiln/nn/init.h>
#include <kiln/ops.h>

#include <algorithm>
#include <cmath>

namespace kiln::nn::init {
namespace {
int64_t fan(const Tensor& tensor, FanModeType mode) {
  auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(tensor);
  return mode.value() == FanMode::FanIn ? fan_in : fan_out;
}
}  // namespace

double calculate_gain(NonlinearityType nonlinearity, double param) {
  switch (nonlinearity.value()) {
    case Nonlinearity::Tanh: return 5.0 / 3.0;
    case Nonlinearity::ReLU: return std::sqrt(2.0);
    case Nonlinearity::LeakyReLU: return std::sqrt(2.0 / (1.0 + param * param));
    default: return 1.0;  // linear, convolutions, sigmoid
  }
}

std::pair<int64_t, int64_t> calculate_fan_in_and_fan_out(const Tensor& tensor) {
  KILN_CHECK_VALUE(tensor.dim() >= 2, "init: fan in and fan out can not be computed for tensor ",
                   "with fewer than 2 dimensions (got size ", tensor.sizes(), ")");
  int64_t receptive = 1;
  for (int64_t d = 2; d < tensor.dim(); ++d) receptive *= tensor.size(d);
  return {tensor.size(1) * receptive, tensor.size(0) * receptive};
}

Tensor uniform_(Tensor tensor, double low, double high) {
  NoGradGuard no_grad;
  tensor.uniform_(low, high);
  return tensor;
}

Tensor normal_(Tensor tensor, double mean, double std) {
  NoGradGuard no_grad;
  tensor.normal_(mean, std);
  return tensor;
}

Tensor constant_(Tensor tensor, Scalar value) {
  NoGradGuard no_grad;
  tensor.fill_(value);
  return tensor;
}

Tensor ones_(Tensor tensor) { return constant_(std::move(tensor), 1); }
Tensor zeros_(Tensor tensor) { return constant_(std::move(tensor), 0); }

Tensor kaiming_uniform_(Tensor tensor, double a, FanModeType mode, NonlinearityType nonlinearity) {
  double std = calculate_gain(nonlinearity, a) / std::sqrt(static_cast<double>(fan(tensor, mode)));
  double bound = std::sqrt(3.0) * std;
  return uniform_(std::move(tensor), -bound, bound);
}

Tensor kaiming_normal_(Tensor tensor, double a, FanModeType mode, NonlinearityType nonlinearity) {
  double std = calculate_gain(nonlinearity, a) / std::sqrt(static_cast<double>(fan(tensor, mode)));
  return normal_(std::move(tensor), 0, std);
}

Tensor xavier_uniform_(Tensor tensor, double gain) {
  auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(tensor);
  double std = gain * std::sqrt(2.0 / static_cast<double>(fan_in + fan_out));
  double bound = std::sqrt(3.0) * std;
  return uniform_(std::move(tensor), -bound, bound);
}

Tensor xavier_normal_(Tensor tensor, double gain) {
  auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(tensor);
  return normal_(std::move(tensor), 0,
                 gain * std::sqrt(2.0 / static_cast<double>(fan_in + fan_out)));
}

Tensor eye_(Tensor matrix) {
  KILN_CHECK_VALUE(matrix.dim() == 2, "eye_: only tensors with 2 dimensions are supported (got ",
                   "sizes ", matrix.sizes(), ")");
  NoGradGuard no_grad;
  matrix.copy_(kiln::eye(matrix.size(0), matrix.size(1), matrix.options()));
  return matrix;
}

Tensor dirac_(Tensor tensor, int64_t groups) {
  const int64_t dims = tensor.dim();
  KILN_CHECK_VALUE(dims >= 3 && dims <= 5, "dirac_: only tensors with 3, 4, or 5 dimensions are ",
                   "supported (got sizes ", tensor.sizes(), ")");
  KILN_CHECK_VALUE(groups > 0 && tensor.size(0) % groups == 0, "dirac_: dim 0 (", tensor.size(0),
                   ") must be divisible by groups (", groups, ")");
  const int64_t per_group = tensor.size(0) / groups;
  const int64_t channels = std::min(per_group, tensor.size(1));
  NoGradGuard no_grad;
  tensor.zero_();
  for (int64_t g = 0; g < groups; ++g) {
    for (int64_t c = 0; c < channels; ++c) {
      Tensor centre = tensor.select(0, g * per_group + c).select(0, c);
      while (centre.dim() > 0) centre = centre.select(0, centre.size(0) / 2);
      centre.fill_(1);
    }
  }
  return tensor;
}

namespace {
// a (row-major [rows, cols], rows >= cols) becomes Q of its reduced QR factorization with R's
// diagonal positive: modified Gram-Schmidt in float64, which gives that Q directly.
void orthonormalize_columns(double* a, int64_t rows, int64_t cols) {
  for (int64_t j = 0; j < cols; ++j) {
    for (int64_t i = 0; i < j; ++i) {
      double dot = 0;
      for (int64_t k = 0; k < rows; ++k) dot += a[k * cols + i] * a[k * cols + j];
      for (int64_t k = 0; k < rows; ++k) a[k * cols + j] -= dot * a[k * cols + i];
    }
    double norm = 0;
    for (int64_t k = 0; k < rows; ++k) norm += a[k * cols + j] * a[k * cols + j];
    norm = std::sqrt(norm);
    for (int64_t k = 0; k < rows; ++k) a[k * cols + j] = norm > 0 ? a[k * cols + j] / norm : 0.0;
  }
}
}  // namespace

Tensor orthogonal_(Tensor tensor, double gain) {
  KILN_CHECK_VALUE(tensor.dim() >= 2, "orthogonal_: only tensors with 2 or more dimensions are ",
                   "supported (got sizes ", tensor.sizes(), ")");
  NoGradGuard no_grad;
  const int64_t rows = tensor.size(0);
  const int64_t cols = rows == 0 ? 0 : tensor.numel() / rows;
  if (tensor.numel() == 0) return tensor;
  const bool wide = rows < cols;  // factor the transpose, whose columns are fewer
  const int64_t m = wide ? cols : rows;
  const int64_t n = wide ? rows : cols;
  Tensor result = kiln::randn({m, n}, kiln::dtype(kDouble).device(Device(kCPU))).contiguous();
  orthonormalize_columns(result.data_ptr<double>(), m, n);
  if (wide) result = result.t();
  tensor.view({rows, cols}).copy_(result.mul(gain).to(tensor.options()));
  return tensor;
}

}  // namespace kiln::nn::init
