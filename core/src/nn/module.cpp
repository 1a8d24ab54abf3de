// kiln::nn::Module: registration, traversal, state and printing.
#include <kiln/autograd.h>
#include <kiln/nn/module.h>

#include <cxxabi.h>

#include <cstdlib>
#include <typeinfo>
#include <unordered_set>

namespace kiln::nn {

std::string detail::type_name(const std::type_info& type) {
  int status = 0;
  char* demangled = abi::__cxa_demangle(type.name(), nullptr, nullptr, &status);
  std::string name = status == 0 && demangled != nullptr ? demangled : type.name();
  std::free(demangled);
  return name;
}

namespace {

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
  if (name_.empty()) name_ = detail::type_name(typeid(*this));
  return name_;
}

// `what` is "Parameter", "Buffer" or "Submodule": libtorch's messages.
void Module::check_new_name(const std::string& name, const char* what) const {
  KILN_CHECK_VALUE(!name.empty(), this->name(), ": ", what, " name must not be empty");
  KILN_CHECK_VALUE(name.find('.') == std::string::npos, this->name(), ": ", what,
                   " name must not contain a dot (got '", name, "')");
  bool is_child = false;
  for (const auto& child : children_) is_child = is_child || child.first == name;
  // Names are unique across the three kinds, as attributes of a Python module.
  std::string taken_as = parameters_.contains(name) ? "Parameter"
                         : buffers_.contains(name)  ? "Buffer"
                         : is_child                 ? "Submodule"
                                                    : "";
  KILN_CHECK_VALUE(taken_as.empty(), this->name(), ": ", what, " '", name, "' already defined",
                   taken_as == what ? "" : " (as a " + taken_as + ")");
}

Tensor& Module::register_parameter(std::string name, Tensor tensor, bool requires_grad) {
  check_new_name(name, "Parameter");
  if (tensor.defined()) {
    KILN_CHECK_TYPE(!requires_grad || tensor.is_floating_point(), this->name(), ": parameter '",
                    name, "' must be a floating point tensor to require grad (got ",
                    dtype_name(tensor.dtype()), ")");
    tensor.set_requires_grad(requires_grad);
  }
  return parameters_.insert(std::move(name), std::move(tensor));
}

Tensor& Module::register_buffer(std::string name, Tensor tensor) {
  check_new_name(name, "Buffer");
  return buffers_.insert(std::move(name), std::move(tensor));
}

void Module::add_child(std::string name, std::shared_ptr<Module> module) {
  check_new_name(name, "Submodule");
  KILN_CHECK_VALUE(module != nullptr, this->name(), ": cannot register an empty submodule '", name,
                   "' (a holder made from nullptr)");
  children_.emplace_back(std::move(name), std::move(module));
}

void Module::replace_child(const std::string& name, std::shared_ptr<Module> module) {
  KILN_CHECK_VALUE(module != nullptr, this->name(), ": cannot register an empty submodule '", name,
                   "' (a holder made from nullptr)");
  for (auto& child : children_) {
    if (child.first == name) {
      child.second = std::move(module);
      return;
    }
  }
  throw IndexError(::kiln::detail::str(this->name(), ": Submodule '", name, "' is not defined"));
}

void Module::unregister_module(const std::string& name) {
  for (auto it = children_.begin(); it != children_.end(); ++it) {
    if (it->first == name) {
      children_.erase(it);
      return;
    }
  }
  throw IndexError(::kiln::detail::str(this->name(), ": No Module with name `", name,
                                       "` is registered"));
}

namespace {
// Appends the tensors of `list` (parameters_ or buffers_ of each module) with dotted names, each
// tensor once.
template <class Get>
OrderedDict<std::string, Tensor> collect(const Module& root, bool recurse, Get get,
                                         const char* description) {
  OrderedDict<std::string, Tensor> out(description);
  std::unordered_set<const TensorImpl*> seen_tensors;
  std::unordered_set<const Module*> seen_modules;
  std::function<void(const Module&, const std::string&)> walk = [&](const Module& m,
                                                                    const std::string& prefix) {
    if (!seen_modules.insert(&m).second) return;
    for (const auto& [name, t] : get(m)) {
      if (t.defined() && seen_tensors.insert(t.impl_ptr().get()).second) {
        out.insert(prefix + name, t);
      }
    }
    if (!recurse) return;
    for (const auto& [name, child] : m.named_children()) walk(*child, prefix + name + ".");
  };
  walk(root, "");
  return out;
}

}  // namespace

OrderedDict<std::string, Tensor> Module::named_parameters(bool recurse) const {
  return collect(
      *this, recurse, [](const Module& m) -> const auto& { return m.parameters_; }, "Parameter");
}
std::vector<Tensor> Module::parameters(bool recurse) const {
  return named_parameters(recurse).values();
}
OrderedDict<std::string, Tensor> Module::named_buffers(bool recurse) const {
  return collect(
      *this, recurse, [](const Module& m) -> const auto& { return m.buffers_; }, "Buffer");
}
std::vector<Tensor> Module::buffers(bool recurse) const { return named_buffers(recurse).values(); }

OrderedDict<std::string, std::shared_ptr<Module>> Module::named_children() const {
  OrderedDict<std::string, std::shared_ptr<Module>> out("Submodule");
  for (const auto& [name, child] : children_) out.insert(name, child);
  return out;
}

std::vector<std::shared_ptr<Module>> Module::children() const {
  std::vector<std::shared_ptr<Module>> out;
  for (const auto& item : children_) out.push_back(item.second);
  return out;
}

std::shared_ptr<Module> Module::shared_self(const char* what) const {
  std::shared_ptr<Module> self = std::const_pointer_cast<Module>(weak_from_this().lock());
  KILN_CHECK(self != nullptr, name(), ": ", what, " needs the module to be held by a ",
             "std::shared_ptr. It looks like you attempted to retrieve your top-level module as a ",
             "shared_ptr, but it is not stored in a shared_ptr: use a module holder or ",
             "std::make_shared, or pass include_self=false");
  return self;
}

namespace {
// Calls fn(path, child) for every descendant of `m`, parents first, each module once.
void walk_modules(
    const Module& m, const std::string& path, std::unordered_set<const Module*>& seen,
    const std::function<void(const std::string&, const std::shared_ptr<Module>&)>& fn) {
  for (const auto& [name, child] : m.named_children()) {
    if (!seen.insert(child.get()).second) continue;
    std::string child_path = path.empty() ? name : path + "." + name;
    fn(child_path, child);
    walk_modules(*child, child_path, seen, fn);
  }
}
}  // namespace

OrderedDict<std::string, std::shared_ptr<Module>> Module::named_modules(
    const std::string& name_prefix, bool include_self) const {
  OrderedDict<std::string, std::shared_ptr<Module>> out("Module");
  if (include_self) out.insert(name_prefix, shared_self("modules()/named_modules()"));
  std::unordered_set<const Module*> seen = {this};
  walk_modules(*this, name_prefix, seen,
               [&](const std::string& path, const std::shared_ptr<Module>& m) {
                 out.insert(path, m);
               });
  return out;
}

std::vector<std::shared_ptr<Module>> Module::modules(bool include_self) const {
  return named_modules("", include_self).values();
}

void Module::apply(const ModuleApplyFunction& fn) {
  apply(NamedModuleApplyFunction([&fn](const std::string&, Module& m) { fn(m); }));
}

void Module::apply(const ConstModuleApplyFunction& fn) const {
  apply(ConstNamedModuleApplyFunction([&fn](const std::string&, const Module& m) { fn(m); }));
}

void Module::apply(const NamedModuleApplyFunction& fn, const std::string& name_prefix) {
  fn(name_prefix, *this);
  std::unordered_set<const Module*> seen = {this};
  walk_modules(*this, name_prefix, seen,
               [&](const std::string& path, const std::shared_ptr<Module>& m) { fn(path, *m); });
}

void Module::apply(const ConstNamedModuleApplyFunction& fn, const std::string& name_prefix) const {
  fn(name_prefix, *this);
  std::unordered_set<const Module*> seen = {this};
  walk_modules(*this, name_prefix, seen,
               [&](const std::string& path, const std::shared_ptr<Module>& m) { fn(path, *m); });
}

void Module::apply(const ModulePointerApplyFunction& fn) const {
  for (const auto& m : modules()) fn(m);
}

void Module::apply(const NamedModulePointerApplyFunction& fn,
                   const std::string& name_prefix) const {
  for (const auto& [path, m] : named_modules(name_prefix)) fn(path, m);
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

void Module::pretty_print(std::ostream& stream) const { stream << name(); }

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
