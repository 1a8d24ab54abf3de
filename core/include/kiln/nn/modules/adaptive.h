// AdaptiveLogSoftmaxWithLoss, as libtorch's (Grave et al., "Efficient softmax approximation for
// GPUs"): a head over the most frequent classes and one cluster token per tail, each tail a
// low-rank projection followed by its own log_softmax.
#pragma once

#include <kiln/nn/module.h>
#include <kiln/nn/modules/container.h>
#include <kiln/nn/modules/linear.h>
#include <kiln/nn/options.h>

#include <utility>
#include <vector>

namespace kiln::nn {

struct AdaptiveLogSoftmaxWithLossOptions {
  AdaptiveLogSoftmaxWithLossOptions(int64_t in_features, int64_t n_classes,
                                    std::vector<int64_t> cutoffs)
      : in_features_(in_features), n_classes_(n_classes), cutoffs_(std::move(cutoffs)) {}
  KILN_ARG(int64_t, in_features);
  KILN_ARG(int64_t, n_classes);
  // Unique, increasing, each in [1, n_classes - 1]: classes [0, cutoffs[0]) are in the head,
  // [cutoffs[i], cutoffs[i + 1]) in tail i (the last ending at n_classes).
  KILN_ARG(std::vector<int64_t>, cutoffs);
  // Tail i projects in_features to floor(in_features / div_value^(i + 1)) first.
  KILN_ARG(double, div_value) = 4.;
  KILN_ARG(bool, head_bias) = false;
};

// forward's result, as libtorch's: the log-probability of each target and the mean negative
// of it (a number: take -output.mean() to differentiate).
struct KILN_API ASMoutput {
  ASMoutput(Tensor output_, double loss_);
  Tensor output;
  double loss;
};

// input [N, in_features] (or [in_features] with a 0-dim target), target [N] (or []) of class
// indices in [0, n_classes). Parameters head.weight [shortlist + n_clusters, in_features]
// (head.bias when head_bias), tail.i.0.weight [hsz_i, in_features], tail.i.1.weight
// [osz_i, hsz_i]; all initialised as Linear's.
class KILN_API AdaptiveLogSoftmaxWithLossImpl : public Module {
 public:
  AdaptiveLogSoftmaxWithLossImpl(int64_t in_features, int64_t n_classes,
                                 std::vector<int64_t> cutoffs)
      : AdaptiveLogSoftmaxWithLossImpl(AdaptiveLogSoftmaxWithLossOptions(in_features, n_classes,
                                                                         std::move(cutoffs))) {}
  explicit AdaptiveLogSoftmaxWithLossImpl(AdaptiveLogSoftmaxWithLossOptions options);

  ASMoutput forward(const Tensor& input, const Tensor& target);
  // Re-initialises head and every tail Linear.
  void reset_parameters();
  // log-probabilities of every class: [N, n_classes].
  Tensor log_prob(const Tensor& input);
  // The most likely class of each row: int64 [N]; equals log_prob(input).argmax(1) but computes
  // the tails only for rows whose head's best entry is a cluster.
  Tensor predict(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;

  AdaptiveLogSoftmaxWithLossOptions options;
  // options.cutoffs() followed by n_classes.
  std::vector<int64_t> cutoffs;
  int64_t shortlist_size = 0;
  int64_t n_clusters = 0;
  int64_t head_size = 0;
  Linear head = nullptr;
  ModuleList tail = nullptr;

 private:
  Tensor full_log_prob(const Tensor& input, const Tensor& head_output);
  Tensor cluster_forward(int64_t cluster, const Tensor& input);
  void check_input(const Tensor& input, const char* method) const;
};
KILN_MODULE(AdaptiveLogSoftmaxWithLoss);

}  // namespace kiln::nn
