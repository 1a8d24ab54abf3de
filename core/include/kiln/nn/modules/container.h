// Containers: Sequential (a chain of modules), ModuleList (a list of modules) and Functional (a
// function as a module).
#pragma once

#include <kiln/nn/module.h>

#include <functional>
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
}  // namespace detail

// Runs its modules in order, each on the previous one's output; children are named "0", "1", ...
// (or as given to push_back). Every module must have `Tensor forward(const Tensor&)`.
//   Sequential seq(Linear(64, 32), ReLU(), Linear(32, 10));
//   Tensor y = seq->forward(x);  // or seq(x)
class KILN_API SequentialImpl : public Module {
 public:
  SequentialImpl() = default;
  template <class... Modules>
    requires(sizeof...(Modules) > 0 &&
             !(sizeof...(Modules) == 1 &&
               (std::is_same_v<std::decay_t<Modules>, SequentialImpl> && ...)))
  explicit SequentialImpl(Modules&&... modules) {
    (push_back(std::forward<Modules>(modules)), ...);
  }

  // Appends a module named by its position.
  template <class M>
  void push_back(M&& module) {
    push_back(std::to_string(size()), std::forward<M>(module));
  }
  // Appends a module with a name.
  template <class M>
  void push_back(std::string name, M&& module) {
    auto ptr = detail::module_ptr(std::forward<M>(module));
    auto* raw = ptr.get();
    append(std::move(name), ptr, [raw](const Tensor& x) -> Tensor { return raw->forward(x); });
  }

  // The modules' forwards, chained.
  Tensor forward(const Tensor& input);
  // The module at `index`.
  const std::shared_ptr<Module>& operator[](size_t index) const;
  // The module at `index` as T (an Impl type); throws if it is not one.
  template <class T>
  T& at(size_t index) const {
    T* m = (*this)[index]->template as<T>();
    KILN_CHECK_TYPE(m != nullptr, "Sequential: module ", index, " is not of the requested type");
    return *m;
  }
  template <class T>
  std::shared_ptr<T> ptr(size_t index) const {
    return std::dynamic_pointer_cast<T>((*this)[index]);
  }
  size_t size() const { return entries_.size(); }
  bool is_empty() const { return entries_.empty(); }

 private:
  void append(std::string name, std::shared_ptr<Module> module,
              std::function<Tensor(const Tensor&)> forward);

  struct Entry {
    std::shared_ptr<Module> module;
    std::function<Tensor(const Tensor&)> forward;
  };
  std::vector<Entry> entries_;
};
KILN_MODULE(Sequential);

// A list of submodules, registered as "0", "1", ...; it has no forward of its own.
class KILN_API ModuleListImpl : public Module {
 public:
  ModuleListImpl() = default;
  template <class... Modules>
    requires(sizeof...(Modules) > 0 &&
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
  // Appends every module of another list.
  void extend(const ModuleListImpl& other);
  // The module at `index`.
  const std::shared_ptr<Module>& operator[](size_t index) const;
  template <class T>
  std::shared_ptr<T> ptr(size_t index) const {
    return std::dynamic_pointer_cast<T>((*this)[index]);
  }
  size_t size() const { return modules_.size(); }
  bool is_empty() const { return modules_.empty(); }
  std::vector<std::shared_ptr<Module>>::const_iterator begin() const { return modules_.begin(); }
  std::vector<std::shared_ptr<Module>>::const_iterator end() const { return modules_.end(); }

 private:
  void append(std::shared_ptr<Module> module);
  std::vector<std::shared_ptr<Module>> modules_;
};
KILN_MODULE(ModuleList);

}  // namespace kiln::nn
