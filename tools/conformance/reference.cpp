// The suite's vocabulary: case registry, dtype lists, deterministic inputs, and references
// computed in float64 on the host with plain C++ (no kiln kernel involved but copies).
#include "conformance.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace conformance {

const Tensor& Args::t(size_t i) const { return tensors.at(i); }

kiln::Scalar Args::s(size_t i) const {
  const std::optional<kiln::Scalar>& v = scalars.at(i);
  if (!v) throw kiln::ValueError("conformance: scalar argument " + std::to_string(i) + " is none");
  return *v;
}

void require(bool cond, const std::string& what) {
  if (!cond) throw kiln::Error("conformance check failed: " + what);
}

// --- registry -----------------------------------------------------------------------------------
namespace {
std::vector<Case>& registry() {
  static std::vector<Case> cases;
  return cases;
}
}  // namespace

Case& add_case(Case c, const char* file, int line) {
  c.file = file;
  c.line = line;
  if (c.op.empty()) c.op = c.name;
  registry().push_back(std::move(c));
  return registry().back();
}

Case& add_golden(std::string name, std::string op, RunFn run, const char* file, int line) {
  Case c;
  c.name = std::move(name);
  c.op = std::move(op);
  c.run = std::move(run);
  c.golden = true;
  return add_case(std::move(c), file, line);
}

const std::vector<Case>& all_cases_so_far() { return registry(); }

const std::vector<Case>& all_cases() {
  static const bool built = [] {
    register_unary_cases();
    register_binary_cases();
    register_compare_cases();
    register_ternary_cases();
    register_inplace_cases();
    register_reduce_cases();
    register_linalg_cases();
    register_conv_cases();
    register_norm_cases();
    register_pool_cases();
    register_shape_cases();
    register_copy_cases();
    register_random_cases();
    register_rearrange_cases();
    register_scan_cases();
    register_activation_cases();
    register_resample_cases();
    register_attention_cases();
    register_sort_cases();
    register_select_cases();
    register_unary_goldens();  // last: for the unary entries that no family gave one
    return true;
  }();
  (void)built;
  return registry();
}

// --- dtypes -------------------------------------------------------------------------------------
using namespace kiln;

const std::vector<ScalarType> kAll = {kBool, kByte, kChar,     kShort, kInt,
                                      kLong, kHalf, kBFloat16, kFloat, kDouble};
const std::vector<ScalarType> kNumeric = {kByte, kChar,     kShort, kInt,   kLong,
                                          kHalf, kBFloat16, kFloat, kDouble};
const std::vector<ScalarType> kIntegral = {kByte, kChar, kShort, kInt, kLong};
const std::vector<ScalarType> kSigned = {kChar, kShort,    kInt,   kLong,
                                         kHalf, kBFloat16, kFloat, kDouble};
const std::vector<ScalarType> kFloating = {kHalf, kBFloat16, kFloat, kDouble};
const std::vector<ScalarType> kIntegralBool = {kBool, kByte, kChar, kShort, kInt, kLong};

ScalarType same_dtype(ScalarType d, size_t) { return d; }
ScalarType bool_dtype(ScalarType, size_t) { return kBool; }
ScalarType long_dtype(ScalarType, size_t) { return kLong; }
ScalarType float_dtype(ScalarType d, size_t) { return is_floating_point(d) ? d : kFloat; }
ScalarType sum_dtype(ScalarType d, size_t) { return is_floating_point(d) ? d : kLong; }

Tolerance tolerance(ScalarType dtype) {
  switch (dtype) {
    case kHalf: return {1e-3, 1e-3};
    case kBFloat16: return {1e-2, 1e-2};
    case kFloat: return {1e-5, 1e-5};
    case kDouble: return {1e-10, 1e-10};
    default: return {0, 0};
  }
}

// --- inputs -------------------------------------------------------------------------------------
namespace {

uint64_t splitmix(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double uniform(uint64_t& state) {
  return static_cast<double>(splitmix(state) >> 11) * (1.0 / 9007199254740992.0);
}

std::pair<double, double> int_range(ScalarType d) {
  switch (d) {
    case kByte: return {0, 255};
    case kChar: return {-128, 127};
    case kShort: return {-32768, 32767};
    case kInt: return {-2147483648.0, 2147483647.0};
    default: return {-9e15, 9e15};
  }
}

int64_t numel_of(const std::vector<int64_t>& sizes) {
  return std::accumulate(sizes.begin(), sizes.end(), int64_t{1}, std::multiplies<int64_t>());
}

double draw(ScalarType dtype, double lo, double hi, uint64_t& state) {
  double u = uniform(state);
  if (dtype == kBool) return u < 0.5 ? 1.0 : 0.0;
  if (is_floating_point(dtype)) return lo + (hi - lo) * u;
  auto [min, max] = int_range(dtype);
  double v = std::floor(std::ceil(lo) + (std::floor(hi) - std::ceil(lo) + 1) * u);
  return std::clamp(v, min, max);
}

}  // namespace

Tensor values(std::vector<int64_t> sizes, const std::vector<double>& v, ScalarType dtype) {
  require(static_cast<int64_t>(v.size()) == numel_of(sizes), "values: size mismatch");
  std::vector<double> copy = v;
  Tensor host = from_blob(copy.data(), sizes, TensorOptions().dtype(kDouble));
  return host.to(dtype, /*copy=*/true);
}

Tensor sample(std::vector<int64_t> sizes, ScalarType dtype, double lo, double hi, uint64_t seed) {
  uint64_t state = seed * 0x100000001B3ull + 12345;
  std::vector<double> v(static_cast<size_t>(numel_of(sizes)));
  for (double& x : v) x = draw(dtype, lo, hi, state);
  return values(sizes, v, dtype);
}

Tensor sample_grid(std::vector<int64_t> sizes, ScalarType dtype, double lo, double hi, double step,
                   uint64_t seed) {
  uint64_t state = seed * 0x100000001B3ull + 99;
  auto steps = static_cast<int64_t>(std::floor((hi - lo) / step + 0.5));
  std::vector<double> v(static_cast<size_t>(numel_of(sizes)));
  for (double& x : v) {
    auto k = static_cast<int64_t>(uniform(state) * static_cast<double>(steps + 1));
    x = lo + step * static_cast<double>(std::min(k, steps));
    if (dtype == kBool) x = x != 0 ? 1 : 0;
    if (is_integral(dtype, false)) {
      x = std::clamp(x, int_range(dtype).first, int_range(dtype).second);
    }
  }
  return values(sizes, v, dtype);
}

Tensor sample_nonzero(std::vector<int64_t> sizes, ScalarType dtype, double lo, double hi,
                      double gap, uint64_t seed) {
  uint64_t state = seed * 0x100000001B3ull + 777;
  std::vector<double> v(static_cast<size_t>(numel_of(sizes)));
  for (double& x : v) {
    do {
      x = draw(dtype, lo, hi, state);
    } while (std::abs(x) < gap);
  }
  return values(sizes, v, dtype);
}

// --- references ---------------------------------------------------------------------------------
Tensor host_double(const Tensor& t) {
  return t.to(Device(kCPU)).to(kDouble, /*copy=*/true).contiguous();
}

namespace {

struct HostArray {
  std::vector<int64_t> sizes;
  std::vector<double> v;
};

HostArray to_host(const Tensor& t) {
  Tensor h = host_double(t);
  HostArray a;
  a.sizes = h.sizes().vec();
  const double* p = h.data_ptr<double>();
  a.v.assign(p, p + h.numel());
  return a;
}

// The values of `a` broadcast to `sizes`, row-major.
std::vector<double> broadcast_to(const HostArray& a, const std::vector<int64_t>& sizes) {
  size_t n = sizes.size(), lead = n - a.sizes.size();
  std::vector<int64_t> strides(n, 0);
  int64_t s = 1;
  for (size_t i = a.sizes.size(); i-- > 0;) {
    strides[lead + i] = a.sizes[i] == 1 ? 0 : s;
    s *= a.sizes[i];
  }
  std::vector<double> out(static_cast<size_t>(numel_of(sizes)));
  std::vector<int64_t> index(n, 0);
  for (size_t k = 0; k < out.size(); ++k) {
    int64_t offset = 0;
    for (size_t d = 0; d < n; ++d) offset += index[d] * strides[d];
    out[k] = a.v[static_cast<size_t>(offset)];
    for (size_t d = n; d-- > 0;) {
      if (++index[d] < sizes[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

Tensor from_host(const std::vector<int64_t>& sizes, const std::vector<double>& v) {
  return values(sizes, v, kDouble);
}

// Applies f to the broadcast elements of the first `arity` tensors.
Outputs elementwise(const Args& args, size_t arity, const std::function<double(const double*)>& f) {
  std::vector<HostArray> in;
  std::vector<int64_t> sizes;
  for (size_t i = 0; i < arity; ++i) {
    in.push_back(to_host(args.t(i)));
    sizes = broadcast_shapes(sizes, in.back().sizes);
  }
  std::vector<std::vector<double>> b;
  for (const HostArray& a : in) b.push_back(broadcast_to(a, sizes));
  std::vector<double> out(static_cast<size_t>(numel_of(sizes)));
  double x[3];
  for (size_t k = 0; k < out.size(); ++k) {
    for (size_t i = 0; i < arity; ++i) x[i] = b[i][k];
    out[k] = f(x);
  }
  return {from_host(sizes, out)};
}

}  // namespace

ReferenceFn ref_unary(std::function<double(double)> f) {
  return [f](const Args& args, ScalarType) {
    return elementwise(args, 1, [&](const double* x) { return f(x[0]); });
  };
}

ReferenceFn ref_binary(std::function<double(double, double)> f) {
  return [f](const Args& args, ScalarType) {
    return elementwise(args, 2, [&](const double* x) { return f(x[0], x[1]); });
  };
}

ReferenceFn ref_ternary(std::function<double(double, double, double)> f) {
  return [f](const Args& args, ScalarType) {
    return elementwise(args, 3, [&](const double* x) { return f(x[0], x[1], x[2]); });
  };
}

ReferenceFn ref_reduce(std::vector<int64_t> dims, bool keepdim,
                       std::function<double(const std::vector<double>&)> f) {
  return [dims, keepdim, f](const Args& args, ScalarType) -> Outputs {
    HostArray a = to_host(args.t(0));
    int64_t ndim = static_cast<int64_t>(a.sizes.size());
    std::vector<bool> reduced(static_cast<size_t>(ndim), dims.empty());
    for (int64_t d : dims) reduced[static_cast<size_t>(d < 0 ? d + ndim : d)] = true;
    std::vector<int64_t> keep_sizes, out_sizes;
    for (int64_t d = 0; d < ndim; ++d) {
      int64_t s = reduced[d] ? 1 : a.sizes[d];
      keep_sizes.push_back(s);
      if (keepdim || !reduced[d]) out_sizes.push_back(s);
    }
    std::vector<std::vector<double>> groups(static_cast<size_t>(numel_of(keep_sizes)));
    std::vector<int64_t> index(static_cast<size_t>(ndim), 0);
    for (double v : a.v) {
      int64_t g = 0;
      for (int64_t d = 0; d < ndim; ++d) g = g * keep_sizes[d] + (reduced[d] ? 0 : index[d]);
      groups[static_cast<size_t>(g)].push_back(v);
      for (int64_t d = ndim; d-- > 0;) {
        if (++index[d] < a.sizes[d]) break;
        index[d] = 0;
      }
    }
    std::vector<double> out;
    for (const auto& group : groups) out.push_back(f(group));
    return {from_host(out_sizes, out)};
  };
}

ReferenceFn ref_float64(RunFn run, std::vector<size_t> data) {
  return [run, data](const Args& args, ScalarType) {
    Args a = args;
    for (Tensor& t : a.tensors) t = t.clone();
    for (size_t i : data) a.tensors.at(i) = a.tensors.at(i).to(kDouble, /*copy=*/true);
    return run(a);
  };
}

void add_composite_case(const std::string& name, std::vector<std::vector<int64_t>> sizes, RunFn run,
                        double lo, double hi) {
  std::vector<size_t> all;
  for (size_t i = 0; i < sizes.size(); ++i) all.push_back(i);
  add_case({.name = name,
            .op = name,
            .gradient = true,
            .dtypes = {kiln::kFloat, kiln::kDouble},
            .inputs =
                [sizes, lo, hi](ScalarType d) {
                  Args a;
                  uint64_t seed = 120;
                  for (const auto& s : sizes) a.tensors.push_back(sample(s, d, lo, hi, seed++));
                  return a;
                },
            .run = run,
            .reference = ref_float64(run, all),
            .tolerance_scale = 4});
}

}  // namespace conformance
