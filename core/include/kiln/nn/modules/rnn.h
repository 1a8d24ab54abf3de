// Recurrent layers and cells, as libtorch's torch/nn/modules/rnn.h: RNN (tanh or relu), LSTM
// (with an optional projection) and GRU, stacked (num_layers), optionally bidirectional, over
// padded input or a PackedSequence; and RNNCell, LSTMCell and GRUCell, one step each.
//
//   kiln::nn::LSTM lstm(kiln::nn::LSTMOptions(10, 20).num_layers(2));
//   auto [output, state] = lstm(x);            // x [T, B, 10] -> output [T, B, 20]
//   auto [h, c] = state;                       // [2, B, 20] each
//
// Parameters are PyTorch's, by name and shape, for layer k and direction suffix "" or "_reverse"
// (G = 4 for LSTM, 3 for GRU, 1 for RNN; P = proj_size or hidden_size):
//   weight_ih_l{k}{suffix} [G*hidden, in], weight_hh_l{k}{suffix} [G*hidden, P],
//   bias_ih_l{k}{suffix} [G*hidden], bias_hh_l{k}{suffix} [G*hidden] (when bias),
//   weight_hr_l{k}{suffix} [P, hidden] (LSTM with proj_size > 0),
// where `in` is input_size for layer 0 and P times the directions after; all initialised
// uniform in +-1/sqrt(hidden_size), as PyTorch. The cells have weight_ih, weight_hh, bias_ih,
// bias_hh. Layers print as libtorch's: kiln::nn::LSTM(input_size=10, hidden_size=20,
// num_layers=2, bias=true, batch_first=false, dropout=0, bidirectional=false).
#pragma once

#include <kiln/nn/module.h>
#include <kiln/nn/options/rnn.h>
#include <kiln/nn/utils/rnn.h>

#include <optional>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

namespace kiln::nn {

namespace detail {

// What RNN, LSTM and GRU share: the parameters, their checks and printing.
class KILN_API RNNImplBase : public Module {
 public:
  explicit RNNImplBase(const RNNOptionsBase& options);

  // reset_parameters(), as libtorch's reset after construction.
  void reset() { reset_parameters(); }
  // Every parameter uniform in +-1/sqrt(hidden_size).
  void reset_parameters();
  // A no-op: kiln's layers read their parameters where they are (libtorch packs them for cuDNN).
  void flatten_parameters() {}
  // The parameters of every layer and direction, in the order of the operators' `params`.
  std::vector<Tensor> all_weights() const;
  void pretty_print(std::ostream& stream) const override;

  RNNOptionsBase options_base;

 protected:
  // "RNN", "LSTM" or "GRU", for messages and printing.
  const char* kind() const;
  // Checks input [T, B, I] (or [T, I] unbatched, [N, I] packed: batch_sizes defined).
  void check_input(const Tensor& input, const Tensor& batch_sizes) const;
  // [layers * directions, batch, out] for this input (see check_input).
  std::vector<int64_t> expected_hidden_size(const Tensor& input, const Tensor& batch_sizes,
                                            int64_t features) const;
  // Checks hx against `expected`; `what` names it ("hidden", "hidden[0]").
  void check_hidden_size(const Tensor& hx, const std::vector<int64_t>& expected,
                         const char* what) const;
  // hx with its batch dimension permuted (undefined permutation: hx).
  static Tensor permute_hidden(const Tensor& hx, const Tensor& permutation);

  std::vector<std::string> flat_weights_names_;
  std::vector<std::vector<std::string>> all_weights_;
  std::vector<Tensor> flat_weights_;
};

}  // namespace detail

// An Elman RNN: h_t = tanh (or relu)(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh).
class KILN_API RNNImpl : public detail::RNNImplBase {
 public:
  RNNImpl(int64_t input_size, int64_t hidden_size) : RNNImpl(RNNOptions(input_size, hidden_size)) {}
  explicit RNNImpl(const RNNOptions& options);

  // input [T, B, I] ([B, T, I] with batch_first, or [T, I] unbatched), hx [L*D, B, H] (zeros
  // when undefined) -> (output [T, B, D*H], h_n [L*D, B, H]).
  std::tuple<Tensor, Tensor> forward(const Tensor& input, Tensor hx = {});
  // The same over a PackedSequence; the output is packed as the input.
  std::tuple<utils::rnn::PackedSequence, Tensor> forward_with_packed_input(
      const utils::rnn::PackedSequence& packed_input, Tensor hx = {});

  RNNOptions options;

 private:
  std::tuple<Tensor, Tensor> forward_helper(const Tensor& input, const Tensor& batch_sizes,
                                            const Tensor& sorted_indices, Tensor hx);
};
KILN_MODULE(RNN);

// A long short-term memory layer (Hochreiter and Schmidhuber 1997) with PyTorch's gates.
class KILN_API LSTMImpl : public detail::RNNImplBase {
 public:
  LSTMImpl(int64_t input_size, int64_t hidden_size)
      : LSTMImpl(LSTMOptions(input_size, hidden_size)) {}
  explicit LSTMImpl(const LSTMOptions& options);

  // input as RNN's, hx (h_0 [L*D, B, P], c_0 [L*D, B, H]) (zeros when absent) ->
  // (output [T, B, D*P], (h_n, c_n)).
  std::tuple<Tensor, std::tuple<Tensor, Tensor>> forward(
      const Tensor& input, std::optional<std::tuple<Tensor, Tensor>> hx_opt = {});
  // The same over a PackedSequence.
  std::tuple<utils::rnn::PackedSequence, std::tuple<Tensor, Tensor>> forward_with_packed_input(
      const utils::rnn::PackedSequence& packed_input,
      std::optional<std::tuple<Tensor, Tensor>> hx_opt = {});

  LSTMOptions options;

 private:
  std::tuple<Tensor, std::tuple<Tensor, Tensor>> forward_helper(
      const Tensor& input, const Tensor& batch_sizes, const Tensor& sorted_indices,
      std::optional<std::tuple<Tensor, Tensor>> hx_opt);
};
KILN_MODULE(LSTM);

// A gated recurrent unit layer (Cho et al. 2014) with PyTorch's gates.
class KILN_API GRUImpl : public detail::RNNImplBase {
 public:
  GRUImpl(int64_t input_size, int64_t hidden_size) : GRUImpl(GRUOptions(input_size, hidden_size)) {}
  explicit GRUImpl(const GRUOptions& options);

  // As RNN's forward.
  std::tuple<Tensor, Tensor> forward(const Tensor& input, Tensor hx = {});
  std::tuple<utils::rnn::PackedSequence, Tensor> forward_with_packed_input(
      const utils::rnn::PackedSequence& packed_input, Tensor hx = {});

  GRUOptions options;

 private:
  std::tuple<Tensor, Tensor> forward_helper(const Tensor& input, const Tensor& batch_sizes,
                                            const Tensor& sorted_indices, Tensor hx);
};
KILN_MODULE(GRU);

namespace detail {

// What the cells share: weight_ih, weight_hh, bias_ih, bias_hh and printing.
class KILN_API RNNCellImplBase : public Module {
 public:
  explicit RNNCellImplBase(const RNNCellOptionsBase& options);

  // reset_parameters(), as libtorch's reset after construction.
  void reset() { reset_parameters(); }
  // Every parameter uniform in +-1/sqrt(hidden_size).
  void reset_parameters();
  // kiln::nn::LSTMCell(10, 20), with ", bias=false" and ", nonlinearity=kReLU" when set.
  void pretty_print(std::ostream& stream) const override;

  RNNCellOptionsBase options_base;
  Tensor weight_ih, weight_hh, bias_ih, bias_hh;

 protected:
  const char* kind() const;
  // Checks a 1-D or 2-D input or hidden state.
  void check_forward_input(const Tensor& input, const char* name) const;
};

}  // namespace detail

// One step of an Elman RNN: input [B, I] (or [I]), hx [B, H] (zeros when undefined) -> [B, H].
class KILN_API RNNCellImpl : public detail::RNNCellImplBase {
 public:
  RNNCellImpl(int64_t input_size, int64_t hidden_size)
      : RNNCellImpl(RNNCellOptions(input_size, hidden_size)) {}
  explicit RNNCellImpl(const RNNCellOptions& options);
  Tensor forward(const Tensor& input, Tensor hx = {});

  RNNCellOptions options;
};
KILN_MODULE(RNNCell);

// One LSTM step: input [B, I] (or [I]), (h [B, H], c [B, H]) (zeros when absent) -> (h', c').
class KILN_API LSTMCellImpl : public detail::RNNCellImplBase {
 public:
  LSTMCellImpl(int64_t input_size, int64_t hidden_size)
      : LSTMCellImpl(LSTMCellOptions(input_size, hidden_size)) {}
  explicit LSTMCellImpl(const LSTMCellOptions& options);
  std::tuple<Tensor, Tensor> forward(const Tensor& input,
                                     std::optional<std::tuple<Tensor, Tensor>> hx_opt = {});

  LSTMCellOptions options;
};
KILN_MODULE(LSTMCell);

// One GRU step: input [B, I] (or [I]), hx [B, H] (zeros when undefined) -> [B, H].
class KILN_API GRUCellImpl : public detail::RNNCellImplBase {
 public:
  GRUCellImpl(int64_t input_size, int64_t hidden_size)
      : GRUCellImpl(GRUCellOptions(input_size, hidden_size)) {}
  explicit GRUCellImpl(const GRUCellOptions& options);
  Tensor forward(const Tensor& input, Tensor hx = {});

  GRUCellOptions options;
};
KILN_MODULE(GRUCell);

}  // namespace kiln::nn
