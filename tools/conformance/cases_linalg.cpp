// Matrix products: matmul (every rank combination PyTorch has), mm, bmm, addmm. The reference
// multiplies by broadcasting and sums in float64 (no matrix kernel involved).
#include "conformance.h"

namespace conformance {
namespace {

using namespace kiln;

// sum_k a[..., i, k] * b[..., k, j] with matmul's treatment of 1-D operands.
Tensor product_reference(const Tensor& a, const Tensor& b) {
  Tensor x = host_double(a), y = host_double(b);
  Tensor x2 = x.dim() == 1 ? x.unsqueeze(0) : x;
  Tensor y2 = y.dim() == 1 ? y.unsqueeze(1) : y;
  Tensor r = sum(x2.unsqueeze(-1) * y2.unsqueeze(-3), {-2});
  if (x.dim() == 1) r = r.squeeze(-2);
  if (y.dim() == 1) r = r.squeeze(-1);
  return r;
}

// Small integers keep every product exact in int8 and float16.
Tensor operand(const std::vector<int64_t>& sizes, ScalarType d, uint64_t seed) {
  return sample(sizes, d, -2, 2, seed);
}

void product(const std::string& name, const std::string& op, bool gradient, std::vector<int64_t> sa,
             std::vector<int64_t> sb, Tensor (*fn)(const Tensor&, const Tensor&),
             std::vector<ScalarType> dtypes = kNumeric) {
  add_case({.name = name,
            .op = op,
            .gradient = gradient,
            .dtypes = std::move(dtypes),
            .inputs =
                [sa, sb](ScalarType d) {
                  return Args{operand(sa, d, 61), operand(sb, d, 62)};
                },
            .run = [fn](const Args& a) { return Outputs{fn(a.t(0), a.t(1))}; },
            .reference = [](const Args& a,
                            ScalarType) { return Outputs{product_reference(a.t(0), a.t(1))}; }});
}

}  // namespace

void register_linalg_cases() {
  product("matmul_vec_vec", "matmul", kGradient, {5}, {5}, kiln::matmul);
  product("matmul_mat_vec", "matmul", kGradient, {3, 5}, {5}, kiln::matmul);
  product("matmul_vec_mat", "matmul", kGradient, {5}, {5, 2}, kiln::matmul);
  product("matmul_mat_mat", "matmul", kGradient, {3, 5}, {5, 4}, kiln::matmul);
  product("matmul_batched", "matmul", kGradient, {2, 3, 5}, {2, 5, 4}, kiln::matmul);
  product("matmul_broadcast", "matmul", kGradient, {2, 1, 3, 4}, {3, 4, 2}, kiln::matmul);
  product("matmul_3d_2d", "matmul", kGradient, {2, 3, 4}, {4, 5}, kiln::matmul);
  product("matmul_3d_1d", "matmul", kGradient, {2, 3, 4}, {4}, kiln::matmul);
  product("matmul_1d_3d", "matmul", kGradient, {4}, {2, 4, 3}, kiln::matmul);
  product("matmul_method", "matmul", kGradient, {4, 6}, {6, 3},
          [](const Tensor& a, const Tensor& b) { return a.matmul(b); });
  product("mm", "mm", kGradient, {4, 3}, {3, 5}, kiln::mm);
  // sums of 45 products overflow int8
  product("mm_large", "mm", kNoGradient, {67, 45}, {45, 71}, kiln::mm,
          {kByte, kShort, kInt, kLong, kHalf, kBFloat16, kFloat, kDouble});
  product("bmm", "bmm", kGradient, {3, 4, 2}, {3, 2, 5}, kiln::bmm);
  // large enough for oneDNN (and for the float32 widening of 16-bit operands)
  product("bmm_large", "bmm", kNoGradient, {4, 33, 40}, {4, 40, 37}, kiln::bmm,
          {kHalf, kBFloat16, kFloat, kDouble});
  product("mm_empty_inner", "mm", kNoGradient, {3, 0}, {0, 2}, kiln::mm);
  product("matmul_empty_batch", "matmul", kNoGradient, {0, 3, 4}, {4, 2}, kiln::matmul);
  add_case({.name = "mm_transposed_views",
            .op = "mm",
            .gradient = true,
            .dtypes = kNumeric,
            .inputs =
                [](ScalarType d) {
                  return Args{operand({3, 4}, d, 63), operand({5, 3}, d, 64)};
                },
            .run = [](const Args& a) { return Outputs{a.t(0).t().mm(a.t(1).t())}; },
            .reference =
                [](const Args& a, ScalarType) {
                  return Outputs{product_reference(a.t(0).t(), a.t(1).t())};
                }});
  add_case({.name = "mm_expanded",
            .op = "mm",
            .gradient = true,
            .dtypes = kNumeric,
            .inputs =
                [](ScalarType d) {
                  return Args{operand({1, 4}, d, 68), operand({4, 1}, d, 69)};
                },
            .run =
                [](const Args& a) {
                  Tensor batched = bmm(a.t(0).expand({2, 3, 4}), a.t(1).expand({2, 4, 2}));
                  return Outputs{mm(a.t(0), a.t(1)), batched};
                },
            .reference =
                [](const Args& a, ScalarType) {
                  Tensor x = host_double(a.t(0)).expand({3, 4});
                  Tensor y = host_double(a.t(1)).expand({4, 2});
                  return Outputs{product_reference(x, y),
                                 product_reference(x.expand({2, 3, 4}), y.expand({2, 4, 2}))};
                },
            .on_device =
                [](const Args& a) {
                  return Args{a.t(0).expand({3, 4}), a.t(1).expand({4, 2})};
                }});
  add_case({.name = "addmm",
            .op = "addmm",
            .gradient = true,
            .dtypes = kNumeric,
            .inputs =
                [](ScalarType d) {
                  return Args{operand({5}, d, 65), operand({3, 4}, d, 66), operand({4, 5}, d, 67)};
                },
            .run =
                [](const Args& a) {
                  bool floating = a.t(0).is_floating_point();
                  Scalar beta = floating ? Scalar(0.5) : Scalar(int64_t{2});
                  Scalar alpha = floating ? Scalar(2.0) : Scalar(int64_t{3});
                  return Outputs{addmm(a.t(0), a.t(1), a.t(2)),
                                 addmm(a.t(0), a.t(1), a.t(2), beta, alpha)};
                },
            .reference =
                [](const Args& a, ScalarType d) {
                  Tensor p = product_reference(a.t(1), a.t(2));
                  Tensor bias = host_double(a.t(0));
                  double beta = is_floating_point(d) ? 0.5 : 2;
                  double alpha = is_floating_point(d) ? 2 : 3;
                  return Outputs{bias + p, bias * beta + p * alpha};
                }});

  // PyTorch's outputs
  add_golden("matmul", "matmul", [](const Args& a) { return Outputs{matmul(a.t(0), a.t(1))}; });
  add_golden("mm", "mm", [](const Args& a) { return Outputs{mm(a.t(0), a.t(1))}; });
  add_golden("bmm", "bmm", [](const Args& a) { return Outputs{bmm(a.t(0), a.t(1))}; });
  add_golden("addmm", "addmm",
             [](const Args& a) { return Outputs{addmm(a.t(0), a.t(1), a.t(2))}; });
  add_golden("addmm_scaled", "addmm",
             [](const Args& a) { return Outputs{addmm(a.t(0), a.t(1), a.t(2), a.s(0), a.s(1))}; });
}

}  // namespace conformance
