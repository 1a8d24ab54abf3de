// Packed sequences, as libtorch's torch::nn::utils::rnn: a batch of sequences of different
// lengths stored without padding, which the recurrent layers run over without computing the
// padding (LSTM::forward_with_packed_input).
//
//   Tensor padded = pad_sequence({a, b, c});                         // [T_max, 3, *]
//   PackedSequence packed = pack_padded_sequence(padded, lengths, false, false);
//   auto [output, state] = lstm->forward_with_packed_input(packed);
//   auto [out, out_lengths] = pad_packed_sequence(output);             // [T_max, 3, H], [3]
//
// A PackedSequence holds data [N, *] (the sequences' steps, step by step: all first elements, then
// all second ones, ...), batch_sizes (a CPU int64 tensor [T_max]: how many sequences have a step
// t), and, when the batch was sorted by length on packing, sorted_indices (the original index of
// each sorted sequence) and unsorted_indices (its inverse).
#pragma once

#include <kiln/export.h>
#include <kiln/tensor.h>

#include <optional>
#include <tuple>

namespace kiln::nn::utils::rnn {

// The inverse of a permutation [n] (undefined for an undefined one).
KILN_API Tensor invert_permutation(const Tensor& permutation);

class KILN_API PackedSequence {
 public:
  // unsorted_indices, when undefined, is computed from sorted_indices.
  explicit PackedSequence(Tensor data, Tensor batch_sizes, Tensor sorted_indices = {},
                          Tensor unsorted_indices = {});

  const Tensor& data() const { return data_; }
  const Tensor& batch_sizes() const { return batch_sizes_; }
  const Tensor& sorted_indices() const { return sorted_indices_; }
  const Tensor& unsorted_indices() const { return unsorted_indices_; }

  // data and the indices moved or converted (batch_sizes stays on the CPU, as PyTorch's).
  PackedSequence to(const TensorOptions& options) const;
  PackedSequence cuda() const;
  PackedSequence cpu() const;
  bool is_cuda() const;
  bool is_pinned() const { return false; }

 private:
  Tensor data_, batch_sizes_, sorted_indices_, unsorted_indices_;
};

// Packs input [T, B, *] ([B, T, *] with batch_first) holding B sequences of `lengths` (a CPU
// int64 tensor [B], or one that converts to int64). With enforce_sorted the lengths must be in
// decreasing order; otherwise the batch is sorted and the permutation kept in the result.
KILN_API PackedSequence pack_padded_sequence(Tensor input, Tensor lengths, bool batch_first = false,
                                             bool enforce_sorted = true);

// The inverse of pack_padded_sequence: (padded [T, B, *] or [B, T, *], lengths as a CPU int64
// tensor [B]), in the original batch order. T is the longest length, or total_length when
// given (at least the longest length); the padding reads padding_value.
KILN_API std::tuple<Tensor, Tensor> pad_packed_sequence(
    const PackedSequence& sequence, bool batch_first = false, double padding_value = 0.0,
    std::optional<int64_t> total_length = std::nullopt);

// Stacks sequences [L_i, *] into [L_max, B, *] ([B, L_max, *] with batch_first), padded with
// padding_value.
KILN_API Tensor pad_sequence(TensorList sequences, bool batch_first = false,
                             double padding_value = 0);

// pack_padded_sequence(pad_sequence(sequences), their lengths, false, enforce_sorted).
KILN_API PackedSequence pack_sequence(TensorList sequences, bool enforce_sorted = true);

}  // namespace kiln::nn::utils::rnn
