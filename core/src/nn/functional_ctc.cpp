// kiln::nn::functional::ctc_loss: connectionist temporal classification (Graves et al.,
// "Connectionist Temporal Classification: Labelling Unsegmented Sequence Data with Recurrent
// Neural Networks"), a composite: the forward recursion over time runs as kiln operators on
// [N, 2S+1] tensors, so autograd differentiates it and it runs on every device.
#include <kiln/nn/functional.h>

#include "loss_util.h"

#include <algorithm>
#include <limits>
#include <vector>

namespace kiln::nn::functional {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// Lengths (an integral tensor of `count` values) on the host.
std::vector<int64_t> host_lengths(const char* name, const Tensor& lengths, int64_t count) {
  KILN_CHECK_TYPE(!lengths.is_floating_point() && lengths.dtype() != kBool, "ctc_loss: ", name,
                  " must be integral, but got ", dtype_name(lengths.dtype()));
  KILN_CHECK_VALUE(lengths.dim() <= 1 && lengths.numel() == count, "ctc_loss: ", name,
                   " must have one value per batch element (", count, "), but got size ",
                   lengths.sizes());
  Tensor host = lengths.to(kCPU).to(kLong).contiguous().reshape({-1});
  const int64_t* p = host.data_ptr<int64_t>();
  std::vector<int64_t> values(p, p + count);
  for (int64_t v : values) {
    KILN_CHECK_VALUE(v >= 0, "ctc_loss: ", name, " must not be negative, but got ", v);
  }
  return values;
}

// log(exp(a) + exp(b) + exp(c)) elementwise, -inf where all are -inf, with finite gradients
// everywhere (the shift m is a constant of the formula, so it is detached).
Tensor logaddexp3(const Tensor& a, const Tensor& b, const Tensor& c) {
  Tensor m = maximum(maximum(a, b), c).detach();
  Tensor none = eq(m, kNegInf);
  m = where(none, 0.0, m);
  Tensor total = exp(a - m) + exp(b - m) + exp(c - m);
  return where(none, kNegInf, m + log(where(none, 1.0, total)));
}

// labels [N, S] shifted right by one along dim 1, the first column made different from the
// labels' own first column (so that it never counts as a repeat).
Tensor shift_labels(const Tensor& labels) {
  if (labels.size(1) == 0) return labels;
  Tensor first = labels.narrow(1, 0, 1);
  return cat({first + 1, labels.narrow(1, 0, labels.size(1) - 1)}, 1);
}

// x shifted right by `by` along dim 1, -inf filling the first columns.
Tensor shift_right(const Tensor& x, int64_t by) {
  const int64_t width = x.size(1);
  if (by >= width) return full_like(x, kNegInf);
  return cat({full_like(x.narrow(1, 0, by), kNegInf), x.narrow(1, 0, width - by)}, 1);
}

// x [N, S] with `fill` before, between and after its columns: [N, 2S+1].
Tensor interleave(const Tensor& x, const Scalar& fill) {
  const int64_t batch = x.size(0), longest = x.size(1);
  Tensor fills = full({batch, longest + 1}, fill, x.options());
  if (longest == 0) return fills;
  Tensor pairs = stack({fills.narrow(1, 0, longest), x}, 2).reshape({batch, 2 * longest});
  return cat({pairs, fills.narrow(1, longest, 1)}, 1);
}

// The targets of each sample as [N, S] (S the longest target length), blank past each length,
// from padded [N, >= S] or concatenated [sum of lengths] targets.
Tensor padded_targets(const Tensor& targets, const std::vector<int64_t>& lengths, int64_t blank) {
  const int64_t batch = static_cast<int64_t>(lengths.size());
  const int64_t longest = batch ? *std::max_element(lengths.begin(), lengths.end()) : 0;
  if (targets.dim() == 2) {
    KILN_CHECK_VALUE(targets.size(0) == batch && targets.size(1) >= longest,
                     "ctc_loss: ", "Expected tensor to have size at least ", longest,
                     " at dimension 1 ", "(padded targets of size ", targets.sizes(), " for ",
                     batch, " targets of lengths up to ", longest, ")");
  } else {
    int64_t total = 0;
    for (int64_t length : lengths) {
      KILN_CHECK_VALUE(!__builtin_add_overflow(total, length, &total), "ctc_loss: the sum of ",
                       "target_lengths overflows int64");
    }
    KILN_CHECK_VALUE(targets.dim() == 1 && targets.numel() == total, "ctc_loss: expected ",
                     "concatenated targets of size [", total, "] (the sum of target_lengths) or ",
                     "padded targets [N, S], but got targets of size ", targets.sizes());
  }
  int64_t cells = 0;
  KILN_CHECK_VALUE(!__builtin_mul_overflow(batch, longest, &cells), "ctc_loss: ", batch,
                   " targets padded to length ", longest, " overflow int64");
  std::vector<int64_t> index(static_cast<size_t>(cells), 0);
  std::vector<uint8_t> inside(index.size(), 0);
  int64_t offset = 0;
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t k = 0; k < lengths[n]; ++k) {
      size_t at = static_cast<size_t>(n * longest + k);
      index[at] = targets.dim() == 2 ? n * targets.size(1) + k : offset + k;
      inside[at] = 1;
    }
    offset += lengths[n];
  }
  Device device = targets.device();
  Tensor flat_index = from_blob(index.data(), {cells}, kLong).to(device, /*copy=*/true);
  Tensor mask = from_blob(inside.data(), {batch, longest}, kBool).to(device, /*copy=*/true);
  Tensor picked = targets.reshape({-1}).to(kLong).index_select(0, flat_index);
  return where(mask, picked.reshape({batch, longest}), blank);
}

using CtcLossOp = Operator<Tensor(const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                                  int64_t, Reduction, bool)>;
Tensor ctc_loss_backend(const CtcLossOp&, const Tensor& log_probs_in, const Tensor& targets_in,
                        const Tensor& input_lengths, const Tensor& target_lengths, int64_t blank,
                        Reduction reduction, bool zero_infinity) {
  detail::check_floating("ctc_loss", log_probs_in);
  KILN_CHECK_VALUE(log_probs_in.dim() == 3 || log_probs_in.dim() == 2, "ctc_loss: expected ",
                   "log_probs of size [T, N, C] (or [T, C] unbatched), but got ",
                   log_probs_in.sizes());
  const bool unbatched = log_probs_in.dim() == 2;
  Tensor log_probs = unbatched ? log_probs_in.unsqueeze(1) : log_probs_in;
  Tensor targets = unbatched ? targets_in.unsqueeze(0) : targets_in;
  const int64_t steps = log_probs.size(0), batch = log_probs.size(1), classes = log_probs.size(2);
  KILN_CHECK_VALUE(blank >= 0 && blank < classes, "ctc_loss: blank must be in the label range ",
                   "[0, ", classes, "), but got ", blank);
  KILN_CHECK_TYPE(!targets.is_floating_point(), "ctc_loss: targets must be integral, but got ",
                  dtype_name(targets.dtype()));
  std::vector<int64_t> in_len = host_lengths("input_lengths", input_lengths, batch);
  std::vector<int64_t> tg_len = host_lengths("target_lengths", target_lengths, batch);
  for (int64_t v : in_len) {
    KILN_CHECK_VALUE(v <= steps, "ctc_loss: expected input_lengths to have values at most ", steps,
                     " (log_probs' time steps), but got ", v);
  }
  Tensor labels = padded_targets(targets, tg_len, blank);           // [N, S]
  const int64_t longest = labels.size(1), width = 2 * longest + 1;  // longest <= numel(targets)
  if (labels.numel() > 0) {
    int64_t low = min(labels).item<int64_t>(), high = max(labels).item<int64_t>();
    KILN_CHECK_INDEX(low >= 0 && high < classes, "ctc_loss: target ", low < 0 ? low : high,
                     " is out of range: expected labels in [0, ", classes, ")");
  }
  // extended labels: blank, l1, blank, l2, ..., blank   [N, 2S+1]; a label may be reached from
  // two back unless it repeats the label before it (blanks never are)
  Tensor extended = interleave(labels, blank);
  Tensor repeats = ne(labels, shift_labels(labels));
  Tensor skip = interleave(repeats, false);
  Device device = log_probs.device();
  Tensor in_len_t = from_blob(in_len.data(), {batch, 1}, kLong).to(device, /*copy=*/true);
  Tensor tg_len_t = from_blob(tg_len.data(), {batch, 1}, kLong).to(device, /*copy=*/true);
  Tensor alpha = full({batch, width}, kNegInf, log_probs.options());
  if (steps > 0) {
    Tensor emit = gather(log_probs, 2, extended.unsqueeze(0).expand({steps, batch, width}));
    Tensor start = lt(arange(width, labels.options()).unsqueeze(0), 2);
    alpha = where(start, emit.select(0, 0), kNegInf);
    for (int64_t t = 1; t < steps; ++t) {
      Tensor from_two = where(skip, shift_right(alpha, 2), kNegInf);
      Tensor next = emit.select(0, t) + logaddexp3(alpha, shift_right(alpha, 1), from_two);
      alpha = where(gt(in_len_t, t), next, alpha);  // a finished sample keeps its last alpha
    }
  }
  // an empty input sequence aligns with nothing
  alpha = where(eq(in_len_t, 0), kNegInf, alpha);
  Tensor last = gather(alpha, 1, 2 * tg_len_t);
  Tensor before = where(gt(tg_len_t, 0), gather(alpha, 1, clamp_min(2 * tg_len_t - 1, 0)), kNegInf);
  Tensor loss = -logaddexp3(last, before, full_like(last, kNegInf)).squeeze(1);  // [N]
  if (zero_infinity) loss = where(eq(loss, std::numeric_limits<double>::infinity()), 0.0, loss);
  if (reduction == Reduction::Mean) {
    return mean(loss / clamp_min(tg_len_t.squeeze(1), 1).to(loss.dtype()));
  }
  if (unbatched) loss = loss.squeeze(0);
  return detail::reduce(loss, reduction);
}
CtcLossOp ctc_loss_op("ctc_loss",
                      "ctc_loss(Tensor log_probs, Tensor targets, Tensor input_lengths, Tensor "
                      "target_lengths, int blank=0, int reduction=Mean, bool zero_infinity=False) "
                      "-> Tensor",
                      ctc_loss_backend, false);

}  // namespace

Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                const Tensor& target_lengths, int64_t blank, Reduction reduction,
                bool zero_infinity) {
  return ctc_loss_op(log_probs, targets, input_lengths, target_lengths, blank, reduction,
                     zero_infinity);
}

Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, IntArrayRef input_lengths,
                IntArrayRef target_lengths, int64_t blank, Reduction reduction,
                bool zero_infinity) {
  std::vector<int64_t> in(input_lengths.begin(), input_lengths.end());
  std::vector<int64_t> tg(target_lengths.begin(), target_lengths.end());
  const int64_t n_in = static_cast<int64_t>(in.size()), n_tg = static_cast<int64_t>(tg.size());
  return ctc_loss(log_probs, targets, from_blob(in.data(), {n_in}, kLong).clone(),
                  from_blob(tg.data(), {n_tg}, kLong).clone(), blank, reduction, zero_infinity);
}

Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                const Tensor& target_lengths, const CTCLossFuncOptions& options) {
  return ctc_loss(log_probs, targets, input_lengths, target_lengths, options.blank(),
                  options.reduction(), options.zero_infinity());
}

}  // namespace kiln::nn::functional
