// kiln::jit::save and load: round trips of the MLP, the checkerboard net and the curve fit
// (equal outputs; the loaded graph prints as the saved one), loading on the ref device when its
// plugin is there, and the damaged files: a cut file, a cut graph, another format version, an
// unknown operator, a bad argument, a call with another signature.
#define BOOST_TEST_MODULE jit_save
#include "../../core/src/jit/graph_format.h"
#include "../check_error.h"

#include <kiln/kiln.h>

#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

using kiln::Tensor;
namespace jit = kiln::jit;
namespace nn = kiln::nn;
namespace fs = std::filesystem;

namespace {

std::string temp_path(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / ("kiln_test_jit_save_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return (dir / name).string();
}

void check_equal(const Tensor& a, const Tensor& b) {
  BOOST_REQUIRE(a.defined() && b.defined());
  BOOST_REQUIRE_EQUAL(a.sizes(), b.sizes());
  BOOST_CHECK_EQUAL(a.dtype(), b.dtype());
  BOOST_CHECK_MESSAGE(kiln::equal(a.to(kiln::kCPU), b.to(kiln::kCPU)),
                      "loaded " << a << "\nsaved " << b);
}

// Saves, loads, and checks that the loaded function prints and computes as the saved one.
jit::TracedFunction round_trip(const jit::TracedFunction& traced, const std::string& name) {
  std::string path = temp_path(name);
  jit::save(traced, path);
  jit::TracedFunction loaded = jit::load(path);
  BOOST_CHECK_EQUAL(loaded.graph().str(), traced.graph().str());
  return loaded;
}

// A saved graph's text and tensors, to damage.
kiln::SafetensorsContents saved_contents(const std::string& path) {
  return kiln::load_safetensors(path);
}

std::string saved_mlp(const std::string& name) {
  kiln::manual_seed(1);
  nn::Sequential net(nn::Linear(2, 8), nn::ReLU(), nn::Linear(8, 1));
  net->eval();
  auto traced = jit::trace_module(net, {kiln::randn({4, 2})});
  std::string path = temp_path(name);
  jit::save(traced, path);
  return path;
}

}  // namespace

BOOST_AUTO_TEST_CASE(mlp_round_trip_equals_the_traced_module) {
  kiln::manual_seed(1);
  nn::Sequential net(nn::Linear(2, 64), nn::ReLU(), nn::Linear(64, 64), nn::ReLU(),
                     nn::Linear(64, 1));
  auto traced = jit::trace_module(net, {kiln::randn({16, 2})});
  jit::TracedFunction loaded = round_trip(traced, "mlp.kiln");
  for (int i = 0; i < 3; ++i) {
    Tensor x = kiln::randn({16, 2});
    kiln::autograd::NoGradGuard no_grad;
    check_equal(loaded.forward(x), net->forward(x));
  }
  // the parameters came back requiring grad: the loaded graph differentiates
  Tensor y = loaded.forward(kiln::randn({16, 2}));
  BOOST_CHECK(y.requires_grad());
}

BOOST_AUTO_TEST_CASE(checkerboard_net_round_trip_in_eval_mode) {
  kiln::manual_seed(2);
  nn::Sequential net(nn::Conv2d(nn::Conv2dOptions(2, 16, 1)), nn::BatchNorm2d(16), nn::ReLU(),
                     nn::Conv2d(nn::Conv2dOptions(16, 16, 1)), nn::BatchNorm2d(16), nn::ReLU(),
                     nn::Conv2d(nn::Conv2dOptions(16, 1, 1)));
  for (int i = 0; i < 3; ++i) net->forward(kiln::rand({4, 2, 8, 8}));  // running statistics
  net->eval();
  auto traced = jit::trace_module(net, {kiln::rand({4, 2, 8, 8})});
  jit::TracedFunction loaded = round_trip(traced, "checkerboard.kiln");
  kiln::autograd::NoGradGuard no_grad;
  for (int i = 0; i < 3; ++i) {
    Tensor x = kiln::rand({4, 2, 8, 8});
    check_equal(loaded.forward(x), net->forward(x));
  }
}

BOOST_AUTO_TEST_CASE(curve_fit_round_trip_with_its_gradient) {
  kiln::manual_seed(3);
  Tensor w = kiln::randn({3, 1}).requires_grad_();
  auto loss_fn = [&w](const std::vector<Tensor>& in) -> std::vector<Tensor> {
    Tensor f = kiln::stack({in[0] * in[0], in[0], kiln::ones_like(in[0])}, 1);
    return {nn::functional::mse_loss(kiln::squeeze(f.matmul(w), 1), in[1])};
  };
  Tensor x0 = kiln::rand({100}) * 20 - 10;
  auto traced = jit::trace(loss_fn, {x0, 5 * x0 * x0 + 3});
  jit::TracedFunction loaded = round_trip(traced, "curve_fit.kiln");
  Tensor x = kiln::rand({100}) * 20 - 10;
  Tensor y = 5 * x * x + 3;
  Tensor want = loss_fn({x, y})[0];
  Tensor got = loaded({x, y})[0];
  check_equal(got, want);
  // the loaded graph's own parameter gets the gradient eager gives w
  Tensor eager_grad = kiln::autograd::grad({want}, {w})[0];
  got.backward();
  const jit::Graph& g = loaded.graph();
  int found = 0;
  for (const jit::Value& v : g.values) {
    if (v.kind != jit::ValueKind::Parameter) continue;
    ++found;
    BOOST_REQUIRE(v.tensor.grad().defined());
    BOOST_CHECK(kiln::allclose(v.tensor.grad(), eager_grad, 1e-5, 1e-4));
  }
  BOOST_CHECK_EQUAL(found, 1);
}

BOOST_AUTO_TEST_CASE(a_graph_loads_on_the_ref_device_when_its_plugin_is_there) {
  bool has_ref = false;
  for (const kiln::Device& d : kiln::devices()) has_ref = has_ref || d.str() == "ref";
  if (!has_ref) {
    // the ref device (sdk/examples/ref-device) is built by the SDK test's install, not here
    BOOST_TEST_MESSAGE("no ref device plugin loaded: skipped");
    return;
  }
  std::string path = saved_mlp("mlp_ref.kiln");
  jit::TracedFunction cpu = jit::load(path);
  jit::TracedFunction ref = jit::load(path, kiln::Device("ref"));
  Tensor x = kiln::randn({4, 2});
  kiln::autograd::NoGradGuard no_grad;
  Tensor a = cpu.forward(x);
  Tensor b = ref.forward(x.to(kiln::Device("ref")));
  BOOST_CHECK(b.device() == kiln::Device("ref"));
  BOOST_CHECK(kiln::allclose(b.to(kiln::kCPU), a, 1e-5, 1e-6));
}

BOOST_AUTO_TEST_CASE(a_cut_file_raises_naming_the_file) {
  std::string path = saved_mlp("cut.kiln");
  auto size = fs::file_size(path);
  fs::resize_file(path, size / 2);
  CHECK_ERROR(kiln::Error, jit::load(path), "cut.kiln");
}

BOOST_AUTO_TEST_CASE(a_cut_graph_raises_naming_the_field_and_byte) {
  std::string path = saved_mlp("cut_graph.kiln");
  kiln::SafetensorsContents c = saved_contents(path);
  std::string& text = c.metadata["kiln.graph"];
  text = text.substr(0, text.size() / 2);
  kiln::save(c.tensors, path, c.metadata);
  CHECK_ERROR(kiln::ValueError, jit::load(path), "cut_graph.kiln", "field 'kiln.graph'", "byte",
              "save the traced function again");
}

BOOST_AUTO_TEST_CASE(another_format_version_raises) {
  std::string path = saved_mlp("version.kiln");
  kiln::SafetensorsContents c = saved_contents(path);
  c.metadata["kiln.graph.version"] = "2";
  kiln::save(c.tensors, path, c.metadata);
  CHECK_ERROR(kiln::ValueError, jit::load(path), "version.kiln", "kiln.graph.version",
              "version '2'", "reads version 1");
  kiln::save(c.tensors, path);  // no graph at all
  CHECK_ERROR(kiln::ValueError, jit::load(path), "not a saved graph");
}

BOOST_AUTO_TEST_CASE(an_unknown_operator_raises_naming_it) {
  std::string path = saved_mlp("unknown.kiln");
  kiln::SafetensorsContents c = saved_contents(path);
  std::string& text = c.metadata["kiln.graph"];
  auto at = text.find("4:relu");
  BOOST_REQUIRE(at != std::string::npos);
  text.replace(at, 6, "4:rulu");
  kiln::save(c.tensors, path, c.metadata);
  CHECK_ERROR(kiln::ValueError, jit::load(path), "unknown.kiln", "unknown operator 'rulu'");
}

BOOST_AUTO_TEST_CASE(damaged_fields_raise) {
  std::string path = saved_mlp("damaged.kiln");
  kiln::SafetensorsContents good = saved_contents(path);
  auto damaged = [&](const std::string& from, const std::string& to) {
    kiln::SafetensorsContents c = good;
    std::string& text = c.metadata["kiln.graph"];
    auto at = text.find(from);
    BOOST_REQUIRE_MESSAGE(at != std::string::npos, from);
    text.replace(at, from.size(), to);
    kiln::save(c.tensors, path, c.metadata);
  };
  // a node reading a value no one defined
  damaged("5:input 0", "5:input 0\n4:node 4:relu 1 1 99 0 0:");
  CHECK_ERROR(kiln::ValueError, jit::load(path), "a value id");
  // a linear whose arguments lost their tensors
  damaged("6:linear", "4:relu");
  CHECK_ERROR(kiln::ValueError, jit::load(path), "damaged.kiln");
  // a tensor missing from the weights
  kiln::SafetensorsContents c = good;
  c.tensors.pop_back();
  kiln::save(c.tensors, path, c.metadata);
  CHECK_ERROR(kiln::ValueError, jit::load(path), "has no tensor");
}

BOOST_AUTO_TEST_CASE(a_loaded_graph_does_not_retrace) {
  jit::TracedFunction loaded = jit::load(saved_mlp("retrace.kiln"));
  loaded.forward(kiln::randn({4, 2}));
  CHECK_ERROR(kiln::ValueError, loaded.forward(kiln::randn({5, 2})), "does not retrace", "[5, 2]");
}

BOOST_AUTO_TEST_CASE(every_operator_signature_can_be_saved_and_loaded) {
  std::vector<std::string> missing = jit::detail::operators_without_saved_signature();
  std::string names;
  for (const std::string& m : missing) names += m + " ";
  BOOST_CHECK_MESSAGE(missing.empty(), "add the signatures of these operators to "
                                       "core/src/jit/serialize_calls.cpp: "
                                           << names);
}
