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

void SequentialImpl::append(std::string name, std::shared_ptr<Module> module,
                            std::function<Tensor(const Tensor&)> forward) {
  register_module(std::move(name), module);
  entries_.push_back({std::move(module), std::move(forward)});
}

// A BatchNorm2d directly followed by a ReLU runs as one fused module (forward_relu): the same
// values, one pass over the activations instead of two forward and two backward. Only the exact
// types: a subclass may have changed what forward does.
Tensor SequentialImpl::forward(const Tensor& input) {
  KILN_CHECK(!entries_.empty(), "Sequential: cannot call forward() on an empty Sequential");
  Tensor x = input;
  for (size_t i = 0; i < entries_.size(); ++i) {
    const Module& m = *entries_[i].module;
    const Module* next = i + 1 < entries_.size() ? entries_[i + 1].module.get() : nullptr;
    if (typeid(m) == typeid(BatchNorm2dImpl) && next != nullptr &&
        typeid(*next) == typeid(ReLUImpl)) {
      x = static_cast<BatchNorm2dImpl&>(*entries_[i].module).forward_relu(x);
      ++i;
      continue;
    }
    x = entries_[i].forward(x);
  }
  return x;
}

const std::shared_ptr<Module>& SequentialImpl::operator[](size_t index) const {
  KILN_CHECK_INDEX(index < entries_.size(), "Sequential: index ", index, " is out of range for ",
                   "a Sequential of ", entries_.size(), " modules");
  return entries_[index].module;
}

void ModuleListImpl::append(std::shared_ptr<Module> module) {
  register_module(std::to_string(modules_.size()), module);
  modules_.push_back(std::move(module));
}

void ModuleListImpl::extend(const ModuleListImpl& other) {
  for (const auto& module : other.modules_) append(module);
}

const std::shared_ptr<Module>& ModuleListImpl::operator[](size_t index) const {
  KILN_CHECK_INDEX(index < modules_.size(), "ModuleList: index ", index, " is out of range for ",
                   "a ModuleList of ", modules_.size(), " modules");
  return modules_[index];
}

}  // namespace kiln::nn
