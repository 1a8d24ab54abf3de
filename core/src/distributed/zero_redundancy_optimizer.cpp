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

#include <algorithm>
#include <numeric>

namespace kiln::distributed::optim {

using kiln::detail::str;
using kiln::optim::OptimizerOptions;
using kiln::optim::OptimizerParamGroup;
using kiln::optim::OptimizerStateDict;

namespace {

void push_string(std::vector<int64_t>& out, const std::string& s) {
  out.push_back(static_cast<int64_t>(s.size()));
  for (char c : s) out.push_back(static_cast<unsigned char>(c));
}

}  // namespace

ZeroRedundancyOptimizerBase::ZeroRedundancyOptimizerBase(std::vector<OptimizerParamGroup> groups,
                                                         std::unique_ptr<OptimizerOptions> defaults,
                                                         Factory make_local, ProcessGroupPtr group)
    : Optimizer("ZeroRedundancyOptimizer", std::move(groups), std::move(defaults)),
      make_local_(std::move(make_local)),
      group_(std::move(group)) {
  KILN_CHECK(make_local_ != nullptr, "ZeroRedundancyOptimizer: the optimizer factory is empty");
  rank_ = get_rank(group_);
  size_ = get_world_size(group_);
  KILN_CHECK(rank_ >= 0, "ZeroRedundancyOptimizer: this process is not a member of the group");
  filled_.assign(static_cast<size_t>(size_), 0);
  for (size_t g = 0; g < param_groups().size(); ++g) partition_group(g);
}

ZeroRedundancyOptimizerBase::~ZeroRedundancyOptimizerBase() = default;

int ZeroRedundancyOptimizerBase::global_rank(int group_rank) const {
  return group_ != nullptr ? group_->ranks()[static_cast<size_t>(group_rank)] : group_rank;
}

void ZeroRedundancyOptimizerBase::partition_group(size_t g) {
  const std::vector<Tensor>& params = param_groups()[g].params();
  size_t first = owner_.size();  // the index of the group's first parameter across groups
  // PyTorch's partition: largest first, each to the rank with the fewest elements so far
  std::vector<size_t> order(params.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return params[a].numel() > params[b].numel(); });
  owner_.resize(first + params.size(), 0);
  for (size_t k : order) {
    auto least = std::min_element(filled_.begin(), filled_.end());
    owner_[first + k] = static_cast<int>(least - filled_.begin());
    *least += params[k].numel();
  }
  std::vector<int64_t> count(static_cast<size_t>(size_), 0);
  for (size_t i = 0; i < first; ++i) ++count[static_cast<size_t>(owner_[i])];
  local_of_.resize(first + params.size(), 0);
  std::vector<Tensor> mine;
  for (size_t k = 0; k < params.size(); ++k) {
    int owner = owner_[first + k];
    local_of_[first + k] = count[static_cast<size_t>(owner)]++;
    if (owner == rank_) mine.push_back(params[k]);
  }
  local_group_.push_back(-1);
  if (mine.empty()) return;
  OptimizerParamGroup part(std::move(mine), param_groups()[g].options().clone());
  if (local_ == nullptr) {
    local_ = make_local_({part});
    KILN_CHECK(local_ != nullptr, "ZeroRedundancyOptimizer: the optimizer factory returned null");
  } else {
    local_->add_param_group(part);
  }
  local_group_[g] = static_cast<int>(local_->param_groups().size()) - 1;
}

void ZeroRedundancyOptimizerBase::add_param_group(const OptimizerParamGroup& param_group) {
  Optimizer::add_param_group(param_group);
  consolidated_.reset();
  partition_group(param_groups().size() - 1);
}

void ZeroRedundancyOptimizerBase::sync_options() {
  for (size_t g = 0; g < local_group_.size(); ++g) {
    if (local_group_[g] < 0) continue;
    local_->param_groups()[static_cast<size_t>(local_group_[g])].set_options(
        param_groups()[g].options().clone());
  }
}

void ZeroRedundancyOptimizerBase::step_group(OptimizerParamGroup& /*group*/) {
  KILN_CHECK(false, "ZeroRedundancyOptimizer: step_group is not used (internal error, please ",
             "report)");
}

std::unique_ptr<kiln::optim::OptimizerParamState> ZeroRedundancyOptimizerBase::make_state() const {
  KILN_CHECK(false, "ZeroRedundancyOptimizer: make_state is not used (internal error, please ",
             "report)");
  return nullptr;
}

Tensor ZeroRedundancyOptimizerBase::step(const LossClosure& closure) {
  Tensor loss;
  sync_options();  // an LR scheduler sets the lr of param_groups()
  if (local_ != nullptr) {
    loss = local_->step(closure);
  } else if (closure) {
    AutoGradMode on(true);
    loss = closure();
  }
  NoGradGuard no_grad;
  std::vector<Tensor> params = parameters();
  std::vector<WorkPtr> works;
  for (size_t i = 0; i < params.size(); ++i) {
    works.push_back(broadcast(params[i], global_rank(owner_[i]), group_, /*async_op=*/true));
  }
  for (auto& w : works) w->wait();
  return loss;
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
      std::vector<size_t> global_of;  // local optimizer index -> index across groups
      for (size_t i = 0; i < owner_.size(); ++i) {
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
  int64_t index = 0;
  for (const OptimizerParamGroup& g : param_groups()) {
    OptimizerStateDict::Group saved;
    saved.options = g.options().values();
    for (size_t k = 0; k < g.params().size(); ++k) saved.params.push_back(index++);
    full.param_groups.push_back(std::move(saved));
  }
  consolidated_ = std::move(full);
}

OptimizerStateDict ZeroRedundancyOptimizerBase::state_dict() const {
  KILN_CHECK(consolidated_.has_value(), "ZeroRedundancyOptimizer.state_dict: the optimizer ",
             "state has not been consolidated on this rank (", global_rank(rank_), "): call ",
             "consolidate_state_dict(to) on every rank first, then state_dict() on rank `to`");
  return *consolidated_;
}

void ZeroRedundancyOptimizerBase::load_state_dict(const OptimizerStateDict& state) {
  const char* op = "ZeroRedundancyOptimizer.load_state_dict: ";
  // every check on every rank, before anything changes: all ranks refuse alike
  const std::vector<OptimizerParamGroup>& groups = param_groups();
  KILN_CHECK_VALUE(state.param_groups.size() == groups.size(), op, "the state has ",
                   state.param_groups.size(), " param group(s), this optimizer ", groups.size(),
                   " (load the state_dict() of a ZeroRedundancyOptimizer or optimizer over the ",
                   "same groups)");
  std::vector<std::unique_ptr<OptimizerOptions>> options;
  for (size_t g = 0; g < groups.size(); ++g) {
    KILN_CHECK_VALUE(state.param_groups[g].params.size() == groups[g].params().size(), op,
                     "param group ", g, " of the state has ", state.param_groups[g].params.size(),
                     " parameter(s), this optimizer's has ", groups[g].params().size());
    options.push_back(groups[g].options().clone());
    options.back()->set_values(state.param_groups[g].options);
    options.back()->validate();
  }
  std::vector<Tensor> params = parameters();
  for (const auto& [index, named] : state.state) {
    KILN_CHECK_VALUE(index >= 0 && static_cast<size_t>(index) < params.size(), op,
                     "the state has an entry for parameter ", index, ", this optimizer has ",
                     params.size(), " parameter(s)");
    const Tensor& p = params[static_cast<size_t>(index)];
    for (const auto& [name, t] : named) {
      if (name == "step") continue;  // the others have their parameter's shape
      KILN_CHECK_VALUE(t.defined() && t.sizes() == p.sizes(), op, "the state's '", name,
                       "' of parameter ", index, " has shape ",
                       t.defined() ? str(t.sizes()) : str("(undefined)"), " (", t.dim(),
                       " dims), but the parameter has shape ", str(p.sizes()), " (", p.dim(),
                       " dims)");
    }
  }
  if (local_ != nullptr) {
    OptimizerStateDict local;
    for (size_t g = 0; g < groups.size(); ++g) {
      if (local_group_[g] < 0) continue;
      OptimizerStateDict::Group part;
      part.options = state.param_groups[g].options;
      local.param_groups.push_back(std::move(part));
    }
    size_t i = 0;
    for (size_t g = 0; g < groups.size(); ++g) {
      for (size_t k = 0; k < groups[g].params().size(); ++k, ++i) {
        if (owner_[i] != rank_) continue;
        auto& part = local.param_groups[static_cast<size_t>(local_group_[g])];
        part.params.push_back(local_of_[i]);
        auto it = state.state.find(static_cast<int64_t>(i));
        if (it != state.state.end()) local.state[local_of_[i]] = it->second;
      }
    }
    local_->load_state_dict(local);
  }
  for (size_t g = 0; g < groups.size(); ++g) param_groups()[g].set_options(std::move(options[g]));
  consolidated_.reset();
}

}  // namespace kiln::distributed::optim
