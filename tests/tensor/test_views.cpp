// Views alias their base: writing through a view changes the base, the storage and the data
// pointers are shared; reshape copies only when the strides leave no choice.
#include "tensor_test.h"

using namespace kiln;
using namespace kiln::indexing;
using tensor_test::strides;
using tensor_test::vals;

namespace {

// 0, 1, ..., n-1 as float32 in `sizes`.
Tensor iota(std::vector<int64_t> sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return arange(n, kFloat).view(sizes);
}

// `view` shares base's storage and starts `offset` elements into base's data.
void check_alias(const Tensor& base, const Tensor& view, int64_t offset) {
  BOOST_TEST(view.is_same_storage(base));
  BOOST_TEST(view.data_ptr<float>() == base.data_ptr<float>() + offset);
  BOOST_TEST(view.storage_offset() == base.storage_offset() + offset);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(views)

BOOST_AUTO_TEST_CASE(view_and_reshape_of_contiguous_tensors_alias) {
  Tensor x = iota({2, 3});
  Tensor v = x.view({3, 2});
  check_alias(x, v, 0);
  BOOST_TEST(strides(v) == std::vector<int64_t>({2, 1}));
  v.fill_(7);
  CHECK_VALUES(x, {7, 7, 7, 7, 7, 7});
  Tensor r = x.reshape({-1});
  check_alias(x, r, 0);
  r[4].fill_(1);
  BOOST_TEST(x[1][1].item<float>() == 1.0f);
  Tensor va = iota({6}).view_as(x);
  BOOST_TEST(va.sizes().vec() == x.sizes().vec());
  BOOST_TEST(x.view({-1, 2}).sizes().vec() == std::vector<int64_t>({3, 2}));
}

BOOST_AUTO_TEST_CASE(reshape_of_a_non_contiguous_tensor_copies) {
  Tensor x = iota({2, 3});
  Tensor t = x.t();
  BOOST_TEST(!t.is_contiguous());
  Tensor r = t.reshape({6});
  BOOST_TEST(!r.is_same_storage(x));
  CHECK_VALUES(r, {0, 3, 1, 4, 2, 5});
  r.fill_(9);
  CHECK_VALUES(x, {0, 1, 2, 3, 4, 5});
  Tensor f = t.flatten();
  BOOST_TEST(!f.is_same_storage(x));
  CHECK_VALUES(f, {0, 3, 1, 4, 2, 5});
  CHECK_ERROR(ValueError, t.view({6}),
              "view size is not compatible with input tensor's size and stride (at least one "
              "dimension spans across two contiguous subspaces). Use .reshape(...) instead.");
  // a view that only splits a dimension works on a transposed tensor
  Tensor split = t.view({3, 2, 1});
  BOOST_TEST(split.is_same_storage(x));
}

BOOST_AUTO_TEST_CASE(transpose_permute_and_t_swap_strides) {
  Tensor x = iota({2, 3, 4});
  Tensor tr = x.transpose(0, 2);
  check_alias(x, tr, 0);
  BOOST_TEST(strides(tr) == std::vector<int64_t>({1, 4, 12}));
  tr[3][2][1].fill_(-1);  // x[1][2][3]
  BOOST_TEST(x[1][2][3].item<float>() == -1.0f);
  Tensor p = x.permute({1, 2, 0});
  BOOST_TEST(p.sizes().vec() == std::vector<int64_t>({3, 4, 2}));
  BOOST_TEST(strides(p) == std::vector<int64_t>({4, 1, 12}));
  BOOST_TEST(p.is_same_storage(x));
  Tensor m = iota({2, 3});
  Tensor t = m.t();
  t.select(0, 2).fill_(50);  // column 2 of m
  CHECK_VALUES(m, {0, 1, 50, 3, 4, 50});
  BOOST_TEST(iota({4}).t().sizes().vec() == std::vector<int64_t>({4}));
  BOOST_TEST(transpose(m, -1, -2).equal(t));
  BOOST_TEST(permute(x, {0, 1, 2}).equal(x));
}

BOOST_AUTO_TEST_CASE(narrow_select_slice_and_subscript_alias) {
  Tensor x = iota({4, 5});
  Tensor n = x.narrow(1, 1, 3);
  check_alias(x, n, 1);
  n.fill_(0);
  CHECK_VALUES(x[0], {0, 0, 0, 0, 4});
  Tensor s = x.select(0, 2);
  check_alias(x, s, 10);
  Tensor row = x[3];
  check_alias(x, row, 15);
  row += 100;
  BOOST_TEST(x[3][4].item<float>() == 119.0f);
  Tensor last = x.select(1, -1);
  BOOST_TEST(strides(last) == std::vector<int64_t>({5}));
  check_alias(x, last, 4);
  Tensor sl = x.slice(0, 1, std::nullopt, 2);  // rows 1 and 3
  BOOST_TEST(sl.sizes().vec() == std::vector<int64_t>({2, 5}));
  BOOST_TEST(strides(sl) == std::vector<int64_t>({10, 1}));
  check_alias(x, sl, 5);
  BOOST_TEST(narrow(x, 0, -1, 1).equal(x.slice(0, 3, std::nullopt)));
}

BOOST_AUTO_TEST_CASE(index_with_slices_none_and_ellipsis_gives_views) {
  Tensor x = iota({2, 3, 4});
  Tensor a = x.index({Slice(0, 2), 1});
  BOOST_TEST(a.sizes().vec() == std::vector<int64_t>({2, 4}));
  check_alias(x, a, 4);
  Tensor b = x.index({Ellipsis, Slice(std::nullopt, std::nullopt, 2)});
  BOOST_TEST(b.sizes().vec() == std::vector<int64_t>({2, 3, 2}));
  BOOST_TEST(strides(b) == std::vector<int64_t>({12, 4, 2}));
  CHECK_VALUES(b[0][0], {0, 2});
  Tensor c = x.index({None, 1, Ellipsis, None});
  BOOST_TEST(c.sizes().vec() == std::vector<int64_t>({1, 3, 4, 1}));
  check_alias(x, c, 12);
  Tensor d = x.index({-1, Slice(1), Slice(-2)});
  BOOST_TEST(d.sizes().vec() == std::vector<int64_t>({2, 2}));
  CHECK_VALUES(d, {18, 19, 22, 23});
  d.fill_(0);
  BOOST_TEST(x[1][2][3].item<float>() == 0.0f);
  x.index_put_({0, Slice(), 0}, -5);
  CHECK_VALUES(x.index({0, Slice(), 0}), {-5, -5, -5});
  x.index_put_({1, 0}, tensor({1., 2., 3., 4.}));
  CHECK_VALUES(x[1][0], {1, 2, 3, 4});
  CHECK_ERROR(IndexError, x.index({0, 0, 0, 0}), "too many indices");
  CHECK_ERROR(IndexError, x.index({Ellipsis, 0, Ellipsis}), "single ellipsis");
}

BOOST_AUTO_TEST_CASE(expand_squeeze_unsqueeze_flatten_alias) {
  Tensor x = iota({3, 1});
  Tensor e = x.expand({2, 3, 4});
  BOOST_TEST(strides(e) == std::vector<int64_t>({0, 1, 0}));
  BOOST_TEST(e.is_same_storage(x));
  x[1].fill_(42);
  CHECK_VALUES(e[1][1], {42, 42, 42, 42});
  BOOST_TEST(x.expand({-1, 2}).sizes().vec() == std::vector<int64_t>({3, 2}));
  Tensor ea = iota({1}).expand_as(e);
  BOOST_TEST(ea.sizes().vec() == e.sizes().vec());

  Tensor s = x.squeeze();
  BOOST_TEST(s.sizes().vec() == std::vector<int64_t>({3}));
  BOOST_TEST(s.is_same_storage(x));
  BOOST_TEST(x.squeeze(0).sizes().vec() == std::vector<int64_t>({3, 1}));  // not size 1
  BOOST_TEST(x.squeeze(-1).sizes().vec() == std::vector<int64_t>({3}));
  Tensor u = x.unsqueeze(0);
  BOOST_TEST(u.sizes().vec() == std::vector<int64_t>({1, 3, 1}));
  u[0][2].fill_(8);
  BOOST_TEST(x[2][0].item<float>() == 8.0f);
  BOOST_TEST(unsqueeze(x, -1).sizes().vec() == std::vector<int64_t>({3, 1, 1}));

  Tensor y = iota({2, 3, 4});
  Tensor f = y.flatten(1);
  BOOST_TEST(f.sizes().vec() == std::vector<int64_t>({2, 12}));
  check_alias(y, f, 0);
  f[1][11].fill_(-3);
  BOOST_TEST(y[1][2][3].item<float>() == -3.0f);
  BOOST_TEST(flatten(y).sizes().vec() == std::vector<int64_t>({24}));
  BOOST_TEST(y.flatten(0, 1).sizes().vec() == std::vector<int64_t>({6, 4}));
  BOOST_TEST(tensor(3.0).flatten().sizes().vec() == std::vector<int64_t>({1}));
}

BOOST_AUTO_TEST_CASE(unbind_split_and_chunk_give_views) {
  Tensor x = iota({3, 4});
  std::vector<Tensor> rows = x.unbind();
  BOOST_TEST(rows.size() == 3u);
  for (size_t i = 0; i < rows.size(); ++i) check_alias(x, rows[i], static_cast<int64_t>(i) * 4);
  rows[1].fill_(0);
  CHECK_VALUES(x[1], {0, 0, 0, 0});
  std::vector<Tensor> cols = unbind(x, 1);
  BOOST_TEST(cols.size() == 4u);
  check_alias(x, cols[3], 3);
  std::vector<Tensor> parts = x.split(3, 1);
  BOOST_TEST(parts.size() == 2u);
  BOOST_TEST(parts[1].sizes().vec() == std::vector<int64_t>({3, 1}));
  check_alias(x, parts[1], 3);
  std::vector<Tensor> chunks = x.chunk(2, 0);
  BOOST_TEST(chunks.size() == 2u);
  BOOST_TEST(chunks[0].sizes().vec() == std::vector<int64_t>({2, 4}));
  BOOST_TEST(chunks[1].sizes().vec() == std::vector<int64_t>({1, 4}));
}

BOOST_AUTO_TEST_CASE(as_strided_and_views_of_views) {
  Tensor x = iota({10});
  Tensor w = x.as_strided({3, 3}, {3, 1}, 1);
  CHECK_VALUES(w, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  check_alias(x, w, 1);
  Tensor inner = w.t().narrow(0, 1, 2).select(1, 2);  // w[2][1], w[2][2]
  CHECK_VALUES(inner, {8, 9});
  inner.fill_(0);
  CHECK_VALUES(x, {0, 1, 2, 3, 4, 5, 6, 7, 0, 0});
  BOOST_TEST(inner.is_same_storage(x));
  CHECK_ERROR(ValueError, x.as_strided({4, 4}, {4, 1}),
              "need more elements than the storage holds");
}

BOOST_AUTO_TEST_CASE(copying_a_handle_aliases_and_clone_copies) {
  Tensor x = iota({3});
  Tensor same = x;  // a handle, as in libtorch
  same.fill_(1);
  CHECK_VALUES(x, {1, 1, 1});
  BOOST_TEST(same.is_same(x));
  Tensor c = x.clone();
  BOOST_TEST(!c.is_same_storage(x));
  c.fill_(2);
  CHECK_VALUES(x, {1, 1, 1});
  Tensor cont = x.contiguous();
  BOOST_TEST(cont.is_same(x));  // already contiguous: no copy
  Tensor tc = iota({2, 3}).t().contiguous();
  BOOST_TEST(tc.is_contiguous());
  BOOST_TEST(strides(tc) == std::vector<int64_t>({2, 1}));
}

BOOST_AUTO_TEST_CASE(storage_versions_count_writes) {
  Tensor x = iota({4});
  uint32_t v0 = x.storage()->version();
  x.add_(1);
  x[0].fill_(3);
  BOOST_TEST(x.storage()->version() > v0);
}

BOOST_AUTO_TEST_SUITE_END()
