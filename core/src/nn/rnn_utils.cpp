// Packed sequences (kiln/nn/utils/rnn.h), as PyTorch's torch.nn.utils.rnn and
// aten's _pack_padded_sequence and _pad_packed_sequence. Packing and padding gather rows with
// index_select, so gradients flow back to the padded input and to the packed data.
#include <kiln/nn/utils/rnn.h>
#include <kiln/ops.h>

#include <algorithm>
#include <numeric>
#include <vector>

namespace kiln::nn::utils::rnn {
namespace {

Tensor long_tensor(const std::vector<int64_t>& values, Device device = Device(kCPU)) {
  std::vector<int64_t> copy = values;
  Tensor t = from_blob(copy.data(), {static_cast<int64_t>(copy.size())}, kLong).clone();
  return device.type() == kCPU ? t : t.to(device);
}

std::vector<int64_t> long_values(const Tensor& t) {
  Tensor c = t.to(Device(kCPU)).to(kLong).contiguous();
  return std::vector<int64_t>(c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel());
}

// The sizes of `t` with the first two dimensions replaced by `lead`.
std::vector<int64_t> with_lead(const Tensor& t, std::vector<int64_t> lead, int64_t skip) {
  for (int64_t d = skip; d < t.dim(); ++d) lead.push_back(t.size(d));
  return lead;
}

}  // namespace

Tensor invert_permutation(const Tensor& permutation) {
  if (!permutation.defined()) return {};
  std::vector<int64_t> p = long_values(permutation);
  std::vector<int64_t> inverse(p.size());
  for (size_t i = 0; i < p.size(); ++i) {
    KILN_CHECK_INDEX(p[i] >= 0 && static_cast<size_t>(p[i]) < p.size(),
                     "invert_permutation: ", "expected a permutation of 0..", p.size() - 1,
                     ", but got ", p[i]);
    inverse[p[i]] = static_cast<int64_t>(i);
  }
  return long_tensor(inverse, permutation.device());
}

PackedSequence::PackedSequence(Tensor data, Tensor batch_sizes, Tensor sorted_indices,
                               Tensor unsorted_indices)
    : data_(std::move(data)),
      batch_sizes_(std::move(batch_sizes)),
      sorted_indices_(std::move(sorted_indices)),
      unsorted_indices_(std::move(unsorted_indices)) {
  if (!unsorted_indices_.defined()) unsorted_indices_ = invert_permutation(sorted_indices_);
}

PackedSequence PackedSequence::to(const TensorOptions& options) const {
  auto move = [&](const Tensor& t, bool keep_dtype) {
    if (!t.defined()) return t;
    TensorOptions o = keep_dtype ? TensorOptions().dtype(t.dtype()) : TensorOptions(t.dtype());
    if (options.device_opt()) o = o.device(*options.device_opt());
    if (!keep_dtype && options.dtype_opt()) o = o.dtype(*options.dtype_opt());
    return t.to(o);
  };
  return PackedSequence(move(data_, false), batch_sizes_, move(sorted_indices_, true),
                        move(unsorted_indices_, true));
}

PackedSequence PackedSequence::cuda() const { return to(TensorOptions(Device("cuda"))); }
PackedSequence PackedSequence::cpu() const { return to(TensorOptions(Device(kCPU))); }
bool PackedSequence::is_cuda() const {
  return data_.device().type() == device_type_from_name("cuda");
}

PackedSequence pack_padded_sequence(Tensor input, Tensor lengths, bool batch_first,
                                    bool enforce_sorted) {
  KILN_CHECK_VALUE(lengths.defined() && lengths.dim() == 1 && lengths.device().type() == kCPU,
                   "pack_padded_sequence: 'lengths' argument should be a 1D CPU int64 tensor, ",
                   "but got ", lengths.defined() ? lengths.dim() : 0, "D ",
                   lengths.defined() ? lengths.device().str() : "undefined", " ",
                   lengths.defined() ? dtype_name(lengths.dtype()) : "", " tensor");
  KILN_CHECK_VALUE(input.dim() >= 2, "pack_padded_sequence: expected input of at least 2 ",
                   "dimensions ([T, B, *] or [B, T, *] with batch_first), but got ", input.sizes());
  std::vector<int64_t> len = long_values(lengths);
  const int64_t batch = input.size(batch_first ? 0 : 1);
  KILN_CHECK_VALUE(static_cast<int64_t>(len.size()) == batch, "pack_padded_sequence: Expected ",
                   "`len(lengths)` to be equal to batch_size, but got ", len.size(),
                   " (batch_size=", batch, ")");
  KILN_CHECK_VALUE(input.numel() > 0, "pack_padded_sequence: Cannot pack empty tensors (input ",
                   "of size ", input.sizes(), ")");
  Tensor sorted_indices;
  if (!enforce_sorted) {
    std::vector<int64_t> order(len.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t a, int64_t b) { return len[a] > len[b]; });
    std::vector<int64_t> sorted(len.size());
    for (size_t i = 0; i < order.size(); ++i) sorted[i] = len[order[i]];
    len = sorted;
    sorted_indices = long_tensor(order, input.device());
    input = input.index_select(batch_first ? 0 : 1, sorted_indices);
  } else {
    for (size_t i = 1; i < len.size(); ++i) {
      KILN_CHECK_VALUE(len[i] <= len[i - 1], "pack_padded_sequence: `lengths` array must be ",
                       "sorted in decreasing order when `enforce_sorted` is True. You can pass ",
                       "`enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to ",
                       "sidestep this requirement if you do not need ONNX exportability.");
    }
  }
  KILN_CHECK_VALUE(len.back() > 0, "pack_padded_sequence: Length of all samples has to be ",
                   "greater than 0, but found an element in 'lengths' that is <= 0");
  Tensor x = batch_first ? input.transpose(0, 1) : input;
  const int64_t steps = x.size(0);
  KILN_CHECK_VALUE(len[0] <= steps, "pack_padded_sequence: the longest length (", len[0],
                   ") exceeds the input's ", steps, " steps (input of size ", input.sizes(), ")");
  std::vector<int64_t> batch_sizes, rows;
  for (int64_t t = 0; t < len[0]; ++t) {
    int64_t b = 0;
    while (b < batch && len[b] > t) rows.push_back(t * batch + b++);
    batch_sizes.push_back(b);
  }
  Tensor data = x.reshape(with_lead(x, {steps * batch}, 2))
                    .index_select(0, long_tensor(rows, input.device()));
  return PackedSequence(data, long_tensor(batch_sizes), sorted_indices, Tensor());
}

std::tuple<Tensor, Tensor> pad_packed_sequence(const PackedSequence& sequence, bool batch_first,
                                               double padding_value,
                                               std::optional<int64_t> total_length) {
  const Tensor& data = sequence.data();
  const Tensor& sizes_t = sequence.batch_sizes();
  KILN_CHECK_VALUE(sizes_t.defined() && sizes_t.dim() == 1 && sizes_t.dtype() == kLong &&
                       sizes_t.device().type() == kCPU && sizes_t.numel() > 0,
                   "pad_packed_sequence: expected batch_sizes as a non-empty 1-D CPU int64 ",
                   "tensor");
  std::vector<int64_t> sizes = long_values(sizes_t);
  const int64_t batch = sizes[0];
  int64_t steps = static_cast<int64_t>(sizes.size());
  if (total_length) {
    KILN_CHECK_VALUE(*total_length >= steps, "pad_packed_sequence: Expected total_length to be ",
                     "at least the length of the longest sequence in input, but got ",
                     "total_length=", *total_length, " and max sequence length being ", steps);
    steps = *total_length;
  }
  const int64_t rows = data.size(0);
  std::vector<int64_t> index, lengths(batch, 0);
  index.reserve(steps * batch);
  int64_t offset = 0;
  for (int64_t t = 0; t < steps; ++t) {
    const int64_t b_t = t < static_cast<int64_t>(sizes.size()) ? sizes[t] : 0;
    for (int64_t b = 0; b < batch; ++b) index.push_back(b < b_t ? offset + b : rows);
    for (int64_t b = 0; b < b_t; ++b) ++lengths[b];
    offset += b_t;
  }
  KILN_CHECK_VALUE(offset == rows, "pad_packed_sequence: data has ", rows, " rows, but ",
                   "batch_sizes sum to ", offset);
  Tensor pad_row = full(with_lead(data, {1}, 1), padding_value,
                        TensorOptions(data.dtype()).device(data.device()));
  Tensor padded = cat({data, pad_row}, 0)
                      .index_select(0, long_tensor(index, data.device()))
                      .view(with_lead(data, {steps, batch}, 1));
  if (batch_first) padded = padded.transpose(0, 1);
  Tensor length_t = long_tensor(lengths);
  if (sequence.unsorted_indices().defined()) {
    padded = padded.index_select(batch_first ? 0 : 1, sequence.unsorted_indices());
    length_t = length_t.index_select(0, sequence.unsorted_indices().to(Device(kCPU)));
  }
  return {padded, length_t};
}

Tensor pad_sequence(TensorList sequences, bool batch_first, double padding_value) {
  KILN_CHECK_VALUE(!sequences.empty(), "pad_sequence: received an empty list of sequences");
  int64_t longest = 0;
  for (size_t i = 0; i < sequences.size(); ++i) {
    const Tensor& s = sequences[i];
    KILN_CHECK_VALUE(s.dim() >= 1 && s.dim() == sequences[0].dim() &&
                         s.sizes().slice(1) == sequences[0].sizes().slice(1),
                     "pad_sequence: expected every sequence to be [L, *] with the trailing ",
                     "sizes of the first, ", sequences[0].sizes(), ", but sequence ", i,
                     " has size ", s.sizes());
    longest = std::max(longest, s.size(0));
  }
  std::vector<Tensor> padded;
  for (const Tensor& s : sequences) {
    const int64_t missing = longest - s.size(0);
    if (missing == 0) {
      padded.push_back(s);
      continue;
    }
    Tensor pad = full(with_lead(s, {missing}, 1), padding_value,
                      TensorOptions(s.dtype()).device(s.device()));
    padded.push_back(cat({s, pad}, 0));
  }
  return stack(padded, batch_first ? 0 : 1);
}

PackedSequence pack_sequence(TensorList sequences, bool enforce_sorted) {
  std::vector<int64_t> lengths;
  for (const Tensor& s : sequences) lengths.push_back(s.dim() > 0 ? s.size(0) : 0);
  return pack_padded_sequence(pad_sequence(sequences), long_tensor(lengths), false, enforce_sorted);
}

}  // namespace kiln::nn::utils::rnn
