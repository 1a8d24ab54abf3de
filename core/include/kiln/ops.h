// Tensor operations as free functions, with libtorch's names and argument orders. Elementwise
// operations broadcast their inputs and promote dtypes as PyTorch does; each function's
// comment states what it computes. Errors name the operator, shapes, dtypes and devices.
#pragma once

#include <kiln/export.h>
#include <kiln/tensor.h>

#include <concepts>
#include <optional>
#include <string_view>
#include <tuple>
#include <vector>

namespace kiln {

// --- factories (device and dtype from TensorOptions; CPU and float32 by default) -------------
KILN_API Tensor empty(IntArrayRef sizes, const TensorOptions& options = {});
KILN_API Tensor zeros(IntArrayRef sizes, const TensorOptions& options = {});
KILN_API Tensor ones(IntArrayRef sizes, const TensorOptions& options = {});
// Every element is `value`; the dtype defaults to the value's (int64 for 7, float32 for 7.5).
KILN_API Tensor full(IntArrayRef sizes, const Scalar& value, const TensorOptions& options = {});
// [start, end) in steps; int64 when all arguments are integral, else float32.
KILN_API Tensor arange(const Scalar& end, const TensorOptions& options = {});
KILN_API Tensor arange(const Scalar& start, const Scalar& end, const TensorOptions& options = {});
KILN_API Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step,
                       const TensorOptions& options = {});
// `steps` values evenly spaced from start to end inclusive.
KILN_API Tensor linspace(const Scalar& start, const Scalar& end, int64_t steps,
                         const TensorOptions& options = {});
// The n x m identity matrix (m = n when omitted).
KILN_API Tensor eye(int64_t n, const TensorOptions& options = {});
KILN_API Tensor eye(int64_t n, int64_t m, const TensorOptions& options = {});
// Uniform on [0, 1), standard normal, and integers in [low, high) (int64 by default), from the
// default generator (manual_seed).
KILN_API Tensor rand(IntArrayRef sizes, const TensorOptions& options = {});
KILN_API Tensor randn(IntArrayRef sizes, const TensorOptions& options = {});
KILN_API Tensor randint(int64_t high, IntArrayRef sizes, const TensorOptions& options = {});
KILN_API Tensor randint(int64_t low, int64_t high, IntArrayRef sizes,
                        const TensorOptions& options = {});
KILN_API Tensor empty_like(const Tensor& t, const TensorOptions& options = {});
KILN_API Tensor zeros_like(const Tensor& t, const TensorOptions& options = {});
KILN_API Tensor ones_like(const Tensor& t, const TensorOptions& options = {});
KILN_API Tensor full_like(const Tensor& t, const Scalar& value, const TensorOptions& options = {});
KILN_API Tensor rand_like(const Tensor& t, const TensorOptions& options = {});
KILN_API Tensor randn_like(const Tensor& t, const TensorOptions& options = {});
KILN_API Tensor randint_like(const Tensor& t, int64_t low, int64_t high,
                             const TensorOptions& options = {});
// Wraps memory the caller owns (a CPU pointer unless options say otherwise); no copy.
KILN_API Tensor from_blob(void* data, IntArrayRef sizes, const TensorOptions& options = {});
KILN_API Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides,
                          const TensorOptions& options = {});

// Seeds the default generator, as torch::manual_seed.
KILN_API void manual_seed(uint64_t seed);

// --- elementwise ---------------------------------------------------------------------------
KILN_API Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha = 1);  // a + alpha*b
KILN_API Tensor add(const Tensor& a, const Scalar& b, const Scalar& alpha = 1);
KILN_API Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha = 1);  // a - alpha*b
KILN_API Tensor sub(const Tensor& a, const Scalar& b, const Scalar& alpha = 1);
KILN_API Tensor mul(const Tensor& a, const Tensor& b);
KILN_API Tensor mul(const Tensor& a, const Scalar& b);
KILN_API Tensor div(const Tensor& a, const Tensor& b);  // true division: ints give float32
KILN_API Tensor div(const Tensor& a, const Scalar& b);
KILN_API Tensor floor_divide(const Tensor& a, const Tensor& b);
KILN_API Tensor floor_divide(const Tensor& a, const Scalar& b);
KILN_API Tensor remainder(const Tensor& a, const Tensor& b);  // sign of b, as Python's %
KILN_API Tensor remainder(const Tensor& a, const Scalar& b);
KILN_API Tensor fmod(const Tensor& a, const Tensor& b);  // sign of a, as C's fmod
KILN_API Tensor fmod(const Tensor& a, const Scalar& b);
KILN_API Tensor pow(const Tensor& a, const Tensor& exponent);
KILN_API Tensor pow(const Tensor& a, const Scalar& exponent);
KILN_API Tensor pow(const Scalar& a, const Tensor& exponent);
KILN_API Tensor maximum(const Tensor& a, const Tensor& b);  // NaN propagates
KILN_API Tensor minimum(const Tensor& a, const Tensor& b);
// The binary forms of max and min: maximum and minimum, as libtorch's.
KILN_API Tensor max(const Tensor& a, const Tensor& b);
KILN_API Tensor min(const Tensor& a, const Tensor& b);
KILN_API Tensor neg(const Tensor& x);
KILN_API Tensor abs(const Tensor& x);
KILN_API Tensor sign(const Tensor& x);
// Floating functions: integer and bool inputs give float32.
KILN_API Tensor exp(const Tensor& x);
KILN_API Tensor log(const Tensor& x);
KILN_API Tensor log1p(const Tensor& x);
KILN_API Tensor expm1(const Tensor& x);
KILN_API Tensor sqrt(const Tensor& x);
KILN_API Tensor rsqrt(const Tensor& x);
KILN_API Tensor sin(const Tensor& x);
KILN_API Tensor cos(const Tensor& x);
KILN_API Tensor tanh(const Tensor& x);
KILN_API Tensor sigmoid(const Tensor& x);
KILN_API Tensor relu(const Tensor& x);
KILN_API Tensor square(const Tensor& x);
// Limits x to [min, max]; either bound may be absent.
KILN_API Tensor clamp(const Tensor& x, std::optional<Scalar> min,
                      std::optional<Scalar> max = std::nullopt);
KILN_API Tensor clamp_min(const Tensor& x, const Scalar& min);
KILN_API Tensor clamp_max(const Tensor& x, const Scalar& max);
// Comparisons give bool tensors.
KILN_API Tensor eq(const Tensor& a, const Tensor& b);
KILN_API Tensor ne(const Tensor& a, const Tensor& b);
KILN_API Tensor lt(const Tensor& a, const Tensor& b);
KILN_API Tensor le(const Tensor& a, const Tensor& b);
KILN_API Tensor gt(const Tensor& a, const Tensor& b);
KILN_API Tensor ge(const Tensor& a, const Tensor& b);
KILN_API Tensor eq(const Tensor& a, const Scalar& b);
KILN_API Tensor ne(const Tensor& a, const Scalar& b);
KILN_API Tensor lt(const Tensor& a, const Scalar& b);
KILN_API Tensor le(const Tensor& a, const Scalar& b);
KILN_API Tensor gt(const Tensor& a, const Scalar& b);
KILN_API Tensor ge(const Tensor& a, const Scalar& b);
KILN_API Tensor logical_and(const Tensor& a, const Tensor& b);
KILN_API Tensor logical_or(const Tensor& a, const Tensor& b);
KILN_API Tensor logical_xor(const Tensor& a, const Tensor& b);
KILN_API Tensor logical_not(const Tensor& x);
// Bitwise operations on bool and integer tensors.
KILN_API Tensor bitwise_and(const Tensor& a, const Tensor& b);
KILN_API Tensor bitwise_or(const Tensor& a, const Tensor& b);
KILN_API Tensor bitwise_xor(const Tensor& a, const Tensor& b);
KILN_API Tensor bitwise_not(const Tensor& x);
// condition ? a : b, broadcast over all three.
KILN_API Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b);
KILN_API Tensor where(const Tensor& condition, const Tensor& a, const Scalar& b);
KILN_API Tensor where(const Tensor& condition, const Scalar& a, const Tensor& b);
KILN_API Tensor masked_fill(const Tensor& x, const Tensor& mask, const Scalar& value);

// --- reductions (dims may be negative; an empty list means all dimensions) ------------------
KILN_API Tensor sum(const Tensor& x, std::optional<ScalarType> dtype = std::nullopt);
KILN_API Tensor sum(const Tensor& x, IntArrayRef dims, bool keepdim = false,
                    std::optional<ScalarType> dtype = std::nullopt);
KILN_API Tensor mean(const Tensor& x, std::optional<ScalarType> dtype = std::nullopt);
KILN_API Tensor mean(const Tensor& x, IntArrayRef dims, bool keepdim = false,
                     std::optional<ScalarType> dtype = std::nullopt);
KILN_API Tensor prod(const Tensor& x, std::optional<ScalarType> dtype = std::nullopt);
KILN_API Tensor prod(const Tensor& x, int64_t dim, bool keepdim = false,
                     std::optional<ScalarType> dtype = std::nullopt);
KILN_API Tensor max(const Tensor& x);
KILN_API std::tuple<Tensor, Tensor> max(const Tensor& x, int64_t dim, bool keepdim = false);
KILN_API Tensor min(const Tensor& x);
KILN_API std::tuple<Tensor, Tensor> min(const Tensor& x, int64_t dim, bool keepdim = false);
KILN_API Tensor amax(const Tensor& x, IntArrayRef dims = {}, bool keepdim = false);
KILN_API Tensor amin(const Tensor& x, IntArrayRef dims = {}, bool keepdim = false);
KILN_API Tensor argmax(const Tensor& x, std::optional<int64_t> dim = std::nullopt,
                       bool keepdim = false);
KILN_API Tensor argmin(const Tensor& x, std::optional<int64_t> dim = std::nullopt,
                       bool keepdim = false);
// log(sum(exp(x))) computed stably (subtracting the maximum first).
KILN_API Tensor logsumexp(const Tensor& x, IntArrayRef dims, bool keepdim = false);
// exp(x) / sum(exp(x)) along dim and its logarithm, stably; x is first converted to dtype when
// given. These are kiln::nn::functional::softmax and log_softmax; they are templates only so
// that an unqualified call that finds both (inside kiln::nn::functional, by argument-dependent
// lookup) picks the non-template one instead of being ambiguous.
namespace detail {
KILN_API Tensor softmax_of(const Tensor& x, int64_t dim, std::optional<ScalarType> dtype, bool log);
}  // namespace detail
template <std::same_as<Tensor> T>
Tensor softmax(const T& x, int64_t dim, std::optional<ScalarType> dtype = std::nullopt) {
  return detail::softmax_of(x, dim, dtype, /*log=*/false);
}
template <std::same_as<Tensor> T>
Tensor log_softmax(const T& x, int64_t dim, std::optional<ScalarType> dtype = std::nullopt) {
  return detail::softmax_of(x, dim, dtype, /*log=*/true);
}
// Variance with Bessel's correction by default (correction = 1), standard deviation.
KILN_API Tensor var(const Tensor& x, IntArrayRef dims = {}, int64_t correction = 1,
                    bool keepdim = false);
KILN_API Tensor std(const Tensor& x, IntArrayRef dims = {}, int64_t correction = 1,
                    bool keepdim = false);
// p-norm over dims (all when empty): p = 2, 1, inf, -inf, 0 or any positive number.
KILN_API Tensor norm(const Tensor& x, const Scalar& p = 2, IntArrayRef dims = {},
                     bool keepdim = false);
KILN_API Tensor all(const Tensor& x);
KILN_API Tensor all(const Tensor& x, int64_t dim, bool keepdim = false);
KILN_API Tensor any(const Tensor& x);
KILN_API Tensor any(const Tensor& x, int64_t dim, bool keepdim = false);

// --- linear algebra --------------------------------------------------------------------------
// PyTorch's matmul rules: dot for two vectors, matrix-vector, and batched with broadcasting.
KILN_API Tensor matmul(const Tensor& a, const Tensor& b);
KILN_API Tensor mm(const Tensor& a, const Tensor& b);   // [m,k] x [k,n]
KILN_API Tensor bmm(const Tensor& a, const Tensor& b);  // [B,m,k] x [B,k,n]
// beta * self + alpha * (a @ b), self broadcast to [m, n].
KILN_API Tensor addmm(const Tensor& self, const Tensor& a, const Tensor& b, const Scalar& beta = 1,
                      const Scalar& alpha = 1);
KILN_API Tensor dot(const Tensor& a, const Tensor& b);

// --- convolution -----------------------------------------------------------------------------
// 2-D cross-correlation of input [N, C, H, W] with weight [O, C / groups, kH, kW], plus bias [O]
// when defined: out [N, O, oH, oW], oH = (H + 2 * padding - dilation * (kH - 1) - 1) / stride + 1.
// stride, padding and dilation take one value for both dimensions or two.
KILN_API Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias = {},
                       IntArrayRef stride = 1, IntArrayRef padding = 0, IntArrayRef dilation = 1,
                       int64_t groups = 1);
// The gradient of conv2d's input [N, C, H, W] (input_sizes) from grad_output [N, O, oH, oW].
KILN_API Tensor conv2d_backward_input(const Tensor& grad_output, const Tensor& weight,
                                      IntArrayRef input_sizes, IntArrayRef stride,
                                      IntArrayRef padding, IntArrayRef dilation, int64_t groups);
// The gradient of conv2d's weight (weight_sizes) from grad_output and the input.
KILN_API Tensor conv2d_backward_weight(const Tensor& grad_output, const Tensor& input,
                                       IntArrayRef weight_sizes, IntArrayRef stride,
                                       IntArrayRef padding, IntArrayRef dilation, int64_t groups);

// --- shapes and copies -----------------------------------------------------------------------
KILN_API Tensor cat(TensorList tensors, int64_t dim = 0);
KILN_API Tensor stack(TensorList tensors, int64_t dim = 0);
KILN_API std::vector<Tensor> unbind(const Tensor& x, int64_t dim = 0);
KILN_API Tensor reshape(const Tensor& x, IntArrayRef sizes);
KILN_API Tensor squeeze(const Tensor& x);
KILN_API Tensor squeeze(const Tensor& x, int64_t dim);
KILN_API Tensor unsqueeze(const Tensor& x, int64_t dim);
KILN_API Tensor flatten(const Tensor& x, int64_t start_dim = 0, int64_t end_dim = -1);
KILN_API Tensor transpose(const Tensor& x, int64_t dim0, int64_t dim1);
KILN_API Tensor permute(const Tensor& x, IntArrayRef dims);
KILN_API Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length);
KILN_API Tensor select(const Tensor& x, int64_t dim, int64_t index);
KILN_API Tensor repeat(const Tensor& x, IntArrayRef repeats);
KILN_API Tensor gather(const Tensor& x, int64_t dim, const Tensor& index);
KILN_API Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index);
// The indices of the nonzero elements of x: int64 [count, x.dim()], in row-major order.
KILN_API Tensor nonzero(const Tensor& x);
// x with source's slices added at `index` (1-D int64/int32) along dim: out[..., index[i], ...] +=
// source[..., i, ...]. Repeated indices accumulate. The gradient of index_select.
KILN_API Tensor index_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& source);
// x with src added where index (int64, same rank) points along dim: for dim 0,
// out[index[i][j]][j] += src[i][j]. Repeated indices accumulate. The gradient of gather.
KILN_API Tensor scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src);
// One-hot int64 encoding of class indices; num_classes = max + 1 when -1.
KILN_API Tensor one_hot(const Tensor& indices, int64_t num_classes = -1);
KILN_API Tensor tril(const Tensor& x, int64_t diagonal = 0);
KILN_API Tensor triu(const Tensor& x, int64_t diagonal = 0);
KILN_API Tensor clone(const Tensor& x);

// The shape a and b broadcast to; throws with PyTorch's message when they don't.
KILN_API std::vector<int64_t> broadcast_shapes(IntArrayRef a, IntArrayRef b);
// The dtype of an elementwise result of these tensors, as torch.result_type.
KILN_API ScalarType result_type(const Tensor& a, const Tensor& b);
KILN_API ScalarType result_type(const Tensor& a, const Scalar& b);

KILN_API bool equal(const Tensor& a, const Tensor& b);
KILN_API bool allclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8,
                       bool equal_nan = false);
KILN_API Tensor isclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8,
                        bool equal_nan = false);
KILN_API Tensor isnan(const Tensor& x);
// Elementwise tests of floating values (bool tensors; integer and bool inputs are never infinite
// or NaN): +-inf (isinf), +inf (isposinf), -inf (isneginf), neither inf nor NaN (isfinite).
KILN_API Tensor isinf(const Tensor& x);
KILN_API Tensor isposinf(const Tensor& x);
KILN_API Tensor isneginf(const Tensor& x);
KILN_API Tensor isfinite(const Tensor& x);

// --- sorting, scans, rearranging and padding (issue 15) ------------------------------------
// Inclusive scans along dim (primitives; scan.cpp): out[i] = x[0] + ... + x[i] (cumsum),
// x[0] * ... * x[i] (cumprod), computed in `dtype` when given; integers and bool give int64.
KILN_API Tensor cumsum(const Tensor& x, int64_t dim, std::optional<ScalarType> dtype = {});
KILN_API Tensor cumprod(const Tensor& x, int64_t dim, std::optional<ScalarType> dtype = {});
// Rearranging (composites of index_select, cat, narrow and views; rearrange.cpp).
// dims reversed; each dim at most once.
KILN_API Tensor flip(const Tensor& x, IntArrayRef dims);
KILN_API Tensor fliplr(const Tensor& x);  // flip(x, {1}), x at least 2-D
KILN_API Tensor flipud(const Tensor& x);  // flip(x, {0}), x at least 1-D
// Elements shifted by shifts[i] along dims[i], wrapping around; empty dims: the flattened
// tensor by the one shift.
KILN_API Tensor roll(const Tensor& x, IntArrayRef shifts, IntArrayRef dims = {});
// k quarter turns from dims[0] towards dims[1].
KILN_API Tensor rot90(const Tensor& x, int64_t k = 1, IntArrayRef dims = {0, 1});
// A view with dims source[i] at position destination[i], the others in their order.
KILN_API Tensor movedim(const Tensor& x, IntArrayRef source, IntArrayRef destination);
KILN_API Tensor movedim(const Tensor& x, int64_t source, int64_t destination);
// repeat with reps padded with leading 1s to x's rank.
KILN_API Tensor tile(const Tensor& x, IntArrayRef reps);
// Each element repeated `repeats` times along dim (of the flattened tensor when absent).
KILN_API Tensor repeat_interleave(const Tensor& x, int64_t repeats,
                                  std::optional<int64_t> dim = std::nullopt);
KILN_API std::vector<Tensor> split(const Tensor& x, int64_t split_size, int64_t dim = 0);
KILN_API std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int64_t dim = 0);
// Views of x along dim of the given sizes, which sum to x.size(dim).
KILN_API std::vector<Tensor> split_with_sizes(const Tensor& x, IntArrayRef split_sizes,
                                              int64_t dim = 0);
// `sections` views as equal as possible (the first ones one longer), or the views between indices.
KILN_API std::vector<Tensor> tensor_split(const Tensor& x, int64_t sections, int64_t dim = 0);
KILN_API std::vector<Tensor> tensor_split(const Tensor& x, IntArrayRef indices, int64_t dim = 0);

// ---- Issue 15: activations and math functions (PyTorch's names and semantics) ----
// Rounding, exact on integers (bool is refused); round() rounds halves to even.
KILN_API Tensor floor(const Tensor& x);
KILN_API Tensor ceil(const Tensor& x);
KILN_API Tensor round(const Tensor& x);
// Rounds to `decimals` decimal digits (negative: to tens, hundreds...); floating tensors only.
KILN_API Tensor round(const Tensor& x, int64_t decimals);
KILN_API Tensor trunc(const Tensor& x);
// x - trunc(x); floating tensors only.
KILN_API Tensor frac(const Tensor& x);
// Floating functions: integer and bool inputs give float32.
KILN_API Tensor reciprocal(const Tensor& x);
KILN_API Tensor log2(const Tensor& x);
KILN_API Tensor log10(const Tensor& x);
KILN_API Tensor exp2(const Tensor& x);
KILN_API Tensor tan(const Tensor& x);
KILN_API Tensor sinh(const Tensor& x);
KILN_API Tensor cosh(const Tensor& x);
KILN_API Tensor asin(const Tensor& x);
KILN_API Tensor acos(const Tensor& x);
KILN_API Tensor atan(const Tensor& x);
KILN_API Tensor asinh(const Tensor& x);
KILN_API Tensor acosh(const Tensor& x);
KILN_API Tensor atanh(const Tensor& x);
KILN_API Tensor erf(const Tensor& x);
KILN_API Tensor erfc(const Tensor& x);
KILN_API Tensor erfinv(const Tensor& x);
// sin(pi x) / (pi x), and 1 at 0 (the normalized sinc).
KILN_API Tensor sinc(const Tensor& x);
// Activations of floating tensors only: x * sigmoid(x); x * tanh(softplus(x)).
KILN_API Tensor silu(const Tensor& x);
KILN_API Tensor mish(const Tensor& x);
// x * Phi(x) (Phi the normal CDF), or its tanh approximation (approximate "tanh").
KILN_API Tensor gelu(const Tensor& x, std::string_view approximate = "none");
// x for x > 0, negative_slope * x otherwise.
KILN_API Tensor leaky_relu(const Tensor& x, double negative_slope = 0.01);
KILN_API Tensor& leaky_relu_(Tensor& x, double negative_slope = 0.01);
// 0 for |x| <= lambd, x otherwise; softshrink moves the rest toward 0 by lambd (lambd >= 0).
KILN_API Tensor hardshrink(const Tensor& x, double lambd = 0.5);
KILN_API Tensor softshrink(const Tensor& x, double lambd = 0.5);
// Composites: -softplus(-x); x / (1 + |x|); x - tanh(x).
KILN_API Tensor logsigmoid(const Tensor& x);
KILN_API Tensor softsign(const Tensor& x);
KILN_API Tensor tanhshrink(const Tensor& x);
// elu: scale * x for x > 0, alpha * scale * (exp(input_scale * x) - 1) otherwise (floating).
// The in-place forms refuse a negative alpha * scale when autograd records (as PyTorch's
// backward does).
KILN_API Tensor elu(const Tensor& x, const Scalar& alpha = 1.0, const Scalar& scale = 1.0,
                    const Scalar& input_scale = 1.0);
KILN_API Tensor& elu_(Tensor& x, const Scalar& alpha = 1.0, const Scalar& scale = 1.0,
                      const Scalar& input_scale = 1.0);
// elu with SELU's alpha and scale (1.6733, 1.0507); celu: elu(x, alpha, 1, 1 / alpha), alpha != 0.
KILN_API Tensor selu(const Tensor& x);
KILN_API Tensor& selu_(Tensor& x);
KILN_API Tensor celu(const Tensor& x, const Scalar& alpha = 1.0);
KILN_API Tensor& celu_(Tensor& x, const Scalar& alpha = 1.0);
// value where x <= threshold, x otherwise (all dtypes but bool; the output keeps x's dtype).
KILN_API Tensor threshold(const Tensor& x, const Scalar& threshold, const Scalar& value);
KILN_API Tensor& threshold_(Tensor& x, const Scalar& threshold, const Scalar& value);
// x clamped to [min_val, max_val], with gradient 0 at and beyond the bounds; relu6 is [0, 6].
// Integer tensors take integer bounds (truncated); bool is refused.
KILN_API Tensor hardtanh(const Tensor& x, const Scalar& min_val = -1, const Scalar& max_val = 1);
KILN_API Tensor& hardtanh_(Tensor& x, const Scalar& min_val = -1, const Scalar& max_val = 1);
KILN_API Tensor relu6(const Tensor& x);
KILN_API Tensor& relu6_(Tensor& x);
// x * relu6(x + 3) / 6 and relu6(x + 3) / 6 (floating).
KILN_API Tensor hardswish(const Tensor& x);
KILN_API Tensor& hardswish_(Tensor& x);
KILN_API Tensor hardsigmoid(const Tensor& x);
KILN_API Tensor& hardsigmoid_(Tensor& x);
// x for x > 0, weight * x otherwise; weight [1] or [C], C = x.size(1) (composite).
KILN_API Tensor prelu(const Tensor& x, const Tensor& weight);
// leaky_relu with slope (lower + upper) / 2; in training, a slope drawn from U(lower, upper)
// for each element x <= 0.
KILN_API Tensor rrelu(const Tensor& x, const Scalar& lower = 1.0 / 8, const Scalar& upper = 1.0 / 3,
                      bool training = false);
// a * sigmoid(b) for the halves a, b of x along dim (its size even).
KILN_API Tensor glu(const Tensor& x, int64_t dim = -1);
// Binary math (broadcasting, PyTorch's promotion): atan2(a, b), the angle of (b, a); log(exp(a) +
// exp(b)) and log2(2^a + 2^b) computed stably; sqrt(a^2 + b^2); |a| with b's sign; a * log(b),
// 0 where a == 0. atan2, copysign and xlogy give float32 for integers; the others refuse them.
KILN_API Tensor atan2(const Tensor& a, const Tensor& b);
KILN_API Tensor logaddexp(const Tensor& a, const Tensor& b);
KILN_API Tensor logaddexp2(const Tensor& a, const Tensor& b);
KILN_API Tensor hypot(const Tensor& a, const Tensor& b);
KILN_API Tensor copysign(const Tensor& a, const Tensor& b);
KILN_API Tensor copysign(const Tensor& a, const Scalar& b);
KILN_API Tensor xlogy(const Tensor& a, const Tensor& b);
KILN_API Tensor xlogy(const Tensor& a, const Scalar& b);
KILN_API Tensor xlogy(const Scalar& a, const Tensor& b);
// self + weight * (end - self); self, end and a tensor weight of one floating dtype, broadcast.
KILN_API Tensor lerp(const Tensor& self, const Tensor& end, const Tensor& weight);
KILN_API Tensor lerp(const Tensor& self, const Tensor& end, const Scalar& weight);
// self + value * tensor1 * tensor2 and self + value * tensor1 / tensor2 (broadcast, promoted;
// addcdiv refuses two integer tensors).
KILN_API Tensor addcmul(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2,
                        const Scalar& value = 1);
KILN_API Tensor addcdiv(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2,
                        const Scalar& value = 1);
// NaN, +inf and -inf replaced by nan (0), posinf and neginf (the dtype's largest and lowest
// finite values by default); integers are copied.
KILN_API Tensor nan_to_num(const Tensor& x, std::optional<double> nan = 0.0,
                           std::optional<double> posinf = std::nullopt,
                           std::optional<double> neginf = std::nullopt);
KILN_API Tensor& nan_to_num_(Tensor& x, std::optional<double> nan = 0.0,
                             std::optional<double> posinf = std::nullopt,
                             std::optional<double> neginf = std::nullopt);
// sign(x) (kiln has no complex dtypes); x * pi / 180; x * 180 / pi (integers give float32).
KILN_API Tensor sgn(const Tensor& x);
KILN_API Tensor deg2rad(const Tensor& x);
KILN_API Tensor rad2deg(const Tensor& x);
// x.deg2rad_() and x.rad2deg_(), as at::deg2rad_ and at::rad2deg_.
KILN_API Tensor& deg2rad_(Tensor& x);
KILN_API Tensor& rad2deg_(Tensor& x);
// clamp with tensor bounds (broadcast, promoted; an undefined bound is absent; NaN propagates).
// Plain tensors rather than libtorch's optionals, so that clamp(x, std::nullopt, std::nullopt)
// stays the Scalar form.
KILN_API Tensor clamp(const Tensor& x, const Tensor& min, const Tensor& max = Tensor());

// ---- Issue 15: padding and resampling (pad.cpp, resample.cpp) ----
// input padded with `value` by `pad`, (before, after) pairs from the last dimension backwards;
// negative sizes crop. Any dtype (nn::functional::pad has the other modes).
KILN_API Tensor constant_pad_nd(const Tensor& input, IntArrayRef pad, const Scalar& value = 0);
// ATen's resampling of [N, C, H, W] to output_size [oH, oW] (nn::functional::interpolate has
// the other modes): scales_h/w are the scale factors the sizes came from, which set the source
// positions when given (See Note [Resampling scale factors] in kiln/sdk/resample.hpp).
KILN_API Tensor upsample_nearest2d(const Tensor& input, IntArrayRef output_size,
                                   std::optional<double> scales_h = std::nullopt,
                                   std::optional<double> scales_w = std::nullopt);
KILN_API Tensor upsample_bilinear2d(const Tensor& input, IntArrayRef output_size,
                                    bool align_corners,
                                    std::optional<double> scales_h = std::nullopt,
                                    std::optional<double> scales_w = std::nullopt);
// [*, C * r^2, H, W] -> [*, C, H * r, W * r], and its inverse (composites of views).
KILN_API Tensor pixel_shuffle(const Tensor& input, int64_t upscale_factor);
KILN_API Tensor pixel_unshuffle(const Tensor& input, int64_t downscale_factor);

// ---- Issue 15: sorting and selection (sort.cpp, sort_select.cpp) ----
// Values sorted along dim (ascending unless descending) and the int64 indices they came from.
// NaN sorts above +inf, -0.0 equals 0.0, and ties keep their order (always stable).
KILN_API std::tuple<Tensor, Tensor> sort(const Tensor& x, int64_t dim = -1,
                                         bool descending = false);
KILN_API std::tuple<Tensor, Tensor> sort(const Tensor& x, std::optional<bool> stable,
                                         int64_t dim = -1, bool descending = false);
KILN_API Tensor argsort(const Tensor& x, int64_t dim = -1, bool descending = false);
KILN_API Tensor argsort(const Tensor& x, bool stable, int64_t dim = -1, bool descending = false);
KILN_API Tensor msort(const Tensor& x);  // sort along dim 0, values only
// The k largest (smallest unless largest) elements along dim and their indices, sorted from
// the most extreme; 0 <= k <= size(dim). Ties go to the lower index.
KILN_API std::tuple<Tensor, Tensor> topk(const Tensor& x, int64_t k, int64_t dim = -1,
                                         bool largest = true, bool sorted = true);
// The k-th smallest element along dim (1 <= k <= size) and its index.
KILN_API std::tuple<Tensor, Tensor> kthvalue(const Tensor& x, int64_t k, int64_t dim = -1,
                                             bool keepdim = false);
// The lower median (element (n - 1) / 2 in sorted order) of all elements, or along dim with its
// index; NaN when there is one (at the first NaN). nanmedian ignores NaN.
KILN_API Tensor median(const Tensor& x);
KILN_API std::tuple<Tensor, Tensor> median(const Tensor& x, int64_t dim, bool keepdim = false);
KILN_API Tensor nanmedian(const Tensor& x);
KILN_API std::tuple<Tensor, Tensor> nanmedian(const Tensor& x, int64_t dim, bool keepdim = false);
// The most frequent value along dim (the smallest when tied) and the last index where it occurs.
KILN_API std::tuple<Tensor, Tensor> mode(const Tensor& x, int64_t dim = -1, bool keepdim = false);
// Running maximum (minimum) along dim and the index where it was last reached; NaN sticks.
KILN_API std::tuple<Tensor, Tensor> cummax(const Tensor& x, int64_t dim);
KILN_API std::tuple<Tensor, Tensor> cummin(const Tensor& x, int64_t dim);
// For each value, the index in the last dim of sorted_sequence (1-D, or matching self's leading
// dims) where it would be inserted to keep it sorted: before equal values, or after them when
// right (side "right"); sorter: the indices that sort sorted_sequence. int64 (int32 if asked).
KILN_API Tensor searchsorted(const Tensor& sorted_sequence, const Tensor& self,
                             bool out_int32 = false, bool right = false,
                             std::optional<std::string_view> side = std::nullopt,
                             const Tensor& sorter = {});
KILN_API Tensor searchsorted(const Tensor& sorted_sequence, const Scalar& self,
                             bool out_int32 = false, bool right = false,
                             std::optional<std::string_view> side = std::nullopt,
                             const Tensor& sorter = {});
// searchsorted(boundaries, self, out_int32, right) for 1-D boundaries.
KILN_API Tensor bucketize(const Tensor& self, const Tensor& boundaries, bool out_int32 = false,
                          bool right = false);
KILN_API Tensor bucketize(const Scalar& self, const Tensor& boundaries, bool out_int32 = false,
                          bool right = false);
// The sorted distinct elements of the flattened input; with return_inverse, each element's
// index in them (input's shape); with return_counts, how often each occurs (empty otherwise).
KILN_API std::tuple<Tensor, Tensor, Tensor> _unique2(const Tensor& self, bool sorted = true,
                                                     bool return_inverse = false,
                                                     bool return_counts = false);
// The same for runs of equal consecutive elements (dim: only for 1-D inputs).
KILN_API std::tuple<Tensor, Tensor, Tensor> unique_consecutive(
    const Tensor& self, bool return_inverse = false, bool return_counts = false,
    std::optional<int64_t> dim = std::nullopt);

// ---- Issue 15: selection, diagonals, products and einsum (select_ops.cpp, diag.cpp,
// linalg_products.cpp, einsum.cpp; composites) ----
// Grids over the inputs (1-D or 0-D each): indexing "ij" makes output i vary along dim i, "xy"
// swaps the first two dims. Without indexing, "ij" with libtorch's warning (once).
KILN_API std::vector<Tensor> meshgrid(TensorList tensors);
KILN_API std::vector<Tensor> meshgrid(TensorList tensors, std::string_view indexing);
// The elements of x where mask (bool, broadcast with x) is true, as a 1-D tensor.
KILN_API Tensor masked_select(const Tensor& x, const Tensor& mask);
// x with source's elements, in order, written where mask (broadcast to x) is true.
KILN_API Tensor masked_scatter(const Tensor& x, const Tensor& mask, const Tensor& source);
// x with the slices at `index` (1-D int64) along dim set to value (a number or 0-dim tensor).
KILN_API Tensor index_fill(const Tensor& x, int64_t dim, const Tensor& index, const Scalar& value);
KILN_API Tensor index_fill(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& value);
// The elements of the flattened x at index (any shape; negative counts from the end).
KILN_API Tensor take(const Tensor& x, const Tensor& index);
// gather along dim with indices broadcast to x (the flattened x when dim is absent).
KILN_API Tensor take_along_dim(const Tensor& x, const Tensor& indices,
                               std::optional<int64_t> dim = std::nullopt);
// How many elements are nonzero, over dims (all when none given); int64.
KILN_API Tensor count_nonzero(const Tensor& x, std::optional<int64_t> dim = std::nullopt);
KILN_API Tensor count_nonzero(const Tensor& x, IntArrayRef dims);
// A view of the diagonal `offset` (above the main one when positive) of the plane (dim1, dim2),
// as the last dim.
KILN_API Tensor diagonal(const Tensor& x, int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1);
// 1-D x: the square matrix with x on diagonal `diagonal`; 2-D x: that diagonal, as a copy.
KILN_API Tensor diag(const Tensor& x, int64_t diagonal = 0);
// Matrices in the plane (dim1, dim2) of the output whose diagonal `offset` is x's last dim.
KILN_API Tensor diag_embed(const Tensor& x, int64_t offset = 0, int64_t dim1 = -2,
                           int64_t dim2 = -1);
KILN_API Tensor trace(const Tensor& x);  // sum of the main diagonal of a 2-D x
// Products: conj(a).b of vectors (real: dot); matrix [n, m] by vector [m]; a b^T of vectors.
KILN_API Tensor vdot(const Tensor& a, const Tensor& b);
KILN_API Tensor mv(const Tensor& mat, const Tensor& vec);
KILN_API Tensor outer(const Tensor& a, const Tensor& b);
KILN_API Tensor ger(const Tensor& a, const Tensor& b);  // outer
// beta * self + alpha * product, self broadcast to the product's shape: mat @ vec (addmv),
// outer(vec1, vec2) (addr), batch1[i] @ batch2[i] (baddbmm) or its sum over i (addbmm). With
// beta = 0, self is ignored (NaN in it does not propagate).
KILN_API Tensor addmv(const Tensor& self, const Tensor& mat, const Tensor& vec,
                      const Scalar& beta = 1, const Scalar& alpha = 1);
KILN_API Tensor addr(const Tensor& self, const Tensor& vec1, const Tensor& vec2,
                     const Scalar& beta = 1, const Scalar& alpha = 1);
KILN_API Tensor baddbmm(const Tensor& self, const Tensor& batch1, const Tensor& batch2,
                        const Scalar& beta = 1, const Scalar& alpha = 1);
KILN_API Tensor addbmm(const Tensor& self, const Tensor& batch1, const Tensor& batch2,
                       const Scalar& beta = 1, const Scalar& alpha = 1);
// The cross product of 3-vectors along dim (the first dim of size 3 when absent, as
// torch.cross), a and b broadcast.
KILN_API Tensor cross(const Tensor& a, const Tensor& b, std::optional<int64_t> dim = std::nullopt);
// Einstein summation: "ij,jk->ik", implicit outputs ("ij,jk"), "..." for broadcast dims,
// repeated indices in one operand for diagonals ("ii->i", "ii"). Lowered to permute, reshape,
// diagonal, sum and bmm.
KILN_API Tensor einsum(std::string_view equation, TensorList tensors);
// The Cartesian product of 1-D tensors as rows [n1 * n2 * ..., count]; the r-element
// combinations of a 1-D x's elements (with repeats when with_replacement), in order.
KILN_API Tensor cartesian_prod(TensorList tensors);
KILN_API Tensor combinations(const Tensor& x, int64_t r = 2, bool with_replacement = false);
// How often each value 0..max occurs in a 1-D non-negative integer x (weights summed instead
// when given), at least minlength bins; int64, or weights' dtype (float64 for integers).
KILN_API Tensor bincount(const Tensor& x, const Tensor& weights = {}, int64_t minlength = 0);
// A histogram of x with `bins` equal bins over [min, max] (x's own range when both are 0);
// values outside are ignored. x's floating dtype.
KILN_API Tensor histc(const Tensor& x, int64_t bins = 100, const Scalar& min = 0,
                      const Scalar& max = 0);

}  // namespace kiln
