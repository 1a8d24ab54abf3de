// The context a node runs in (NodeRun: attributes, inputs, values read on the host, errors
// naming the node), shared helpers of the operator families, and the operator table.
#include "onnx_impl.h"

#include <kiln/dispatch.h>
#include <kiln/ops.h>

namespace kiln::onnx::detail {

std::string NodeRun::where() const {
  return kiln::detail::str(file_, ": node ", index_, " (",
                           node_.name().empty() ? std::string("unnamed") : node_.name(), ", ",
                           node_.op_type(), ", opset ", opset_, ")");
}

void NodeRun::fail(const std::string& what) const {
  throw ValueError(kiln::detail::str(where(), ": ", what));
}
void NodeRun::unsupported(const std::string& what) const {
  throw NotImplementedError(kiln::detail::str(where(), ": ", what));
}

const pb::AttributeProto* NodeRun::attr(const char* name) const {
  for (const auto& a : node_.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}
int64_t NodeRun::i(const char* name, int64_t def) const {
  const auto* a = attr(name);
  return a ? a->i() : def;
}
float NodeRun::f(const char* name, float def) const {
  const auto* a = attr(name);
  return a ? a->f() : def;
}
std::string NodeRun::s(const char* name, const std::string& def) const {
  const auto* a = attr(name);
  return a ? a->s() : def;
}
std::vector<int64_t> NodeRun::ints(const char* name, std::vector<int64_t> def) const {
  const auto* a = attr(name);
  if (!a) return def;
  return {a->ints().begin(), a->ints().end()};
}
std::vector<float> NodeRun::floats(const char* name) const {
  const auto* a = attr(name);
  if (!a) return {};
  return {a->floats().begin(), a->floats().end()};
}

const Tensor& NodeRun::input(size_t k) const {
  if (!has_input(k)) fail(kiln::detail::str("input ", k, " is required"));
  return in[k]->t;
}

std::vector<int64_t> NodeRun::host_ints(size_t k) const {
  const Tensor& t = input(k);
  if (!in[k]->known && value_read) *value_read = true;
  if (is_floating_point(t.dtype()) || t.dtype() == kBool) {
    fail(kiln::detail::str("input ", k, " must be an integer tensor, not ", t.dtype()));
  }
  ExcludeDispatchKeyGuard guard(DispatchKey::Observe);
  Tensor c = t.to(kCPU).to(kLong).contiguous();
  const int64_t* p = c.data_ptr<int64_t>();
  return {p, p + c.numel()};
}

std::vector<double> NodeRun::host_doubles(size_t k) const {
  const Tensor& t = input(k);
  if (!in[k]->known && value_read) *value_read = true;
  ExcludeDispatchKeyGuard guard(DispatchKey::Observe);
  Tensor c = t.to(kCPU).to(kDouble).contiguous();
  const double* p = c.data_ptr<double>();
  return {p, p + c.numel()};
}

Scalar first_scalar(const Tensor& t) {
  ExcludeDispatchKeyGuard guard(DispatchKey::Observe);
  KILN_CHECK_VALUE(t.numel() >= 1, "onnx: expected a tensor with one element, got ", t.sizes());
  if (is_floating_point(t.dtype())) {
    return Scalar(
        t.to(kCPU).reshape({-1}).slice(0, 0, 1).to(kDouble).contiguous().data_ptr<double>()[0]);
  }
  if (t.dtype() == kBool) {
    return Scalar(t.to(kCPU).reshape({-1}).slice(0, 0, 1).contiguous().data_ptr<bool>()[0]);
  }
  return Scalar(
      t.to(kCPU).reshape({-1}).slice(0, 0, 1).to(kLong).contiguous().data_ptr<int64_t>()[0]);
}

int64_t norm_axis(const NodeRun& n, int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) {
    n.fail(kiln::detail::str("axis ", axis, " is out of range for rank ", rank));
  }
  return axis < 0 ? axis + rank : axis;
}

void check_auto_pad(const NodeRun& n) {
  const std::string p = n.s("auto_pad", "NOTSET");
  if (p != "NOTSET" && p != "VALID" && p != "SAME_UPPER" && p != "SAME_LOWER") {
    n.fail("auto_pad '" + p + "' is not one of NOTSET, VALID, SAME_UPPER, SAME_LOWER");
  }
}

const std::unordered_map<std::string, OpDef>& op_table() {
  static const auto table = [] {
    std::vector<OpDef> ops;
    add_elementwise_ops(ops);
    add_nn_ops(ops);
    add_shape_ops(ops);
    add_reduce_ops(ops);
    add_extra_ops(ops);
    add_resize_ops(ops);
    std::unordered_map<std::string, OpDef> t;
    for (auto& op : ops) t.emplace(op.name, std::move(op));
    return t;
  }();
  return table;
}

}  // namespace kiln::onnx::detail
