// kiln::nn::Module: registration, traversal, state and printing.
#include <kiln/autograd.h>
#include <kiln/nn/module.h>

#include <cxxabi.h>

#include <cstdlib>
#include <typeinfo>
#include <unordered_set>

namespace kiln::nn {
namespace {

// "kiln::nn::LinearImpl" -> "Linear"; "NetImpl" -> "Net".
std::string class_name(const std::type_info& type) {
  int status = 0;
  char* demangled = abi::__cxa_demangle(type.name(), nullptr, nullptr, &status);
  std::string name = status == 0 && demangled != nullptr ? demangled : type.name();
  std::free(demangled);
  size_t template_start = name.find('<');
  size_t colon = name.rfind("::", template_start);
  if (colon != std::string::npos) name = name.substr(colon + 2);
  const std::string impl = "Impl";
  if (name.size() > impl.size() &&
      name.compare(name.size() - impl.size(), impl.size(), impl) == 0) {
    name.resize(name.size() - impl.size());
  }
  return name;
}

// Makes t hold src's data (storage, geometry, dtype, device), keeping its identity and autograd
// state: see Module::to.
void set_data(const Tensor& t, const Tensor& src) {
  TensorImpl& dst = t.impl();
  const TensorImpl& from = src.impl();
  dst.storage = from.storage;
  dst.sizes = from.sizes;
  dst.strides = from.strides;
  dst.offset = from.offset;
  dst.numel = from.numel;
  dst.dtype = from.dtype;
  dst.device = from.device;
}

}  // namespace

Module::Module(std::string name) : name_(std::move(name)) {}
Module::Module() = default;
Module::~Module() = default;

const std::string& Module::name() const {
  if (name_.empty()) name_ = class_name(typeid(*this));
  return name_;
}

void Module::check_new_name(const std::string& name, const char* what) const {
  KILN_CHECK_VALUE(!name.empty(), this->name(), ": ", what, " name must not be empty");
  KILN_CHECK_VALUE(name.find('.') == std::string::npos, this->name(), ": ", what, " name must ",
                   "not contain a dot (got \"", name, "\")");
  auto taken = [&name](const auto& list) {
    for (const auto& item : list) {
      if (item.first == name) return true;
    }
    return false;
  };
  KILN_CHECK_VALUE(!taken(parameters_) && !taken(buffers_) && !taken(children_), this->name(),
                   ": cannot register ", what, " \"", name, "\": the name is already taken");
}

Tensor& Module::register_parameter(std::string name, Tensor tensor, bool requires_grad) {
  check_new_name(name, "parameter");
  if (tensor.defined()) {
    KILN_CHECK_TYPE(!requires_grad || tensor.is_floating_point(), this->name(), ": parameter \"",
                    name, "\" must be a floating point tensor to require grad (got ",
                    dtype_name(tensor.dtype()), ")");
    tensor.set_requires_grad(requires_grad);
  }
  parameters_.emplace_back(std::move(name), std::move(tensor));
  return parameters_.back().second;
}

Tensor& Module::register_buffer(std::string name, Tensor tensor) {
  check_new_name(name, "buffer");
  buffers_.emplace_back(std::move(name), std::move(tensor));
  return buffers_.back().second;
}

void Module::add_child(std::string name, std::shared_ptr<Module> module) {
  check_new_name(name, "submodule");
  KILN_CHECK_VALUE(module != nullptr, this->name(), ": cannot register an empty submodule \"", name,
                   "\"");
  children_.emplace_back(std::move(name), std::move(module));
}

void Module::replace_child(const std::string& name, std::shared_ptr<Module> module) {
  KILN_CHECK_VALUE(module != nullptr, this->name(), ": cannot register an empty submodule \"", name,
                   "\"");
  for (auto& child : children_) {
    if (child.first == name) {
      child.second = std::move(module);
      return;
    }
  }
  throw IndexError(::kiln::detail::str(this->name(), ": no submodule named \"", name,
                                       "\" to replace"));
}

namespace {
// Appends the tensors of `list` (parameters_ or buffers_ of each module) with dotted names, each
// tensor once.
template <class Get>
std::vector<std::pair<std::string, Tensor>> collect(const Module& root, bool recurse, Get get) {
  std::vector<std::pair<std::string, Tensor>> out;
  std::unordered_set<const TensorImpl*> seen_tensors;
  std::unordered_set<const Module*> seen_modules;
  std::function<void(const Module&, const std::string&)> walk = [&](const Module& m,
                                                                    const std::string& prefix) {
    if (!seen_modules.insert(&m).second) return;
    for (const auto& [name, t] : get(m)) {
      if (t.defined() && seen_tensors.insert(t.impl_ptr().get()).second) {
        out.emplace_back(prefix + name, t);
      }
    }
    if (!recurse) return;
    for (const auto& [name, child] : m.named_children()) walk(*child, prefix + name + ".");
  };
  walk(root, "");
  return out;
}

std::vector<Tensor> values(const std::vector<std::pair<std::string, Tensor>>& named) {
  std::vector<Tensor> out;
  out.reserve(named.size());
  for (const auto& item : named) out.push_back(item.second);
  return out;
}
}  // namespace

std::vector<std::pair<std::string, Tensor>> Module::named_parameters(bool recurse) const {
  return collect(
      *this, recurse, [](const Module& m) -> const auto& { return m.parameters_; });
}
std::vector<Tensor> Module::parameters(bool recurse) const {
  return values(named_parameters(recurse));
}
std::vector<std::pair<std::string, Tensor>> Module::named_buffers(bool recurse) const {
  return collect(
      *this, recurse, [](const Module& m) -> const auto& { return m.buffers_; });
}
std::vector<Tensor> Module::buffers(bool recurse) const { return values(named_buffers(recurse)); }

std::vector<std::pair<std::string, std::shared_ptr<Module>>> Module::named_children() const {
  return children_;
}

std::vector<std::shared_ptr<Module>> Module::children() const {
  std::vector<std::shared_ptr<Module>> out;
  for (const auto& item : children_) out.push_back(item.second);
  return out;
}

std::vector<std::pair<std::string, std::shared_ptr<Module>>> Module::named_modules(
    const std::string& prefix, bool include_self) {
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> out;
  if (include_self) {
    std::shared_ptr<Module> self = weak_from_this().lock();
    KILN_CHECK(self != nullptr, name(), ": modules()/named_modules() with include_self need the ",
               "module to be held by a std::shared_ptr (use a module holder or std::make_shared), ",
               "or pass include_self=false");
    out.emplace_back(prefix, self);
  }
  std::unordered_set<const Module*> seen = {this};
  std::function<void(const Module&, const std::string&)> walk = [&](const Module& m,
                                                                    const std::string& path) {
    for (const auto& [name, child] : m.children_) {
      if (!seen.insert(child.get()).second) continue;
      std::string child_path = path.empty() ? name : path + "." + name;
      out.emplace_back(child_path, child);
      walk(*child, child_path);
    }
  };
  walk(*this, prefix);
  return out;
}

std::vector<std::shared_ptr<Module>> Module::modules(bool include_self) {
  std::vector<std::shared_ptr<Module>> out;
  for (auto& item : named_modules("", include_self)) out.push_back(std::move(item.second));
  return out;
}

void Module::apply(const std::function<void(Module&)>& fn) {
  fn(*this);
  for (auto& child : children_) child.second->apply(fn);
}

void Module::train(bool on) {
  training_ = on;
  for (auto& child : children_) child.second->train(on);
}

void Module::move_tensors(std::optional<Device> device, std::optional<ScalarType> dtype) {
  NoGradGuard no_grad;
  auto convert = [&](const Tensor& t) {
    ScalarType target = dtype && t.is_floating_point() ? *dtype : t.dtype();
    return t.detach().to(device.value_or(t.device()), target);
  };
  for (const Tensor& t : parameters(/*recurse=*/true)) {
    set_data(t, convert(t));
    if (t.grad().defined()) set_data(t.grad(), convert(t.grad()));
  }
  for (const Tensor& t : buffers(/*recurse=*/true)) set_data(t, convert(t));
}

void Module::to(Device device) { move_tensors(device, std::nullopt); }
void Module::to(ScalarType dtype) { move_tensors(std::nullopt, dtype); }
void Module::to(Device device, ScalarType dtype) { move_tensors(device, dtype); }

void Module::zero_grad(bool set_to_none) {
  for (Tensor& t : parameters(/*recurse=*/true)) {
    if (!t.grad().defined()) continue;
    if (set_to_none) {
      t.mutable_grad() = Tensor();
    } else {
      Tensor& grad = t.mutable_grad();
      grad = grad.detach();
      grad.zero_();
    }
  }
}

void Module::pretty_print(std::ostream& stream) const {
  stream << name();
  if (children_.empty()) stream << "()";
}

void Module::print_tree(std::ostream& out, int indent) const {
  pretty_print(out);
  if (children_.empty()) return;
  out << "(\n";
  std::string pad(static_cast<size_t>(indent + 2), ' ');
  for (const auto& [name, child] : children_) {
    out << pad << "(" << name << "): ";
    child->print_tree(out, indent + 2);
    out << "\n";
  }
  out << std::string(static_cast<size_t>(indent), ' ') << ")";
}

std::ostream& operator<<(std::ostream& out, const Module& module) {
  module.print_tree(out, 0);
  return out;
}

}  // namespace kiln::nn
