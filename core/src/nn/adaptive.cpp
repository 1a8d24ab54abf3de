// AdaptiveLogSoftmaxWithLoss, after libtorch's modules/adaptive.cpp: a composite of Linear,
// log_softmax, gather and index_select/index_add, so it runs and differentiates on every device
// that has those. The output is assembled functionally (index_add into zeros) where libtorch
// writes it in place; the numbers are the same.
#include <kiln/nn/modules/adaptive.h>
#include <kiln/ops.h>

#include <algorithm>
#include <cmath>
#include <set>

namespace kiln::nn {

ASMoutput::ASMoutput(Tensor output_, double loss_) : output(std::move(output_)), loss(loss_) {}

AdaptiveLogSoftmaxWithLossImpl::AdaptiveLogSoftmaxWithLossImpl(
    AdaptiveLogSoftmaxWithLossOptions options_)
    : options(std::move(options_)) {
  const std::vector<int64_t>& given = options.cutoffs();
  const int64_t n_classes = options.n_classes();
  KILN_CHECK_VALUE(options.in_features() > 0,
                   "AdaptiveLogSoftmaxWithLoss: in_features must be positive, but got ",
                   options.in_features());
  KILN_CHECK_VALUE(
      !given.empty() && std::is_sorted(given.begin(), given.end()) && given.front() > 0 &&
          given.back() <= n_classes - 1 &&
          std::set<int64_t>(given.begin(), given.end()).size() == given.size(),
      "AdaptiveLogSoftmaxWithLoss: cutoffs should be a sequence of unique, positive integers "
      "sorted in an increasing order, where each value is between 1 and n_classes-1, but got "
      "cutoffs ",
      IntArrayRef(given), " with n_classes=", n_classes);
  KILN_CHECK_VALUE(options.div_value() != 0 && std::isfinite(options.div_value()),
                   "AdaptiveLogSoftmaxWithLoss: div_value should not be equal to 0 (got ",
                   options.div_value(), ")");

  cutoffs = given;
  cutoffs.push_back(n_classes);
  shortlist_size = cutoffs[0];
  n_clusters = static_cast<int64_t>(cutoffs.size()) - 1;
  head_size = shortlist_size + n_clusters;

  head = register_module(
      "head", Linear(LinearOptions(options.in_features(), head_size).bias(options.head_bias())));
  tail = register_module("tail", ModuleList());
  for (int64_t i = 0; i < n_clusters; ++i) {
    const double width = std::floor(static_cast<double>(options.in_features()) /
                                    std::pow(options.div_value(), static_cast<double>(i + 1)));
    KILN_CHECK_VALUE(width >= 0 && width <= static_cast<double>(options.in_features()),
                     "AdaptiveLogSoftmaxWithLoss: tail ", i,
                     " would project in_features=", options.in_features(), " to ", width,
                     " features with div_value=", options.div_value(),
                     "; use a div_value of at least 1");
    const auto hsz = static_cast<int64_t>(width);
    const int64_t osz = cutoffs[static_cast<size_t>(i) + 1] - cutoffs[static_cast<size_t>(i)];
    tail->push_back(Sequential(Linear(LinearOptions(options.in_features(), hsz).bias(false)),
                               Linear(LinearOptions(hsz, osz).bias(false))));
  }
}

void AdaptiveLogSoftmaxWithLossImpl::reset_parameters() {
  head->reset_parameters();
  for (size_t i = 0; i < tail->size(); ++i) {
    SequentialImpl& projection = tail->at<Sequential>(i);
    for (size_t j = 0; j < projection.size(); ++j) projection.at<Linear>(j).reset_parameters();
  }
}

Tensor AdaptiveLogSoftmaxWithLossImpl::cluster_forward(int64_t cluster, const Tensor& input) {
  return tail->at<Sequential>(static_cast<size_t>(cluster)).forward(input);
}

void AdaptiveLogSoftmaxWithLossImpl::check_input(const Tensor& input, const char* method) const {
  KILN_CHECK_VALUE(input.size(-1) == options.in_features(), "AdaptiveLogSoftmaxWithLoss", method,
                   ": expected an input whose last dimension is in_features=",
                   options.in_features(), ", but got input of size ", input.sizes());
  KILN_CHECK_TYPE(input.is_floating_point(), "AdaptiveLogSoftmaxWithLoss", method,
                  ": expected a floating point input, but got ", dtype_name(input.dtype()));
}

ASMoutput AdaptiveLogSoftmaxWithLossImpl::forward(const Tensor& input_, const Tensor& target_) {
  const int64_t targ_dim = target_.dim();
  KILN_CHECK_VALUE(targ_dim == 1 || targ_dim == 0,
                   "AdaptiveLogSoftmaxWithLoss: 0D or 1D target tensor expected, multi-target "
                   "not supported, but got target of size ",
                   target_.sizes());
  if (targ_dim == 1) {
    KILN_CHECK_VALUE(input_.dim() == 2,
                     "AdaptiveLogSoftmaxWithLoss: 1D target tensor expects 2D input tensors, but "
                     "found inputs with size ",
                     input_.sizes());
  } else {
    KILN_CHECK_VALUE(input_.dim() == 1,
                     "AdaptiveLogSoftmaxWithLoss: 0D target tensor expects 1D input tensors, but "
                     "found inputs with size ",
                     input_.sizes());
  }
  KILN_CHECK_TYPE(target_.dtype() == kLong,
                  "AdaptiveLogSoftmaxWithLoss: expected a target of class indices of dtype "
                  "int64, but got ",
                  dtype_name(target_.dtype()));
  check_input(input_, "");
  KILN_CHECK_VALUE(targ_dim == 0 || input_.size(0) == target_.size(0),
                   "AdaptiveLogSoftmaxWithLoss: Input and target should have the same size in "
                   "the batch dimension, but got input of size ",
                   input_.sizes(), " and target of size ", target_.sizes());
  KILN_CHECK_VALUE(input_.device() == target_.device(),
                   "AdaptiveLogSoftmaxWithLoss: expected input and target on the same device, "
                   "but got ",
                   input_.device(), " and ", target_.device());

  const bool is_batched = targ_dim > 0;
  Tensor input = is_batched ? input_ : input_.unsqueeze(0);
  Tensor target = is_batched ? target_ : target_.unsqueeze(0);
  const int64_t batch_size = target.size(0);

  Tensor output = zeros({batch_size}, input.options());
  Tensor gather_inds = target;
  int64_t used_rows = 0;
  for (size_t i = 0; i < cutoffs.size(); ++i) {
    const int64_t low_idx = i == 0 ? 0 : cutoffs[i - 1];
    const int64_t high_idx = cutoffs[i];
    const Tensor target_mask = logical_and(ge(target, low_idx), lt(target, high_idx));
    const Tensor row_indices = nonzero(target_mask).reshape({-1});
    if (row_indices.numel() == 0) continue;
    if (i > 0) {
      const Tensor relative_target = index_select(target, 0, row_indices) - low_idx;
      const Tensor input_subset = index_select(input, 0, row_indices);
      const Tensor cluster_output = cluster_forward(static_cast<int64_t>(i) - 1, input_subset);
      const int64_t cluster_index = shortlist_size + static_cast<int64_t>(i) - 1;
      gather_inds = index_fill(gather_inds, 0, row_indices, cluster_index);
      const Tensor local_logprob =
          log_softmax(cluster_output, 1).gather(1, relative_target.unsqueeze(1));
      output = index_add(output, 0, row_indices, local_logprob.squeeze(1));
    }
    used_rows += row_indices.numel();
  }
  KILN_CHECK_INDEX(used_rows == batch_size,
                   "AdaptiveLogSoftmaxWithLoss: Target values should be in [0, ",
                   options.n_classes() - 1, "], but values in range [",
                   target.min().item<int64_t>(), ", ", target.max().item<int64_t>(),
                   "] were found");

  const Tensor head_logprob = log_softmax(head(input), 1);
  output = output + head_logprob.gather(1, gather_inds.unsqueeze(1)).squeeze(1);
  const double loss = (-output).mean().item<double>();
  if (!is_batched) output = output.squeeze(0);
  return ASMoutput(output, loss);
}

Tensor AdaptiveLogSoftmaxWithLossImpl::full_log_prob(const Tensor& input,
                                                     const Tensor& head_output) {
  const Tensor head_logprob = log_softmax(head_output, 1);
  std::vector<Tensor> parts{head_logprob.narrow(1, 0, shortlist_size)};
  for (int64_t i = 0; i < n_clusters; ++i) {
    const Tensor cluster_logprob = log_softmax(cluster_forward(i, input), 1);
    parts.push_back(cluster_logprob + head_logprob.select(1, shortlist_size + i).unsqueeze(1));
  }
  return cat(parts, 1);
}

Tensor AdaptiveLogSoftmaxWithLossImpl::log_prob(const Tensor& input) {
  KILN_CHECK_VALUE(input.dim() == 2,
                   "AdaptiveLogSoftmaxWithLoss::log_prob: expected a 2D input [N, in_features], "
                   "but got input of size ",
                   input.sizes());
  check_input(input, "::log_prob");
  return full_log_prob(input, head(input));
}

Tensor AdaptiveLogSoftmaxWithLossImpl::predict(const Tensor& input) {
  KILN_CHECK_VALUE(input.dim() == 2,
                   "AdaptiveLogSoftmaxWithLoss::predict: expected a 2D input [N, in_features], "
                   "but got input of size ",
                   input.sizes());
  check_input(input, "::predict");
  const Tensor head_output = head(input);
  Tensor output = argmax(head_output, 1);
  const Tensor not_in_shortlist = ge(output, shortlist_size);
  if (!any(not_in_shortlist).item<bool>()) return output;
  if (all(not_in_shortlist).item<bool>()) return argmax(full_log_prob(input, head_output), 1);
  const Tensor rows = nonzero(not_in_shortlist).reshape({-1});
  const Tensor log_prob =
      full_log_prob(index_select(input, 0, rows), index_select(head_output, 0, rows));
  return masked_scatter(output, not_in_shortlist, argmax(log_prob, 1));
}

void AdaptiveLogSoftmaxWithLossImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::AdaptiveLogSoftmaxWithLoss";
}

}  // namespace kiln::nn
