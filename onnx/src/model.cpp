// kiln::onnx::load: parse with libonnx's protobuf classes, validate every node against the
// operator table at load time, convert the initializers; Model::run interprets the graph under
// kiln::jit::trace (one trace per input signature) and replays it.
#include "onnx_impl.h"

#include <kiln/dispatch.h>
#include <kiln/ops.h>
#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>
#include <onnx/version_converter/convert.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <unordered_set>

// libonnx 1.12 exports the checker's overload with a context (which carries the model's folder
// for external data) without declaring it in checker.h.
namespace onnx::checker {
void check_model(const ModelProto& model, CheckerContext& ctx);
}  // namespace onnx::checker

namespace kiln::onnx::detail {

struct ModelState {
  std::string file;
  pb::ModelProto proto;
  int64_t opset = 0;
  LoadOptions options;
  std::vector<ValueInfo> inputs, outputs;
  // value ids: every name the graph defines
  std::vector<Tensor> initial;  // per value id: an initializer's tensor (on the device), or none
  std::vector<int> input_ids, output_ids;
  struct Step {
    const OpDef* def;
    std::vector<int> in, out;  // -1: an absent optional one
    Tensor constant;           // a Constant node's value
    std::vector<int> release;  // values whose last use this is
  };
  std::vector<Step> steps;
  size_t num_values = 0;

  std::mutex mu;
  jit::TracedFunction traced;
  bool has_trace = false;
  bool eager = false;  // the graph reads values: traced graphs would freeze them
  bool trace_read_value = false;

  std::vector<Tensor> interpret(const std::vector<Tensor>& inputs, bool* value_read) const;
  void check_inputs(const std::vector<Tensor>& inputs) const;
};

namespace {

const char* attr_type_name(int t) {
  return pb::AttributeProto_AttributeType_IsValid(t)
             ? pb::AttributeProto_AttributeType_Name(
                   static_cast<pb::AttributeProto_AttributeType>(t))
                   .c_str()
             : "an unknown type";
}

ValueInfo value_info(const pb::ValueInfoProto& v, const std::string& file, const char* what) {
  ValueInfo info;
  info.name = v.name();
  const auto where = kiln::detail::str(file, ": graph ", what, " '", v.name(), "'");
  KILN_CHECK_VALUE(v.has_type(), where, ": has no type");
  if (!v.type().has_tensor_type()) {
    throw NotImplementedError(kiln::detail::str(
        where, ": only tensor types are supported (not sequences, maps or optionals)"));
  }
  const auto& tt = v.type().tensor_type();
  auto dtype = dtype_from_onnx(tt.elem_type());
  if (!dtype) {
    throw NotImplementedError(kiln::detail::str(where, ": element type ",
                                                onnx_dtype_name(tt.elem_type()),
                                                " is not supported by kiln"));
  }
  info.dtype = *dtype;
  if (tt.has_shape()) {
    for (const auto& d : tt.shape().dim()) {
      if (d.has_dim_value()) {
        KILN_CHECK_VALUE(d.dim_value() >= 0, where, ": negative dimension ", d.dim_value());
        info.sizes.push_back(d.dim_value());
      } else {
        info.sizes.push_back(-1);
      }
    }
  } else {
    info.sizes = {-2};  // no shape given: any rank
  }
  return info;
}

void check_structure(const pb::GraphProto& g, int64_t opset, const std::string& file) {
  std::unordered_set<std::string> defined;
  auto define = [&](const std::string& name, const std::string& where) {
    KILN_CHECK_VALUE(!name.empty(), "onnx::load: ", file, ": ", where, " has an empty name");
    KILN_CHECK_VALUE(defined.insert(name).second, "onnx::load: ", file, ": ", where,
                     " redefines the value '", name, "'");
  };
  for (int k = 0; k < g.initializer_size(); ++k) {
    define(g.initializer(k).name(), "initializer " + std::to_string(k));
  }
  for (int k = 0; k < g.input_size(); ++k) {
    if (!defined.count(g.input(k).name())) {
      define(g.input(k).name(), "graph input " + std::to_string(k));
    }
  }
  for (int k = 0; k < g.node_size(); ++k) {
    const auto& node = g.node(k);
    NodeRun n(node, k, opset, file);
    // operators of older opsets that ONNX's version converter renames for opset 13
    const bool renamed = opset < 13 &&
                         (node.op_type() == "Scatter" || node.op_type() == "Upsample");
    if ((node.domain().empty() || node.domain() == "ai.onnx") &&
        !op_table().count(node.op_type()) && !renamed) {
      n.unsupported("the operator " + node.op_type() + " is not supported by kiln");
    }
    for (int j = 0; j < node.input_size(); ++j) {
      if (!node.input(j).empty() && !defined.count(node.input(j))) {
        n.fail(kiln::detail::str("input ", j, " '", node.input(j),
                                 "' is neither a graph input, an initializer nor the output of "
                                 "an earlier node"));
      }
    }
    for (int j = 0; j < node.output_size(); ++j) {
      if (!node.output(j).empty())
        define(node.output(j), n.where() + ": output " + std::to_string(j));
    }
  }
  for (const auto& v : g.output()) {
    KILN_CHECK_VALUE(defined.count(v.name()), "onnx::load: ", file, ": graph output '", v.name(),
                     "' is not defined by the graph");
  }
}

void run_checker(const pb::ModelProto& m, const std::string& file, const std::string& base_dir) {
  try {
    pb::checker::CheckerContext ctx;
    ctx.set_ir_version(static_cast<int>(m.ir_version()));
    std::unordered_map<std::string, int> opsets;
    for (const auto& o : m.opset_import()) opsets[o.domain()] = static_cast<int>(o.version());
    ctx.set_opset_imports(opsets);
    ctx.set_model_dir(base_dir);
    pb::checker::check_model(m, ctx);
  } catch (const pb::checker::ValidationError& e) {
    throw ValueError(kiln::detail::str("onnx::load: ", file,
                                       ": ONNX's checker refuses it: ", e.what()));
  }
}

}  // namespace

std::shared_ptr<ModelState> build(const std::string& bytes, const std::string& file,
                                  const std::string& base_dir, const LoadOptions& options) {
  auto st = std::make_shared<ModelState>();
  st->file = file;
  st->options = options;
  KILN_CHECK_VALUE(bytes.size() < (size_t{1} << 31), "onnx::load: ", file,
                   " is over 2 GiB: keep the weights in external data files");
  KILN_CHECK_VALUE(st->proto.ParseFromString(bytes), "onnx::load: ", file,
                   " is not an ONNX model (protobuf ModelProto parse failed)");
  const auto& m = st->proto;
  KILN_CHECK_VALUE(m.ir_version() >= 3, "onnx::load: ", file, ": ir_version ", m.ir_version(),
                   " is not supported (3 or later)");
  bool found = false;
  for (const auto& o : m.opset_import()) {
    if (o.domain().empty() || o.domain() == "ai.onnx") {
      found = true;
      st->opset = o.version();
    }
  }
  if (!found) {
    std::string domains;
    for (const auto& o : m.opset_import()) domains += " '" + o.domain() + "'";
    throw NotImplementedError(kiln::detail::str("onnx::load: ", file,
                                                ": no opset of the default domain is imported "
                                                "(only",
                                                domains,
                                                "): kiln runs ONNX's default "
                                                "domain only"));
  }
  // an operator kiln lacks is named, and the graph's structure checked (every value defined
  // once, before its use; libonnx's version converter crashes on a graph that is not), before
  // ONNX's checker or converter look at the graph
  check_structure(m.graph(), st->opset, file);
  bool checked = false;
  if (st->opset < 13 && options.convert_opset) {
    // ONNX's own version converter upgrades an older model to opset 13 (checked before: the
    // converter's output of an IR 3 model need not pass the checker)
    if (options.check) run_checker(m, file, base_dir);
    checked = true;
    const int64_t from = st->opset;
    try {
      // the converter's adapters need the shapes (Softmax 12 -> 13 and others): ONNX's shape
      // inference first, its errors left to the converter
      try {
        pb::shape_inference::InferShapes(st->proto);
      } catch (const std::exception&) {
      }
      st->proto = pb::version_conversion::ConvertVersion(st->proto, 13);
    } catch (const std::exception& e) {
      throw NotImplementedError(kiln::detail::str("onnx::load: ", file, ": opset ", from,
                                                  " of the default domain is not supported "
                                                  "(13 to 17) and ONNX's version converter "
                                                  "failed: ",
                                                  e.what()));
    }
    st->opset = 13;
  }
  if (st->opset < 13 || st->opset > 17) {
    throw NotImplementedError(kiln::detail::str("onnx::load: ", file, ": opset ", st->opset,
                                                " of the default domain is not supported "
                                                "(13 to 17): convert the model with "
                                                "onnx.version_converter, or, for a trusted "
                                                "file, load it with "
                                                "LoadOptions::convert_opset"));
  }
  const auto& g = m.graph();
  std::unordered_map<std::string, int> id;
  auto define = [&](const std::string& name, const std::string& where) {
    KILN_CHECK_VALUE(!name.empty(), "onnx::load: ", file, ": ", where, " has an empty name");
    KILN_CHECK_VALUE(id.emplace(name, static_cast<int>(id.size())).second, "onnx::load: ", file,
                     ": ", where, " redefines the value '", name, "'");
    return static_cast<int>(id.size()) - 1;
  };
  std::vector<std::pair<int, Tensor>> inits;
  for (int k = 0; k < g.initializer_size(); ++k) {
    const auto& init = g.initializer(k);
    const auto where = kiln::detail::str(file, ": initializer ", k, " '", init.name(), "'");
    Tensor t = tensor_from_proto(init, where, base_dir);
    inits.emplace_back(define(init.name(), "initializer " + std::to_string(k)),
                       t.to(options.device));
  }
  KILN_CHECK_VALUE(g.sparse_initializer_size() == 0, "onnx::load: ", file,
                   ": sparse initializers are not supported");
  for (const auto& v : g.input()) {
    if (id.count(v.name())) continue;  // an initializer listed as an input (IR < 4)
    st->inputs.push_back(value_info(v, file, "input"));
    st->input_ids.push_back(define(v.name(), "graph input"));
  }
  const auto& table = op_table();
  for (int k = 0; k < g.node_size(); ++k) {
    const auto& node = g.node(k);
    NodeRun n(node, k, st->opset, st->file);
    if (!node.domain().empty() && node.domain() != "ai.onnx") {
      n.unsupported("the domain '" + node.domain() + "' is not supported (only ONNX's default)");
    }
    auto it = table.find(node.op_type());
    if (it == table.end()) {
      n.unsupported("the operator " + node.op_type() + " is not supported by kiln");
    }
    const OpDef& def = it->second;
    if (st->opset < def.since) {
      n.unsupported(kiln::detail::str("kiln supports ", def.name, " from opset ", def.since));
    }
    if (node.input_size() < def.min_inputs ||
        (def.max_inputs >= 0 && node.input_size() > def.max_inputs)) {
      n.fail(kiln::detail::str("has ", node.input_size(), " inputs; ", def.name, " takes ",
                               def.min_inputs, " to ",
                               def.max_inputs < 0 ? std::string("any number")
                                                  : std::to_string(def.max_inputs)));
    }
    if (node.output_size() < def.min_outputs || node.output_size() > def.max_outputs) {
      n.unsupported(kiln::detail::str("has ", node.output_size(), " outputs; kiln's ", def.name,
                                      " gives ", def.min_outputs, " to ", def.max_outputs));
    }
    std::unordered_set<std::string> seen;
    for (const auto& a : node.attribute()) {
      auto spec = std::find_if(def.attrs.begin(), def.attrs.end(),
                               [&](const AttrSpec& s) { return a.name() == s.name; });
      if (spec == def.attrs.end()) {
        n.unsupported("the attribute '" + a.name() + "' is not supported");
      }
      if (!seen.insert(a.name()).second) n.fail("the attribute '" + a.name() + "' is repeated");
      if (a.type() != spec->type) {
        n.fail(kiln::detail::str("the attribute '", a.name(), "' must be ",
                                 attr_type_name(spec->type), ", not ", attr_type_name(a.type())));
      }
      if (!a.ref_attr_name().empty()) n.unsupported("attribute references are not supported");
    }
    ModelState::Step step;
    step.def = &def;
    for (int j = 0; j < node.input_size(); ++j) {
      const auto& name = node.input(j);
      if (name.empty()) {
        step.in.push_back(-1);
        continue;
      }
      auto found_in = id.find(name);
      if (found_in == id.end()) {
        n.fail(kiln::detail::str("input ", j, " '", name,
                                 "' is neither a graph input, an initializer nor the output of "
                                 "an earlier node"));
      }
      step.in.push_back(found_in->second);
    }
    if (def.check) def.check(n);
    if (node.op_type() == "Constant") {
      const auto* a = n.attr("value");
      if (a) {
        step.constant = tensor_from_proto(a->t(), n.where() + ": attribute 'value'", base_dir);
      } else if (n.has("value_float")) {
        step.constant = kiln::full({}, n.f("value_float", 0), TensorOptions().dtype(kFloat));
      } else if (n.has("value_int")) {
        step.constant = kiln::full({}, n.i("value_int", 0), TensorOptions().dtype(kLong));
      } else if (n.has("value_floats")) {
        auto v = n.floats("value_floats");
        step.constant = kiln::empty({static_cast<int64_t>(v.size())}, TensorOptions());
        std::copy(v.begin(), v.end(), step.constant.data_ptr<float>());
      } else if (n.has("value_ints")) {
        auto v = n.ints("value_ints");
        step.constant = kiln::empty({static_cast<int64_t>(v.size())}, TensorOptions().dtype(kLong));
        std::copy(v.begin(), v.end(), step.constant.data_ptr<int64_t>());
      } else {
        n.unsupported("needs one of the attributes value, value_float(s), value_int(s)");
      }
      step.constant = step.constant.to(options.device);
    }
    for (int j = 0; j < node.output_size(); ++j) {
      step.out.push_back(node.output(j).empty()
                             ? -1
                             : define(node.output(j), n.where() + ": output " + std::to_string(j)));
    }
    st->steps.push_back(std::move(step));
  }
  for (const auto& v : g.output()) {
    auto it = id.find(v.name());
    KILN_CHECK_VALUE(it != id.end(), "onnx::load: ", file, ": graph output '", v.name(),
                     "' is not defined by the graph");
    st->outputs.push_back(value_info(v, file, "output"));
    st->output_ids.push_back(it->second);
  }
  // ONNX's checker after kiln's own checks (which name the node and field, and keep external
  // data inside the model's folder)
  if (options.check && !checked) run_checker(m, file, base_dir);
  st->num_values = id.size();
  st->initial.resize(st->num_values);
  for (auto& [k, t] : inits) st->initial[static_cast<size_t>(k)] = std::move(t);
  // release each intermediate after its last use
  std::vector<int> last(st->num_values, -1);
  for (size_t s = 0; s < st->steps.size(); ++s) {
    for (int v : st->steps[s].in) {
      if (v >= 0) last[static_cast<size_t>(v)] = static_cast<int>(s);
    }
  }
  for (int v : st->output_ids) last[static_cast<size_t>(v)] = -1;
  for (size_t v = 0; v < last.size(); ++v) {
    if (last[v] >= 0 && !st->initial[v].defined()) {
      st->steps[static_cast<size_t>(last[v])].release.push_back(static_cast<int>(v));
    }
  }
  return st;
}

void ModelState::check_inputs(const std::vector<Tensor>& in) const {
  KILN_CHECK_VALUE(in.size() == inputs.size(), "onnx::Model::run: ", file, " takes ", inputs.size(),
                   " inputs, got ", in.size());
  for (size_t k = 0; k < in.size(); ++k) {
    const auto& info = inputs[k];
    const Tensor& t = in[k];
    KILN_CHECK_VALUE(t.defined(), "onnx::Model::run: input ", k, " '", info.name, "' is undefined");
    KILN_CHECK_VALUE(t.dtype() == info.dtype, "onnx::Model::run: input ", k, " '", info.name,
                     "' must be ", info.dtype, ", not ", t.dtype(), ": convert it with .to()");
    if (info.sizes.size() == 1 && info.sizes[0] == -2) continue;
    bool ok = t.dim() == static_cast<int64_t>(info.sizes.size());
    for (size_t d = 0; ok && d < info.sizes.size(); ++d) {
      ok = info.sizes[d] < 0 || info.sizes[d] == t.size(static_cast<int64_t>(d));
    }
    KILN_CHECK_VALUE(ok, "onnx::Model::run: input ", k, " '", info.name, "' has shape ", t.sizes(),
                     ", but the model declares ", ArrayRef<int64_t>(info.sizes), " (-1: any size)");
  }
}

std::vector<Tensor> ModelState::interpret(const std::vector<Tensor>& in, bool* value_read) const {
  std::vector<Val> vals(num_values);
  for (size_t v = 0; v < num_values; ++v) {
    if (initial[v].defined()) vals[v] = {initial[v], true};
  }
  for (size_t k = 0; k < in.size(); ++k) vals[static_cast<size_t>(input_ids[k])] = {in[k], false};
  const auto& g = proto.graph();
  for (size_t s = 0; s < steps.size(); ++s) {
    const Step& step = steps[s];
    NodeRun n(g.node(static_cast<int>(s)), static_cast<int>(s), opset, file);
    n.value_read = value_read;
    n.device = options.device;
    bool known = true;
    for (int v : step.in) {
      n.in.push_back(v >= 0 ? &vals[static_cast<size_t>(v)] : nullptr);
      if (v >= 0) known = known && vals[static_cast<size_t>(v)].known;
    }
    const std::string& op = g.node(static_cast<int>(s)).op_type();
    if (op == "Shape" || op == "Size") known = true;
    if (step.constant.defined()) n.constant = &step.constant;
    std::vector<Tensor> out;
    try {
      std::optional<ExcludeDispatchKeyGuard> guard;
      if (known) guard.emplace(DispatchKey::Observe);
      out = step.def->run(n);
    } catch (const NotImplementedError& e) {
      if (std::string(e.what()).rfind(file, 0) == 0) throw;
      throw NotImplementedError(kiln::detail::str(n.where(), ": ", e.what()));
    } catch (const Error& e) {
      if (std::string(e.what()).rfind(file, 0) == 0) throw;
      throw ValueError(kiln::detail::str(n.where(), ": ", e.what()));
    }
    for (size_t j = 0; j < step.out.size(); ++j) {
      if (step.out[j] < 0) continue;
      if (j >= out.size() || !out[j].defined()) {
        n.fail(kiln::detail::str("output ", j, " was not computed"));
      }
      vals[static_cast<size_t>(step.out[j])] = {std::move(out[j]), known};
    }
    for (int v : step.release) vals[static_cast<size_t>(v)].t = Tensor();
  }
  std::vector<Tensor> result;
  for (int v : output_ids) {
    Tensor t = vals[static_cast<size_t>(v)].t;
    // an output that is an input or a constant: a copy, so that callers never alias them
    result.push_back(vals[static_cast<size_t>(v)].known ? t.clone() : t);
  }
  return result;
}

}  // namespace kiln::onnx::detail

namespace kiln::onnx {

Model load_from_string(const std::string& bytes, const std::string& name,
                       const std::string& base_dir, const LoadOptions& options) {
  Model m;
  m.state_ = detail::build(bytes, name, base_dir, options);
  return m;
}

Model load(const std::string& path, const LoadOptions& options) {
  std::ifstream in(path, std::ios::binary);
  KILN_CHECK_VALUE(in.good(), "onnx::load: cannot open ", path);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto dir = std::filesystem::path(path).parent_path();
  return load_from_string(bytes, path, dir.empty() ? "." : dir.string(), options);
}

std::vector<Tensor> Model::run(const std::vector<Tensor>& inputs) const {
  KILN_CHECK_VALUE(state_ != nullptr, "onnx::Model::run: the model is empty (not loaded)");
  auto& st = *state_;
  st.check_inputs(inputs);
  std::lock_guard<std::mutex> lock(st.mu);
  if (!st.options.trace || st.eager) return st.interpret(inputs, nullptr);
  if (!st.has_trace) {
    auto* state = state_.get();  // the traced function lives in the state: no cycle
    jit::TraceableFunction fn = [state](const std::vector<Tensor>& in) {
      return state->interpret(in, &state->trace_read_value);
    };
    st.traced = jit::trace(fn, inputs);
    st.has_trace = true;
  }
  // a trace (the first, or another signature's, made by the call) that read a value the
  // graph computes would freeze it: such a model runs without the trace from then on
  std::vector<Tensor> out;
  if (!st.trace_read_value) out = st.traced(inputs);
  if (st.trace_read_value) {
    st.eager = true;
    return st.interpret(inputs, nullptr);
  }
  return out;
}

Tensor Model::forward(const Tensor& input) const { return run({input}).at(0); }

const std::vector<ValueInfo>& Model::inputs() const {
  KILN_CHECK_VALUE(state_ != nullptr, "onnx::Model::inputs: the model is empty (not loaded)");
  return state_->inputs;
}
const std::vector<ValueInfo>& Model::outputs() const {
  KILN_CHECK_VALUE(state_ != nullptr, "onnx::Model::outputs: the model is empty (not loaded)");
  return state_->outputs;
}
int64_t Model::opset() const { return state_ ? state_->opset : 0; }
size_t Model::num_nodes() const { return state_ ? state_->steps.size() : 0; }

const jit::Graph& Model::graph() const {
  KILN_CHECK_VALUE(state_ != nullptr && state_->has_trace, "onnx::Model::graph: no trace yet ",
                   "(run the model once with tracing on)");
  return state_->traced.graph();
}
bool Model::replays() const {
  return state_ && state_->options.trace && state_->has_trace && !state_->eager;
}

const jit::TracedFunction& Model::traced() const {
  KILN_CHECK_VALUE(state_ != nullptr, "onnx::Model::traced: the model is empty (not loaded)");
  return state_->traced;
}

std::vector<std::string> supported_operators() {
  std::vector<std::string> names;
  for (const auto& [name, def] : detail::op_table()) names.push_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace kiln::onnx
