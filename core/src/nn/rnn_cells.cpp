// The recurrent steps (rnn_step.h) and the cell operators lstm_cell, gru_cell, rnn_tanh_cell and
// rnn_relu_cell: composites of linear, addmm, sigmoid and tanh, as PyTorch's cells.
#include "rnn_step.h"

#include "../autograd/function.h"

#include <kiln/dispatch.h>
#include <kiln/nn/functional.h>
#include <kiln/nn/functional/rnn.h>

namespace kiln::nn::detail {

std::vector<Tensor> split_parts(const Tensor& x, int64_t dim, const std::vector<int64_t>& sizes) {
  const bool record = autograd::GradMode::is_enabled() && x.requires_grad();
  const Tensor base = record ? x.detach() : x;
  std::vector<Tensor> parts;
  int64_t start = 0;
  for (int64_t size : sizes) {
    parts.push_back(base.narrow(dim, start, size));
    start += size;
  }
  if (!record) return parts;
  std::vector<const Tensor*> outputs;
  for (const Tensor& p : parts) outputs.push_back(&p);
  const TensorOptions options = TensorOptions(x.dtype()).device(x.device());
  autograd::detail::record("SplitPartsBackward", {&x}, outputs,
                           [shape = x.sizes().vec(), dim, sizes,
                            options](autograd::detail::FunctionNode&,
                                     const std::vector<Tensor>& grads) {
                             std::vector<Tensor> pieces;
                             for (size_t i = 0; i < grads.size(); ++i) {
                               if (grads[i].defined()) {
                                 pieces.push_back(grads[i]);
                                 continue;
                               }
                               std::vector<int64_t> part = shape;
                               part[dim] = sizes[i];
                               pieces.push_back(zeros(part, options));
                             }
                             return std::vector<Tensor>{cat(pieces, dim)};
                           });
  return parts;
}

Tensor input_gates(RNNMode mode, const Tensor& input, const Tensor& w_ih, const Tensor& b_ih,
                   const Tensor& b_hh) {
  if (mode == RNNMode::GRU || !b_hh.defined()) return functional::linear(input, w_ih, b_ih);
  return functional::linear(input, w_ih, b_ih + b_hh);
}

std::pair<Tensor, Tensor> lstm_step(const Tensor& igates, const Tensor& h, const Tensor& c,
                                    const Tensor& w_hh, const Tensor& w_hr) {
  Tensor gates = addmm(igates, h, w_hh.t());
  const int64_t hidden = c.size(1);
  std::vector<Tensor> g = split_parts(gates, 1, {hidden, hidden, hidden, hidden});
  Tensor in = g[0].sigmoid(), forget = g[1].sigmoid(), cell = g[2].tanh(), out = g[3].sigmoid();
  Tensor cy = forget * c + in * cell;
  Tensor hy = out * cy.tanh();
  if (w_hr.defined()) hy = matmul(hy, w_hr.t());
  return {hy, cy};
}

Tensor gru_step(const Tensor& igates, const Tensor& h, const Tensor& w_hh, const Tensor& b_hh) {
  Tensor hgates = functional::linear(h, w_hh, b_hh);
  const int64_t hidden = h.size(1);
  std::vector<Tensor> gi = split_parts(igates, 1, {hidden, hidden, hidden});
  std::vector<Tensor> gh = split_parts(hgates, 1, {hidden, hidden, hidden});
  Tensor reset = (gh[0] + gi[0]).sigmoid();
  Tensor update = (gh[1] + gi[1]).sigmoid();
  Tensor fresh = (gi[2] + gh[2] * reset).tanh();
  return (h - fresh) * update + fresh;
}

Tensor rnn_step(const Tensor& igates, const Tensor& h, const Tensor& w_hh, bool relu) {
  Tensor pre = addmm(igates, h, w_hh.t());
  return relu ? pre.relu() : pre.tanh();
}

namespace {

// Checks a cell's input [B, I], one hidden state [B, H] and weights [G*H, I], [G*H, H].
void check_cell(const char* op, int64_t gates, const Tensor& input, const Tensor& hx,
                const Tensor& w_ih, const Tensor& w_hh, const char* hx_name) {
  KILN_CHECK_VALUE(w_ih.dim() == 2 && w_hh.dim() == 2 && w_ih.size(0) == w_hh.size(0) &&
                       w_hh.size(0) == gates * w_hh.size(1),
                   op, ": expected w_ih [", gates, "*hidden_size, input_size] and w_hh [", gates,
                   "*hidden_size, hidden_size], but got ", w_ih.sizes(), " and ", w_hh.sizes());
  KILN_CHECK_VALUE(input.dim() == 2, op, ": expected input [batch, input_size] of 2 dimensions, ",
                   "but got input of size ", input.sizes());
  KILN_CHECK_VALUE(input.size(1) == w_ih.size(1), op, ": input has inconsistent input_size: got ",
                   input.size(1), ", expected ", w_ih.size(1), " (input of size ", input.sizes(),
                   ", w_ih of size ", w_ih.sizes(), ")");
  KILN_CHECK_VALUE(hx.dim() == 2 && hx.size(0) == input.size(0) && hx.size(1) == w_hh.size(1), op,
                   ": expected ", hx_name, " of size [", input.size(0), ", ", w_hh.size(1),
                   "] for input of size ", input.sizes(), ", but got ", hx.sizes());
}

using LstmCellOp =
    Operator<std::tuple<Tensor, Tensor>(const Tensor&, TensorList, const Tensor&, const Tensor&,
                                        const Tensor&, const Tensor&)>;
using CellOp = Operator<Tensor(const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                               const Tensor&, const Tensor&)>;

std::tuple<Tensor, Tensor> lstm_cell_composite(const LstmCellOp& op, const Tensor& input,
                                               TensorList hx, const Tensor& w_ih,
                                               const Tensor& w_hh, const Tensor& b_ih,
                                               const Tensor& b_hh) {
  KILN_CHECK_VALUE(hx.size() == 2, op.name(), ": expects two hidden states (h, c), but got ",
                   hx.size());
  check_cell(op.name(), 4, input, hx[0], w_ih, w_hh, "hx[0]");
  check_cell(op.name(), 4, input, hx[1], w_ih, w_hh, "hx[1]");
  Tensor igates = input_gates(RNNMode::LSTM, input, w_ih, b_ih, b_hh);
  auto [h, c] = lstm_step(igates, hx[0], hx[1], w_hh, Tensor());
  return {h, c};
}

Tensor gru_cell_composite(const CellOp& op, const Tensor& input, const Tensor& hx,
                          const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih,
                          const Tensor& b_hh) {
  check_cell(op.name(), 3, input, hx, w_ih, w_hh, "hx");
  return gru_step(input_gates(RNNMode::GRU, input, w_ih, b_ih, b_hh), hx, w_hh, b_hh);
}

Tensor rnn_tanh_cell_composite(const CellOp& op, const Tensor& input, const Tensor& hx,
                               const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih,
                               const Tensor& b_hh) {
  check_cell(op.name(), 1, input, hx, w_ih, w_hh, "hx");
  return rnn_step(input_gates(RNNMode::RNN_TANH, input, w_ih, b_ih, b_hh), hx, w_hh, false);
}

Tensor rnn_relu_cell_composite(const CellOp& op, const Tensor& input, const Tensor& hx,
                               const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih,
                               const Tensor& b_hh) {
  check_cell(op.name(), 1, input, hx, w_ih, w_hh, "hx");
  return rnn_step(input_gates(RNNMode::RNN_RELU, input, w_ih, b_ih, b_hh), hx, w_hh, true);
}

LstmCellOp lstm_cell_op("lstm_cell",
                        "lstm_cell(Tensor input, Tensor[] hx, Tensor w_ih, Tensor w_hh, Tensor? "
                        "b_ih=None, Tensor? b_hh=None) -> (Tensor, Tensor)",
                        lstm_cell_composite, /*primitive=*/false);
CellOp gru_cell_op("gru_cell",
                   "gru_cell(Tensor input, Tensor hx, Tensor w_ih, Tensor w_hh, Tensor? b_ih=None, "
                   "Tensor? b_hh=None) -> Tensor",
                   gru_cell_composite, /*primitive=*/false);
CellOp rnn_tanh_cell_op("rnn_tanh_cell",
                        "rnn_tanh_cell(Tensor input, Tensor hx, Tensor w_ih, Tensor w_hh, Tensor? "
                        "b_ih=None, Tensor? b_hh=None) -> Tensor",
                        rnn_tanh_cell_composite, /*primitive=*/false);
CellOp rnn_relu_cell_op("rnn_relu_cell",
                        "rnn_relu_cell(Tensor input, Tensor hx, Tensor w_ih, Tensor w_hh, Tensor? "
                        "b_ih=None, Tensor? b_hh=None) -> Tensor",
                        rnn_relu_cell_composite, /*primitive=*/false);

// See Note [Recurrent autocast].
[[maybe_unused]] const bool policies_declared = [] {
  declare_recurrent_policy(lstm_cell_op);
  declare_recurrent_policy(gru_cell_op);
  declare_recurrent_policy(rnn_tanh_cell_op);
  declare_recurrent_policy(rnn_relu_cell_op);
  return true;
}();

}  // namespace
}  // namespace kiln::nn::detail

namespace kiln {

std::tuple<Tensor, Tensor> lstm_cell(const Tensor& input, TensorList hx, const Tensor& w_ih,
                                     const Tensor& w_hh, const Tensor& b_ih, const Tensor& b_hh) {
  return nn::detail::lstm_cell_op(input, hx, w_ih, w_hh, b_ih, b_hh);
}

Tensor gru_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                const Tensor& b_ih, const Tensor& b_hh) {
  return nn::detail::gru_cell_op(input, hx, w_ih, w_hh, b_ih, b_hh);
}

Tensor rnn_tanh_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const Tensor& b_ih, const Tensor& b_hh) {
  return nn::detail::rnn_tanh_cell_op(input, hx, w_ih, w_hh, b_ih, b_hh);
}

Tensor rnn_relu_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const Tensor& b_ih, const Tensor& b_hh) {
  return nn::detail::rnn_relu_cell_op(input, hx, w_ih, w_hh, b_ih, b_hh);
}

}  // namespace kiln
