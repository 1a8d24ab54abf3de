// RNNCell, LSTMCell and GRUCell modules (kiln/nn/modules/rnn.h), as libtorch's: parameters,
// checks and printing around the cell operators of kiln/nn/functional/rnn.h.
#include <kiln/nn/functional/rnn.h>
#include <kiln/nn/init.h>
#include <kiln/nn/modules/rnn.h>
#include <kiln/ops.h>

#include <cmath>

namespace kiln::nn {
namespace detail {

RNNCellImplBase::RNNCellImplBase(const RNNCellOptionsBase& options) : options_base(options) {
  const int64_t gates = options.mode() == RNNMode::LSTM  ? 4
                        : options.mode() == RNNMode::GRU ? 3
                                                         : 1;
  KILN_CHECK_VALUE(options.input_size() >= 0 && options.hidden_size() > 0, kind(),
                   ": expected input_size >= 0 and hidden_size > 0, but got ", options.input_size(),
                   " and ", options.hidden_size());
  const int64_t gate_size = gates * options.hidden_size();
  weight_ih = register_parameter("weight_ih", empty({gate_size, options.input_size()}));
  weight_hh = register_parameter("weight_hh", empty({gate_size, options.hidden_size()}));
  bias_ih =
      register_parameter("bias_ih", options.bias() ? empty({gate_size}) : Tensor(), options.bias());
  bias_hh =
      register_parameter("bias_hh", options.bias() ? empty({gate_size}) : Tensor(), options.bias());
  reset_parameters();
}

void RNNCellImplBase::reset_parameters() {
  const double stdv = 1.0 / std::sqrt(static_cast<double>(options_base.hidden_size()));
  for (Tensor& w : parameters()) init::uniform_(w, -stdv, stdv);
}

const char* RNNCellImplBase::kind() const {
  switch (options_base.mode()) {
    case RNNMode::LSTM: return "LSTMCell";
    case RNNMode::GRU: return "GRUCell";
    default: return "RNNCell";
  }
}

void RNNCellImplBase::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::" << kind() << "(" << options_base.input_size() << ", "
         << options_base.hidden_size();
  if (!options_base.bias()) stream << ", bias=false";
  if (options_base.mode() == RNNMode::RNN_RELU) stream << ", nonlinearity=kReLU";
  stream << ")";
}

void RNNCellImplBase::check_forward_input(const Tensor& input, const char* name) const {
  KILN_CHECK_VALUE(input.dim() == 1 || input.dim() == 2, kind(), ": Expected ", name,
                   " to be 1D or 2D, got ", input.dim(), "D instead (", name, " of size ",
                   input.sizes(), ")");
}

}  // namespace detail

namespace {

// A cell's input and hidden state as a batch: (input [B, I], hx [B, H] or zeros, batched).
struct CellArgs {
  Tensor input, hx;
  bool batched;
};

CellArgs cell_args(const char* kind, const Tensor& input, const Tensor& hx, int64_t hidden) {
  const bool batched = input.dim() == 2;
  Tensor x = batched ? input : input.unsqueeze(0);
  if (!hx.defined()) {
    return {x, zeros({x.size(0), hidden}, TensorOptions(input.dtype()).device(input.device())),
            batched};
  }
  KILN_CHECK_VALUE(hx.dim() == input.dim(), kind, ": expected hidden of ", input.dim(),
                   " dimensions for input of size ", input.sizes(), ", but got hidden of size ",
                   hx.sizes());
  return {x, batched ? hx : hx.unsqueeze(0), batched};
}

detail::RNNCellOptionsBase cell_base(const RNNCellOptions& o) {
  bool tanh = std::holds_alternative<enumtype::kTanh>(o.nonlinearity());
  return detail::RNNCellOptionsBase(tanh ? detail::RNNMode::RNN_TANH : detail::RNNMode::RNN_RELU,
                                    o.input_size(), o.hidden_size(), o.bias());
}

}  // namespace

RNNCellImpl::RNNCellImpl(const RNNCellOptions& options)
    : RNNCellImplBase(cell_base(options)), options(options) {}

Tensor RNNCellImpl::forward(const Tensor& input, Tensor hx) {
  check_forward_input(input, "input");
  if (hx.defined()) check_forward_input(hx, "hidden");
  CellArgs a = cell_args("RNNCell", input, hx, options.hidden_size());
  Tensor out = options_base.mode() == detail::RNNMode::RNN_TANH
                   ? rnn_tanh_cell(a.input, a.hx, weight_ih, weight_hh, bias_ih, bias_hh)
                   : rnn_relu_cell(a.input, a.hx, weight_ih, weight_hh, bias_ih, bias_hh);
  return a.batched ? out : out.squeeze(0);
}

LSTMCellImpl::LSTMCellImpl(const LSTMCellOptions& options)
    : RNNCellImplBase(detail::RNNCellOptionsBase(detail::RNNMode::LSTM, options.input_size(),
                                                 options.hidden_size(), options.bias())),
      options(options) {}

std::tuple<Tensor, Tensor> LSTMCellImpl::forward(const Tensor& input,
                                                 std::optional<std::tuple<Tensor, Tensor>> hx_opt) {
  check_forward_input(input, "input");
  Tensor h, c;
  if (hx_opt) {
    std::tie(h, c) = *hx_opt;
    check_forward_input(h, "hx[0]");
    check_forward_input(c, "hx[1]");
  }
  CellArgs ah = cell_args("LSTMCell", input, h, options.hidden_size());
  CellArgs ac = cell_args("LSTMCell", input, c, options.hidden_size());
  auto [hy, cy] = lstm_cell(ah.input, {ah.hx, ac.hx}, weight_ih, weight_hh, bias_ih, bias_hh);
  if (!ah.batched) return {hy.squeeze(0), cy.squeeze(0)};
  return {hy, cy};
}

GRUCellImpl::GRUCellImpl(const GRUCellOptions& options)
    : RNNCellImplBase(detail::RNNCellOptionsBase(detail::RNNMode::GRU, options.input_size(),
                                                 options.hidden_size(), options.bias())),
      options(options) {}

Tensor GRUCellImpl::forward(const Tensor& input, Tensor hx) {
  check_forward_input(input, "input");
  if (hx.defined()) check_forward_input(hx, "hidden");
  CellArgs a = cell_args("GRUCell", input, hx, options.hidden_size());
  Tensor out = gru_cell(a.input, a.hx, weight_ih, weight_hh, bias_ih, bias_hh);
  return a.batched ? out : out.squeeze(0);
}

}  // namespace kiln::nn
