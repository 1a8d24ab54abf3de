// Sorting, selection, diagonals, products and einsum: the error paths (kiln's type and PyTorch's
// text), the API shapes conformance cases do not show (meshgrid's warning, views, method forms,
// equivalences of einsum with the operators it lowers to), and the edge cases of topk and sort.
#include "tensor_test.h"

#include <kiln/warning.h>

#include <cmath>

using namespace kiln;

namespace {

struct Collect : WarningHandler {
  std::vector<std::string> messages;
  void process(const Warning& w) override { messages.push_back(w.msg()); }
};

Tensor longs(std::vector<int64_t> v) { return tensor(v); }

}  // namespace

BOOST_AUTO_TEST_SUITE(sort_select)

BOOST_AUTO_TEST_CASE(sort_and_topk_errors) {
  Tensor x = randn({3, 5});
  CHECK_ERROR(IndexError, topk(x, 6), "topk(): selected index k out of range", "k = 6",
              "of size 5");
  CHECK_ERROR(IndexError, topk(x, -1, 0), "topk(): selected index k out of range");
  CHECK_ERROR(IndexError, sort(x, 2), "sort: dimension out of range");
  CHECK_ERROR(IndexError, kthvalue(x, 0), "kthvalue(): selected number k out of range");
  CHECK_ERROR(IndexError, kthvalue(x, 6, 1), "kthvalue(): selected number k out of range",
              "for size 5");
  CHECK_ERROR(IndexError, median(zeros({2, 0}), 1), "median(): cannot compute the median");
  CHECK_ERROR(IndexError, cummax(x, 3), "cummax: dimension out of range");
  CHECK_ERROR(ValueError, searchsorted(zeros({}), x), "boundaries tensor should have positive");
  CHECK_ERROR(ValueError, searchsorted(zeros({2, 3}), zeros({3, 3})),
              "first N-1 dimensions of boundaries tensor and input value tensor must match");
  CHECK_ERROR(ValueError, searchsorted(zeros({3}), x, false, true, "left"),
              "side and right can't be set to opposites");
  CHECK_ERROR(ValueError, bucketize(x, zeros({2, 2})), "boundaries tensor must be 1 dimension");
}

BOOST_AUTO_TEST_CASE(topk_and_sort_edges) {
  Tensor x = tensor({3.0, 1.0, 2.0});
  auto [v0, i0] = topk(x, 0);
  BOOST_TEST(v0.sizes().vec() == std::vector<int64_t>{0});
  BOOST_TEST(i0.dtype() == kLong);
  auto [v3, i3] = x.topk(3, 0, /*largest=*/false);
  BOOST_TEST(equal(v3, tensor({1.0, 2.0, 3.0})));
  BOOST_TEST(equal(i3, longs({1, 2, 0})));
  // ties: the lower index first, for both sort directions and topk
  Tensor ties = tensor({2.0, 1.0, 2.0, 1.0});
  BOOST_TEST(equal(std::get<1>(sort(ties, 0, true)), longs({0, 2, 1, 3})));
  BOOST_TEST(equal(std::get<1>(topk(ties, 2)), longs({0, 2})));
  BOOST_TEST(equal(std::get<1>(topk(ties, 2, 0, false)), longs({1, 3})));
  // a view input (transposed) sorts as its values
  Tensor m = arange(12, kFloat).view({3, 4}).t();
  BOOST_TEST(equal(std::get<0>(sort(m, 1, true)), std::get<0>(sort(m.contiguous(), 1, true))));
  // argsort and msort
  BOOST_TEST(equal(argsort(x, int64_t{0}), longs({1, 2, 0})));
  BOOST_TEST(equal(msort(m), std::get<0>(sort(m, 0))));
}

BOOST_AUTO_TEST_CASE(sort_gradient_scatters_back) {
  Tensor x = tensor({3.0, 1.0, 2.0}).requires_grad_();
  auto [v, i] = sort(x, 0);
  (v * tensor({1.0, 10.0, 100.0})).sum().backward();
  BOOST_TEST(equal(x.grad(), tensor({100.0, 1.0, 10.0})));
  Tensor y = tensor({1.0, 3.0, 2.0, 5.0}).requires_grad_();
  std::get<0>(cummax(y, 0)).sum().backward();  // 3 is the maximum twice
  BOOST_TEST(equal(y.grad(), tensor({1.0, 2.0, 0.0, 1.0})));
}

BOOST_AUTO_TEST_CASE(meshgrid_warns_without_indexing) {
  Collect collect;
  WarningUtils::WarningHandlerGuard guard(&collect);
  WarningUtils::WarnAlways always;
  auto grids = meshgrid({arange(2), arange(3)});
  BOOST_REQUIRE_EQUAL(collect.messages.size(), 1u);
  BOOST_TEST(collect.messages[0].find("it will be required to pass the indexing argument") !=
             std::string::npos);
  BOOST_TEST(grids[0].sizes().vec() == (std::vector<int64_t>{2, 3}));
  auto xy = meshgrid({arange(2), arange(3)}, "xy");
  BOOST_TEST(xy[0].sizes().vec() == (std::vector<int64_t>{3, 2}));
  BOOST_TEST(collect.messages.size() == 1u);
  CHECK_ERROR(ValueError, meshgrid({arange(2)}, "ji"), "indexing must be one of");
  CHECK_ERROR(ValueError, meshgrid({zeros({2, 2})}, "ij"), "Expected 0D or 1D tensor");
  CHECK_ERROR(TypeError, meshgrid({arange(2), zeros({2})}, "ij"), "same dtype");
}

BOOST_AUTO_TEST_CASE(diagonal_is_a_view) {
  Tensor x = zeros({3, 4});
  Tensor d = x.diagonal(1);
  d.fill_(7);
  BOOST_TEST(x.sum().item<double>() == 21.0);
  BOOST_TEST(d.sizes().vec() == std::vector<int64_t>{3});
  BOOST_TEST(x.diagonal(5).numel() == 0);
  CHECK_ERROR(ValueError, x.diagonal(0, 1, -1), "diagonal dimensions cannot be identical");
  CHECK_ERROR(IndexError, diagonal(zeros({3})), "expected a tensor of at least 2 dimensions");
  CHECK_ERROR(ValueError, trace(zeros({3})), "trace: expected a matrix");
  CHECK_ERROR(ValueError, diag(zeros({2, 2, 2})), "diag(): Supports 1D or 2D tensors");
}

BOOST_AUTO_TEST_CASE(einsum_matches_its_operators) {
  manual_seed(3);
  Tensor a = randn({2, 3, 4}), b = randn({2, 4, 5}), m = randn({4, 4}), v = randn({4});
  BOOST_TEST(allclose(einsum("bij,bjk->bik", {a, b}), bmm(a, b), 1e-5, 1e-6));
  BOOST_TEST(allclose(einsum("ii", {m}), trace(m)));
  BOOST_TEST(allclose(einsum("ii->i", {m}), m.diagonal()));
  BOOST_TEST(allclose(einsum("ij,j->i", {m, v}), mv(m, v), 1e-5, 1e-6));
  BOOST_TEST(allclose(einsum("i,j", {v, v}), outer(v, v)));
  BOOST_TEST(allclose(einsum("...ij->...ji", {a}), a.transpose(-1, -2)));
  CHECK_ERROR(ValueError, einsum("ij,jk->ik", {m}), "fewer operands were provided");
  CHECK_ERROR(ValueError, einsum("ij->ik", {m}), "output subscript k does not appear");
  CHECK_ERROR(ValueError, einsum("ijk->", {m}), "does not match the number of dimensions");
  CHECK_ERROR(ValueError, einsum("i1->", {v}), "invalid subscript");
  CHECK_ERROR(ValueError, einsum("ij,jk->ik", {m, randn({3, 2})}), "do not broadcast");
}

BOOST_AUTO_TEST_CASE(products_and_selection_errors) {
  CHECK_ERROR(ValueError, mv(zeros({2, 3}), zeros({2})), "mv: size mismatch");
  CHECK_ERROR(ValueError, addmv(zeros({5}), zeros({2, 3}), zeros({3})), "cannot be broadcast");
  CHECK_ERROR(ValueError, baddbmm(zeros({1}), zeros({2, 3}), zeros({2, 3, 4})),
              "expected batch1 to be a 3-D tensor");
  CHECK_ERROR(ValueError, cross(zeros({2, 4}), zeros({2, 4})), "no dimension of size 3");
  CHECK_ERROR(ValueError, outer(zeros({2, 2}), zeros({2})), "outer: expected 1-D tensors");
  CHECK_ERROR(TypeError, masked_select(zeros({3}), zeros({3})), "expected BoolTensor for mask");
  CHECK_ERROR(ValueError, masked_scatter(zeros({3}), ones({3}, kBool), zeros({2})),
              "Number of elements of source (2) < number of ones in mask (3)");
  CHECK_ERROR(IndexError, take(zeros({2, 2}), longs({4})), "take(): index 4 is out of bounds");
  CHECK_ERROR(IndexError, index_fill(zeros({2, 3}), 1, longs({-4}), 1.0), "out of bounds");
  CHECK_ERROR(ValueError, bincount(longs({1, -1})), "non-negative");
  CHECK_ERROR(ValueError, bincount(zeros({2})), "bincount only supports 1-d non-negative");
  CHECK_ERROR(TypeError, histc(longs({1, 2})), "torch.histc");
  CHECK_ERROR(ValueError, combinations(zeros({2, 2})), "Expect a 1D vector");
  // beta = 0 ignores self's NaN, as PyTorch's
  Tensor nan = full({2, 2}, std::nan(""));
  BOOST_TEST(!isnan(addbmm(nan, ones({1, 2, 2}), ones({1, 2, 2}), 0)).any().item<bool>());
}

BOOST_AUTO_TEST_SUITE_END()
