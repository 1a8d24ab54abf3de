// Functional, Sequential, ModuleList.
#include <kiln/nn/modules/activation.h>
#include <kiln/nn/modules/container.h>
#include <kiln/nn/modules/normalization.h>

#include <typeinfo>

namespace kiln::nn {

FunctionalImpl::FunctionalImpl(Function function) : function_(std::move(function)) {
  KILN_CHECK_VALUE(function_ != nullptr, "Functional: the function must not be empty");
}

Tensor FunctionalImpl::forward(const Tensor& input) { return function_(input); }

void FunctionalImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::Functional()";
}

// --- Sequential ------------------------------------------------------------------------------

SequentialImpl::SequentialImpl(const OrderedDict<std::string, AnyModule>& ordered_dict) {
  for (const auto& item : ordered_dict) append(item.key(), item.value());
}

SequentialImpl::SequentialImpl(std::initializer_list<NamedAnyModule> named_modules) {
  for (const NamedAnyModule& named : named_modules) append(named.name(), named.module());
}

void SequentialImpl::append(std::string name, AnyModule module) {
  register_module(std::move(name), module.ptr());
  modules_.push_back(std::move(module));
}

void SequentialImpl::extend(const SequentialImpl& other) {
  for (const AnyModule& module : other.modules_) push_back(module);
}

size_t SequentialImpl::checked(size_t index) const {
  KILN_CHECK_INDEX(index < modules_.size(), "Index out of range: Sequential has ", modules_.size(),
                   " modules, index ", index);
  return index;
}

std::shared_ptr<Module> SequentialImpl::ptr(size_t index) const {
  return modules_[checked(index)].ptr();
}

// A BatchNorm2d directly followed by a ReLU runs as one fused module (forward_relu): the same
// values, one pass over the activations instead of two forward and two backward. Only the exact
// types: a subclass may have changed what forward does.
Tensor SequentialImpl::forward(const Tensor& input) {
  KILN_CHECK(!modules_.empty(), "Cannot call forward() on an empty Sequential");
  Tensor x = input;
  for (size_t i = 0; i < modules_.size(); ++i) {
    Module& m = *modules_[i].ptr();
    const Module* next = i + 1 < modules_.size() ? modules_[i + 1].ptr().get() : nullptr;
    if (typeid(m) == typeid(BatchNorm2dImpl) && next != nullptr &&
        typeid(*next) == typeid(ReLUImpl)) {
      x = static_cast<BatchNorm2dImpl&>(m).forward_relu(x);
      ++i;
      continue;
    }
    x = modules_[i].forward(x);
  }
  return x;
}

AnyValue SequentialImpl::any_forward(std::vector<AnyValue> inputs) {
  KILN_CHECK(!modules_.empty(), "Cannot call forward() on an empty Sequential");
  AnyValue value = modules_.front().any_forward(std::move(inputs));
  for (size_t i = 1; i < modules_.size(); ++i) {
    std::vector<AnyValue> next;
    next.push_back(std::move(value));
    value = modules_[i].any_forward(std::move(next));
  }
  return value;
}

void SequentialImpl::pretty_print(std::ostream& stream) const { stream << "kiln::nn::Sequential"; }

// --- ModuleList ------------------------------------------------------------------------------

void ModuleListImpl::append(std::shared_ptr<Module> module) {
  register_module(std::to_string(modules_.size()), module);
  modules_.push_back(std::move(module));
}

void ModuleListImpl::extend(const ModuleListImpl& other) {
  // A copy first: `list->extend(*list)` appends each module once.
  std::vector<std::shared_ptr<Module>> modules = other.modules_;
  for (auto& module : modules) append(std::move(module));
}

void ModuleListImpl::insert_at(size_t index, std::shared_ptr<Module> module) {
  KILN_CHECK_INDEX(index <= modules_.size(), "Index out of range: cannot insert at ", index,
                   " in a ModuleList of ", modules_.size(), " modules");
  KILN_CHECK_VALUE(module != nullptr, "ModuleList: cannot insert an empty module");
  modules_.insert(modules_.begin() + static_cast<std::ptrdiff_t>(index), std::move(module));
  for (size_t i = index; i + 1 < modules_.size(); ++i) {
    replace_module(std::to_string(i), modules_[i]);
  }
  register_module(std::to_string(modules_.size() - 1), modules_.back());
}

std::shared_ptr<Module> ModuleListImpl::ptr(size_t index) const {
  KILN_CHECK_INDEX(index < modules_.size(), "Index out of range: ModuleList has ", modules_.size(),
                   " modules, index ", index);
  return modules_[index];
}

void ModuleListImpl::pretty_print(std::ostream& stream) const { stream << "kiln::nn::ModuleList"; }

}  // namespace kiln::nn
