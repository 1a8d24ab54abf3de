// One operator call as a trace records it: the operator, its Backend kernel (the precomputed
// handle replay calls), and its arguments copied into owned values (an IntArrayRef becomes a
// vector, a Tensor stays a Tensor and is a slot that replay fills). Instantiated per operator
// signature by the Observe layer's kernel (kiln/dispatch.h), which calls record_call while a
// trace records on this thread; the graph itself is kiln/jit.h.
#pragma once

#include <kiln/export.h>
#include <kiln/tensor.h>

#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace kiln {
class OperatorBase;
}

namespace kiln::jit::detail {

// A recorded call, whatever the operator's signature.
class KILN_API RecordedCall {
 public:
  virtual ~RecordedCall();
  virtual const OperatorBase& op() const = 0;
  // The tensor slots of the arguments, in argument order (a list gives one slot per element;
  // an absent optional tensor none).
  virtual std::vector<Tensor*> tensor_slots() = 0;
  // Runs the call with the slots' current tensors: through the dispatcher (Autograd records)
  // or straight into the Backend kernel; appends the tensors it returns to `outputs`.
  virtual void run(bool dispatch, std::vector<Tensor>& outputs) = 0;
  // The arguments in order, comma separated: a tensor slot by its name in `slot_names` (in
  // slot order), any other argument by its value.
  virtual void print_arguments(std::ostream& out,
                               const std::vector<std::string>& slot_names) const = 0;
  // A copy with the same arguments (the slots keep their tensors).
  virtual std::unique_ptr<RecordedCall> clone() const = 0;
};

// Adds a finished call to this thread's trace; `outputs` are the tensors it returned (empty
// when it returned none, which means it gave a value to C++: the trace warns).
KILN_API void add_recorded_call(std::unique_ptr<RecordedCall> call, std::vector<Tensor> outputs,
                                bool returns_value);

// Called before an in-place call runs, while this thread traces: keeps the value a constant
// had before the graph's first write to it, which each replay starts from.
KILN_API void before_inplace_call(RecordedCall& call);

// An argument kept by value.
template <class T>
struct Owned {
  using type = std::decay_t<T>;
  static const type& view(const type& v) { return v; }
};
template <class E>
struct Owned<ArrayRef<E>> {
  using type = std::vector<E>;
  static ArrayRef<E> view(const type& v) { return ArrayRef<E>(v); }
};
template <class E>
struct Owned<std::optional<ArrayRef<E>>> {
  using type = std::optional<std::vector<E>>;
  static std::optional<ArrayRef<E>> view(const type& v) {
    if (!v) return std::nullopt;
    return ArrayRef<E>(*v);
  }
};
template <class T>
typename Owned<T>::type own(const T& v) {
  using O = typename Owned<T>::type;
  if constexpr (std::is_same_v<O, std::decay_t<T>>) {
    return v;
  } else if constexpr (std::is_same_v<O, std::vector<typename O::value_type>>) {
    return O(v.begin(), v.end());
  } else {
    if (!v) return std::nullopt;
    return typename O::value_type(v->begin(), v->end());
  }
}

template <class T>
void collect_slots(T& v, std::vector<Tensor*>& out) {
  if constexpr (std::is_same_v<T, Tensor>) {
    out.push_back(&v);
  } else if constexpr (std::is_same_v<T, std::vector<Tensor>>) {
    for (Tensor& t : v) out.push_back(&t);
  } else if constexpr (std::is_same_v<T, std::optional<Tensor>>) {
    if (v) out.push_back(&*v);
  }
}

template <class T>
concept Printable = requires(std::ostream& o, const T& v) {
  o << v;
};

template <class T>
void print_value(std::ostream& out, const T& v) {
  if constexpr (std::is_same_v<T, bool>) {
    out << (v ? "True" : "False");
  } else if constexpr (std::is_enum_v<T> && !Printable<T>) {
    out << static_cast<int64_t>(v);
  } else if constexpr (requires {
                         typename T::value_type;
                         v.begin();
                       } &&
                       !Printable<T>) {
    out << "[";
    bool first = true;
    for (const auto& e : v) {
      if (!first) out << ", ";
      first = false;
      print_value(out, e);
    }
    out << "]";
  } else if constexpr (requires {
                         v.has_value();
                         *v;
                       } &&
                       !Printable<T>) {
    if (v) {
      print_value(out, *v);
    } else {
      out << "None";
    }
  } else if constexpr (Printable<T>) {
    out << v;
  } else {
    out << "?";
  }
}

template <class T>
constexpr bool is_tensor_arg_v = std::is_same_v<T, Tensor> ||
                                 std::is_same_v<T, std::vector<Tensor>> ||
                                 std::is_same_v<T, std::optional<Tensor>>;

template <class R>
void append_outputs(R& r, std::vector<Tensor>& out) {
  if constexpr (std::is_same_v<R, Tensor>) {
    out.push_back(r);
  } else if constexpr (std::is_same_v<R, std::vector<Tensor>>) {
    for (const Tensor& t : r) out.push_back(t);
  } else if constexpr (requires { std::tuple_size<R>::value; }) {
    std::apply([&](auto&... e) { (append_outputs(e, out), ...); }, r);
  }
}

template <class R>
constexpr bool returns_tensors() {
  if constexpr (std::is_same_v<R, Tensor> || std::is_same_v<R, std::vector<Tensor>>) {
    return true;
  } else if constexpr (requires { std::tuple_size<R>::value; }) {
    return []<size_t... I>(std::index_sequence<I...>) {
      return (returns_tensors<std::tuple_element_t<I, R>>() || ...);
    }
    (std::make_index_sequence<std::tuple_size_v<R>>{});
  } else {
    return false;
  }
}

template <class Op, class R, class... Args>
class TypedCall final : public RecordedCall {
 public:
  using Kernel = R (*)(const Op&, Args...);
  TypedCall(const Op& op, Kernel backend, const Args&... args)
      : op_(op), backend_(backend), args_(own<std::decay_t<Args>>(args)...) {}

  const OperatorBase& op() const override { return op_; }
  std::vector<Tensor*> tensor_slots() override {
    std::vector<Tensor*> out;
    std::apply([&](auto&... a) { (collect_slots(a, out), ...); }, args_);
    return out;
  }
  void run(bool dispatch, std::vector<Tensor>& outputs) override {
    call(dispatch, outputs, std::index_sequence_for<Args...>{});
  }
  void print_arguments(std::ostream& out,
                       const std::vector<std::string>& slot_names) const override {
    size_t k = 0;
    bool first = true;
    auto name = [&]() -> const std::string& {
      static const std::string unknown = "?";
      return k < slot_names.size() ? slot_names[k++] : unknown;
    };
    std::apply(
        [&](const auto&... a) {
          auto one = [&](const auto& v) {
            using V = std::decay_t<decltype(v)>;
            if (!first) out << ", ";
            first = false;
            if constexpr (std::is_same_v<V, Tensor>) {
              out << name();
            } else if constexpr (std::is_same_v<V, std::vector<Tensor>>) {
              out << "[";
              for (size_t i = 0; i < v.size(); ++i) out << (i ? ", " : "") << name();
              out << "]";
            } else if constexpr (std::is_same_v<V, std::optional<Tensor>>) {
              if (v) {
                out << name();
              } else {
                out << "None";
              }
            } else {
              print_value(out, v);
            }
          };
          (one(a), ...);
        },
        args_);
  }
  std::unique_ptr<RecordedCall> clone() const override {
    return std::make_unique<TypedCall>(*this);
  }
  // The recorded arguments (graph passes read non-tensor ones: kiln::jit::fuse_pointwise).
  const auto& arguments() const { return args_; }

 private:
  template <size_t... I>
  void call(bool dispatch, std::vector<Tensor>& outputs, std::index_sequence<I...>) {
    if constexpr (std::is_void_v<R>) {
      if (dispatch) {
        op_(Owned<std::decay_t<Args>>::view(std::get<I>(args_))...);
      } else {
        backend_(op_, Owned<std::decay_t<Args>>::view(std::get<I>(args_))...);
      }
    } else {
      R r = dispatch ? op_(Owned<std::decay_t<Args>>::view(std::get<I>(args_))...)
                     : backend_(op_, Owned<std::decay_t<Args>>::view(std::get<I>(args_))...);
      append_outputs(r, outputs);
    }
  }

  const Op& op_;
  Kernel backend_;
  std::tuple<typename Owned<std::decay_t<Args>>::type...> args_;
};

// Records one call (the Observe layer's kernel, while this thread traces): runs the Backend
// kernel and adds the call and its outputs to the trace.
template <class Op, class R, class... Args>
R record_call(const Op& op, R (*backend)(const Op&, Args...), Args... args) {
  auto call = std::make_unique<TypedCall<Op, R, Args...>>(op, backend, args...);
  if (op.is_inplace()) before_inplace_call(*call);
  if constexpr (std::is_void_v<R>) {
    backend(op, std::forward<Args>(args)...);
    add_recorded_call(std::move(call), {}, false);
  } else {
    R r = backend(op, std::forward<Args>(args)...);
    std::vector<Tensor> outs;
    append_outputs(r, outs);
    add_recorded_call(std::move(call), std::move(outs), !returns_tensors<R>());
    return r;
  }
}

}  // namespace kiln::jit::detail
