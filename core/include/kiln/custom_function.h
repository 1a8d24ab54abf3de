// Custom autograd functions, as libtorch's torch::autograd::Function<T>:
//
//   struct MulConstant : kiln::autograd::Function<MulConstant> {
//     static kiln::Tensor forward(kiln::autograd::AutogradContext* ctx, kiln::Tensor x, double c) {
//       ctx->saved_data["c"] = c;
//       return x * c;
//     }
//     static kiln::autograd::variable_list backward(kiln::autograd::AutogradContext* ctx,
//                                                   kiln::autograd::variable_list grads) {
//       return {grads[0] * ctx->saved_data["c"].toDouble(), kiln::Tensor()};
//     }
//   };
//   kiln::Tensor y = MulConstant::apply(x, 2.0);
//
// forward runs with grad mode off; backward returns one gradient per forward argument (an
// undefined tensor for arguments that are not tensors or need none).
#pragma once

#include <kiln/autograd.h>
#include <kiln/export.h>

#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <unordered_set>
#include <utility>
#include <variant>
#include <vector>

namespace kiln::autograd {

using variable_list = std::vector<Tensor>;

// A value kept in AutogradContext::saved_data: a number, a flag, a string or a tensor.
class KILN_API IValue {
 public:
  IValue() = default;
  IValue(bool v) : v_(v) {}                       // NOLINT
  IValue(int v) : v_(static_cast<int64_t>(v)) {}  // NOLINT
  IValue(int64_t v) : v_(v) {}                    // NOLINT
  IValue(double v) : v_(v) {}                     // NOLINT
  IValue(std::string v) : v_(std::move(v)) {}     // NOLINT
  IValue(const char* v) : v_(std::string(v)) {}   // NOLINT
  IValue(Tensor v) : v_(std::move(v)) {}          // NOLINT

  bool toBool() const;
  int64_t toInt() const;
  double toDouble() const;
  const std::string& toStringRef() const;
  Tensor toTensor() const;

 private:
  std::variant<std::monostate, bool, int64_t, double, std::string, Tensor> v_;
};

class CustomNode;

// What forward and backward of a custom function share.
class KILN_API AutogradContext {
 public:
  // Tensors backward needs; checked for in-place changes when unpacked.
  void save_for_backward(variable_list tensors);
  variable_list get_saved_variables() const;
  // Inputs forward modified in place (they get the function as their new grad_fn).
  void mark_dirty(const variable_list& tensors);
  // Outputs that have no gradient (indices, masks).
  void mark_non_differentiable(const variable_list& tensors);
  // false: undefined output gradients reach backward as undefined instead of zeros.
  void set_materialize_grads(bool value) { materialize_grads_ = value; }
  // Whether forward input i (counting every argument) needs a gradient.
  bool needs_input_grad(size_t i) const;

  std::map<std::string, IValue> saved_data;

 private:
  friend class CustomNode;
  friend struct FunctionBase;
  std::vector<Tensor> to_save_;  // until the node takes them as saved variables
  std::unordered_set<TensorImpl*> dirty_;
  std::unordered_set<TensorImpl*> non_differentiable_;
  std::vector<bool> needs_input_grad_;
  bool materialize_grads_ = true;
  std::weak_ptr<CustomNode> node_;
};

// The part of Function<T> that is not a template.
struct KILN_API FunctionBase {
  using Backward = variable_list (*)(AutogradContext*, variable_list);
  // Wires a finished forward into the graph: inputs are the forward arguments as tensors
  // (undefined for non-tensors), outputs the forward results.
  static void record(const char* name, const std::shared_ptr<AutogradContext>& ctx,
                     const variable_list& inputs, variable_list& outputs, Backward backward);
};

namespace detail {
inline void collect(variable_list& out, const Tensor& t) { out.push_back(t); }
inline void collect(variable_list& out, TensorList ts) {  // each tensor of a list is an input
  for (const Tensor& t : ts) out.push_back(t);
}
inline void collect(variable_list& out, const variable_list& ts) { collect(out, TensorList(ts)); }
template <class T>
void collect(variable_list& out, const T&) {
  out.emplace_back();
}
KILN_API std::string demangled_name(const char* mangled);
}  // namespace detail

template <class T>
struct Function {
  // Runs T::forward(ctx, args...) without recording, then records one node whose backward is
  // T::backward. Returns what forward returns (a Tensor or a variable_list).
  template <class... Args>
  static auto apply(Args&&... args) {
    auto ctx = std::make_shared<AutogradContext>();
    variable_list inputs;
    (detail::collect(inputs, args), ...);
    using Result = decltype(T::forward(ctx.get(), std::forward<Args>(args)...));
    Result result;
    {
      AutoGradMode no_grad(false);
      result = T::forward(ctx.get(), std::forward<Args>(args)...);
    }
    variable_list outputs;
    if constexpr (std::is_same_v<Result, Tensor>) {
      outputs.push_back(result);
    } else {
      outputs = result;
    }
    static const std::string name = detail::demangled_name(typeid(T).name()) + "Backward";
    FunctionBase::record(name.c_str(), ctx, inputs, outputs, &T::backward);
    if constexpr (std::is_same_v<Result, Tensor>) {
      return outputs[0];
    } else {
      return outputs;
    }
  }
};

}  // namespace kiln::autograd
