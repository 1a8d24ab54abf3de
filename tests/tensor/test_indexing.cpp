// Advanced indexing as libtorch's (kiln/indexing.h): index tensors, masks, where the indexed
// dimensions go, index_put_ with and without accumulate, and the errors, against PyTorch 1.13
// (each expected value is what torch gives for the same expression; gradients are checked by
// tests/autograd/test_grad_golden.cpp's index_* cases).
#include "tensor_test.h"

using namespace kiln;
using kiln::indexing::Ellipsis;
using kiln::indexing::None;
using kiln::indexing::Slice;

namespace {

Tensor longs(std::vector<int64_t> v) { return tensor(v); }

}  // namespace

BOOST_AUTO_TEST_SUITE(indexing)

BOOST_AUTO_TEST_CASE(index_tensors_pick_entries) {
  Tensor x = arange(24).view({2, 3, 4});
  Tensor i = longs({0, 2});
  CHECK_SIZES(x.index({longs({0, 0})}), {2, 3, 4});
  CHECK_VALUES(x.index({1, i}), {12, 13, 14, 15, 20, 21, 22, 23});
  CHECK_VALUES(x.index({Slice(), i, longs({1, 3})}), {1, 11, 13, 23});
  CHECK_VALUES(x.index({1, longs({-1, -3})}), {20, 21, 22, 23, 12, 13, 14, 15});
  // x[i] (operator[] with a tensor) and a 0-dim index tensor, which selects like an integer
  CHECK_VALUES(x[1][longs({2})], {20, 21, 22, 23});
  Tensor zero_dim = tensor(int64_t{1});
  CHECK_SIZES(x.index({zero_dim}), {3, 4});
  BOOST_TEST(x.index({zero_dim}).is_same_storage(x));
  BOOST_TEST(!x.index({1, i}).is_same_storage(x));  // advanced indexing copies
}

// torch: x[:, i, [1,3]] -> [2, 2]; x[[0,1], :, [1,3]] -> [2, 3] (separated: the broadcast dims
// first); x[:, :, i] -> [2, 3, 2]; x[[[0],[1]], 1:, i] -> [2, 2, 2]; x[None, ..., t(1)] ->
// [1, 2, 3]; x[True] -> [1, 2, 3, 4]; x[False] -> [0, 2, 3, 4]; x[..., None, i] -> [2, 3, 1, 2];
// x[i.view(2,1), i.view(1,2)] with i = [0, 1] -> [2, 2, 4].
BOOST_AUTO_TEST_CASE(indexed_dimensions_go_where_pytorch_puts_them) {
  Tensor x = arange(24).view({2, 3, 4});
  Tensor i = longs({0, 2});
  CHECK_SIZES(x.index({Slice(), i, longs({1, 3})}), {2, 2});
  Tensor separated = x.index({longs({0, 1}), Slice(), longs({1, 3})});
  CHECK_SIZES(separated, {2, 3});
  CHECK_VALUES(separated, {1, 5, 9, 15, 19, 23});
  CHECK_SIZES(x.index({Slice(), Slice(), i}), {2, 3, 2});
  CHECK_SIZES(x.index({longs({0, 1}).view({2, 1}), Slice(1, None), i}), {2, 2, 2});
  CHECK_SIZES(x.index({None, Ellipsis, tensor(int64_t{1})}), {1, 2, 3});
  CHECK_SIZES(x.index({true}), {1, 2, 3, 4});
  CHECK_SIZES(x.index({false}), {0, 2, 3, 4});
  CHECK_SIZES(x.index({"...", None, i}), {2, 3, 1, 2});
  Tensor j = longs({0, 1});
  Tensor grid = x.index({j.view({2, 1}), j.view({1, 2})});
  CHECK_SIZES(grid, {2, 2, 4});
  CHECK_VALUES(grid.index({Slice(), Slice(), 0}), {0, 4, 12, 16});
}

BOOST_AUTO_TEST_CASE(masks_pick_their_true_elements) {
  Tensor x = arange(24).view({2, 3, 4});
  Tensor m = ones({2, 3}, kBool);
  m.index_put_({0, 1}, false);
  Tensor picked = x.index({m});
  CHECK_SIZES(picked, {5, 4});
  CHECK_VALUES(picked.index({Slice(0, 2)}), {0, 1, 2, 3, 8, 9, 10, 11});
  Tensor v = tensor({-1.0, 2.0, -3.0, 4.0});
  CHECK_VALUES(v.index({v > 0}), {2, 4});
  CHECK_VALUES(v[v < 0], {-1, -3});
  CHECK_VALUES(nonzero(m), {0, 0, 0, 2, 1, 0, 1, 1, 1, 2});
  CHECK_SIZES(nonzero(zeros({3})), {0, 1});
  CHECK_VALUES(x.index({Slice(), longs({1}), tensor({true, false, true, false})}), {4, 6, 16, 18});
}

BOOST_AUTO_TEST_CASE(index_put_writes_and_accumulates) {
  // torch: zeros(5).index_put_((t([0,0,2]),), t([1.,2.,3.])) -> [2, 0, 3, 0, 0] (the last
  // write wins); with accumulate=True -> [3, 0, 3, 0, 0]
  Tensor y = zeros({5});
  y.index_put_({longs({0, 0, 2})}, tensor({1.0f, 2.0f, 3.0f}));
  CHECK_VALUES(y, {2, 0, 3, 0, 0});
  BOOST_TEST(y._version() == 1u);
  Tensor z = zeros({5});
  z.index_put_({longs({0, 0, 2})}, tensor({1.0f, 2.0f, 3.0f}), /*accumulate=*/true);
  CHECK_VALUES(z, {3, 0, 3, 0, 0});
  Tensor v = tensor({-1.0f, 2.0f, -3.0f, 4.0f});
  v.index_put_({v < 0}, 0);
  CHECK_VALUES(v, {0, 2, 0, 4});
  Tensor w = zeros({2, 3});
  w.index_put_({Slice(), longs({2, 0})}, tensor({5.0f, 6.0f}));  // broadcast over rows
  CHECK_VALUES(w, {6, 0, 5, 6, 0, 5});
  Tensor base = zeros({3, 4});
  base.index({1}).index_put_({longs({1, 3})}, 9);  // through a view: writes the base
  CHECK_VALUES(base.index({1}), {0, 9, 0, 9});
  Tensor ints = zeros({4}, kInt);
  ints.index_put_({longs({3, 1})}, tensor({7, 8}, kInt), true);
  CHECK_VALUES(ints, {0, 8, 0, 7});
}

// The "Effective PyTorch" batch gather, both its loop and its vectorized form, ported as written.
BOOST_AUTO_TEST_CASE(batch_gather_ports_as_written) {
  Tensor tensor = arange(30.).view({3, 5, 2});
  Tensor indices = kiln::tensor({{0, 4}, {1, 1}, {3, 2}});
  std::vector<Tensor> output;
  for (int64_t i = 0; i < tensor.size(0); ++i) output.push_back(tensor[i][indices[i]]);
  Tensor looped = stack(output);
  std::vector<int64_t> shape = tensor.sizes().vec();
  Tensor flat_first = reshape(tensor, {shape[0] * shape[1], shape[2]});
  Tensor offset = reshape(arange(shape[0]) * shape[1], {shape[0], 1});
  Tensor vectorized = flat_first[indices + offset];
  CHECK_SIZES(vectorized, {3, 2, 2});
  BOOST_TEST(equal(vectorized, looped));
  CHECK_VALUES(vectorized.index({Slice(), Slice(), 0}), {0, 8, 12, 12, 26, 24});
}

// PyTorch 1.13's messages for each.
BOOST_AUTO_TEST_CASE(errors_name_the_problem) {
  Tensor x = arange(24).view({2, 3, 4});
  CHECK_ERROR(IndexError, x.index({longs({5})}),
              "index 5 is out of bounds for dimension 0 with size 2");
  CHECK_ERROR(IndexError, x.index({longs({-3})}),
              "index -3 is out of bounds for dimension 0 with size 2");
  CHECK_ERROR(IndexError, x.index({ones({3}, kBool)}),
              "The shape of the mask [3] at index 0 does not match the shape of the indexed "
              "tensor [2, 3, 4] at index 0");
  CHECK_ERROR(IndexError, x.index({1, 2, 3, 4}), "too many indices for tensor of dimension 3");
  CHECK_ERROR(IndexError, x.index({tensor({0.5})}),
              "tensors used as indices must be long, byte or bool tensors");
  CHECK_ERROR(IndexError, x.index({tensor({0, 1}, kInt)}),
              "tensors used as indices must be long, byte or bool tensors");
  CHECK_ERROR(IndexError, x.index({longs({0, 1}), longs({0, 1, 2})}),
              "shape mismatch: indexing tensors could not be broadcast together with shapes "
              "[2], [3]");
  CHECK_ERROR(ValueError, zeros({4}).index_put_({longs({0, 1})}, zeros({3})),
              "shape mismatch: value tensor of shape [3] cannot be broadcast to indexing "
              "result of shape [2]");
  CHECK_ERROR(TypeError, zeros({4}).index_put_({longs({0})}, zeros({1}, kDouble)),
              "Index put requires the source and destination dtypes match");
  CHECK_ERROR(ValueError, x.index({"..x"}), "expected \"...\" to represent an ellipsis index");
}

// Writing through index_put_ follows copy_'s in-place rules.
BOOST_AUTO_TEST_CASE(index_put_follows_the_inplace_rules) {
  Tensor leaf = zeros({3}, requires_grad());
  CHECK_ERROR(Error, leaf.index_put_({longs({0})}, 1.0),
              "a leaf Variable that requires grad is being used in an in-place operation");
  Tensor y = leaf * 2;
  Tensor saved = y.exp();  // exp saves its result: changing y afterwards is fine
  Tensor p = y.sigmoid();  // sigmoid saves its result, not y
  Tensor q = y * y;        // mul saves y
  y.index_put_({longs({1})}, 5.0);
  BOOST_TEST(!y.is_leaf());
  CHECK_ERROR(Error, q.sum().backward(),
              "one of the variables needed for gradient computation has been modified by an "
              "inplace operation");
  (saved.sum() + p.sum()).backward();
  BOOST_TEST(leaf.grad().defined());
}

BOOST_AUTO_TEST_SUITE_END()
