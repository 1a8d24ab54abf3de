// Printing a graph in TorchScript's IR style.
#include <kiln/dispatch.h>
#include <kiln/jit.h>

#include <sstream>

namespace kiln::jit {
namespace {

// libtorch's type names ("Float", "Long", ...).
const char* type_name(ScalarType t) {
  switch (t) {
    case kBool: return "Bool";
    case kByte: return "Byte";
    case kChar: return "Char";
    case kShort: return "Short";
    case kInt: return "Int";
    case kLong: return "Long";
    case kHalf: return "Half";
    case kBFloat16: return "BFloat16";
    case kFloat: return "Float";
    case kDouble: return "Double";
    default: return "Tensor";
  }
}

void print_type(std::ostream& out, const Value& v) {
  out << type_name(v.dtype) << "(";
  for (int64_t s : v.sizes) out << s << ", ";
  out << "device=" << v.device << ")";
}

}  // namespace

std::string Graph::value_name(int v) const {
  if (v < 0) return "None";
  const Value& value = values[static_cast<size_t>(v)];
  switch (value.kind) {
    case ValueKind::Input:
    case ValueKind::Parameter: return "%" + value.name;
    case ValueKind::Constant: return "%c" + std::to_string(v);
    case ValueKind::Intermediate: return "%" + std::to_string(v);
  }
  return "%?";
}

std::string Graph::str() const {
  std::vector<char> used(values.size(), 0);
  for (const Node& n : nodes) {
    for (int v : n.inputs) {
      if (v >= 0) used[static_cast<size_t>(v)] = 1;
    }
  }
  for (int v : outputs) used[static_cast<size_t>(v)] = 1;
  std::ostringstream out;
  out << "graph(";
  bool first = true;
  auto header = [&](int v, const char* note) {
    out << (first ? "" : ",\n      ") << value_name(v) << " : ";
    first = false;
    print_type(out, values[static_cast<size_t>(v)]);
    out << note;
  };
  for (int v : inputs) header(v, "");
  for (size_t v = 0; v < values.size(); ++v) {
    if (values[v].kind == ValueKind::Parameter && used[v]) {
      header(static_cast<int>(v), " [parameter]");
    }
  }
  out << "):\n";
  for (size_t v = 0; v < values.size(); ++v) {
    if (values[v].kind == ValueKind::Constant && used[v]) {
      out << "  " << value_name(static_cast<int>(v)) << " : ";
      print_type(out, values[v]);
      out << " = prim::Constant()\n";
    }
  }
  for (const Node& n : nodes) {
    out << "  ";
    bool first_out = true;
    for (int v : n.outputs) {
      out << (first_out ? "" : ", ") << value_name(v);
      if (v >= 0) {
        out << " : ";
        print_type(out, values[static_cast<size_t>(v)]);
      }
      first_out = false;
    }
    if (!n.outputs.empty()) out << " = ";
    std::vector<std::string> names;
    for (int v : n.inputs) names.push_back(value_name(v));
    out << "kiln::" << (n.detach ? "detach" : n.call->op().name()) << "(";
    n.call->print_arguments(out, names);
    out << ")\n";
  }
  out << "  return (";
  for (size_t i = 0; i < outputs.size(); ++i) out << (i ? ", " : "") << value_name(outputs[i]);
  out << ")\n";
  return out.str();
}

}  // namespace kiln::jit
