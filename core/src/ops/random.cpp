// Random operators and the default generator. See Note [Random numbers are a function of
// (seed, offset, index)] in kiln/sdk/philox.hpp: the generator is a seed and an offset, and each
// call reserves one offset per element, so results do not depend on the device or on threads.
#include "elementwise.h"

#include "../autograd/inplace.h"

#include <limits>
#include <mutex>

namespace kiln {
namespace detail {
namespace {

struct Generator {
  std::mutex mutex;
  uint64_t seed = 67280421310721ull;  // PyTorch's default seed
  uint64_t offset = 0;

  // (seed, first offset) for n elements.
  std::pair<uint64_t, uint64_t> reserve(int64_t n) {
    std::lock_guard<std::mutex> lock(mutex);
    uint64_t first = offset;
    offset += static_cast<uint64_t>(n);
    return {seed, first};
  }
};

Generator& default_generator() {
  static Generator* g = new Generator();
  return *g;
}

using UniformOp = Operator<Tensor(const Tensor&, double, double)>;
using RandomOp = Operator<Tensor(const Tensor&, int64_t, int64_t)>;

Tensor uniform_backend(const UniformOp& op, const Tensor& self, double a, double b) {
  KILN_CHECK_TYPE(self.is_floating_point(), op.name(), ": expects a floating point tensor, got ",
                  dtype_name(self.dtype()));
  check_no_internal_overlap(op.name(), self);
  if (self.numel() == 0) return self;
  auto [seed, offset] = default_generator().reserve(self.numel());
  const char* first = op.name()[0] == 'u' ? "from" : "mean";
  const char* second = op.name()[0] == 'u' ? "to" : "std";
  run_kernel(op, {}, {&self},
             Attrs()
                 .i64("seed", static_cast<int64_t>(seed))
                 .i64("offset", static_cast<int64_t>(offset))
                 .f64(first, a)
                 .f64(second, b));
  bump_version(self);
  return self;
}

Tensor random_backend(const RandomOp& op, const Tensor& self, int64_t low, int64_t high) {
  KILN_CHECK_VALUE(low < high, op.name(),
                   ": expects 'from' to be less than 'to', but got from=", low, " >= to=", high);
  if (self.dtype() == kBool) throw_dtype_unsupported(op.name(), self.dtype());
  check_no_internal_overlap(op.name(), self);
  if (self.numel() == 0) return self;
  auto [seed, offset] = default_generator().reserve(self.numel());
  run_kernel(op, {}, {&self},
             Attrs()
                 .i64("seed", static_cast<int64_t>(seed))
                 .i64("offset", static_cast<int64_t>(offset))
                 .i64("low", low)
                 .i64("high", high));
  bump_version(self);
  return self;
}

}  // namespace

UniformOp uniform__op("uniform_",
                      "uniform_(Tensor(a!) self, float from=0, float to=1) -> "
                      "Tensor(a!)",
                      uniform_backend);
UniformOp normal__op("normal_",
                     "normal_(Tensor(a!) self, float mean=0, float std=1) -> "
                     "Tensor(a!)",
                     uniform_backend);
RandomOp random__op("random_", "random_(Tensor(a!) self, int from, int to) -> Tensor(a!)",
                    random_backend);

namespace {

const bool random_backwards_registered = [] {
  using autograd::detail::overwrite_kernel;
  uniform__op.set_kernel(DispatchKey::Autograd, overwrite_kernel<UniformOp, double, double>);
  normal__op.set_kernel(DispatchKey::Autograd, overwrite_kernel<UniformOp, double, double>);
  random__op.set_kernel(DispatchKey::Autograd, overwrite_kernel<RandomOp, int64_t, int64_t>);
  return true;
}();

}  // namespace
}  // namespace detail

void manual_seed(uint64_t seed) {
  detail::Generator& g = detail::default_generator();
  std::lock_guard<std::mutex> lock(g.mutex);
  g.seed = seed;
  g.offset = 0;
}

const Tensor& Tensor::uniform_(double from, double to) const {
  KILN_CHECK_VALUE(from <= to, "uniform_: expects from <= to, but got from=", from, " > to=", to);
  detail::uniform__op(*this, from, to);
  return *this;
}

const Tensor& Tensor::normal_(double mean, double std) const {
  KILN_CHECK_VALUE(std >= 0.0, "normal_: expects std >= 0.0, but found std ", std);
  detail::normal__op(*this, mean, std);
  return *this;
}

const Tensor& Tensor::random_(int64_t from, std::optional<int64_t> to) const {
  if (!to) {
    // the largest integer the dtype holds exactly, inclusive (PyTorch's default `to`)
    int64_t top = 0;
    switch (dtype()) {
      case kHalf: top = int64_t{1} << 11; break;
      case kBFloat16: top = int64_t{1} << 8; break;
      case kFloat: top = int64_t{1} << 24; break;
      case kDouble: top = int64_t{1} << 53; break;
      case kByte: top = std::numeric_limits<uint8_t>::max(); break;
      case kChar: top = std::numeric_limits<int8_t>::max(); break;
      case kShort: top = std::numeric_limits<int16_t>::max(); break;
      case kInt: top = std::numeric_limits<int32_t>::max(); break;
      case kLong: top = std::numeric_limits<int64_t>::max() - 1; break;  // `to` must fit int64
      case kBool: top = 1; break;
    }
    KILN_CHECK_VALUE(from <= top, "random_: expects 'from' to be less than or equal to ", top,
                     " (the largest integer ", dtype_name(dtype()), " holds exactly), but got ",
                     "from=", from);
    to = top + 1;
  }
  detail::random__op(*this, from, *to);
  return *this;
}

Tensor rand(IntArrayRef sizes, const TensorOptions& options) {
  Tensor t = empty(sizes, options.requires_grad(false));
  detail::uniform__op(t, 0.0, 1.0);
  t.storage()->reset_version();  // a new tensor is at version 0
  return options.requires_grad() ? t.requires_grad_() : t;
}

Tensor randn(IntArrayRef sizes, const TensorOptions& options) {
  Tensor t = empty(sizes, options.requires_grad(false));
  detail::normal__op(t, 0.0, 1.0);
  t.storage()->reset_version();
  return options.requires_grad() ? t.requires_grad_() : t;
}

Tensor randint(int64_t low, int64_t high, IntArrayRef sizes, const TensorOptions& options) {
  Tensor t = empty(sizes, options.dtype(options.dtype_or(kLong)));
  detail::random__op(t, low, high);
  t.storage()->reset_version();
  return t;
}

Tensor randint(int64_t high, IntArrayRef sizes, const TensorOptions& options) {
  return randint(0, high, sizes, options);
}

Tensor rand_like(const Tensor& t, const TensorOptions& options) {
  return rand(
      t.sizes(),
      options.dtype(options.dtype_or(t.dtype())).device(options.device_opt().value_or(t.device())));
}
Tensor randn_like(const Tensor& t, const TensorOptions& options) {
  return randn(
      t.sizes(),
      options.dtype(options.dtype_or(t.dtype())).device(options.device_opt().value_or(t.device())));
}
Tensor randint_like(const Tensor& t, int64_t low, int64_t high, const TensorOptions& options) {
  return randint(
      low, high, t.sizes(),
      options.dtype(options.dtype_or(t.dtype())).device(options.device_opt().value_or(t.device())));
}

}  // namespace kiln
