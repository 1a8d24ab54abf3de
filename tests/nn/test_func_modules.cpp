// The modules issue 15 added for libtorch's ModulesTest: EmbeddingBag and Embedding's options
// and from_pretrained, Bilinear, Unflatten, FractionalMaxPool2d/3d, CrossMapLRN2d (against
// PyTorch's goldens, func_cases.txt) and the dropout modules; their printing.
#include "golden.h"

#include <kiln/util/string.h>

#include <cmath>
#include <sstream>

namespace nn = kiln::nn;
namespace F = kiln::nn::functional;
using kiln::Tensor;
using nn_test::check_close;
using nn_test::golden;

namespace {
template <class M>
std::string printed(const M& module) {
  std::ostringstream out;
  out << module;
  return out.str();
}
}  // namespace

BOOST_AUTO_TEST_SUITE(func_modules)

BOOST_AUTO_TEST_CASE(embedding_bag_module) {
  Tensor w = golden("embedding_bag_sum_padding", "w", kiln::kFloat);
  auto bag = nn::EmbeddingBag::from_pretrained(
      w, nn::EmbeddingBagFromPretrainedOptions().mode(kiln::kSum).padding_idx(4));
  BOOST_CHECK(!bag->weight.requires_grad());
  Tensor out = bag(golden("embedding_bag_sum_padding", "idx"),
                   golden("embedding_bag_sum_padding", "offsets"));
  check_close(out, golden("embedding_bag_sum_padding", "out"), 1e-6, 1e-6, "EmbeddingBag");
  // libtorch's EmbeddingBagFromPretrained case: the mean of rows 1 and 0
  auto mean_bag = nn::EmbeddingBag::from_pretrained(kiln::tensor({{1., 2.3, 3.}, {4., 5.1, 6.3}}));
  BOOST_CHECK(kiln::allclose(mean_bag(kiln::tensor({{1, 0}}, kiln::kLong)),
                             kiln::tensor({{2.5, 3.7, 4.65}})));
  nn::EmbeddingBag fresh(nn::EmbeddingBagOptions(10, 3).mode(kiln::kMax));
  BOOST_CHECK(fresh->weight.requires_grad());
  fresh(kiln::tensor({{1, 2}, {3, 3}}, kiln::kLong)).sum().backward();
  BOOST_CHECK_EQUAL(fresh->weight.grad().numel(), 30);
  BOOST_CHECK_EQUAL(printed(nn::EmbeddingBag(nn::EmbeddingBagOptions(10, 2))),
                    "kiln::nn::EmbeddingBag(num_embeddings=10, embedding_dim=2)");
  BOOST_CHECK_EQUAL(
      printed(nn::EmbeddingBag(nn::EmbeddingBagOptions(10, 2)
                                   .max_norm(2)
                                   .norm_type(2.5)
                                   .scale_grad_by_freq(true)
                                   .sparse(true)
                                   .mode(kiln::kSum)
                                   .padding_idx(5))),
      "kiln::nn::EmbeddingBag(num_embeddings=10, embedding_dim=2, max_norm=2, norm_type=2.5, "
      "scale_grad_by_freq=true, sparse=true, mode=kSum, padding_idx=5)");
  CHECK_ERROR(kiln::ValueError, nn::EmbeddingBag::from_pretrained(kiln::ones({3})),
              "EmbeddingBag::from_pretrained: embeddings parameter is expected to be "
              "2-dimensional");
}

BOOST_AUTO_TEST_CASE(embedding_module_options) {
  auto emb = nn::Embedding::from_pretrained(kiln::tensor({{1., 2.3, 3.}, {4., 5.1, 6.3}}),
                                            nn::EmbeddingFromPretrainedOptions().freeze(false));
  BOOST_CHECK(emb->weight.requires_grad());
  BOOST_CHECK(kiln::allclose(emb(kiln::tensor({1}, kiln::kLong)), kiln::tensor({{4.0, 5.1, 6.3}})));
  // max_norm renormalises the weight's rows in place, as F::embedding
  nn::Embedding capped(nn::EmbeddingOptions(4, 3).max_norm(1.0));
  {
    kiln::NoGradGuard no_grad;
    capped->weight.fill_(2.0);
  }
  capped(kiln::tensor({0, 2}, kiln::kLong));
  std::vector<double> norms = nn_test::values(capped->weight.norm(2, {1}));
  BOOST_CHECK_CLOSE(norms[0], 1.0, 1e-4);
  BOOST_CHECK_CLOSE(norms[1], std::sqrt(12.0), 1e-4);
  BOOST_CHECK_EQUAL(
      printed(nn::Embedding(nn::EmbeddingOptions(10, 2)
                                .padding_idx(3)
                                .max_norm(2)
                                .norm_type(2.5)
                                .scale_grad_by_freq(true)
                                .sparse(true))),
      "kiln::nn::Embedding(num_embeddings=10, embedding_dim=2, padding_idx=3, max_norm=2, "
      "norm_type=2.5, scale_grad_by_freq=true, sparse=true)");
  CHECK_ERROR(kiln::ValueError,
              nn::Embedding(nn::EmbeddingOptions(3, 2)._weight(kiln::ones({2, 2}))),
              "Embedding: shape of _weight [2, 2] does not match num_embeddings and "
              "embedding_dim [3, 2]");
}

BOOST_AUTO_TEST_CASE(bilinear_module) {
  nn::Bilinear model(5, 3, 2);
  Tensor y = model(kiln::randn({10, 5}), kiln::randn({10, 3}));
  BOOST_CHECK(y.sizes().equals({10, 2}));
  y.sum().backward();
  BOOST_CHECK_EQUAL(model->weight.grad().numel(), 30);
  double bound = 1.0 / std::sqrt(5.0);
  BOOST_CHECK_LE(kiln::amax(kiln::abs(model->weight)).item<double>(), bound);
  BOOST_CHECK_EQUAL(printed(nn::Bilinear(nn::BilinearOptions(3, 2, 4).bias(false))),
                    "kiln::nn::Bilinear(in1_features=3, in2_features=2, out_features=4, "
                    "bias=false)");
  BOOST_CHECK(!nn::Bilinear(nn::BilinearOptions(3, 2, 4).bias(false))->bias.defined());
}

BOOST_AUTO_TEST_CASE(unflatten_module) {
  nn::Unflatten unflatten(nn::UnflattenOptions(0, {2, 2}));
  BOOST_CHECK(unflatten(kiln::tensor({1, 2, 3, 4})).equal(kiln::tensor({{1, 2}, {3, 4}})));
  nn::Unflatten middle(nn::UnflattenOptions(-1, {3, -1}));
  BOOST_CHECK(middle(kiln::ones({2, 6})).sizes().equals({2, 3, 2}));
  BOOST_CHECK_EQUAL(printed(unflatten), "kiln::nn::Unflatten(dim=0, unflattened_size={2, 2})");
  nn::Unflatten named(nn::UnflattenOptions("B", {{"B1", 2}, {"B2", 2}}));
  BOOST_CHECK_EQUAL(printed(named),
                    "kiln::nn::Unflatten(dim=\"B\", unflattened_size={{\"B1\", 2}, {\"B2\", 2}})");
  CHECK_ERROR(kiln::NotImplementedError, named(kiln::ones({4})), "Unflatten: the named form");
  CHECK_ERROR(kiln::IndexError, unflatten(kiln::ones(std::vector<int64_t>{})),
              "Unflatten: dimension 0 is out of range");
}

BOOST_AUTO_TEST_CASE(fractional_max_pool_modules) {
  Tensor samples = golden("fractional_max_pool3d", "samples");
  nn::FractionalMaxPool3d pool(
      nn::FractionalMaxPool3dOptions({2, 3, 2}).output_size({3, 4, 5})._random_samples(samples));
  auto [out, indices] = pool->forward_with_indices(golden("fractional_max_pool3d", "x"));
  check_close(out, golden("fractional_max_pool3d", "out"), 1e-12, 1e-12, "FractionalMaxPool3d");
  BOOST_CHECK(indices.equal(golden("fractional_max_pool3d", "indices")));
  BOOST_CHECK_EQUAL(printed(pool), "kiln::nn::FractionalMaxPool3d()");
  nn::FractionalMaxPool2d model(nn::FractionalMaxPool2dOptions(3).output_size(2));
  Tensor x = kiln::ones({2, 5, 5}).requires_grad_();
  Tensor y = model(x);
  y.sum().backward();
  BOOST_CHECK(y.equal(kiln::ones({2, 2, 2})));
  BOOST_CHECK_EQUAL(kiln::sum(x.grad()).item<double>(), 8.0);
  CHECK_ERROR(kiln::ValueError, nn::FractionalMaxPool2d(nn::FractionalMaxPool2dOptions(3)),
              "FractionalMaxPool2d requires specifying either an output size, or a pooling ratio");
  CHECK_ERROR(kiln::ValueError,
              nn::FractionalMaxPool2d(nn::FractionalMaxPool2dOptions(3).output_ratio(1.5)),
              "FractionalMaxPool2d: output_ratio must be between 0 and 1 (got 1.5)");
}

BOOST_AUTO_TEST_CASE(cross_map_lrn2d_matches_pytorch) {
  struct Setting {
    int64_t size;
    double alpha, beta;
    int64_t k;
  };
  for (Setting s : {Setting{3, 1e-2, 0.75, 1}, Setting{5, 0.3, 0.6, 2}}) {
    std::string name = "cross_map_lrn2d_" + std::to_string(s.size);
    nn::CrossMapLRN2d lrn(nn::CrossMapLRN2dOptions(s.size).alpha(s.alpha).beta(s.beta).k(s.k));
    Tensor x = golden(name, "x", std::nullopt, true);
    Tensor out = lrn(x);
    check_close(out, golden(name, "out"), 1e-12, 1e-12, name + " out");
    kiln::sum(out * golden(name, "gy")).backward();
    check_close(x.grad(), golden(name, "grad_x"), 1e-10, 1e-12, name + " grad");
  }
  BOOST_CHECK_EQUAL(printed(nn::CrossMapLRN2d(3)),
                    "kiln::nn::CrossMapLRN2d(3, alpha=0.0001, beta=0.75, k=1)");
  CHECK_ERROR(kiln::ValueError, nn::CrossMapLRN2d(3)(kiln::ones({2, 3})),
              "CrossMapLRN2d: Input must be 4D");
}

BOOST_AUTO_TEST_CASE(dropout_modules) {
  nn::Dropout2d d2(nn::Dropout2dOptions(0.5).inplace(true));
  Tensor x = kiln::ones({50, 50, 2, 2}) * 0.5;
  Tensor y = d2(x);
  BOOST_CHECK(y.is_same(x));
  BOOST_CHECK_SMALL(kiln::mean(y).item<double>() - 0.5, 0.05);
  d2->eval();
  BOOST_CHECK_EQUAL(kiln::sum(d2(kiln::ones({2, 2, 10, 10}))).item<double>(), 400.0);
  nn::AlphaDropout alpha(0.5);
  Tensor ones = kiln::ones({100}).requires_grad_();
  Tensor a = alpha(ones);
  a.backward(kiln::ones_like(a));
  BOOST_CHECK(ones.grad().defined());
  alpha->eval();
  BOOST_CHECK_EQUAL(kiln::sum(alpha(ones)).item<double>(), 100.0);
  BOOST_CHECK_EQUAL(printed(nn::Dropout3d(0.42)), "kiln::nn::Dropout3d(p=0.42, inplace=false)");
  BOOST_CHECK_EQUAL(printed(nn::FeatureAlphaDropout()),
                    "kiln::nn::FeatureAlphaDropout(p=0.5, inplace=false)");
  CHECK_ERROR(kiln::ValueError, nn::Dropout2d(1.5),
              "Dropout2d: dropout probability has to be between 0 and 1, but got 1.5");
}

BOOST_AUTO_TEST_SUITE_END()
