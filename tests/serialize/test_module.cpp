// kiln::save(module, path) and kiln::load(module, path): parameters and buffers by their dotted
// names; loading checks names both ways, shapes and dtypes, and changes nothing on a mismatch.
#include "serialize_test.h"

#include <kiln/nn.h>

using namespace kiln;
using namespace serialize_test;

namespace {

// Linear layers and a BatchNorm2d (float buffers and the int64 num_batches_tracked).
nn::Sequential make_model(int64_t hidden = 4) {
  return nn::Sequential(nn::Linear(3, hidden), nn::Linear(hidden, 2), nn::BatchNorm2d(2));
}

std::vector<std::string> names_of(const NamedTensors& tensors) {
  std::vector<std::string> names;
  for (const auto& [name, t] : tensors) names.push_back(name);
  return names;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(module_io)

BOOST_AUTO_TEST_CASE(round_trip_into_a_fresh_model) {
  ScratchDir scratch;
  manual_seed(1);
  nn::Sequential model = make_model();
  {
    NoGradGuard no_grad;
    model->named_buffers()[0].value().fill_(0.25);  // a buffer that differs from its initial value
  }
  save(*model, scratch.path("model.safetensors"));
  NamedTensors file = load(scratch.path("model.safetensors"));
  std::vector<std::string> expected = {"0.weight",       "0.bias",        "1.weight",
                                       "1.bias",         "2.weight",      "2.bias",
                                       "2.running_mean", "2.running_var", "2.num_batches_tracked"};
  BOOST_CHECK(names_of(file) == expected);

  manual_seed(2);
  nn::Sequential other = make_model();
  Tensor weight = other->named_parameters()[0].value();  // a handle held elsewhere
  load(*other, scratch.path("model.safetensors"));
  NamedTensors a = model->named_parameters().pairs(), b = other->named_parameters().pairs();
  for (size_t i = 0; i < a.size(); ++i) BOOST_CHECK(same_bits(a[i].second, b[i].second));
  NamedTensors ab = model->named_buffers().pairs(), bb = other->named_buffers().pairs();
  for (size_t i = 0; i < ab.size(); ++i) BOOST_CHECK(same_bits(ab[i].second, bb[i].second));
  // Loaded in place: the same tensors, still leaves that require grad.
  BOOST_CHECK(weight.is_same(other->named_parameters()[0].value()));
  BOOST_CHECK(same_bits(weight, a[0].second));
  BOOST_CHECK(weight.requires_grad() && weight.is_leaf());
}

BOOST_AUTO_TEST_CASE(missing_and_unexpected_keys) {
  ScratchDir scratch;
  nn::Linear single(3, 4);
  save(*single, scratch.path("linear.safetensors"));
  nn::Sequential model = make_model();
  CHECK_ERROR(ValueError, load(*model, scratch.path("linear.safetensors")),
              "load: '" + scratch.path("linear.safetensors") +
                  "' does not match the module: "
                  "missing keys: 0.weight, 0.bias, 1.weight, 1.bias, 2.weight, 2.bias, "
                  "2.running_mean, 2.running_var, 2.num_batches_tracked; unexpected keys: weight, "
                  "bias");
  save({{"weight", ones({4, 3})}}, scratch.path("partial.safetensors"));
  CHECK_ERROR(ValueError, load(*single, scratch.path("partial.safetensors")),
              "does not match the module: missing keys: bias");
  save({{"weight", ones({4, 3})}, {"bias", ones({4})}, {"extra", ones({1})}},
       scratch.path("extra.safetensors"));
  CHECK_ERROR(ValueError, load(*single, scratch.path("extra.safetensors")),
              "does not match the module: unexpected keys: extra");
}

BOOST_AUTO_TEST_CASE(shape_and_dtype_mismatch_change_nothing) {
  ScratchDir scratch;
  std::string path = scratch.path("model.safetensors");
  save(*make_model(), path);
  nn::Sequential wider = make_model(5);
  Tensor before = wider->named_parameters()[2].value().detach().clone();
  CHECK_ERROR(ValueError, load(*wider, path),
              "load: '" + path +
                  "': tensor '0.weight' has shape [4, 3] in the file but [5, 3] "
                  "in the module");
  BOOST_CHECK(same_bits(wider->named_parameters()[2].value(), before));  // "1.weight" untouched

  nn::Sequential doubled = make_model();
  doubled->to(kDouble);
  CHECK_ERROR(TypeError, load(*doubled, path),
              "tensor '0.weight' has dtype float32 in the file but float64 in the module");
}

BOOST_AUTO_TEST_SUITE_END()
