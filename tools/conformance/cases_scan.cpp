// Scans: cumsum and cumprod. Values, dtypes (integers give int64, the dtype argument), NaN and
// wrapping come from PyTorch (make_conformance_golden.py's write_scans); the gradient cases
// compare with host loops along each dim of a [3, 4] input, cumprod's also with zeros in it.
#include "conformance.h"

namespace conformance {
namespace {

using namespace kiln;

std::optional<ScalarType> dtype_arg(const Args& a) {
  if (a.dtypes.empty()) return std::nullopt;
  return a.d(0);
}

// The inclusive scan of a host [3, 4] tensor along dim 0 and along dim 1.
Outputs scan_3x4(const Tensor& t, bool product) {
  Tensor h = host_double(t);
  const double* p = h.data_ptr<double>();
  std::vector<double> rows(12), cols(12);
  for (int64_t r = 0; r < 3; ++r) {
    for (int64_t c = 0; c < 4; ++c) {
      double v = p[r * 4 + c];
      auto combine = [product, v](double run) { return product ? run * v : run + v; };
      rows[r * 4 + c] = r == 0 ? v : combine(rows[(r - 1) * 4 + c]);
      cols[r * 4 + c] = c == 0 ? v : combine(cols[r * 4 + c - 1]);
    }
  }
  return Outputs{values({3, 4}, rows, kDouble), values({3, 4}, cols, kDouble)};
}

void add_scan_case(const char* name, const char* op, bool product,
                   std::function<Tensor(const Tensor&, int64_t)> fn, std::vector<ScalarType> dtypes,
                   InputsFn inputs) {
  add_case({.name = name,
            .op = op,
            .gradient = true,
            .dtypes = std::move(dtypes),
            .inputs = std::move(inputs),
            .run =
                [fn](const Args& a) {
                  return Outputs{fn(a.t(0), 0), fn(a.t(0), -1)};
                },
            .reference = [product](const Args& a, ScalarType) { return scan_3x4(a.t(0), product); },
            .out_dtype = [](ScalarType d, size_t) { return is_integral(d, true) ? kLong : d; },
            .tolerance_scale = 4});
}

}  // namespace

void register_scan_cases() {
  add_golden("cumsum", "cumsum",
             [](const Args& a) { return Outputs{cumsum(a.t(0), a.i(0), dtype_arg(a))}; });
  add_golden("cumprod", "cumprod",
             [](const Args& a) { return Outputs{cumprod(a.t(0), a.i(0), dtype_arg(a))}; });
  // the CPU of PyTorch 1.13 has no float16 scans: float16 is checked here
  add_scan_case(
      "cumsum_3x4", "cumsum", false, [](const Tensor& x, int64_t d) { return cumsum(x, d); },
      kNumeric,
      [](ScalarType d) {
        return Args{sample({3, 4}, d, -3, 3, 41)};
      });
  add_scan_case(
      "cumprod_3x4", "cumprod", true, [](const Tensor& x, int64_t d) { return cumprod(x, d); },
      kNumeric,
      [](ScalarType d) {
        return Args{sample({3, 4}, d, 0.5, 1.5, 42)};
      });
  // zeros: one per line in places, two in one line, a line that starts with one
  add_scan_case(
      "cumprod_zeros", "cumprod", true, [](const Tensor& x, int64_t d) { return cumprod(x, d); },
      kFloating,
      [](ScalarType d) {
        return Args{
            values({3, 4}, {0.0, 1.5, -2.0, 0.5, 2.0, 0.0, 1.25, 0.0, -1.5, 0.75, 0.0, 3.0}, d)};
      });
}

}  // namespace conformance
