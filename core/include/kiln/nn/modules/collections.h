// ModuleDict, ParameterDict and ParameterList, as libtorch's: containers whose elements are
// registered in the module (so parameters(), to(), train() and printing reach them).
//
//   kiln::nn::ModuleDict heads({{"cls", Linear(8, 10).ptr()}, {"box", Linear(8, 4).ptr()}});
//   heads["cls"]; heads->at<kiln::nn::LinearImpl>("box");
//   kiln::nn::ParameterDict scales; scales->insert("a", kiln::ones({3}).requires_grad_());
//   kiln::nn::ParameterList list(kiln::randn({2}), kiln::randn({3}));   // named "0", "1"
//
// As PyTorch's, pop() and clear() unregister what they remove. Keys that are missing give
// libtorch's errors ("Key 'x' is not defined", "Index out of range").
#pragma once

#include <kiln/nn/module.h>
#include <kiln/ordered_dict.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace kiln::nn {

// An ordered dict of named submodules.
class KILN_API ModuleDictImpl : public Module {
 public:
  using Dict = OrderedDict<std::string, std::shared_ptr<Module>>;
  using Iterator = Dict::Iterator;
  using ConstIterator = Dict::ConstIterator;

  ModuleDictImpl() = default;
  explicit ModuleDictImpl(
      const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& modules) {
    update(modules);
  }
  explicit ModuleDictImpl(const Dict& modules) { update(modules); }

  std::vector<std::pair<std::string, std::shared_ptr<Module>>> items() const {
    return modules_.pairs();
  }
  std::vector<std::string> keys() const { return modules_.keys(); }
  std::vector<std::shared_ptr<Module>> values() const { return modules_.values(); }
  Iterator begin() { return modules_.begin(); }
  ConstIterator begin() const { return modules_.begin(); }
  Iterator end() { return modules_.end(); }
  ConstIterator end() const { return modules_.end(); }
  size_t size() const noexcept { return modules_.size(); }
  bool empty() const noexcept { return modules_.is_empty(); }
  bool contains(const std::string& key) const noexcept { return modules_.contains(key); }

  // The module of `key`; throws IndexError when there is none.
  std::shared_ptr<Module> operator[](const std::string& key) const { return modules_[key]; }
  // The module of `key` as T; throws TypeError when it is not one.
  template <class T>
  typename detail::contained_of<T>::type& at(const std::string& key) const {
    auto* module = modules_[key]->template as<T>();
    KILN_CHECK_TYPE(module != nullptr, "Unable to cast module[", key, "] to ",
                    detail::type_name(typeid(typename detail::contained_of<T>::type)));
    return *module;
  }
  // Sets `key` to `module`: registers it, or replaces the module already there.
  void insert(const std::string& key, std::shared_ptr<Module> module);
  template <class M>
  void insert(const std::string& key, const ModuleHolder<M>& holder) {
    insert(key, std::shared_ptr<Module>(holder.ptr()));
  }
  // Removes and returns the module of `key`; throws IndexError when there is none.
  std::shared_ptr<Module> pop(const std::string& key);
  // Removes every module.
  void clear();
  // Sets each (key, module) of `modules` in turn (existing keys are replaced).
  void update(const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& modules) {
    for (const auto& [key, module] : modules) insert(key, module);
  }
  // The same from an OrderedDict or another ModuleDict (anything with key()/value() items).
  template <class Container>
  void update(const Container& container) {
    for (const auto& item : container) insert(item.key(), item.value());
  }

  void pretty_print(std::ostream& stream) const override;

 private:
  Dict modules_;
};
KILN_MODULE(ModuleDict);

// An ordered dict of parameters, registered under their keys.
class KILN_API ParameterDictImpl : public Module {
 public:
  using Iterator = OrderedDict<std::string, Tensor>::Iterator;
  using ConstIterator = OrderedDict<std::string, Tensor>::ConstIterator;

  ParameterDictImpl() = default;
  explicit ParameterDictImpl(const OrderedDict<std::string, Tensor>& params) { update(params); }

  // Registers `param` as `key` (requires_grad as the tensor has it) and returns the stored
  // handle; throws ValueError when the key is taken.
  Tensor& insert(const std::string& key, const Tensor& param) {
    return register_parameter(key, param, param.requires_grad());
  }
  // Removes and returns the parameter `key`; throws IndexError when there is none.
  Tensor pop(const std::string& key) { return parameters_.pop(key); }
  std::vector<std::string> keys() const { return parameters_.keys(); }
  std::vector<Tensor> values() const { return parameters_.values(); }
  Iterator begin() { return parameters_.begin(); }
  ConstIterator begin() const { return parameters_.begin(); }
  Iterator end() { return parameters_.end(); }
  ConstIterator end() const { return parameters_.end(); }
  size_t size() const noexcept { return parameters_.size(); }
  bool empty() const noexcept { return parameters_.is_empty(); }
  bool contains(const std::string& key) const noexcept { return parameters_.contains(key); }
  void clear() { parameters_.clear(); }
  // Sets every (key, value) item of `container`, replacing the parameters of existing keys.
  template <class Container>
  void update(const Container& container) {
    for (const auto& item : container) set(item.key(), item.value());
  }
  // The parameter `key`; throws IndexError when there is none.
  Tensor& get(const std::string& key) { return parameters_[key]; }
  const Tensor& get(const std::string& key) const { return parameters_[key]; }
  Tensor& operator[](const std::string& key) { return parameters_[key]; }
  const Tensor& operator[](const std::string& key) const { return parameters_[key]; }

  // "kiln::nn::ParameterDict(" and a line "(key): Parameter containing: [Float of size [2, 3]]"
  // per parameter, as libtorch's.
  void pretty_print(std::ostream& stream) const override;

 private:
  void set(const std::string& key, const Tensor& param);
};
KILN_MODULE(ParameterDict);

// A list of parameters, registered as "0", "1", ...
class KILN_API ParameterListImpl : public Module {
 public:
  using Iterator = std::vector<OrderedDict<std::string, Tensor>::Item>::iterator;
  using ConstIterator = std::vector<OrderedDict<std::string, Tensor>::Item>::const_iterator;

  ParameterListImpl() = default;
  template <class... Tensors>
    requires(sizeof...(Tensors) > 0 && (std::is_convertible_v<Tensors, const Tensor&> && ...))
  explicit ParameterListImpl(Tensors&&... params) { (append(params), ...); }

  // Appends a parameter (requires_grad as the tensor has it).
  void append(const Tensor& param) {
    register_parameter(std::to_string(parameters_.size()), param, param.requires_grad());
  }
  // Appends the value of a named item (its key is dropped).
  void append(const OrderedDict<std::string, Tensor>::Item& item) { append(item.value()); }
  // Appends every tensor (or item) of a container.
  template <class Container>
  void extend(const Container& container) {
    for (const auto& param : container) append(param);
  }
  ParameterListImpl& operator+=(const ParameterListImpl& other) {
    extend(other.parameters_.values());  // a copy first: `list += list` appends each once
    return *this;
  }
  // Items ("0", tensor), ("1", tensor), ...
  Iterator begin() { return parameters_.begin(); }
  ConstIterator begin() const { return parameters_.begin(); }
  Iterator end() { return parameters_.end(); }
  ConstIterator end() const { return parameters_.end(); }
  // The parameter at `index`; throws IndexError "Index out of range ...".
  Tensor& at(size_t index) { return parameters_[checked(index)].value(); }
  const Tensor& at(size_t index) const { return parameters_[checked(index)].value(); }
  Tensor& operator[](size_t index) { return at(index); }
  const Tensor& operator[](size_t index) const { return at(index); }
  size_t size() const noexcept { return parameters_.size(); }
  bool is_empty() const noexcept { return parameters_.is_empty(); }

  // As ParameterDict's, with "kiln::nn::ParameterList(".
  void pretty_print(std::ostream& stream) const override;

 private:
  size_t checked(size_t index) const;
};
KILN_MODULE(ParameterList);

}  // namespace kiln::nn
