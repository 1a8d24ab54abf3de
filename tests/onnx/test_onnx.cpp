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

[[maybe_unused]] Tensor longs(std::vector<int64_t> v) {
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
