// AnyValue and AnyModule, as libtorch's: a value of any type, and a module with a forward() of
// any signature behind one call, `forward(args...)`. Sequential keeps its modules as AnyModules,
// so that a chain of modules whose forward()s take and return other types than Tensor works:
//
//   struct M : kiln::nn::Module { int forward(int x) { return x + 1; } };
//   kiln::nn::Sequential seq(M{}, M{});
//   seq->forward<int>(1);   // 3
//
// A module's forward must not be overloaded or a template (its signature is read from
// &M::forward), and must return a value. C++ cannot see a forward()'s default arguments through
// &M::forward: a module that wants them used by AnyModule (and Sequential) lists them, as in
// libtorch, with FORWARD_HAS_DEFAULT_ARGS({index, AnyValue(default)}, ...) in its body:
//
//   struct M : kiln::nn::Module {
//     double forward(int a, int b = 2, double c = 3.0) { return a + b + c; }
//    protected:
//     FORWARD_HAS_DEFAULT_ARGS({1, kiln::nn::AnyValue(2)}, {2, kiln::nn::AnyValue(3.0)})
//   };
#pragma once

#include <kiln/nn/module.h>

#include <any>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

namespace kiln::nn {

// A value of any copyable type, with checked access.
class AnyValue {
 public:
  template <class T>
    requires(!std::is_same_v<std::decay_t<T>, AnyValue>)
  explicit AnyValue(T&& value) : value_(std::decay_t<T>(std::forward<T>(value))) {}

  // The value if it is a T, else null.
  template <class T>
  T* try_get() noexcept {
    return std::any_cast<T>(&value_);
  }
  // The value as a T; throws TypeError naming both types when it is not one.
  template <class T>
  T& get() {
    T* value = try_get<T>();
    KILN_CHECK_TYPE(value != nullptr, "Attempted to cast AnyValue to ",
                    detail::type_name(typeid(T)), ", but its actual type is ",
                    detail::type_name(type_info()));
    return *value;
  }
  const std::type_info& type_info() const noexcept { return value_.type(); }

 private:
  std::any value_;
};

// The defaults of a forward()'s trailing parameters: (index, value), by increasing index.
using ForwardDefaults = std::vector<std::pair<unsigned, AnyValue>>;

// Declares the defaults of the enclosing module's forward() for AnyModule (see above).
#define FORWARD_HAS_DEFAULT_ARGS(...)                          \
  friend class ::kiln::nn::AnyModule;                          \
  static ::kiln::nn::ForwardDefaults _forward_default_args() { \
    return ::kiln::nn::ForwardDefaults{__VA_ARGS__};           \
  }

// A module and its forward(), called through AnyValues.
class AnyModule {
 public:
  // An empty AnyModule (is_empty()); calling it throws.
  AnyModule() = default;
  // Holds a module: a shared pointer, a holder (Linear), or a module value (copied).
  template <class M>
    requires std::is_base_of_v<Module, M>
  explicit AnyModule(std::shared_ptr<M> module) : module_(module), forward_(make_forward(module)) {
    KILN_CHECK_VALUE(module != nullptr, "AnyModule: cannot hold a null module");
  }
  template <class M>
  explicit AnyModule(const ModuleHolder<M>& holder) : AnyModule(holder.ptr()) {}
  template <class M>
    requires(std::is_base_of_v<Module, std::decay_t<M>>)
  explicit AnyModule(M&& module)
      : AnyModule(std::make_shared<std::decay_t<M>>(std::forward<M>(module))) {}
  // Holds another module.
  template <class M>
  requires std::is_base_of_v<Module, M> AnyModule& operator=(std::shared_ptr<M> module) {
    return *this = AnyModule(std::move(module));
  }

  // Calls the module's forward with these arguments and returns its result as ReturnType;
  // throws TypeError when an argument or the result has another type, ValueError for a wrong
  // number of arguments.
  template <class ReturnType = Tensor, class... Args>
  ReturnType forward(Args&&... args) {
    std::vector<AnyValue> values;
    values.reserve(sizeof...(Args));
    (values.emplace_back(std::forward<Args>(args)), ...);
    AnyValue result = any_forward(std::move(values));
    ReturnType* value = result.try_get<ReturnType>();
    KILN_CHECK_TYPE(value != nullptr, "The type of the return value is ",
                    detail::type_name(result.type_info()), ", but you asked for type ",
                    detail::type_name(typeid(ReturnType)));
    return std::move(*value);
  }
  // forward() on type-erased arguments.
  AnyValue any_forward(std::vector<AnyValue> args) const {
    KILN_CHECK(!is_empty(), "Cannot call forward() on an empty AnyModule");
    return forward_(std::move(args));
  }

  // The module as T, an implementation type; throws TypeError when it is not one.
  template <class T>
  T& get() const {
    KILN_CHECK(!is_empty(), "Cannot call get() on an empty AnyModule");
    Module& held = *module_;
    auto* module = held.template as<T>();
    KILN_CHECK_TYPE(module != nullptr, "Attempted to cast module of type ",
                    detail::type_name(typeid(held)), " to type ", detail::type_name(typeid(T)));
    return *module;
  }
  // The module as T, a holder type (Linear), sharing it.
  template <class T>
    requires requires { typename T::ContainedType; }
  T get() const {
    return T(std::shared_ptr<typename T::ContainedType>(module_,
                                                        &get<typename T::ContainedType>()));
  }
  // The module.
  const std::shared_ptr<Module>& ptr() const {
    KILN_CHECK(!is_empty(), "Cannot call ptr() on an empty AnyModule");
    return module_;
  }
  // The module as T (an implementation or holder type); throws TypeError when it is not one,
  // as libtorch's.
  template <class T>
  std::shared_ptr<typename nn::detail::contained_of<T>::type> ptr() const {
    using Contained = typename nn::detail::contained_of<T>::type;
    const std::shared_ptr<Module>& module = ptr();
    (void)get<Contained>();
    return std::dynamic_pointer_cast<Contained>(module);
  }
  bool is_empty() const noexcept { return module_ == nullptr; }
  const std::type_info& type_info() const {
    KILN_CHECK(!is_empty(), "Cannot call type_info() on an empty AnyModule");
    const Module& held = *module_;
    return typeid(held);
  }

 private:
  using Forward = std::function<AnyValue(std::vector<AnyValue>)>;

  template <class M>
  static Forward make_forward(const std::shared_ptr<M>& module) {
    ForwardDefaults defaults;
    if constexpr (requires { M::_forward_default_args(); }) {
      defaults = M::_forward_default_args();
    }
    return bind_forward(module.get(), &M::forward, std::move(defaults));
  }
  template <class M, class Class, class R, class... Params>
  static Forward bind_forward(M* module, R (Class::*forward)(Params...), ForwardDefaults defaults) {
    return bind_call<R, Params...>(
        module->name(), std::move(defaults), [module, forward](auto&&... args) -> R {
          return (module->*forward)(std::forward<decltype(args)>(args)...);
        });
  }
  template <class M, class Class, class R, class... Params>
  static Forward bind_forward(M* module, R (Class::*forward)(Params...) const,
                              ForwardDefaults defaults) {
    return bind_call<R, Params...>(
        module->name(), std::move(defaults), [module, forward](auto&&... args) -> R {
          return (module->*forward)(std::forward<decltype(args)>(args)...);
        });
  }
  template <class R, class... Params, class Call>
  static Forward bind_call(std::string name, ForwardDefaults defaults, Call call) {
    static_assert(!std::is_void_v<R>, "AnyModule: a module's forward() must return a value");
    static constexpr size_t all = sizeof...(Params);
    for (size_t i = 0; i < defaults.size(); ++i) {
      KILN_CHECK_VALUE(defaults[i].first == all - defaults.size() + i, "FORWARD_HAS_DEFAULT_ARGS ",
                       "of ", name, ": the defaults must be of the last parameters of forward(), ",
                       "by increasing index (forward() has ", all, " parameter(s))");
    }
    return [call, name, defaults](std::vector<AnyValue> args) -> AnyValue {
      if (defaults.empty()) {
        KILN_CHECK_VALUE(args.size() == all, name, "'s forward() method expects ", all,
                         " argument(s), but received ", args.size(), ".",
                         args.size() < all ? " If " + name +
                                                 "'s forward() method has default "
                                                 "arguments, please make sure the forward() "
                                                 "method is declared with a corresponding "
                                                 "`FORWARD_HAS_DEFAULT_ARGS` macro."
                                           : std::string());
      } else {
        const size_t required = defaults.front().first;
        KILN_CHECK_VALUE(args.size() >= required && args.size() <= all, name,
                         "'s forward() method expects at least ", required,
                         " argument(s) and at most ", all, " argument(s), but received ",
                         args.size(), ".");
        for (const auto& [index, value] : defaults) {
          if (index >= args.size()) args.push_back(value);
        }
      }
      return invoke<R, Params...>(call, args, std::index_sequence_for<Params...>{});
    };
  }
  template <class R, class... Params, class Call, size_t... I>
  static AnyValue invoke(const Call& call, std::vector<AnyValue>& args, std::index_sequence<I...>) {
    (void)args;  // unused when forward() takes no argument
    return AnyValue(call(static_cast<Params&&>(argument<std::decay_t<Params>>(args[I], I))...));
  }
  template <class T>
  static T& argument(AnyValue& value, size_t index) {
    T* arg = value.try_get<T>();
    KILN_CHECK_TYPE(arg != nullptr, "Expected argument #", index, " to be of type ",
                    detail::type_name(typeid(T)), ", but received value of type ",
                    detail::type_name(value.type_info()));
    return *arg;
  }

  std::shared_ptr<Module> module_;
  Forward forward_;
};

}  // namespace kiln::nn
