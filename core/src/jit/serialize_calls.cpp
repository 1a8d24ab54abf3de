// The arguments of the recorded calls of every operator signature kiln's operators have
// (arguments.h): a TypedCall's owned arguments written, and a TypedCall made from arguments read
// back, for an operator found by name. TypedCall keeps its arguments private; this file reaches
// them through an explicit instantiation, which the language exempts from access checks, so that
// recorded_call.h (included by every operator's translation unit) need not change.
//
// The list below is every signature of core's operators (the TypedCall instantiations in
// libkiln_core); test_jit_save checks that every operator's signature is in it, so an operator
// of a new signature fails that test until its signature is added here.
#include "arguments.h"
#include "graph_format.h"

#include <kiln/dispatch.h>
#include <kiln/nn/options.h>

#include <string_view>
#include <tuple>

namespace kiln::jit::detail {
namespace {

template <class Sig>
struct CallOf;
template <class R, class... Args>
struct CallOf<R(Args...)> {
  using Op = Operator<R(Args...)>;
  using type = TypedCall<Op, R, Args...>;
  using Tuple = std::tuple<typename Owned<std::decay_t<Args>>::type...>;
};

// The member pointer to a TypedCall's arguments, by explicit instantiation of Steal.
template <class Sig>
struct ArgsTag {
  using type = typename CallOf<Sig>::Tuple CallOf<Sig>::type::*;
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wnon-template-friend"
#endif
  friend type args_member(ArgsTag);
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
};
template <class Tag, typename Tag::type M>
struct Steal {
  friend typename Tag::type args_member(Tag) { return M; }
};

template <class Sig>
bool write_typed(const RecordedCall& call, ArgWriter& out) {
  using Call = typename CallOf<Sig>::type;
  const auto* typed = dynamic_cast<const Call*>(&call);
  if (typed == nullptr) return false;
  const auto& args = typed->*args_member(ArgsTag<Sig>{});
  std::apply([&](const auto&... a) { (write_arg(out, a), ...); }, args);
  return true;
}

template <class Sig>
struct Maker;
template <class R, class... Args>
struct Maker<R(Args...)> {
  static std::unique_ptr<RecordedCall> make(const OperatorBase& base, ArgReader& in) {
    using Op = Operator<R(Args...)>;
    const auto* op = dynamic_cast<const Op*>(&base);
    if (op == nullptr) return nullptr;
    typename CallOf<R(Args...)>::Tuple args;
    std::apply([&](auto&... a) { (read_arg(in, a), ...); }, args);
    return std::apply(
        [&](const auto&... a) -> std::unique_ptr<RecordedCall> {
          return std::make_unique<typename CallOf<R(Args...)>::type>(
              *op, op->kernel(DispatchKey::Backend), Owned<std::decay_t<Args>>::view(a)...);
        },
        args);
  }
};

struct Handler {
  bool (*write)(const RecordedCall&, ArgWriter&);
  std::unique_ptr<RecordedCall> (*make)(const OperatorBase&, ArgReader&);
};

#define KILN_SAVED_SIGNATURES                                                                      \
  KILN_SAVED_SIGNATURE(Tensor(ArrayRef<Tensor>, int64_t))                                          \
  KILN_SAVED_SIGNATURE(Tensor(const Tensor&))                                                      \
  KILN_SAVED_SIGNATURE(Tensor(const Tensor&, bool))                                                \
  KILN_SAVED_SIGNATURE(Tensor(const Tensor&, double))                                              \
  KILN_SAVED_SIGNATURE(Tensor(const Tensor&, double, double))                                      \
  KILN_SAVED_SIGNATURE(Tensor(const Tensor&, ArrayRef<int64_t>))                                   \
  KILN_SAVED_SIGNATURE(Tensor(const Tensor&, ArrayRef<int64_t>, bool))                             \
  KILN_SAVED_SIGNATURE(Tensor(const Tensor&, ArrayRef<int64_t>, bool, double, double))             \
  KILN_SAVED_SIGNATURE(Tensor(const Tensor&, ArrayRef<int64_t>, bool, std::optional<ScalarType>))  \
  KILN_SAVED_SIGNATURE(Tensor(const Tensor&, ArrayRef<int64_t>, double, double, double, bool))     \
  KILN_SAVED_SIGNATURE(Tensor(const Tensor&, ArrayRef<int64_t>, ArrayRef<int64_t>,                 \
                              ArrayRef<int64_t>, ArrayRef<int64_t>, bool))                         \
  KILN_SAVED_SIGNATURE(Tensor(const Tensor&, ArrayRef<int64_t>, ArrayRef<int64_t>, int64_t))       \
  KILN_SAVED_SIGNATURE(Tensor(const Tensor&, ArrayRef<int64_t>, const Tensor&, const Tensor&,      \
                              double))                                                             \
  KILN_SAVED_SIGNATURE(Tensor(const Tensor&, const Scalar&))                                       \
  KILN_SAVED_SIGNATURE(Tensor(const Tensor&, const Scalar&, const Scalar&))                        \
  KILN_SAVED_SIGNATURE(Tensor(const Tensor&, const Scalar&, const Scalar&, const Scalar&))         \
  KILN_SAVED_SIGNATURE(Tensor(const Tensor&, const Tensor&))                                       \
  KILN_SAVED_SIGNATURE(Tensor(const Tensor&, const Tensor&, bool))                                 \
  KILN_SAVED_SIGNATURE(Tensor(const Tensor&, const Tensor&, bool, bool, double, nn::Reduction))    \
  KILN_SAVED_SIGNATURE(Tensor(const Tensor&, const Tensor&, double))                               \
  KILN_SAVED_SIGNATURE(Tensor(const Tensor&, const Tensor&, double, double, double))               \
  KILN_SAVED_SIGNATURE(Tensor(const Tensor&, const Tensor&, double, nn::Reduction))                \
  KILN_SAVED_SIGNATURE(Tensor(const Tensor&, const Tensor&, ArrayRef<int64_t>))                    \
  KILN_SAVED_SIGNATURE(Tensor(const Tensor&, const Tensor&, ArrayRef<int64_t>, ArrayRef<int64_t>,  \
                              ArrayRef<int64_t>, ArrayRef<int64_t>, int64_t))                      \
  KILN_SAVED_SIGNATURE(Tensor(const Tensor&, const Tensor&, const Scalar&))                        \
  KILN_SAVED_SIGNATURE(Tensor(const Tensor&, const Tensor&, const Tensor&))                        \
  KILN_SAVED_SIGNATURE(Tensor(const Tensor&, const Tensor&, const Tensor&, bool))                  \
  KILN_SAVED_SIGNATURE(Tensor(const Tensor&, const Tensor&, const Tensor&, double, double, double, \
                              bool, nn::Reduction))                                                \
  KILN_SAVED_SIGNATURE(Tensor(const Tensor&, const Tensor&, const Tensor&, double, nn::Reduction)) \
  KILN_SAVED_SIGNATURE(Tensor(const Tensor&, const Tensor&, const Tensor&, ArrayRef<int64_t>,      \
                              ArrayRef<int64_t>, ArrayRef<int64_t>, int64_t))                      \
  KILN_SAVED_SIGNATURE(Tensor(const Tensor&, const Tensor&, const Tensor&, const Scalar&))         \
  KILN_SAVED_SIGNATURE(Tensor(const Tensor&, const Tensor&, const Tensor&, const Scalar&,          \
                              const Scalar&))                                                      \
  KILN_SAVED_SIGNATURE(Tensor(const Tensor&, const Tensor&, const Tensor&, const Tensor&))         \
  KILN_SAVED_SIGNATURE(Tensor(const Tensor&, const Tensor&, const Tensor&, const Tensor&, double,  \
                              bool, std::optional<double>))                                        \
  KILN_SAVED_SIGNATURE(Tensor(const Tensor&, const Tensor&, const Tensor&, const Tensor&,          \
                              const Tensor&, const Tensor&))                                       \
  KILN_SAVED_SIGNATURE(Tensor(const Tensor&, const Tensor&, const Tensor&, const Tensor&, int64_t, \
                              nn::Reduction, bool))                                                \
  KILN_SAVED_SIGNATURE(Tensor(const Tensor&, const Tensor&, const Tensor&, nn::Reduction))         \
  KILN_SAVED_SIGNATURE(Tensor(const Tensor&, const Tensor&, const Tensor&, nn::Reduction,          \
                              const Tensor&))                                                      \
  KILN_SAVED_SIGNATURE(Tensor(const Tensor&, const Tensor&, const Tensor&, int64_t,                \
                              nn::Reduction))                                                      \
  KILN_SAVED_SIGNATURE(Tensor(const Tensor&, const Tensor&, const Tensor&, int64_t, nn::Reduction, \
                              double))                                                             \
  KILN_SAVED_SIGNATURE(Tensor(const Tensor&, const Tensor&, nn::Reduction))                        \
  KILN_SAVED_SIGNATURE(Tensor(const Tensor&, const Tensor&, nn::Reduction, bool))                  \
  KILN_SAVED_SIGNATURE(Tensor(const Tensor&, const Tensor&, nn::Reduction, double))                \
  KILN_SAVED_SIGNATURE(Tensor(const Tensor&, const Tensor&, int64_t, double))                      \
  KILN_SAVED_SIGNATURE(Tensor(const Tensor&, const Tensor&, int64_t, double, const Tensor&,        \
                              nn::Reduction))                                                      \
  KILN_SAVED_SIGNATURE(Tensor(const Tensor&, const Tensor&, int64_t, int64_t, bool))               \
  KILN_SAVED_SIGNATURE(Tensor(const Tensor&, int64_t))                                             \
  KILN_SAVED_SIGNATURE(Tensor(const Tensor&, int64_t, const Tensor&))                              \
  KILN_SAVED_SIGNATURE(Tensor(const Tensor&, int64_t, const Tensor&, const Tensor&))               \
  KILN_SAVED_SIGNATURE(Tensor(const Tensor&, int64_t, int64_t))                                    \
  KILN_SAVED_SIGNATURE(Tensor(const Tensor&, int64_t, int64_t, int64_t))                           \
  KILN_SAVED_SIGNATURE(Tensor(const Tensor&, int64_t, std::optional<ScalarType>))                  \
  KILN_SAVED_SIGNATURE(Tensor(const Tensor&, int64_t, std::optional<int64_t>,                      \
                              std::optional<int64_t>, int64_t))                                    \
  KILN_SAVED_SIGNATURE(Tensor(const Tensor&, const std::optional<Scalar>&,                         \
                              const std::optional<Scalar>&))                                       \
  KILN_SAVED_SIGNATURE(std::tuple<Tensor, Tensor, Tensor>(const Tensor&, ArrayRef<Tensor>,         \
                                                          ArrayRef<Tensor>, bool, int64_t, double, \
                                                          bool, bool, bool))                       \
  KILN_SAVED_SIGNATURE(std::tuple<Tensor, Tensor, Tensor>(const Tensor&, const Tensor&,            \
                                                          ArrayRef<Tensor>, ArrayRef<Tensor>,      \
                                                          bool, int64_t, double, bool, bool))      \
  KILN_SAVED_SIGNATURE(std::tuple<Tensor, Tensor, Tensor>(const Tensor&, const Tensor&,            \
                                                          const Tensor&, double, bool))            \
  KILN_SAVED_SIGNATURE(std::tuple<Tensor, Tensor, Tensor>(const Tensor&, const Tensor&,            \
                                                          const Tensor&, const Tensor&,            \
                                                          const Tensor&, const Tensor&, bool))     \
  KILN_SAVED_SIGNATURE(std::tuple<Tensor, Tensor, Tensor>(const Tensor&, const Tensor&,            \
                                                          const Tensor&, const Tensor&,            \
                                                          const Tensor&, const Tensor&,            \
                                                          const Tensor&, double, bool))            \
  KILN_SAVED_SIGNATURE(std::tuple<Tensor, Tensor>(const Tensor&, ArrayRef<Tensor>, const Tensor&,  \
                                                  const Tensor&, const Tensor&, const Tensor&))    \
  KILN_SAVED_SIGNATURE(std::tuple<Tensor, Tensor>(const Tensor&, ArrayRef<int64_t>,                \
                                                  ArrayRef<int64_t>, ArrayRef<int64_t>,            \
                                                  ArrayRef<int64_t>, ArrayRef<int64_t>))           \
  KILN_SAVED_SIGNATURE(std::tuple<Tensor, Tensor>(const Tensor&, ArrayRef<int64_t>,                \
                                                  ArrayRef<int64_t>, const Tensor&))               \
  KILN_SAVED_SIGNATURE(std::tuple<Tensor, Tensor>(const Tensor&, const Tensor&, ArrayRef<Tensor>,  \
                                                  bool, int64_t, double, bool, bool, bool))        \
  KILN_SAVED_SIGNATURE(std::tuple<Tensor, Tensor>(const Tensor&, const Tensor&, const Tensor&,     \
                                                  ArrayRef<Tensor>, bool, int64_t, double, bool,   \
                                                  bool))                                           \
  KILN_SAVED_SIGNATURE(std::tuple<Tensor, Tensor>(const Tensor&, const Tensor&, const Tensor&,     \
                                                  const Tensor&, double, bool))                    \
  KILN_SAVED_SIGNATURE(std::tuple<Tensor, Tensor>(const Tensor&, int64_t))                         \
  KILN_SAVED_SIGNATURE(std::tuple<Tensor, Tensor>(const Tensor&, int64_t, bool))                   \
  KILN_SAVED_SIGNATURE(std::tuple<Tensor, Tensor>(const Tensor&, int64_t, bool, bool))             \
  KILN_SAVED_SIGNATURE(std::tuple<Tensor, Tensor>(const Tensor&, int64_t, int64_t, bool, bool))

#define KILN_SAVED_SIGNATURE(...) \
  template struct Steal<ArgsTag<__VA_ARGS__>, &CallOf<__VA_ARGS__>::type::args_>;
KILN_SAVED_SIGNATURES
#undef KILN_SAVED_SIGNATURE

#define KILN_SAVED_SIGNATURE(...) Handler{write_typed<__VA_ARGS__>, Maker<__VA_ARGS__>::make},
const Handler kHandlers[] = {KILN_SAVED_SIGNATURES};
#undef KILN_SAVED_SIGNATURE

}  // namespace

bool write_call_arguments(const RecordedCall& call, ArgWriter& out) {
  for (const Handler& h : kHandlers) {
    if (h.write(call, out)) return true;
  }
  return false;
}

std::unique_ptr<RecordedCall> make_call(const OperatorBase& op, ArgReader& in) {
  for (const Handler& h : kHandlers) {
    if (auto call = h.make(op, in)) return call;
  }
  return nullptr;
}

std::vector<std::string> operators_without_saved_signature() {
  std::vector<std::string> out;
  std::string empty;
  for (const OperatorBase* op : all_operators()) {
    // a fused group is saved as the nodes it keeps, never as its fused_pointwise call
    if (std::string_view(op->name()) == "fused_pointwise") continue;
    bool found = false;
    for (const Handler& h : kHandlers) {
      ArgReader in("", empty);
      try {
        found = h.make(*op, in) != nullptr;
      } catch (const ValueError&) {
        found = true;  // the signature matched; reading the (empty) arguments failed
      }
      if (found) break;
    }
    if (!found) out.push_back(op->name());
  }
  return out;
}

}  // namespace kiln::jit::detail
