// gather and index_select (their new gradients) and index_add and scatter_add (the primitives
// behind them) against PyTorch, accumulation over repeated indices, dtypes, 0-dim tensors, and the
// error messages.
#include "golden.h"

namespace nn = kiln::nn;
using kiln::Tensor;
using nn_test::check_close;
using nn_test::golden;

namespace {

// Checks out = f(inputs) and the gradients of sum(out * gy) for case name (index fields are
// int64 and get no gradient).
template <class Fn>
void check_case(const std::string& name, const std::vector<std::string>& fields, Fn f) {
  std::vector<Tensor> in;
  for (const std::string& field : fields) {
    bool is_int = nn_test::golden_case(name).tensors.at(field).is_int;
    in.push_back(golden(name, field, std::nullopt, !is_int));
  }
  Tensor out = f(in);
  check_close(out, golden(name, "out"), 1e-12, 1e-12, name + " out");
  kiln::sum(out * golden(name, "gy")).backward();
  for (size_t i = 0; i < fields.size(); ++i) {
    if (!in[i].requires_grad()) continue;
    check_close(in[i].grad(), golden(name, "grad_" + fields[i]), 1e-12, 1e-12,
                name + " grad_" + fields[i]);
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(indexing)

BOOST_AUTO_TEST_CASE(gradients_match_pytorch) {
  check_case("gather_0", {"x", "idx"}, [](auto& v) { return kiln::gather(v[0], 0, v[1]); });
  check_case("gather_1", {"x", "idx"}, [](auto& v) { return v[0].gather(-1, v[1]); });
  check_case("index_select_0", {"x", "idx"},
             [](auto& v) { return kiln::index_select(v[0], 0, v[1]); });
  check_case("index_select_1", {"x", "idx"},
             [](auto& v) { return kiln::index_select(v[0], 1, v[1].to(kiln::kInt)); });
  check_case("index_add", {"x", "idx", "src"},
             [](auto& v) { return kiln::index_add(v[0], 0, v[1], v[2]); });
  check_case("scatter_add", {"x", "idx", "src"},
             [](auto& v) { return kiln::scatter_add(v[0], 1, v[1], v[2]); });
}

BOOST_AUTO_TEST_CASE(accumulation_dtypes_and_edge_cases) {
  // repeated indices accumulate, in every numeric dtype
  for (kiln::ScalarType dtype : {kiln::kLong, kiln::kInt, kiln::kFloat, kiln::kBFloat16}) {
    Tensor out = kiln::index_add(kiln::zeros({3}, dtype), 0, kiln::tensor({2, 2, 0}),
                                 kiln::ones({3}, dtype));
    BOOST_CHECK(out.dtype() == dtype);
    BOOST_CHECK(nn_test::values(out) == std::vector<double>({1, 0, 2}));
    Tensor s = kiln::scatter_add(kiln::zeros({2, 3}, dtype), 1, kiln::tensor({{2, 2}, {0, 1}}),
                                 kiln::ones({2, 2}, dtype));
    BOOST_CHECK(nn_test::values(s) == std::vector<double>({0, 0, 2, 1, 1, 0}));
  }
  // self is not modified
  Tensor self = kiln::zeros({3});
  kiln::index_add(self, 0, kiln::tensor({1}), kiln::ones({1}));
  BOOST_CHECK_EQUAL(kiln::sum(self).item<double>(), 0.0);
  // strided self and source; an index along a middle dimension
  Tensor x = kiln::arange(24, kiln::kFloat).view({2, 3, 4}).transpose(0, 2);  // [4, 3, 2]
  Tensor src = kiln::ones({2, 4}).t().unsqueeze(1);                           // [4, 1, 2]
  Tensor y = kiln::index_add(x, 1, kiln::tensor({1}), src);
  BOOST_CHECK(y.equal(x + kiln::tensor({0.0, 1.0, 0.0}).view({1, 3, 1})));
  // 0-dim tensors
  Tensor a = kiln::tensor(2.0).requires_grad_();
  Tensor picked = kiln::index_select(a, 0, kiln::tensor({0}));
  picked.backward(kiln::ones_like(picked));
  BOOST_CHECK_EQUAL(a.grad().item<double>(), 1.0);
  BOOST_CHECK_EQUAL(
      kiln::index_add(kiln::tensor(1.0), 0, kiln::tensor({0}), kiln::tensor(2.0)).item<double>(),
      3.0);
  // scatter_add with src larger than index: the extra elements of src get no gradient
  Tensor big = kiln::ones({2, 3}).requires_grad_();
  Tensor r = kiln::scatter_add(kiln::zeros({2, 2}), 1, kiln::tensor({{1}, {0}}), big);
  BOOST_CHECK(nn_test::values(r) == std::vector<double>({0, 1, 1, 0}));
  kiln::sum(r * kiln::tensor({{1.0, 2.0}, {3.0, 4.0}})).backward();
  BOOST_CHECK(nn_test::values(big.grad()) == std::vector<double>({2, 0, 0, 3, 0, 0}));
  // the embedding pattern: many rows into few, in parallel chunks
  Tensor rows = kiln::randint(0, 7, {5000});
  Tensor grad = kiln::index_add(kiln::zeros({7, 300}), 0, rows, kiln::ones({5000, 300}));
  Tensor counts = kiln::sum(kiln::one_hot(rows, 7), {0}).to(kiln::kFloat);
  BOOST_CHECK(grad.equal(counts.unsqueeze(1).expand({7, 300})));
}

BOOST_AUTO_TEST_CASE(second_order_through_gather) {
  // gather's gradient is scatter_add, whose gradient is gather: create_graph works
  Tensor x = kiln::randn({3, 4}, kiln::kDouble).requires_grad_();
  Tensor idx = kiln::tensor({{0, 1}, {2, 2}, {3, 0}});
  Tensor y = kiln::sum(kiln::pow(kiln::gather(x, 1, idx), 3));
  Tensor g = kiln::autograd::grad({y}, {x}, {}, std::nullopt, /*create_graph=*/true)[0];
  Tensor h = kiln::autograd::grad({kiln::sum(g)}, {x})[0];
  // d/dx sum_j 3 x_j^2 (over picked positions, with multiplicity) = 6 x * count
  Tensor count = kiln::scatter_add(kiln::zeros({3, 4}, kiln::kDouble), 1, idx,
                                   kiln::ones({3, 2}, kiln::kDouble));
  check_close(h, x.detach() * count * 6, 1e-12, 1e-12, "second order");
}

BOOST_AUTO_TEST_CASE(error_messages) {
  Tensor x = kiln::zeros({3, 4});
  CHECK_ERROR(kiln::Error, kiln::index_add(x, 0, kiln::tensor({3}), kiln::ones({1, 4})),
              "index 3 is out of bounds for dimension 0 with size 3");
  CHECK_ERROR(kiln::Error, kiln::index_add(x, 0, kiln::tensor({-1}), kiln::ones({1, 4})),
              "index -1 is out of bounds for dimension 0 with size 3");
  CHECK_ERROR(kiln::ValueError, kiln::index_add(x, 0, kiln::tensor({0, 1}), kiln::ones({3, 4})),
              "index_add(): Number of indices (2) should be equal to source.size(dim) (3)");
  CHECK_ERROR(
      kiln::ValueError, kiln::index_add(x, 0, kiln::tensor({0}), kiln::ones({1, 5})),
      "index_add(): source [1, 5] must have the sizes of self [3, 4] except at dimension 0");
  CHECK_ERROR(kiln::TypeError,
              kiln::index_add(x, 0, kiln::tensor({0}), kiln::ones({1, 4}, kiln::kDouble)),
              "index_add(): self (float32) and source (float64) must have the same scalar type");
  CHECK_ERROR(kiln::TypeError, kiln::index_add(x, 0, kiln::tensor({0.0}), kiln::ones({1, 4})),
              "index_add(): Expected dtype int32/int64 for index, got float32");
  CHECK_ERROR(kiln::ValueError,
              kiln::index_add(x, 0, kiln::zeros({1, 1}, kiln::kLong), kiln::ones({1, 4})),
              "index_add(): Index is supposed to be a vector, got a 2-D tensor");
  CHECK_ERROR(kiln::IndexError, kiln::index_add(x, 2, kiln::tensor({0}), kiln::ones({1, 4})),
              "index_add: dimension out of range (expected to be in range of [-2, 1], but got 2)");
  CHECK_ERROR(kiln::Error, kiln::scatter_add(x, 1, kiln::tensor({{4}}), kiln::ones({1, 1})),
              "index 4 is out of bounds for dimension 1 with size 4");
  CHECK_ERROR(
      kiln::ValueError, kiln::scatter_add(x, 1, kiln::tensor({0}), kiln::ones({1})),
      "scatter_add(): Index tensor must have the same number of dimensions as self and src");
  CHECK_ERROR(kiln::ValueError,
              kiln::scatter_add(x, 1, kiln::zeros({4, 1}, kiln::kLong), kiln::ones({4, 1})),
              "scatter_add(): Expected index [4, 1] to be smaller than self [3, 4] apart from "
              "dimension 1 and to be smaller size than src [4, 1]");
  CHECK_ERROR(kiln::TypeError,
              kiln::scatter_add(x, 1, kiln::zeros({1, 1}, kiln::kInt), kiln::ones({1, 1})),
              "scatter_add(): Expected dtype int64 for index, got int32");
  CHECK_ERROR(kiln::TypeError,
              kiln::scatter_add(x.to(kiln::kBool), 1, kiln::zeros({1, 1}, kiln::kLong),
                                kiln::ones({1, 1}, kiln::kBool)),
              "scatter_add");
}

BOOST_AUTO_TEST_SUITE_END()
