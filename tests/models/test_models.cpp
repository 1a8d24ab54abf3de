// kiln::models against torchvision: the state_dicts that
// tests/golden/make_models_weights.py writes (into the build directory, through the ctest
// fixture models_weights) load by name, and the eval logits, a training step's logits, loss,
// gradients and updated running statistics equal PyTorch's. The initialisation follows
// torchvision's in distribution, and zero_init_residual zeroes the same tensors.
//
// Tolerance (compare()): |kiln - pytorch| <= 8 e + 4 eps32 max|pytorch| elementwise at the
// worst element, where e = max |pytorch32 - pytorch64| is PyTorch's own float32 rounding error
// on that very result, measured by the script against the same computation in float64. Two
// float32 computations that differ only in summation order and kernels each err by about e
// from the exact value; 8 e leaves room for e being one sample of that error, and the eps32
// term for results PyTorch happens to compute exactly. The errors grow large where training
// mode normalizes few values (ResNet-50's layer4 normalizes 8 values per channel at batch 2 and
// 64x64 input), which a fixed relative tolerance would either miss or refuse.
#define BOOST_TEST_MODULE models
#include <boost/test/unit_test.hpp>

#include "check_error.h"

#include <kiln/kiln.h>
#include <kiln/models.h>
#include <kiln/nn.h>
#include <kiln/serialize.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>

namespace {

using namespace kiln;

const std::string kDir = KILN_MODELS_WEIGHTS_DIR;

// Skips the suite, with the script's reason, when it found no torch or torchvision.
boost::test_tools::assertion_result weights_available(boost::unit_test::test_unit_id) {
  std::ifstream skipped(kDir + "/SKIPPED");
  if (!skipped) return true;
  std::stringstream reason;
  reason << skipped.rdbuf();
  boost::test_tools::assertion_result result(false);
  result.message() << reason.str();
  return result;
}

// A model built as a case's metadata says, with its forward.
struct Model {
  std::shared_ptr<nn::Module> module;
  std::function<Tensor(const Tensor&)> forward;
};

Model build(const SafetensorsMetadata& meta) {
  const std::string& arch = meta.at("arch");
  int64_t classes = std::stoll(meta.at("num_classes"));
  if (arch == "mobilenet_v2") {
    auto m = models::mobilenet_v2(models::MobileNetV2Options()
                                      .num_classes(classes)
                                      .width_mult(std::stod(meta.at("width_mult")))
                                      .dropout(std::stod(meta.at("dropout"))));
    return {m.ptr(), [m](const Tensor& x) { return m(x); }};
  }
  auto options = models::ResNetOptions().num_classes(classes).zero_init_residual(
      meta.at("zero_init_residual") == "true");
  models::ResNet m{nullptr};
  if (arch == "resnet18") m = models::resnet18(options);
  if (arch == "resnet34") m = models::resnet34(options);
  if (arch == "resnet50") m = models::resnet50(options);
  BOOST_REQUIRE_MESSAGE(m, "no model for arch " << arch);
  return {m.ptr(), [m](const Tensor& x) { return m(x); }};
}

// A case of the script: its golden tensors by name, and the model with torchvision's weights.
// Each model is built once (kiln's initialisation of ResNet-50 takes seconds) and reloaded from
// torchvision's state_dict, its gradients cleared, every time a test takes it (case()).
struct Case {
  std::map<std::string, Tensor> golden;
  SafetensorsMetadata meta;
  Model model;
  std::string weights;
  // the worst |kiln - pytorch| / tolerance so far, and its key
  double worst = 0;
  std::string worst_key;

  explicit Case(const std::string& name) : weights(kDir + "/" + name + ".weights.safetensors") {
    std::string path = kDir + "/" + name + ".golden.safetensors";
    BOOST_REQUIRE_MESSAGE(std::filesystem::exists(path),
                          path << " is missing: run the tests through ctest (its fixture "
                                  "models_weights runs tests/golden/make_models_weights.py)");
    SafetensorsContents contents = load_safetensors(path);
    for (auto& [key, tensor] : contents.tensors) golden[key] = tensor;
    meta = contents.metadata;
    model = build(meta);
  }

  const Tensor& at(const std::string& key) const {
    auto it = golden.find(key);
    BOOST_REQUIRE_MESSAGE(it != golden.end(), "no golden tensor " << key);
    return it->second;
  }

  // kiln's `value` against PyTorch's result `key`, within the tolerance described at the top.
  void compare(const std::string& key, const Tensor& value) {
    const Tensor& expected = at(key);
    BOOST_REQUIRE_MESSAGE(value.sizes() == expected.sizes(), key << ": kiln's shape "
                                                                 << value.sizes() << ", PyTorch's "
                                                                 << expected.sizes());
    double scale = expected.abs().max().item<double>();
    double error = at("error." + key).item<double>();
    double tolerance = 8 * error + 4 * 1.1920929e-7 * scale;
    Tensor diff = (value.detach().to(kFloat) - expected).abs();
    double max_diff = diff.max().item<double>();
    int64_t outliers = (diff > tolerance).sum().item<int64_t>();
    // gradients only: a ReLU input within rounding of 0 can fall on either side in the two
    // frameworks, which moves single gradient entries by a whole upstream value
    bool gradient = key.rfind("grad.", 0) == 0;
    int64_t allowed = gradient ? expected.numel() / 1000 + 1 : 0;
    BOOST_CHECK_MESSAGE(outliers == 0 || (outliers <= allowed && max_diff <= scale),
                        key << ": max |kiln - pytorch| = " << max_diff << " exceeds " << tolerance
                            << " (8 * " << error << " + 4 eps * " << scale << ") at " << outliers
                            << " of " << expected.numel() << " elements");
    if (outliers > 0) {
      BOOST_TEST_MESSAGE(key << ": " << outliers << " element(s) beyond the tolerance (a ReLU "
                             << "input at 0 within rounding), by " << max_diff);
    } else if (max_diff / tolerance > worst) {
      worst = max_diff / tolerance;
      worst_key = key;
    }
  }

  void report(const std::string& what) const {
    BOOST_TEST_MESSAGE(what << ": worst |kiln - pytorch| / tolerance " << worst << " at "
                            << worst_key);
  }
};

// The case `name`, its model (built on first use) holding torchvision's weights afresh.
Case& take(const std::string& name) {
  static std::map<std::string, std::unique_ptr<Case>> cases;
  auto& c = cases[name];
  if (!c) c = std::make_unique<Case>(name);
  load(*c->model.module, c->weights);
  c->model.module->zero_grad();
  c->worst = 0;
  return *c;
}

std::set<std::string> keys_of(const nn::Module& module) {
  std::set<std::string> keys;
  for (const auto& item : module.named_parameters()) keys.insert(item.key());
  for (const auto& item : module.named_buffers()) keys.insert(item.key());
  return keys;
}

void check_eval(const std::string& name) {
  Case& c = take(name);
  c.model.module->eval();
  NoGradGuard no_grad;
  c.compare("eval.output", c.model.forward(c.at("input")));
  c.report(name + " eval");
}

void check_training_step(const std::string& name) {
  Case& c = take(name);
  c.model.module->train();
  Tensor out = c.model.forward(c.at("input"));
  Tensor loss = nn::functional::cross_entropy(out, c.at("target"));
  loss.backward();
  c.compare("train.output", out);
  c.compare("train.loss", loss);
  std::vector<Tensor> norms;
  for (const auto& item : c.model.module->named_parameters()) {
    BOOST_REQUIRE_MESSAGE(item.value().grad().defined(), item.key() << " has no gradient");
    norms.push_back(item.value().grad().norm());
    if (c.golden.count("grad." + item.key())) {
      c.compare("grad." + item.key(), item.value().grad());
    }
  }
  c.compare("grad_norms", stack(norms));
  for (const auto& item : c.model.module->named_buffers()) {
    if (item.value().is_floating_point()) {
      c.compare("buffer." + item.key(), item.value());
    } else {
      BOOST_CHECK_MESSAGE(equal(item.value(), c.at("buffer." + item.key())),
                          item.key() << " differs from PyTorch's");
    }
  }
  c.report(name + " training step");
}

}  // namespace

BOOST_AUTO_TEST_SUITE(torchvision_goldens, *boost::unit_test::precondition(weights_available))

BOOST_AUTO_TEST_CASE(state_dict_keys_are_torchvisions) {
  for (const char* name : {"resnet18", "resnet34", "resnet50", "mobilenet_v2", "mobilenet_v2_w050",
                           "resnet18_zero_init"}) {
    Case& c = take(name);  // kiln::load checks every name both ways, every shape and dtype
    std::set<std::string> torchvision;
    for (const auto& [key, tensor] : load(c.weights)) torchvision.insert(key);
    BOOST_CHECK_MESSAGE(keys_of(*c.model.module) == torchvision, name << ": key sets differ");
    BOOST_TEST_MESSAGE(name << ": " << torchvision.size() << " keys");
  }
}

BOOST_AUTO_TEST_CASE(eval_logits_match_pytorch) {
  for (const char* name :
       {"resnet18", "resnet34", "resnet50", "mobilenet_v2", "mobilenet_v2_w050"}) {
    BOOST_TEST_CONTEXT(name) { check_eval(name); }
  }
}

BOOST_AUTO_TEST_CASE(resnet18_training_step_matches_pytorch) { check_training_step("resnet18"); }

BOOST_AUTO_TEST_CASE(resnet50_training_step_matches_pytorch) { check_training_step("resnet50"); }

BOOST_AUTO_TEST_CASE(mobilenet_v2_training_step_matches_pytorch) {
  check_training_step("mobilenet_v2");
}

// kiln's own initialisation against torchvision's (the raw zero_init_residual weights; in the
// calibrated files the convolution and Linear weights are still torchvision's initial ones):
// every weight of 1000 values or more has the same spread (within 15%: 6.7 standard errors of a
// standard deviation estimated from 1000 samples), and every constant tensor of the raw file is
// the same constant.
BOOST_AUTO_TEST_CASE(initialisation_matches_torchvision) {
  for (const char* name : {"resnet18_zero_init", "resnet50", "mobilenet_v2"}) {
    Case& c = take(name);
    manual_seed(0);
    Model fresh = build(c.meta);
    std::map<std::string, Tensor> theirs;
    for (auto& [key, tensor] : load(c.weights)) theirs[key] = tensor;
    bool raw = std::string(name) == "resnet18_zero_init";
    int spreads = 0, constants = 0;
    auto mine = fresh.module->named_parameters();
    for (const auto& item : fresh.module->named_buffers()) mine.insert(item.key(), item.value());
    for (const auto& item : mine) {
      const Tensor& t = theirs.at(item.key());
      Tensor ours = item.value().detach();
      if (t.dim() >= 2 && t.numel() >= 1000) {
        double a = ours.to(kDouble).std().item<double>(), b = t.to(kDouble).std().item<double>();
        BOOST_CHECK_MESSAGE(std::abs(a / b - 1) < 0.15,
                            name << " " << item.key() << ": std " << a << ", torchvision's " << b);
        ++spreads;
      } else if (raw && t.numel() > 0 && equal(t, t.flatten()[0].expand(t.sizes()))) {
        BOOST_CHECK_MESSAGE(equal(ours, t), name << " " << item.key() << " differs");
        ++constants;
      }
    }
    BOOST_TEST_MESSAGE(name << ": " << spreads << " spreads, " << constants << " constants");
    BOOST_CHECK(spreads > 10);
    BOOST_CHECK(!raw || constants > 50);
  }
}

BOOST_AUTO_TEST_SUITE_END()

// Without the goldens: torchvision's channel rounding and the constructors' checks.
BOOST_AUTO_TEST_CASE(make_divisible_rounds_as_torchvision) {
  BOOST_CHECK_EQUAL(models::make_divisible(8.4, 8), 8);    // 24 * 0.35
  BOOST_CHECK_EQUAL(models::make_divisible(100, 8), 104);  // to the nearest multiple
  BOOST_CHECK_EQUAL(models::make_divisible(10, 8), 16);    // 8 would lose more than 10%
  BOOST_CHECK_EQUAL(models::make_divisible(3, 8), 8);      // at least the divisor
  CHECK_ERROR(ValueError, models::make_divisible(NAN, 8), "must be finite");
  CHECK_ERROR(ValueError, models::make_divisible(8, 0), "divisor must be positive");
}

BOOST_AUTO_TEST_CASE(constructors_refuse_bad_arguments) {
  CHECK_ERROR(ValueError, models::BasicBlock(64, 64, 1, nullptr, 2, 64),
              "BasicBlock only supports groups=1 and base_width=64");
  CHECK_ERROR(ValueError, models::ResNet(models::ResNetBlock::Basic, std::vector<int64_t>{2, 2}),
              "expected the block counts of 4 layers, got 2");
  CHECK_ERROR(ValueError, models::resnet18(models::ResNetOptions().num_classes(0)),
              "num_classes must be positive");
  CHECK_ERROR(ValueError, models::InvertedResidual(16, 16, 3, 6), "stride should be 1 or 2");
  CHECK_ERROR(ValueError, models::mobilenet_v2(models::MobileNetV2Options().width_mult(-1)),
              "width_mult must be positive");
}

// Structure that names alone do not show: strides and shortcut placement, by the output sizes
// and the blocks that received a downsample.
BOOST_AUTO_TEST_CASE(shapes_and_shortcuts) {
  auto r50 = models::resnet50(models::ResNetOptions().num_classes(7));
  r50->eval();
  NoGradGuard no_grad;
  BOOST_CHECK_EQUAL(r50(zeros({1, 3, 32, 32})).sizes(), IntArrayRef({1, 7}));
  int shortcuts = 0;
  for (const auto& item : r50->named_modules()) {
    if (item.key().size() > 11 && item.key().substr(item.key().size() - 11) == ".downsample") {
      ++shortcuts;
    }
  }
  BOOST_CHECK_EQUAL(shortcuts, 4);  // the first block of each layer (channels x4 in layer1)
  auto r18 = models::resnet18();
  BOOST_CHECK(!r18->layer1[0]->as<models::BasicBlock>()->downsample);
  BOOST_CHECK(r18->layer2[0]->as<models::BasicBlock>()->downsample);
  auto mb = models::mobilenet_v2();
  BOOST_CHECK_EQUAL(mb->features->size(), 19u);
  BOOST_CHECK(mb->features[1]->as<models::InvertedResidual>()->conv->size() == 3);  // t = 1
  BOOST_CHECK(mb->features[3]->as<models::InvertedResidual>()->use_res_connect);
  BOOST_CHECK(!mb->features[4]->as<models::InvertedResidual>()->use_res_connect);
}
