// Functional, Sequential, ModuleList.
#include <kiln/nn/modules/container.h>

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

Tensor SequentialImpl::forward(const Tensor& input) {
  KILN_CHECK(!entries_.empty(), "Sequential: cannot call forward() on an empty Sequential");
  Tensor x = entries_.front().forward(input);
  for (size_t i = 1; i < entries_.size(); ++i) x = entries_[i].forward(x);
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
