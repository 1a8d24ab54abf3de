// Installs the Autocast layer (policy.h) on the operators the policy tables list, and keeps the
// policies of those whose declaration gives them.
#include "policy.h"

#include <kiln/nn/options.h>

#include <array>
#include <mutex>
#include <unordered_map>

namespace kiln::amp::detail {
namespace {

// Policies by operator: [0] on the CPU, [1] on every other device type; and whether the
// operator's declaration gave them. Written by the declarations (static initialization) and once
// by install_autocast_layer (under call_once), read-only afterwards.
struct PolicyRow {
  std::array<CastPolicy, 2> policy{CastPolicy::none, CastPolicy::none};
  bool declared = false;
};
std::unordered_map<const OperatorBase*, PolicyRow>& policies() {
  static auto* map = new std::unordered_map<const OperatorBase*, PolicyRow>();
  return *map;
}

template <class... Signatures>
struct SignatureList {};

// The signatures of the operators the tables list. A table entry whose operator has another
// signature fails the install with an internal error naming it: add the signature here.
using Reduction = nn::Reduction;
using KnownSignatures = SignatureList<
    Tensor(const Tensor&),                                                              // unary
    Tensor(const Tensor&, const Tensor&),                                               // mm, bmm
    Tensor(const Tensor&, const Tensor&, const Tensor&),                                // linear
    Tensor(const Tensor&, const Tensor&, const Tensor&, const Scalar&, const Scalar&),  // addmm
    Tensor(const Tensor&, const Tensor&, const Tensor&, IntArrayRef, IntArrayRef, IntArrayRef,
           int64_t),                                                                // conv2d
    Tensor(const Tensor&, double, double),                                          // softplus
    Tensor(const Tensor&, IntArrayRef, bool),                                       // logsumexp
    Tensor(const Tensor&, IntArrayRef, const Tensor&, const Tensor&, double),       // layer_norm
    Tensor(const Tensor&, IntArrayRef, bool, std::optional<ScalarType>),            // sum, prod
    Tensor(const Tensor&, int64_t, std::optional<ScalarType>),                      // softmax
    Tensor(const Tensor&, int64_t, const Tensor&, const Tensor&),                   // scatter_add
    Tensor(TensorList, int64_t),                                                    // cat, stack
    Tensor(const Tensor&, const Tensor&, Reduction),                                // mse_loss
    Tensor(const Tensor&, const Tensor&, const Tensor&, int64_t, Reduction),        // nll_loss
    Tensor(const Tensor&, const Tensor&, const Tensor&, Reduction),                 // bce
    Tensor(const Tensor&, const Tensor&, const Tensor&, Reduction, const Tensor&),  // bce logits
    Tensor(const Tensor&, const Tensor&, const Tensor&, int64_t, Reduction,
           double),                                                          // cross_entropy
    Tensor(const Tensor&, const Tensor&, Reduction, double),                 // smooth_l1, huber
    Tensor(const Tensor&, const Tensor&, Reduction, bool),                   // kl_div
    Tensor(const Tensor&, const Tensor&, double, Reduction),                 // hinge_embedding
    Tensor(const Tensor&, const Tensor&, const Tensor&, double, Reduction),  // margin_ranking
    Tensor(const Tensor&, const Tensor&, int64_t, double, const Tensor&,
           Reduction),  // multi_margin
    Tensor(const Tensor&, const Tensor&, const Tensor&, double, double, double, bool,
           Reduction),                                                    // triplet_margin
    Tensor(const Tensor&, const Tensor&, bool, bool, double, Reduction),  // poisson_nll
    Tensor(const Tensor&, const Tensor&, int64_t, double),                // cosine_similarity
    Tensor(const Tensor&, const Tensor&, const Tensor&, const Tensor&, int64_t, Reduction,
           bool),                                                        // ctc_loss
    Tensor(const Tensor&, const Tensor&, const Tensor&, const Tensor&),  // bilinear
    Tensor(const Tensor&, double),                                       // pdist
    Tensor(const Tensor&, const Tensor&, int64_t, int64_t, bool),        // grid_sampler
    std::tuple<Tensor, Tensor>(const Tensor&, IntArrayRef, IntArrayRef,
                               const Tensor&)>;  // fractional_max_pool2d/3d

template <class Signature>
bool try_install(OperatorBase* op) {
  auto* typed = dynamic_cast<Operator<Signature>*>(op);
  if (typed == nullptr) return false;
  typed->set_kernel(DispatchKey::Autocast, &autocast_kernel);
  return true;
}

template <class... Signatures>
bool install(OperatorBase* op, SignatureList<Signatures...>) {
  return (try_install<Signatures>(op) || ...);
}

void add_table(const std::vector<PolicyEntry>& table, size_t column) {
  for (const PolicyEntry& entry : table) {
    OperatorBase* op = find_operator(entry.op);
    KILN_INTERNAL_ASSERT(op != nullptr, "autocast policy table lists ", entry.op,
                         ", which is not an operator");
    auto [it, added] = policies().try_emplace(op);
    KILN_INTERNAL_ASSERT(!it->second.declared, "autocast policy table lists ", entry.op,
                         ", whose declaration gives its policy");
    it->second.policy[column] = entry.policy;
    if (added) {
      KILN_INTERNAL_ASSERT(install(op, KnownSignatures{}), "autocast: the signature of ", entry.op,
                           " (", op->schema(), ") is not in KnownSignatures");
    }
  }
}

}  // namespace

void set_declared_policy(const OperatorBase& op, AutocastPolicy policy) {
  policies()[&op] = PolicyRow{{policy.cpu, policy.other}, true};
}

void install_autocast_layer() {
  static std::once_flag once;
  std::call_once(once, [] {
    add_table(cpu_policy_table(), 0);
    add_table(cuda_policy_table(), 1);
  });
}

CastPolicy policy_of(const OperatorBase& op, DeviceType type) {
  auto it = policies().find(&op);
  if (it == policies().end()) return CastPolicy::none;
  return it->second.policy[type == kCPU ? 0 : 1];
}

}  // namespace kiln::amp::detail
