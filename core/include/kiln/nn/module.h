// kiln::nn::Module — the base of every layer, as libtorch's torch::nn::Module.
//
// A module owns named parameters (tensors that require grad, found by optimizers), named buffers
// (state that is not trained, such as BatchNorm's running statistics) and named submodules, each
// in registration order. A model is a tree of modules; parameters() and named_parameters() walk
// it, and names join the path with dots ("0.weight", "linear1.bias"), as PyTorch's state dicts.
//
//   struct NetImpl : kiln::nn::Module {
//     NetImpl() : linear(register_module("linear", kiln::nn::Linear(1, 1))) {}
//     kiln::Tensor forward(const kiln::Tensor& x) { return linear(x); }
//     kiln::nn::Linear linear;
//   };
//   KILN_MODULE(Net);  // Net holds a std::shared_ptr<NetImpl>: net->linear, net(x)
//
// Modules are used through shared pointers (a ModuleHolder such as kiln::nn::Linear is one), so
// that submodules can be shared and containers can hold any module. Copying a module object
// copies the handles: the copy shares its parameters.
//
// Printing follows libtorch's C++ format exactly, with kiln's namespace: `std::cout << *model`
// prints each module's pretty_print() line and its children, indented, as
//   kiln::nn::Sequential(
//     (0): kiln::nn::Linear(in_features=64, out_features=32, bias=true)
//     (1): kiln::nn::ReLU()
//   )
// kiln's modules print as libtorch's with `torch::` spelled `kiln::` (C++ booleans, sizes as
// [3, 3], numbers as a C++ stream prints them: 1e-05, 0.5, 20), so a libtorch test that compares
// printed modules passes once `torch` is renamed `kiln`. A module without its own pretty_print
// prints its name(): the demangled class name, namespaces included ("app::Net"), as libtorch.
#pragma once

#include <kiln/export.h>
#include <kiln/ordered_dict.h>
#include <kiln/tensor.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

namespace kiln::nn {

template <class Contained>
class ModuleHolder;

namespace detail {
// The demangled name of a type, for names and messages: "int", "kiln::nn::LinearImpl".
KILN_API std::string type_name(const std::type_info& type);

// T itself, or the implementation type of a holder type.
template <class T, class = void>
struct contained_of {
  using type = T;
};
template <class T>
struct contained_of<T, std::void_t<typename T::ContainedType>> {
  using type = typename T::ContainedType;
};
}  // namespace detail

class KILN_API Module : public std::enable_shared_from_this<Module> {
 public:
  using ModuleApplyFunction = std::function<void(Module&)>;
  using ConstModuleApplyFunction = std::function<void(const Module&)>;
  using NamedModuleApplyFunction = std::function<void(const std::string&, Module&)>;
  using ConstNamedModuleApplyFunction = std::function<void(const std::string&, const Module&)>;
  using ModulePointerApplyFunction = std::function<void(const std::shared_ptr<Module>&)>;
  using NamedModulePointerApplyFunction =
      std::function<void(const std::string&, const std::shared_ptr<Module>&)>;

  // `name` is the module's name; by default its demangled class name, namespaces included
  // ("kiln::nn::LinearImpl", "Net"), as libtorch's.
  explicit Module(std::string name);
  Module();
  Module(const Module&) = default;
  Module& operator=(const Module&) = default;
  virtual ~Module();

  // The module's name (see the constructor).
  const std::string& name() const;

  // --- registration ------------------------------------------------------------------------
  // Adds a parameter (requires_grad set as given) and returns the stored handle (valid until the
  // next registration; copy it into a member, `weight = register_parameter(...)`). An undefined
  // tensor registers an absent parameter (e.g. a bias=false Linear's "bias"), which the
  // parameter lists skip. Names are non-empty, contain no dot, and are unique in the module
  // across parameters, buffers and submodules; the errors are libtorch's ("Parameter name must
  // not be empty", "Parameter 'w' already defined"), after the module's name.
  Tensor& register_parameter(std::string name, Tensor tensor, bool requires_grad = true);
  // Adds a buffer: a tensor of the module's state that is not a parameter (undefined: absent).
  Tensor& register_buffer(std::string name, Tensor tensor);
  // Adds a submodule and returns it.
  template <class M>
  std::shared_ptr<M> register_module(std::string name, std::shared_ptr<M> module) {
    add_child(std::move(name), module);
    return module;
  }
  template <class Holder>
    requires requires { typename Holder::ContainedType; }
  Holder register_module(std::string name, Holder holder) {
    add_child(std::move(name), holder.ptr());
    return holder;
  }
  // Replaces the submodule registered as `name` and returns the new one; throws IndexError
  // "Submodule 'x' is not defined" when there is none.
  template <class M>
  std::shared_ptr<M> replace_module(const std::string& name, std::shared_ptr<M> module) {
    replace_child(name, module);
    return module;
  }
  template <class Holder>
    requires requires { typename Holder::ContainedType; }
  Holder replace_module(const std::string& name, Holder holder) {
    replace_child(name, holder.ptr());
    return holder;
  }
  // Removes the submodule registered as `name`; throws IndexError when there is none.
  void unregister_module(const std::string& name);

  // --- traversal (each tensor and module once, in registration order, depth first) ----------
  // Parameters of this module and, when recurse, of all its descendants.
  std::vector<Tensor> parameters(bool recurse = true) const;
  // The same with dotted names: "weight", "0.weight", "block.conv1.bias".
  OrderedDict<std::string, Tensor> named_parameters(bool recurse = true) const;
  std::vector<Tensor> buffers(bool recurse = true) const;
  OrderedDict<std::string, Tensor> named_buffers(bool recurse = true) const;
  // Direct submodules.
  std::vector<std::shared_ptr<Module>> children() const;
  OrderedDict<std::string, std::shared_ptr<Module>> named_children() const;
  // This module (when include_self; it must be held by a shared_ptr) and all its descendants;
  // names are dotted paths, prefixed with `name_prefix`; this module's own name is the prefix.
  std::vector<std::shared_ptr<Module>> modules(bool include_self = true) const;
  OrderedDict<std::string, std::shared_ptr<Module>> named_modules(
      const std::string& name_prefix = std::string(), bool include_self = true) const;
  // Calls fn on this module and every descendant, parents first; the named forms get each
  // module's dotted path (this module's is name_prefix), the pointer forms a shared pointer
  // (this module must be held by one).
  void apply(const ModuleApplyFunction& fn);
  void apply(const ConstModuleApplyFunction& fn) const;
  void apply(const NamedModuleApplyFunction& fn, const std::string& name_prefix = std::string());
  void apply(const ConstNamedModuleApplyFunction& fn,
             const std::string& name_prefix = std::string()) const;
  void apply(const ModulePointerApplyFunction& fn) const;
  void apply(const NamedModulePointerApplyFunction& fn,
             const std::string& name_prefix = std::string()) const;

  // --- state ----------------------------------------------------------------------------------
  // Sets training mode on this module and its descendants (Dropout, BatchNorm depend on it).
  virtual void train(bool on = true);
  // train(false).
  void eval() { train(false); }
  bool is_training() const { return training_; }
  // Moves and/or converts every parameter and buffer in place: the tensors keep their identity
  // (handles held elsewhere see the change), and parameters stay leaves that require grad;
  // their gradients move too. Only floating point tensors change dtype.
  virtual void to(Device device);
  virtual void to(ScalarType dtype);
  virtual void to(Device device, ScalarType dtype);
  // Resets the gradients of all parameters: undefined (set_to_none) or zero.
  virtual void zero_grad(bool set_to_none = true);

  // This module as T (an implementation type like LinearImpl, or a holder type like Linear);
  // null if it is not one.
  template <class T>
  typename detail::contained_of<T>::type* as() noexcept {
    return dynamic_cast<typename detail::contained_of<T>::type*>(this);
  }
  template <class T>
  const typename detail::contained_of<T>::type* as() const noexcept {
    return dynamic_cast<const typename detail::contained_of<T>::type*>(this);
  }

  // This module's dynamic type is T (an implementation or a holder type).
  template <class T>
  bool is() const noexcept {
    return as<T>() != nullptr;
  }

  // Prints this module's own line: "kiln::nn::Linear(in_features=2, out_features=3, bias=true)".
  // The default prints name().
  virtual void pretty_print(std::ostream& stream) const;

 private:
  void add_child(std::string name, std::shared_ptr<Module> module);
  void replace_child(const std::string& name, std::shared_ptr<Module> module);
  void check_new_name(const std::string& name, const char* what) const;
  std::shared_ptr<Module> shared_self(const char* what) const;
  void move_tensors(std::optional<Device> device, std::optional<ScalarType> dtype);
  void print_tree(std::ostream& out, int indent) const;
  friend KILN_API std::ostream& operator<<(std::ostream& out, const Module& module);

  mutable std::string name_;
  bool training_ = true;
  OrderedDict<std::string, Tensor> buffers_{"Buffer"};
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;

 protected:
  // The registered parameters, for ParameterDict and ParameterList (as libtorch's).
  OrderedDict<std::string, Tensor> parameters_{"Parameter"};
};

// The module tree as PyTorch prints it:
//   Sequential(
//     (0): Linear(in_features=64, out_features=32, bias=true)
//     (1): ReLU()
//   )
KILN_API std::ostream& operator<<(std::ostream& out, const Module& module);

// A shared pointer to a module implementation with the module's name, as libtorch's:
// `kiln::nn::Linear lin(64, 32)` makes a LinearImpl; `lin->weight`, `lin(x)` (its forward).
template <class Contained>
class ModuleHolder {
 public:
  using ContainedType = Contained;

  // A new Contained made with its default constructor.
  ModuleHolder() requires std::is_default_constructible_v<Contained>
      : impl_(std::make_shared<Contained>()) {}
  // An empty holder, to be assigned later (`Linear lin{nullptr};`).
  ModuleHolder(std::nullptr_t) {}  // NOLINT: as libtorch
  // A new Contained made from these constructor arguments.
  template <class Head, class... Tail>
    requires(!std::is_same_v<std::decay_t<Head>, std::nullptr_t> &&
             std::is_constructible_v<Contained, Head&&, Tail&&...>)
  explicit ModuleHolder(Head&& head, Tail&&... tail)
      : impl_(std::make_shared<Contained>(std::forward<Head>(head), std::forward<Tail>(tail)...)) {}
  // Holds an existing module.
  ModuleHolder(std::shared_ptr<Contained> module) : impl_(std::move(module)) {}  // NOLINT

  bool is_empty() const noexcept { return impl_ == nullptr; }
  explicit operator bool() const noexcept { return impl_ != nullptr; }
  Contained* operator->() const { return get(); }
  Contained& operator*() const { return *get(); }
  Contained* get() const {
    KILN_CHECK(impl_ != nullptr, "Accessing empty ModuleHolder (a holder made from nullptr ",
               "holds no module; assign one first)");
    return impl_.get();
  }
  const std::shared_ptr<Contained>& ptr() const { return impl_; }

  // Calls the module's forward.
  template <class... Args>
  decltype(auto) operator()(Args&&... args) const {
    return get()->forward(std::forward<Args>(args)...);
  }
  // Indexes the module (Sequential, ModuleList).
  template <class Arg>
  decltype(auto) operator[](Arg&& arg) const {
    return (*get())[std::forward<Arg>(arg)];
  }

 private:
  std::shared_ptr<Contained> impl_;
};

template <class C>
std::ostream& operator<<(std::ostream& out, const ModuleHolder<C>& holder) {
  return out << *holder;
}

}  // namespace kiln::nn

// Declares the holder `Name` of `NameImpl`, as TORCH_MODULE: KILN_MODULE(Linear);
#define KILN_MODULE(Name)                                     \
  class Name : public ::kiln::nn::ModuleHolder<Name##Impl> {  \
   public:                                                    \
    using ::kiln::nn::ModuleHolder<Name##Impl>::ModuleHolder; \
    using Impl = Name##Impl;                                  \
  }
