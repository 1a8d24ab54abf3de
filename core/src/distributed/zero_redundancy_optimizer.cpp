// ZeroRedundancyOptimizer: partition, step and broadcast, and the state's consolidation. See
// kiln/distributed/optim/zero_redundancy_optimizer.h.
//
// Note [Consolidating sharded state]: a rank's local state is sent as a manifest (an int64
// tensor: for each state tensor its global parameter index, name, dtype and sizes) followed by
// the tensors, each a broadcast from the owner, so that the receiver can allocate them before
// they arrive; every rank takes part in every broadcast, in rank order.
#include <kiln/distributed/optim/zero_redundancy_optimizer.h>

#include <kiln/autograd.h>
#include <kiln/error.h>
#include <kiln/ops.h>

#include <numeric>

namespace kiln::distributed::optim {

using kiln::detail::str;
using kiln::optim::OptimizerStateDict;

namespace {

void push_string(std::vector<int64_t>& out, const std::string& s) {
  out.push_back(static_cast<int64_t>(s.size()));
  for (char c : s) out.push_back(static_cast<unsigned char>(c));
}

}  // namespace

ZeroRedundancyOptimizerBase::ZeroRedundancyOptimizerBase(std::vector<Tensor> params,
                                                         Factory make_local, ProcessGroupPtr group)
    : params_(std::move(params)), group_(std::move(group)) {
  KILN_CHECK_VALUE(!params_.empty(), "ZeroRedundancyOptimizer: no parameters to optimize");
  rank_ = get_rank(group_);
  size_ = get_world_size(group_);
  KILN_CHECK(rank_ >= 0, "ZeroRedundancyOptimizer: this process is not a member of the group");
  // PyTorch's partition: largest first, each to the rank with the fewest elements so far
  std::vector<size_t> order(params_.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return params_[a].numel() > params_[b].numel(); });
  std::vector<int64_t> filled(static_cast<size_t>(size_), 0);
  owner_.assign(params_.size(), 0);
  for (size_t i : order) {
    auto least = std::min_element(filled.begin(), filled.end());
    owner_[i] = static_cast<int>(least - filled.begin());
    *least += params_[i].numel();
  }
  std::vector<int64_t> count(static_cast<size_t>(size_), 0);
  std::vector<Tensor> mine;
  local_of_.assign(params_.size(), 0);
  for (size_t i = 0; i < params_.size(); ++i) {
    local_of_[i] = count[static_cast<size_t>(owner_[i])]++;
    if (owner_[i] == rank_) mine.push_back(params_[i]);
  }
  if (!mine.empty()) {
    local_ = make_local(std::move(mine));
    KILN_CHECK(local_ != nullptr, "ZeroRedundancyOptimizer: the optimizer factory returned null");
    options_ = local_->param_groups().front().options().values();
  }
}

ZeroRedundancyOptimizerBase::~ZeroRedundancyOptimizerBase() = default;

int ZeroRedundancyOptimizerBase::global_rank(int group_rank) const {
  return group_ != nullptr ? group_->ranks()[static_cast<size_t>(group_rank)] : group_rank;
}

Tensor ZeroRedundancyOptimizerBase::step(const kiln::optim::Optimizer::LossClosure& closure) {
  Tensor loss;
  if (local_ != nullptr) {
    loss = local_->step(closure);
  } else if (closure) {
    AutoGradMode on(true);
    loss = closure();
  }
  NoGradGuard no_grad;
  std::vector<WorkPtr> works;
  for (size_t i = 0; i < params_.size(); ++i) {
    works.push_back(broadcast(params_[i], global_rank(owner_[i]), group_, /*async_op=*/true));
  }
  for (auto& w : works) w->wait();
  return loss;
}

void ZeroRedundancyOptimizerBase::zero_grad(bool set_to_none) {
  for (Tensor& p : params_) {
    Tensor& g = p.mutable_grad();
    if (!g.defined()) continue;
    if (set_to_none) {
      g = Tensor();
    } else {
      NoGradGuard no_grad;
      g.zero_();
    }
  }
}

void ZeroRedundancyOptimizerBase::consolidate_state_dict(int to) {
  NoGradGuard no_grad;
  std::vector<int> members(static_cast<size_t>(size_));
  for (int r = 0; r < size_; ++r) members[static_cast<size_t>(r)] = global_rank(r);
  KILN_CHECK_VALUE(std::find(members.begin(), members.end(), to) != members.end(),
                   "ZeroRedundancyOptimizer.consolidate_state_dict: rank ", to,
                   " is not a member of the group");
  bool receiving = global_rank(rank_) == to;
  OptimizerStateDict full;
  // See Note [Consolidating sharded state]
  for (int r = 0; r < size_; ++r) {
    std::vector<int64_t> manifest;
    std::vector<Tensor> tensors;
    if (r == rank_ && local_ != nullptr) {
      OptimizerStateDict local = local_->state_dict();
      std::vector<size_t> global_of;
      for (size_t i = 0; i < params_.size(); ++i) {
        if (owner_[i] == rank_) global_of.push_back(i);
      }
      for (auto& [index, named] : local.state) {
        for (auto& [name, t] : named) {
          manifest.push_back(static_cast<int64_t>(global_of[static_cast<size_t>(index)]));
          push_string(manifest, name);
          manifest.push_back(static_cast<int64_t>(t.scalar_type()));
          manifest.push_back(t.dim());
          for (int64_t s : t.sizes()) manifest.push_back(s);
          tensors.push_back(t.contiguous());
        }
      }
    }
    int src = global_rank(r);
    Tensor length =
        kiln::full({1}, static_cast<double>(manifest.size()), TensorOptions().dtype(kLong));
    broadcast(length, src, group_);
    auto n = length.item<int64_t>();
    Tensor m = kiln::zeros({n}, TensorOptions().dtype(kLong));
    if (r == rank_) std::copy(manifest.begin(), manifest.end(), m.data_ptr<int64_t>());
    broadcast(m, src, group_);
    const int64_t* p = m.data_ptr<int64_t>();
    const int64_t* end = p + n;
    size_t k = 0;
    auto next = [&]() {
      KILN_CHECK(p < end, "ZeroRedundancyOptimizer.consolidate_state_dict: rank ", src,
                 "'s manifest is truncated (internal error, please report)");
      return *p++;
    };
    while (p < end) {
      int64_t index = next();
      std::string name(static_cast<size_t>(next()), '\0');
      for (char& c : name) c = static_cast<char>(next());
      auto dtype = static_cast<ScalarType>(next());
      std::vector<int64_t> sizes(static_cast<size_t>(next()));
      for (int64_t& s : sizes) s = next();
      Tensor t = r == rank_ ? tensors[k] : kiln::empty(sizes, TensorOptions().dtype(dtype));
      ++k;
      broadcast(t, src, group_);
      if (receiving) full.state[index][name] = r == rank_ ? t.clone() : t;
    }
  }
  if (!receiving) {
    consolidated_.reset();
    return;
  }
  OptimizerStateDict::Group group;
  group.options = options_;
  for (size_t i = 0; i < params_.size(); ++i) group.params.push_back(static_cast<int64_t>(i));
  full.param_groups.push_back(std::move(group));
  consolidated_ = std::move(full);
}

OptimizerStateDict ZeroRedundancyOptimizerBase::state_dict() const {
  KILN_CHECK(consolidated_.has_value(), "ZeroRedundancyOptimizer.state_dict: the optimizer ",
             "state has not been consolidated on this rank (", global_rank(rank_), "): call ",
             "consolidate_state_dict(to) on every rank first, then state_dict() on rank `to`");
  return *consolidated_;
}

void ZeroRedundancyOptimizerBase::load_state_dict(const OptimizerStateDict& state) {
  KILN_CHECK_VALUE(state.param_groups.size() == 1, "ZeroRedundancyOptimizer.load_state_dict: ",
                   "expected the state of one param group, got ", state.param_groups.size());
  KILN_CHECK_VALUE(state.param_groups[0].params.size() == params_.size(),
                   "ZeroRedundancyOptimizer.load_state_dict: the state has ",
                   state.param_groups[0].params.size(), " parameters, this optimizer ",
                   params_.size());
  if (local_ == nullptr) return;
  OptimizerStateDict local;
  OptimizerStateDict::Group group;
  group.options = state.param_groups[0].options;
  for (size_t i = 0; i < params_.size(); ++i) {
    if (owner_[i] != rank_) continue;
    group.params.push_back(local_of_[i]);
    auto it = state.state.find(static_cast<int64_t>(i));
    if (it != state.state.end()) local.state[local_of_[i]] = it->second;
  }
  local.param_groups.push_back(std::move(group));
  local_->load_state_dict(local);
  options_ = local_->param_groups().front().options().values();
}

}  // namespace kiln::distributed::optim
