// ModuleDict, ParameterDict, ParameterList.
#include <kiln/nn/modules/collections.h>

namespace kiln::nn {
namespace {

// libtorch's name of a dtype, as its parameter containers print it: "Float", "Long".
const char* scalar_type_name(ScalarType t) {
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
  }
  return dtype_name(t);
}

// "<title>(" then "(key): Parameter containing: [Float of size [2, 3]]" per line, then ")".
void print_parameters(std::ostream& stream, const char* title,
                      const OrderedDict<std::string, Tensor>& parameters) {
  stream << title << "(\n";
  for (const auto& [key, value] : parameters) {
    stream << "(" << key << "): Parameter containing: [" << scalar_type_name(value.dtype())
           << " of size " << value.sizes() << "]\n";
  }
  stream << ")";
}

}  // namespace

// --- ModuleDict ------------------------------------------------------------------------------

void ModuleDictImpl::insert(const std::string& key, std::shared_ptr<Module> module) {
  KILN_CHECK_VALUE(module != nullptr, "ModuleDict: cannot insert an empty module as '", key, "'");
  if (modules_.contains(key)) {
    replace_module(key, module);
    modules_[key] = std::move(module);
  } else {
    register_module(key, module);
    modules_.insert(key, std::move(module));
  }
}

std::shared_ptr<Module> ModuleDictImpl::pop(const std::string& key) {
  std::shared_ptr<Module> module = modules_.pop(key);
  unregister_module(key);
  return module;
}

void ModuleDictImpl::clear() {
  for (const std::string& key : modules_.keys()) unregister_module(key);
  modules_.clear();
}

void ModuleDictImpl::pretty_print(std::ostream& stream) const { stream << "kiln::nn::ModuleDict"; }

// --- ParameterDict ---------------------------------------------------------------------------

void ParameterDictImpl::set(const std::string& key, const Tensor& param) {
  if (Tensor* existing = parameters_.find(key)) {
    *existing = param;
  } else {
    insert(key, param);
  }
}

void ParameterDictImpl::pretty_print(std::ostream& stream) const {
  print_parameters(stream, "kiln::nn::ParameterDict", parameters_);
}

// --- ParameterList ---------------------------------------------------------------------------

size_t ParameterListImpl::checked(size_t index) const {
  KILN_CHECK_INDEX(index < parameters_.size(), "Index out of range: ParameterList has ",
                   parameters_.size(), " parameters, index ", index);
  return index;
}

void ParameterListImpl::pretty_print(std::ostream& stream) const {
  print_parameters(stream, "kiln::nn::ParameterList", parameters_);
}

}  // namespace kiln::nn
