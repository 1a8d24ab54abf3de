// Tensor's math methods and the C++ operators, each forwarding to the free function of
// kiln/ops.h that holds the operator.
#include <kiln/nn/functional.h>
#include <kiln/ops.h>
#include <kiln/tensor.h>

namespace kiln {

Tensor Tensor::add(const Tensor& o, const Scalar& alpha) const {
  return kiln::add(*this, o, alpha);
}
Tensor Tensor::add(const Scalar& o, const Scalar& alpha) const {
  return kiln::add(*this, o, alpha);
}
Tensor Tensor::sub(const Tensor& o, const Scalar& alpha) const {
  return kiln::sub(*this, o, alpha);
}
Tensor Tensor::sub(const Scalar& o, const Scalar& alpha) const {
  return kiln::sub(*this, o, alpha);
}
Tensor Tensor::mul(const Tensor& o) const { return kiln::mul(*this, o); }
Tensor Tensor::mul(const Scalar& o) const { return kiln::mul(*this, o); }
Tensor Tensor::div(const Tensor& o) const { return kiln::div(*this, o); }
Tensor Tensor::div(const Scalar& o) const { return kiln::div(*this, o); }
Tensor Tensor::floor_divide(const Tensor& o) const { return kiln::floor_divide(*this, o); }
Tensor Tensor::remainder(const Tensor& o) const { return kiln::remainder(*this, o); }
Tensor Tensor::fmod(const Tensor& o) const { return kiln::fmod(*this, o); }
Tensor Tensor::pow(const Tensor& e) const { return kiln::pow(*this, e); }
Tensor Tensor::pow(const Scalar& e) const { return kiln::pow(*this, e); }
Tensor Tensor::maximum(const Tensor& o) const { return kiln::maximum(*this, o); }
Tensor Tensor::minimum(const Tensor& o) const { return kiln::minimum(*this, o); }
Tensor Tensor::neg() const { return kiln::neg(*this); }
Tensor Tensor::abs() const { return kiln::abs(*this); }
Tensor Tensor::sign() const { return kiln::sign(*this); }
Tensor Tensor::exp() const { return kiln::exp(*this); }
Tensor Tensor::log() const { return kiln::log(*this); }
Tensor Tensor::log1p() const { return kiln::log1p(*this); }
Tensor Tensor::expm1() const { return kiln::expm1(*this); }
Tensor Tensor::sqrt() const { return kiln::sqrt(*this); }
Tensor Tensor::rsqrt() const { return kiln::rsqrt(*this); }
Tensor Tensor::sin() const { return kiln::sin(*this); }
Tensor Tensor::cos() const { return kiln::cos(*this); }
Tensor Tensor::tanh() const { return kiln::tanh(*this); }
Tensor Tensor::sigmoid() const { return kiln::sigmoid(*this); }
Tensor Tensor::relu() const { return kiln::relu(*this); }
Tensor Tensor::square() const { return kiln::square(*this); }
Tensor Tensor::clamp(std::optional<Scalar> min, std::optional<Scalar> max) const {
  return kiln::clamp(*this, min, max);
}
Tensor Tensor::eq(const Tensor& o) const { return kiln::eq(*this, o); }
Tensor Tensor::ne(const Tensor& o) const { return kiln::ne(*this, o); }
Tensor Tensor::lt(const Tensor& o) const { return kiln::lt(*this, o); }
Tensor Tensor::le(const Tensor& o) const { return kiln::le(*this, o); }
Tensor Tensor::gt(const Tensor& o) const { return kiln::gt(*this, o); }
Tensor Tensor::ge(const Tensor& o) const { return kiln::ge(*this, o); }
Tensor Tensor::eq(const Scalar& o) const { return kiln::eq(*this, o); }
Tensor Tensor::ne(const Scalar& o) const { return kiln::ne(*this, o); }
Tensor Tensor::lt(const Scalar& o) const { return kiln::lt(*this, o); }
Tensor Tensor::le(const Scalar& o) const { return kiln::le(*this, o); }
Tensor Tensor::gt(const Scalar& o) const { return kiln::gt(*this, o); }
Tensor Tensor::ge(const Scalar& o) const { return kiln::ge(*this, o); }
Tensor Tensor::isnan() const { return kiln::isnan(*this); }
Tensor Tensor::isinf() const { return kiln::isinf(*this); }
Tensor Tensor::isfinite() const { return kiln::isfinite(*this); }
Tensor Tensor::logical_and(const Tensor& o) const { return kiln::logical_and(*this, o); }
Tensor Tensor::logical_or(const Tensor& o) const { return kiln::logical_or(*this, o); }
Tensor Tensor::logical_xor(const Tensor& o) const { return kiln::logical_xor(*this, o); }
Tensor Tensor::logical_not() const { return kiln::logical_not(*this); }
Tensor Tensor::bitwise_and(const Tensor& o) const { return kiln::bitwise_and(*this, o); }
Tensor Tensor::bitwise_or(const Tensor& o) const { return kiln::bitwise_or(*this, o); }
Tensor Tensor::bitwise_xor(const Tensor& o) const { return kiln::bitwise_xor(*this, o); }
Tensor Tensor::bitwise_not() const { return kiln::bitwise_not(*this); }
Tensor Tensor::masked_fill(const Tensor& mask, const Scalar& value) const {
  return kiln::masked_fill(*this, mask, value);
}
Tensor Tensor::where(const Tensor& condition, const Tensor& other) const {
  return kiln::where(condition, *this, other);
}

Tensor Tensor::sum(std::optional<ScalarType> dtype) const { return kiln::sum(*this, dtype); }
Tensor Tensor::sum(IntArrayRef dims, bool keepdim, std::optional<ScalarType> dtype) const {
  return kiln::sum(*this, dims, keepdim, dtype);
}
Tensor Tensor::mean(std::optional<ScalarType> dtype) const { return kiln::mean(*this, dtype); }
Tensor Tensor::mean(IntArrayRef dims, bool keepdim, std::optional<ScalarType> dtype) const {
  return kiln::mean(*this, dims, keepdim, dtype);
}
Tensor Tensor::prod(std::optional<ScalarType> dtype) const { return kiln::prod(*this, dtype); }
Tensor Tensor::prod(int64_t dim, bool keepdim, std::optional<ScalarType> dtype) const {
  return kiln::prod(*this, dim, keepdim, dtype);
}
Tensor max(const Tensor& a, const Tensor& b) { return maximum(a, b); }
Tensor min(const Tensor& a, const Tensor& b) { return minimum(a, b); }
Tensor detail::softmax_of(const Tensor& x, int64_t dim, std::optional<ScalarType> dtype, bool log) {
  return log ? nn::functional::log_softmax(x, dim, dtype) : nn::functional::softmax(x, dim, dtype);
}
Tensor Tensor::softmax(int64_t dim, std::optional<ScalarType> dtype) const {
  return kiln::softmax(*this, dim, dtype);
}
Tensor Tensor::log_softmax(int64_t dim, std::optional<ScalarType> dtype) const {
  return kiln::log_softmax(*this, dim, dtype);
}
Tensor Tensor::max() const { return kiln::max(*this); }
std::tuple<Tensor, Tensor> Tensor::max(int64_t dim, bool keepdim) const {
  return kiln::max(*this, dim, keepdim);
}
Tensor Tensor::min() const { return kiln::min(*this); }
std::tuple<Tensor, Tensor> Tensor::min(int64_t dim, bool keepdim) const {
  return kiln::min(*this, dim, keepdim);
}
Tensor Tensor::amax(IntArrayRef dims, bool keepdim) const {
  return kiln::amax(*this, dims, keepdim);
}
Tensor Tensor::amin(IntArrayRef dims, bool keepdim) const {
  return kiln::amin(*this, dims, keepdim);
}
Tensor Tensor::argmax(std::optional<int64_t> dim, bool keepdim) const {
  return kiln::argmax(*this, dim, keepdim);
}
Tensor Tensor::argmin(std::optional<int64_t> dim, bool keepdim) const {
  return kiln::argmin(*this, dim, keepdim);
}
Tensor Tensor::logsumexp(IntArrayRef dims, bool keepdim) const {
  return kiln::logsumexp(*this, dims, keepdim);
}
Tensor Tensor::var(IntArrayRef dims, int64_t correction, bool keepdim) const {
  return kiln::var(*this, dims, correction, keepdim);
}
Tensor Tensor::std(IntArrayRef dims, int64_t correction, bool keepdim) const {
  return kiln::std(*this, dims, correction, keepdim);
}
Tensor Tensor::norm(const Scalar& p) const { return kiln::norm(*this, p); }
Tensor Tensor::norm(const Scalar& p, IntArrayRef dims, bool keepdim) const {
  return kiln::norm(*this, p, dims, keepdim);
}
Tensor Tensor::all() const { return kiln::all(*this); }
Tensor Tensor::all(int64_t dim, bool keepdim) const { return kiln::all(*this, dim, keepdim); }
Tensor Tensor::any() const { return kiln::any(*this); }
Tensor Tensor::any(int64_t dim, bool keepdim) const { return kiln::any(*this, dim, keepdim); }

// --- C++ operators -----------------------------------------------------------------------------
Tensor& Tensor::operator=(const Tensor& src) && {
  copy_(src);
  return *this;
}
Tensor& Tensor::operator=(Tensor&& src) && {
  copy_(src);
  return *this;
}
Tensor& Tensor::operator=(const Scalar& value) && {
  fill_(value);
  return *this;
}

Tensor operator-(const Tensor& a) { return neg(a); }
// ~ is logical not on bool tensors and bitwise not on integers, as in PyTorch.
Tensor operator~(const Tensor& a) { return bitwise_not(a); }
Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
Tensor operator%(const Tensor& a, const Tensor& b) { return remainder(a, b); }
Tensor operator&(const Tensor& a, const Tensor& b) { return bitwise_and(a, b); }
Tensor operator|(const Tensor& a, const Tensor& b) { return bitwise_or(a, b); }
Tensor operator^(const Tensor& a, const Tensor& b) { return bitwise_xor(a, b); }
Tensor operator==(const Tensor& a, const Tensor& b) { return eq(a, b); }
Tensor operator!=(const Tensor& a, const Tensor& b) { return ne(a, b); }
Tensor operator<(const Tensor& a, const Tensor& b) { return lt(a, b); }
Tensor operator<=(const Tensor& a, const Tensor& b) { return le(a, b); }
Tensor operator>(const Tensor& a, const Tensor& b) { return gt(a, b); }
Tensor operator>=(const Tensor& a, const Tensor& b) { return ge(a, b); }
Tensor operator+(const Tensor& a, const Scalar& b) { return add(a, b); }
Tensor operator-(const Tensor& a, const Scalar& b) { return sub(a, b); }
Tensor operator*(const Tensor& a, const Scalar& b) { return mul(a, b); }
Tensor operator/(const Tensor& a, const Scalar& b) { return div(a, b); }
Tensor operator%(const Tensor& a, const Scalar& b) { return remainder(a, b); }
Tensor operator+(const Scalar& a, const Tensor& b) { return add(b, a); }
Tensor operator-(const Scalar& a, const Tensor& b) { return add(neg(b), a); }
Tensor operator*(const Scalar& a, const Tensor& b) { return mul(b, a); }
Tensor operator/(const Scalar& a, const Tensor& b) {
  Tensor numerator = full({}, a, TensorOptions().dtype(result_type(b, a)).device(b.device()));
  numerator.impl().wrapped_number = true;
  return div(numerator, b);
}
Tensor operator==(const Tensor& a, const Scalar& b) { return eq(a, b); }
Tensor operator!=(const Tensor& a, const Scalar& b) { return ne(a, b); }
Tensor operator<(const Tensor& a, const Scalar& b) { return lt(a, b); }
Tensor operator<=(const Tensor& a, const Scalar& b) { return le(a, b); }
Tensor operator>(const Tensor& a, const Scalar& b) { return gt(a, b); }
Tensor operator>=(const Tensor& a, const Scalar& b) { return ge(a, b); }
Tensor& operator+=(Tensor& a, const Tensor& b) {
  a.add_(b);
  return a;
}
Tensor& operator-=(Tensor& a, const Tensor& b) {
  a.sub_(b);
  return a;
}
Tensor& operator*=(Tensor& a, const Tensor& b) {
  a.mul_(b);
  return a;
}
Tensor& operator/=(Tensor& a, const Tensor& b) {
  a.div_(b);
  return a;
}
Tensor& operator+=(Tensor& a, const Scalar& b) {
  a.add_(b);
  return a;
}
Tensor& operator-=(Tensor& a, const Scalar& b) {
  a.sub_(b);
  return a;
}
Tensor& operator*=(Tensor& a, const Scalar& b) {
  a.mul_(b);
  return a;
}
Tensor& operator/=(Tensor& a, const Scalar& b) {
  a.div_(b);
  return a;
}
Tensor& operator+=(Tensor&& a, const Tensor& b) {
  a.add_(b);
  return a;
}
Tensor& operator-=(Tensor&& a, const Tensor& b) {
  a.sub_(b);
  return a;
}
Tensor& operator*=(Tensor&& a, const Tensor& b) {
  a.mul_(b);
  return a;
}
Tensor& operator/=(Tensor&& a, const Tensor& b) {
  a.div_(b);
  return a;
}

}  // namespace kiln
