// kiln::onnx::load on hand-made graphs (built here with libonnx's protobuf classes): results
// against kiln's eager operators, the trace (graph type, replay, retrace for a new batch size),
// shape-computation chains evaluated at trace time, external data, and the load-time errors
// (unsupported operator or opset, wrong attribute types, undefined inputs, malformed
// initializers, external data leaving the model's folder) naming file, node and field.
#define BOOST_TEST_MODULE onnx
#include "../check_error.h"

#include <kiln/kiln.h>
#include <kiln/onnx.h>
#include <onnx/onnx_pb.h>

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

using kiln::Tensor;
namespace pb = ::onnx;
namespace fs = std::filesystem;

namespace {

// A small graph builder.
struct Builder {
  pb::ModelProto model;
  pb::GraphProto* g;
  explicit Builder(int64_t opset = 17) {
    model.set_ir_version(8);
    auto* o = model.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    g = model.mutable_graph();
    g->set_name("test");
  }
  void input(const std::string& name, std::vector<int64_t> dims,
             int elem = pb::TensorProto_DataType_FLOAT) {
    value(g->add_input(), name, dims, elem);
  }
  void output(const std::string& name, std::vector<int64_t> dims,
              int elem = pb::TensorProto_DataType_FLOAT) {
    value(g->add_output(), name, dims, elem);
  }
  static void value(pb::ValueInfoProto* v, const std::string& name, std::vector<int64_t> dims,
                    int elem) {
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(elem);
    auto* shape = tt->mutable_shape();
    for (int64_t d : dims) {
      auto* dim = shape->add_dim();
      if (d >= 0) {
        dim->set_dim_value(d);
      } else {
        dim->set_dim_param("N");
      }
    }
  }
  pb::NodeProto* node(const std::string& op, std::vector<std::string> in,
                      std::vector<std::string> out, const std::string& name = {}) {
    auto* n = g->add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (auto& s : in) n->add_input(s);
    for (auto& s : out) n->add_output(s);
    return n;
  }
  static void attr_i(pb::NodeProto* n, const std::string& name, int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(pb::AttributeProto_AttributeType_INT);
    a->set_i(v);
  }
  static void attr_f(pb::NodeProto* n, const std::string& name, float v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(pb::AttributeProto_AttributeType_FLOAT);
    a->set_f(v);
  }
  static void attr_ints(pb::NodeProto* n, const std::string& name, std::vector<int64_t> v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(pb::AttributeProto_AttributeType_INTS);
    for (auto x : v) a->add_ints(x);
  }
  static void attr_s(pb::NodeProto* n, const std::string& name, const std::string& v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(pb::AttributeProto_AttributeType_STRING);
    a->set_s(v);
  }
  pb::TensorProto* init(const std::string& name, const Tensor& t) {
    auto* p = g->add_initializer();
    fill(p, name, t);
    return p;
  }
  static void fill(pb::TensorProto* p, const std::string& name, const Tensor& t) {
    p->set_name(name);
    for (auto d : t.sizes()) p->add_dims(d);
    Tensor c = t.contiguous();
    if (t.dtype() == kiln::kFloat) {
      p->set_data_type(pb::TensorProto_DataType_FLOAT);
    } else if (t.dtype() == kiln::kLong) {
      p->set_data_type(pb::TensorProto_DataType_INT64);
    } else {
      BOOST_FAIL("builder: dtype");
    }
    p->set_raw_data(std::string(static_cast<const char*>(c.data_ptr()), c.nbytes()));
  }
  kiln::onnx::Model load(const std::string& base_dir = {}) const {
    return kiln::onnx::load_from_string(model.SerializeAsString(), "test.onnx", base_dir);
  }
};

Tensor longs(std::vector<int64_t> v) {
  return kiln::tensor(v, kiln::TensorOptions().dtype(kiln::kLong));
}

void check_close(const Tensor& a, const Tensor& b, double tol = 1e-5) {
  BOOST_REQUIRE_EQUAL(a.sizes(), b.sizes());
  BOOST_CHECK_MESSAGE(kiln::allclose(a, b, tol, tol), "not close:\n" << a << "\n" << b);
}

}  // namespace

BOOST_AUTO_TEST_CASE(gemm_relu_matches_eager_and_traces) {
  kiln::manual_seed(0);
  Tensor w = kiln::randn({4, 3}), bias = kiln::randn({4});
  Builder b;
  b.input("x", {-1, 3});
  b.init("w", w);
  b.init("b", bias);
  auto* gemm = b.node("Gemm", {"x", "w", "b"}, {"h"}, "fc");
  Builder::attr_i(gemm, "transB", 1);
  Builder::attr_f(gemm, "alpha", 0.5F);
  b.node("Relu", {"h"}, {"y"});
  b.output("y", {-1, 4});
  auto model = b.load();
  BOOST_CHECK_EQUAL(model.inputs().size(), 1U);
  BOOST_CHECK_EQUAL(model.inputs()[0].sizes[0], -1);
  for (int64_t n : {2, 5, 2}) {  // a dynamic batch: a second signature, then a replay
    Tensor x = kiln::randn({n, 3});
    check_close(model.forward(x), kiln::relu(kiln::addmm(bias, x, w.t(), 1, 0.5)));
  }
  BOOST_CHECK_EQUAL(model.traced().num_traces(), 2U);
  BOOST_CHECK(model.graph().str().find("addmm") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(shape_chain_is_evaluated_at_trace_time) {
  // y = Reshape(x, Concat(Gather(Shape(x), 0), [-1])): the batch stays dynamic, and the graph
  // holds the reshape only (no shape operators), retraced per batch size
  Builder b;
  b.input("x", {-1, 2, 3});
  b.init("minus1", longs({-1}));
  b.init("zero", kiln::zeros({}, kiln::TensorOptions().dtype(kiln::kLong)));
  b.node("Shape", {"x"}, {"s"});
  auto* gather = b.node("Gather", {"s", "zero"}, {"n"});
  Builder::attr_i(gather, "axis", 0);
  b.init("axes", longs({0}));
  b.node("Unsqueeze", {"n", "axes"}, {"n1"});
  auto* cat = b.node("Concat", {"n1", "minus1"}, {"shape"});
  Builder::attr_i(cat, "axis", 0);
  b.node("Reshape", {"x", "shape"}, {"flat"});
  b.node("Relu", {"flat"}, {"y"});
  b.output("y", {-1, 6});
  auto model = b.load();
  for (int64_t n : {1, 4}) {
    Tensor x = kiln::randn({n, 2, 3});
    check_close(model.forward(x), kiln::relu(x.reshape({n, 6})));
  }
  BOOST_CHECK(model.replays());
  BOOST_CHECK_EQUAL(model.traced().num_traces(), 2U);
  const std::string g = model.graph().str();
  BOOST_CHECK_MESSAGE(g.find("index_select") == std::string::npos &&
                          g.find("cat") == std::string::npos,
                      g);
}

BOOST_AUTO_TEST_CASE(reshape_zero_and_minus_one_and_transpose) {
  Builder b;
  b.input("x", {2, 3, 4});
  b.init("shape", longs({0, -1}));
  b.node("Reshape", {"x", "shape"}, {"r"});
  auto* t = b.node("Transpose", {"r"}, {"y"});
  Builder::attr_ints(t, "perm", {1, 0});
  b.output("y", {12, 2});
  Tensor x = kiln::randn({2, 3, 4});
  check_close(b.load().forward(x), x.reshape({2, 12}).t());
}

BOOST_AUTO_TEST_CASE(conv_auto_pad_same_upper_matches_explicit_padding) {
  kiln::manual_seed(1);
  Tensor w = kiln::randn({4, 3, 2, 2}), bias = kiln::randn({4});
  Builder b;
  b.input("x", {1, 3, 5, 5});
  b.init("w", w);
  b.init("b", bias);
  auto* conv = b.node("Conv", {"x", "w", "b"}, {"y"}, "conv");
  Builder::attr_s(conv, "auto_pad", "SAME_UPPER");
  b.output("y", {1, 4, 5, 5});
  Tensor x = kiln::randn({1, 3, 5, 5});
  // kernel 2, stride 1: one padding row and column, at the end (SAME_UPPER)
  Tensor want = kiln::conv2d(kiln::constant_pad_nd(x, {0, 1, 0, 1}), w, bias);
  check_close(b.load().forward(x), want);
}

BOOST_AUTO_TEST_CASE(external_data_is_read_inside_the_model_folder_only) {
  const fs::path dir = fs::temp_directory_path() / "kiln_onnx_external";
  fs::remove_all(dir);
  fs::create_directories(dir / "weights");
  Tensor w = kiln::arange(6, kiln::TensorOptions().dtype(kiln::kFloat)).reshape({2, 3});
  {
    std::ofstream out(dir / "weights" / "w.bin", std::ios::binary);
    out << "pad!";  // the tensor starts at offset 4
    out.write(static_cast<const char*>(w.data_ptr()), static_cast<std::streamsize>(w.nbytes()));
  }
  auto make = [&](const std::string& location, const std::string& length) {
    Builder b;
    b.input("x", {2, 3});
    auto* p = b.g->add_initializer();
    p->set_name("w");
    p->add_dims(2);
    p->add_dims(3);
    p->set_data_type(pb::TensorProto_DataType_FLOAT);
    p->set_data_location(pb::TensorProto_DataLocation_EXTERNAL);
    auto add = [&](const char* k, const std::string& v) {
      auto* e = p->add_external_data();
      e->set_key(k);
      e->set_value(v);
    };
    add("location", location);
    add("offset", "4");
    add("length", length);
    b.node("Add", {"x", "w"}, {"y"});
    b.output("y", {2, 3});
    std::ofstream(dir / "model.onnx", std::ios::binary) << b.model.SerializeAsString();
    return (dir / "model.onnx").string();
  };
  Tensor x = kiln::ones({2, 3});
  check_close(kiln::onnx::load(make("weights/w.bin", "24")).forward(x), x + w);
  CHECK_ERROR(kiln::ValueError, kiln::onnx::load(make("weights/w.bin", "20")), "initializer 0 'w'",
              "length 20", "need 24");
  CHECK_ERROR(kiln::ValueError, kiln::onnx::load(make("../escape.bin", "24")),
              "leaves the model's folder");
  CHECK_ERROR(kiln::ValueError, kiln::onnx::load(make("/etc/passwd", "24")), "relative");
  fs::remove_all(dir);
}

BOOST_AUTO_TEST_CASE(load_errors_name_the_operator_node_and_opset) {
  {
    Builder b(15);
    b.input("x", {2});
    b.node("Relu", {"x"}, {"h"});
    b.node("GridSample", {"h", "h"}, {"y"}, "the_grid_sample");
    b.output("y", {2});
    CHECK_ERROR(kiln::NotImplementedError, b.load(), "test.onnx", "node 1", "the_grid_sample",
                "GridSample", "opset 15", "not supported");
  }
  {
    Builder b(18);
    b.input("x", {2});
    b.node("Relu", {"x"}, {"y"});
    b.output("y", {2});
    CHECK_ERROR(kiln::NotImplementedError, b.load(), "opset 18", "13 to 17");
  }
  {
    Builder b;
    b.input("x", {2, 2});
    auto* n = b.node("Softmax", {"x"}, {"y"}, "sm");
    Builder::attr_f(n, "axis", 1.0F);  // axis must be an INT
    b.output("y", {2, 2});
    CHECK_ERROR(kiln::ValueError, b.load(), "node 0", "sm", "'axis'", "INT", "FLOAT");
  }
  {
    Builder b;
    b.input("x", {2});
    b.node("Add", {"x", "nowhere"}, {"y"});
    b.output("y", {2});
    CHECK_ERROR(kiln::ValueError, b.load(), "node 0", "'nowhere'");
  }
  {
    Builder b;
    b.input("x", {2});
    auto* p = b.init("w", kiln::ones({2}));
    p->set_raw_data(std::string(7, '\0'));  // 7 bytes for 2 floats
    b.node("Add", {"x", "w"}, {"y"});
    b.output("y", {2});
    CHECK_ERROR(kiln::ValueError, b.load(), "initializer 0 'w'", "raw_data has 7 bytes", "8");
  }
  {
    Builder b;
    b.input("x", {2});
    auto* p = b.init("w", kiln::ones({2}));
    p->clear_dims();
    p->add_dims(int64_t{1} << 40);
    p->add_dims(int64_t{1} << 40);  // the element count overflows
    b.node("Add", {"x", "w"}, {"y"});
    b.output("y", {2});
    CHECK_ERROR(kiln::ValueError, b.load(), "initializer 0 'w'", "overflows");
  }
  {
    Builder b;
    b.input("x", {1, 1, 4, 4});
    auto* n = b.node("MaxPool", {"x"}, {"y", "idx"}, "pool");
    Builder::attr_ints(n, "kernel_shape", {2, 2});
    b.output("y", {1, 1, 2, 2});
    b.output("idx", {1, 1, 2, 2}, pb::TensorProto_DataType_INT64);
    CHECK_ERROR(kiln::NotImplementedError, b.load(), "pool", "2 outputs");
  }
  CHECK_ERROR(kiln::ValueError, kiln::onnx::load_from_string("not a model", "junk.onnx"),
              "junk.onnx");
  CHECK_ERROR(kiln::ValueError, kiln::onnx::load("/nonexistent/model.onnx"), "cannot open");
}

BOOST_AUTO_TEST_CASE(run_checks_inputs_against_the_declarations) {
  Builder b;
  b.input("x", {-1, 3});
  b.node("Relu", {"x"}, {"y"});
  b.output("y", {-1, 3});
  auto model = b.load();
  CHECK_ERROR(kiln::ValueError, model.run({}), "takes 1 inputs, got 0");
  CHECK_ERROR(kiln::ValueError, model.forward(kiln::ones({2, 4})), "'x'", "[2, 4]", "[-1, 3]");
  CHECK_ERROR(kiln::ValueError,
              model.forward(kiln::ones({2, 3}, kiln::TensorOptions().dtype(kiln::kDouble))), "'x'",
              "float64", "float32");
  CHECK_ERROR(kiln::ValueError, kiln::onnx::Model().run({}), "empty");
}

BOOST_AUTO_TEST_CASE(a_graph_reading_computed_values_runs_interpreted) {
  // Reshape's shape comes from the data: a trace would freeze it, so the model interprets
  Builder b;
  b.input("x", {6});
  b.input("shape", {2}, pb::TensorProto_DataType_INT64);
  b.node("Reshape", {"x", "shape"}, {"y"});
  b.output("y", {-1, -1});
  auto model = b.load();
  Tensor x = kiln::randn({6});
  check_close(model.run({x, longs({2, 3})})[0], x.reshape({2, 3}));
  check_close(model.run({x, longs({3, 2})})[0], x.reshape({3, 2}));
  BOOST_CHECK(!model.replays());
}

BOOST_AUTO_TEST_CASE(supported_operators_lists_the_required_set) {
  auto ops = kiln::onnx::supported_operators();
  for (const char* op : {"Add",
                         "Sub",
                         "Mul",
                         "Div",
                         "Pow",
                         "Neg",
                         "Abs",
                         "Sqrt",
                         "Exp",
                         "Log",
                         "Relu",
                         "LeakyRelu",
                         "Sigmoid",
                         "Tanh",
                         "Erf",
                         "HardSigmoid",
                         "HardSwish",
                         "Clip",
                         "Softmax",
                         "LogSoftmax",
                         "MatMul",
                         "Gemm",
                         "Conv",
                         "ConvTranspose",
                         "BatchNormalization",
                         "MaxPool",
                         "AveragePool",
                         "GlobalAveragePool",
                         "Flatten",
                         "Reshape",
                         "Transpose",
                         "Concat",
                         "Split",
                         "Slice",
                         "Gather",
                         "Squeeze",
                         "Unsqueeze",
                         "Shape",
                         "Constant",
                         "ConstantOfShape",
                         "Cast",
                         "Where",
                         "Equal",
                         "Less",
                         "Greater",
                         "Not",
                         "ReduceMean",
                         "ReduceSum",
                         "ReduceMax",
                         "Expand",
                         "Identity",
                         "Dropout",
                         "LayerNormalization",
                         "Range",
                         "Tile",
                         "Pad"}) {
    BOOST_CHECK_MESSAGE(std::find(ops.begin(), ops.end(), op) != ops.end(), op);
  }
}

BOOST_AUTO_TEST_CASE(a_small_convnet_runs_on_another_device_plugin) {
  // docs/writing-a-device-plugin.md's "mydev" (host memory, no kernels: every operator falls
  // back to the CPU): the importer has nothing device-specific
  kiln::load_plugin(std::string(KILN_TEST_PLUGIN_DIR) + "/guide_device.so");
  kiln::set_fallback_warnings(false);
  kiln::manual_seed(2);
  Builder b;
  b.input("x", {-1, 3, 8, 8});
  b.init("w", kiln::randn({4, 3, 3, 3}));
  b.init("scale", kiln::rand({4}) + 0.5);
  b.init("bias", kiln::randn({4}));
  b.init("mean", kiln::randn({4}) * 0.1);
  b.init("var", kiln::rand({4}) + 0.5);
  b.init("fc", kiln::randn({2, 4}));
  auto* conv = b.node("Conv", {"x", "w"}, {"c"});
  Builder::attr_ints(conv, "pads", {1, 1, 1, 1});
  b.node("BatchNormalization", {"c", "scale", "bias", "mean", "var"}, {"bn"});
  b.node("Relu", {"bn"}, {"r"});
  auto* pool = b.node("MaxPool", {"r"}, {"p"});
  Builder::attr_ints(pool, "kernel_shape", {2, 2});
  Builder::attr_ints(pool, "strides", {2, 2});
  b.node("GlobalAveragePool", {"p"}, {"g"});
  b.node("Flatten", {"g"}, {"f"});
  auto* gemm = b.node("Gemm", {"f", "fc"}, {"y"});
  Builder::attr_i(gemm, "transB", 1);
  b.output("y", {-1, 2});
  Tensor x = kiln::randn({2, 3, 8, 8});
  Tensor want = b.load().forward(x);
  kiln::onnx::LoadOptions options;
  options.device = kiln::Device("mydev");
  auto model = kiln::onnx::load_from_string(b.model.SerializeAsString(), "test.onnx", {}, options);
  Tensor got = model.forward(x.to(options.device));
  BOOST_CHECK_EQUAL(got.device().str(), options.device.str());
  check_close(got.to(kiln::kCPU), want);
}

BOOST_AUTO_TEST_CASE(an_older_opset_is_upgraded_by_onnx_version_converter) {
  // opset 11: Softmax flattens to 2-D from its axis (axis 1 of [2, 3, 4] is a softmax over 12);
  // the converter rewrites it for opset 13. Refused by default (LoadOptions::convert_opset).
  Builder b(11);
  b.input("x", {2, 3, 4});
  auto* sm = b.node("Softmax", {"x"}, {"s"});
  Builder::attr_i(sm, "axis", 1);
  b.output("s", {2, 3, 4});
  CHECK_ERROR(kiln::NotImplementedError,
              kiln::onnx::load_from_string(b.model.SerializeAsString(), "old.onnx"), "old.onnx",
              "opset 11", "13 to 17", "convert_opset");
  kiln::onnx::LoadOptions options;
  options.convert_opset = true;
  auto model = kiln::onnx::load_from_string(b.model.SerializeAsString(), "old.onnx", {}, options);
  BOOST_CHECK_EQUAL(model.opset(), 13);
  Tensor x = kiln::randn({2, 3, 4});
  check_close(model.forward(x),
              kiln::nn::functional::softmax(x.reshape({2, 12}), 1).reshape({2, 3, 4}));
}
