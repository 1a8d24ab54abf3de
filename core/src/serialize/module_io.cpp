// kiln::save(module, path) and kiln::load(module, path): a module's parameters and buffers by
// name in a safetensors file. Loading checks every name, shape and dtype before copying anything.
#include <kiln/autograd.h>
#include <kiln/nn/module.h>
#include <kiln/serialize.h>

#include <unordered_map>

namespace kiln {
namespace {

// The module's parameters, then its buffers, by name (recursively).
NamedTensors module_tensors(const nn::Module& module) {
  NamedTensors tensors = module.named_parameters(/*recurse=*/true).pairs();
  NamedTensors buffers = module.named_buffers(/*recurse=*/true).pairs();
  tensors.insert(tensors.end(), buffers.begin(), buffers.end());
  return tensors;
}

std::string shape_str(IntArrayRef sizes) {
  std::string s = "[";
  for (size_t i = 0; i < sizes.size(); ++i) s += (i ? ", " : "") + std::to_string(sizes[i]);
  return s + "]";
}

std::string join(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

}  // namespace

void save(const nn::Module& module, const std::string& path) {
  NamedTensors tensors;
  for (auto& [name, t] : module_tensors(module)) {
    if (t.defined()) tensors.emplace_back(name, t);
  }
  save(tensors, path);
}

void load(nn::Module& module, const std::string& path) {
  NamedTensors file = load(path);
  std::unordered_map<std::string, const Tensor*> by_name;
  for (const auto& [name, t] : file) by_name[name] = &t;

  NamedTensors targets;
  for (auto& [name, t] : module_tensors(module)) {
    if (t.defined()) targets.emplace_back(name, t);
  }
  std::vector<std::string> missing, unexpected;
  std::unordered_map<std::string, bool> wanted;
  for (const auto& [name, t] : targets) {
    wanted[name] = true;
    if (!by_name.count(name)) missing.push_back(name);
  }
  for (const auto& [name, t] : file) {
    if (!wanted.count(name)) unexpected.push_back(name);
  }
  KILN_CHECK_VALUE(missing.empty() && unexpected.empty(), "load: '", path,
                   "' does not match the module: ",
                   missing.empty() ? "" : "missing keys: " + join(missing),
                   !missing.empty() && !unexpected.empty() ? "; " : "",
                   unexpected.empty() ? "" : "unexpected keys: " + join(unexpected));
  for (const auto& [name, t] : targets) {
    const Tensor& src = *by_name.at(name);
    KILN_CHECK_VALUE(src.sizes().equals(t.sizes()), "load: '", path, "': tensor '", name,
                     "' has shape ", shape_str(src.sizes()), " in the file but ",
                     shape_str(t.sizes()), " in the module");
    KILN_CHECK_TYPE(src.dtype() == t.dtype(), "load: '", path, "': tensor '", name, "' has dtype ",
                    dtype_name(src.dtype()), " in the file but ", dtype_name(t.dtype()),
                    " in the module");
  }
  NoGradGuard no_grad;
  for (auto& [name, t] : targets) t.copy_(*by_name.at(name));
}

}  // namespace kiln
