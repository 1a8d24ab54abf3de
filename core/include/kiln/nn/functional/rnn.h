// The recurrent operators, as libtorch's torch::lstm, torch::gru, torch::rnn_tanh, torch::rnn_relu
// and their cells (torch::lstm_cell, ...): composites of linear, addmm, sigmoid, tanh and cat,
// which kiln::nn::LSTM, GRU, RNN and their cells call. Shapes, with L layers, D directions (2 when
// bidirectional), T steps, B sequences, H hidden features and P = proj_size or H:
//   input [T, B, I] ([B, T, I] when batch_first), hx [L*D, B, P] (cx [L*D, B, H] for LSTM);
//   output [T, B, D*P], final states as hx and cx.
// `params` holds, for each layer and then each direction: w_ih [G*H, in], w_hh [G*H, P], then
// b_ih [G*H] and b_hh [G*H] when has_biases, then w_hr [P, H] when the LSTM projects (hx's last
// size is smaller than cx's); G is 4 (LSTM), 3 (GRU) or 1 (RNN). The packed forms take a
// PackedSequence's data [N, I] and batch_sizes (a CPU int64 tensor [T]) instead of `input`.
// `dropout` applies to every layer's output but the last when `train`.
#pragma once

#include <kiln/export.h>
#include <kiln/tensor.h>

#include <tuple>

namespace kiln {

// (output, hy, cy) of a stacked LSTM; hx is {h0, c0}.
KILN_API std::tuple<Tensor, Tensor, Tensor> lstm(const Tensor& input, TensorList hx,
                                                 TensorList params, bool has_biases,
                                                 int64_t num_layers, double dropout, bool train,
                                                 bool bidirectional, bool batch_first);
// The same over packed data: output is packed as data.
KILN_API std::tuple<Tensor, Tensor, Tensor> lstm(const Tensor& data, const Tensor& batch_sizes,
                                                 TensorList hx, TensorList params, bool has_biases,
                                                 int64_t num_layers, double dropout, bool train,
                                                 bool bidirectional);
// (output, hy) of a stacked GRU.
KILN_API std::tuple<Tensor, Tensor> gru(const Tensor& input, const Tensor& hx, TensorList params,
                                        bool has_biases, int64_t num_layers, double dropout,
                                        bool train, bool bidirectional, bool batch_first);
KILN_API std::tuple<Tensor, Tensor> gru(const Tensor& data, const Tensor& batch_sizes,
                                        const Tensor& hx, TensorList params, bool has_biases,
                                        int64_t num_layers, double dropout, bool train,
                                        bool bidirectional);
// (output, hy) of a stacked Elman RNN with tanh.
KILN_API std::tuple<Tensor, Tensor> rnn_tanh(const Tensor& input, const Tensor& hx,
                                             TensorList params, bool has_biases, int64_t num_layers,
                                             double dropout, bool train, bool bidirectional,
                                             bool batch_first);
KILN_API std::tuple<Tensor, Tensor> rnn_tanh(const Tensor& data, const Tensor& batch_sizes,
                                             const Tensor& hx, TensorList params, bool has_biases,
                                             int64_t num_layers, double dropout, bool train,
                                             bool bidirectional);
// (output, hy) of a stacked Elman RNN with relu.
KILN_API std::tuple<Tensor, Tensor> rnn_relu(const Tensor& input, const Tensor& hx,
                                             TensorList params, bool has_biases, int64_t num_layers,
                                             double dropout, bool train, bool bidirectional,
                                             bool batch_first);
KILN_API std::tuple<Tensor, Tensor> rnn_relu(const Tensor& data, const Tensor& batch_sizes,
                                             const Tensor& hx, TensorList params, bool has_biases,
                                             int64_t num_layers, double dropout, bool train,
                                             bool bidirectional);

// One LSTM step: input [B, I], hx {h [B, H], c [B, H]}, w_ih [4H, I], w_hh [4H, H], biases [4H]
// or undefined -> (h', c'). Gates in PyTorch's order: input, forget, cell, output.
KILN_API std::tuple<Tensor, Tensor> lstm_cell(const Tensor& input, TensorList hx,
                                              const Tensor& w_ih, const Tensor& w_hh,
                                              const Tensor& b_ih = {}, const Tensor& b_hh = {});
// One GRU step: input [B, I], hx [B, H], w_ih [3H, I], w_hh [3H, H] -> h'. Gates: reset,
// update, new.
KILN_API Tensor gru_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih,
                         const Tensor& w_hh, const Tensor& b_ih = {}, const Tensor& b_hh = {});
// One Elman step: tanh(input W_ih^T + b_ih + hx W_hh^T + b_hh), [B, I] -> [B, H].
KILN_API Tensor rnn_tanh_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih,
                              const Tensor& w_hh, const Tensor& b_ih = {}, const Tensor& b_hh = {});
// The same with relu.
KILN_API Tensor rnn_relu_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih,
                              const Tensor& w_hh, const Tensor& b_ih = {}, const Tensor& b_hh = {});

}  // namespace kiln
