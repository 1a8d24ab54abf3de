// Containers: Sequential (a chain of modules), ModuleList (a list of modules) and Functional (a
// function as a module). ModuleDict, ParameterDict and ParameterList are in
// kiln/nn/modules/collections.h.
#pragma once

#include <kiln/nn/module.h>
#include <kiln/nn/modules/any.h>
#include <kiln/ordered_dict.h>

#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace kiln::nn {

// Wraps a function Tensor -> Tensor as a module, e.g. in a Sequential:
// `Sequential(Linear(2, 3), Functional(kiln::relu))`.
class KILN_API FunctionalImpl : public Module {
 public:
  using Function = std::function<Tensor(const Tensor&)>;
  explicit FunctionalImpl(Function function);
  // function(input).
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;

 private:
  Function function_;
};
KILN_MODULE(Functional);

namespace detail {
// A module as a shared pointer: from a holder, a shared pointer, a module value (copied), or a
// callable (wrapped in Functional).
template <class M>
auto module_ptr(M&& module) {
  using T = std::decay_t<M>;
  if constexpr (requires { typename T::ContainedType; }) {
    return module.ptr();
  } else if constexpr (requires { typename T::element_type; }) {
    return std::shared_ptr<typename T::element_type>(std::forward<M>(module));
  } else if constexpr (std::is_base_of_v<Module, T>) {
    return std::make_shared<T>(std::forward<M>(module));
  } else {
    return std::make_shared<FunctionalImpl>(FunctionalImpl::Function(std::forward<M>(module)));
  }
}
// A module (as module_ptr takes it) as an AnyModule.
template <class M>
AnyModule any_module(M&& module) {
  if constexpr (std::is_same_v<std::decay_t<M>, AnyModule>) {
    return module;
  } else {
    return AnyModule(module_ptr(std::forward<M>(module)));
  }
}
}  // namespace detail

// What push_back and the containers' constructors take as a module.
template <class M>
concept ModuleLike = requires {
  typename std::decay_t<M>::ContainedType;
}
|| requires { typename std::decay_t<M>::element_type; }
|| std::is_base_of_v<Module, std::decay_t<M>> || std::is_same_v<std::decay_t<M>, AnyModule> ||
    std::is_invocable_r_v<Tensor, std::decay_t<M>&, const Tensor&>;

// A module with a name, for building a Sequential from named modules:
// `Sequential({{"conv", Conv2d(1, 8, 3)}, {"relu", ReLU()}})`.
class NamedAnyModule {
 public:
  template <class M>
  NamedAnyModule(std::string name, M&& module)  // NOLINT: as libtorch
      : name_(std::move(name)), module_(detail::any_module(std::forward<M>(module))) {}
  const std::string& name() const noexcept { return name_; }
  const AnyModule& module() const noexcept { return module_; }

 private:
  std::string name_;
  AnyModule module_;
};

// Runs its modules in order, each on the previous one's output; children are named "0", "1", ...
// (or as given to push_back). Module indices and names follow libtorch's Sequential, and so do
// its errors ("Index out of range", "Cannot call forward() on an empty Sequential").
//   Sequential seq(Linear(64, 32), ReLU(), Linear(32, 10));
//   Tensor y = seq->forward(x);  // or seq(x)
//   Sequential named({{"fc", Linear(4, 2)}, {"act", ReLU()}});
//   int n = other->forward<int>(1);  // forward()s of any signature: see kiln/nn/modules/any.h
class KILN_API SequentialImpl : public Module {
 public:
  using Iterator = std::vector<AnyModule>::iterator;
  using ConstIterator = std::vector<AnyModule>::const_iterator;

  SequentialImpl() = default;
  template <class... Modules>
    requires(sizeof...(Modules) > 0 && (ModuleLike<Modules> && ...) &&
             !(sizeof...(Modules) == 1 &&
               (std::is_same_v<std::decay_t<Modules>, SequentialImpl> && ...)))
  explicit SequentialImpl(Modules&&... modules) {
    (push_back(std::forward<Modules>(modules)), ...);
  }
  // The modules with their names, in order; throws for a duplicate name.
  explicit SequentialImpl(const OrderedDict<std::string, AnyModule>& ordered_dict);
  explicit SequentialImpl(std::initializer_list<NamedAnyModule> named_modules);

  // Appends a module named by its position.
  template <class M>
  void push_back(M&& module) {
    push_back(std::to_string(size()), std::forward<M>(module));
  }
  // Appends a module with a name.
  template <class M>
  void push_back(std::string name, M&& module) {
    append(std::move(name), detail::any_module(std::forward<M>(module)));
  }
  // Appends every module of another Sequential (named by position here) or of a container of
  // modules.
  void extend(const SequentialImpl& other);
  template <class Container>
  void extend(const Container& container) {
    for (const auto& module : container) push_back(module);
  }

  // The modules' forwards, chained, on a tensor.
  Tensor forward(const Tensor& input);
  // The modules' forwards, chained, on any arguments; the last result as ReturnType. Throws
  // TypeError naming the types when a module's arguments or the result do not match.
  template <class ReturnType = Tensor, class... Inputs>
  ReturnType forward(Inputs&&... inputs) {
    if constexpr (std::is_same_v<ReturnType, Tensor> && sizeof...(Inputs) == 1 &&
                  (std::is_same_v<std::decay_t<Inputs>, Tensor> && ...)) {
      return forward(static_cast<const Tensor&>(inputs)...);
    } else {
      std::vector<AnyValue> values;
      values.reserve(sizeof...(Inputs));
      (values.emplace_back(std::forward<Inputs>(inputs)), ...);
      AnyValue result = any_forward(std::move(values));
      ReturnType* value = result.try_get<ReturnType>();
      KILN_CHECK_TYPE(value != nullptr, "The type of the return value is ",
                      detail::type_name(result.type_info()), ", but you asked for type ",
                      detail::type_name(typeid(ReturnType)));
      return std::move(*value);
    }
  }

  // The module at `index` (throws IndexError "Index out of range ...").
  std::shared_ptr<Module> operator[](size_t index) const { return ptr(index); }
  std::shared_ptr<Module> ptr(size_t index) const;
  // The module at `index` as T: null (ptr) or TypeError (at) when it is not one.
  template <class T>
  std::shared_ptr<typename detail::contained_of<T>::type> ptr(size_t index) const {
    return std::dynamic_pointer_cast<typename detail::contained_of<T>::type>(ptr(index));
  }
  template <class T>
  typename detail::contained_of<T>::type& at(size_t index) const {
    return modules_[checked(index)].get<typename detail::contained_of<T>::type>();
  }
  size_t size() const noexcept { return modules_.size(); }
  bool is_empty() const noexcept { return modules_.empty(); }
  Iterator begin() { return modules_.begin(); }
  ConstIterator begin() const { return modules_.begin(); }
  Iterator end() { return modules_.end(); }
  ConstIterator end() const { return modules_.end(); }

  void pretty_print(std::ostream& stream) const override;

 private:
  void append(std::string name, AnyModule module);
  size_t checked(size_t index) const;
  AnyValue any_forward(std::vector<AnyValue> inputs);

  std::vector<AnyModule> modules_;
};

// The holder of a SequentialImpl; also made from named modules, as libtorch's.
class Sequential : public ModuleHolder<SequentialImpl> {
 public:
  using ModuleHolder<SequentialImpl>::ModuleHolder;
  using Impl = SequentialImpl;
  Sequential() : ModuleHolder<SequentialImpl>() {}
  Sequential(std::initializer_list<NamedAnyModule> named_modules)  // NOLINT: as libtorch
      : ModuleHolder<SequentialImpl>(std::make_shared<SequentialImpl>(named_modules)) {}
};

// A list of submodules, registered as "0", "1", ...; it has no forward of its own. Errors are
// libtorch's ("Index out of range").
class KILN_API ModuleListImpl : public Module {
 public:
  using Iterator = std::vector<std::shared_ptr<Module>>::iterator;
  using ConstIterator = std::vector<std::shared_ptr<Module>>::const_iterator;

  ModuleListImpl() = default;
  template <class... Modules>
    requires(sizeof...(Modules) > 0 && (ModuleLike<Modules> && ...) &&
             !(sizeof...(Modules) == 1 &&
               (std::is_same_v<std::decay_t<Modules>, ModuleListImpl> && ...)))
  explicit ModuleListImpl(Modules&&... modules) {
    (push_back(std::forward<Modules>(modules)), ...);
  }

  // Appends a module.
  template <class M>
  void push_back(M&& module) {
    append(detail::module_ptr(std::forward<M>(module)));
  }
  // Appends every module of another list or container of modules.
  void extend(const ModuleListImpl& other);
  template <class Container>
  void extend(const Container& container) {
    for (const auto& module : container) push_back(module);
  }
  // Inserts a module before position `index` (0..size()); later modules move up one name.
  template <class M>
  void insert(size_t index, M&& module) {
    insert_at(index, detail::module_ptr(std::forward<M>(module)));
  }
  // The module at `index`; throws IndexError "Index out of range ...".
  std::shared_ptr<Module> operator[](size_t index) const { return ptr(index); }
  std::shared_ptr<Module> ptr(size_t index) const;
  // The module at `index` as T: null (ptr) or TypeError (at) when it is not one.
  template <class T>
  std::shared_ptr<typename detail::contained_of<T>::type> ptr(size_t index) const {
    return std::dynamic_pointer_cast<typename detail::contained_of<T>::type>(ptr(index));
  }
  template <class T>
  typename detail::contained_of<T>::type& at(size_t index) const {
    Module& held = *ptr(index);
    auto* module = held.template as<T>();
    KILN_CHECK_TYPE(module != nullptr, "ModuleList: module ", index, " is a ",
                    detail::type_name(typeid(held)), ", not a ",
                    detail::type_name(typeid(typename detail::contained_of<T>::type)));
    return *module;
  }
  size_t size() const noexcept { return modules_.size(); }
  bool is_empty() const noexcept { return modules_.empty(); }
  Iterator begin() { return modules_.begin(); }
  ConstIterator begin() const { return modules_.begin(); }
  Iterator end() { return modules_.end(); }
  ConstIterator end() const { return modules_.end(); }

  void pretty_print(std::ostream& stream) const override;

 private:
  void append(std::shared_ptr<Module> module);
  void insert_at(size_t index, std::shared_ptr<Module> module);
  std::vector<std::shared_ptr<Module>> modules_;
};
KILN_MODULE(ModuleList);

}  // namespace kiln::nn
