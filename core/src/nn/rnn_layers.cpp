// The stacked recurrent operators lstm, gru, rnn_tanh and rnn_relu, over padded input or packed
// data ("lstm.data", ...): composites that run each layer and direction step by step with the
// steps of rnn_step.h, as PyTorch's CPU layers (aten/src/ATen/native/RNN.cpp) do.
#include "rnn_step.h"

#include <kiln/dispatch.h>
#include <kiln/nn/functional.h>
#include <kiln/nn/functional/rnn.h>

#include <algorithm>
#include <vector>

namespace kiln::nn::detail {
namespace {

int64_t gate_count(RNNMode mode) {
  return mode == RNNMode::LSTM ? 4 : mode == RNNMode::GRU ? 3 : 1;
}

struct LayerWeights {
  Tensor w_ih, w_hh, b_ih, b_hh, w_hr;
};

// Each layer's and direction's weights from PyTorch's flat parameter list.
std::vector<LayerWeights> unpack_params(const char* op, TensorList params, bool has_biases,
                                        int64_t num_layers, int64_t dirs, bool proj) {
  const size_t per = 2 + (has_biases ? 2 : 0) + (proj ? 1 : 0);
  KILN_CHECK_VALUE(num_layers >= 1, op, ": num_layers must be at least 1, but got ", num_layers);
  KILN_CHECK_VALUE(params.size() == per * static_cast<size_t>(num_layers * dirs), op,
                   ": got an incorrect number of RNN parameters: expected ",
                   per * static_cast<size_t>(num_layers * dirs), " (", per,
                   " per layer and direction with num_layers=", num_layers, ", ", dirs,
                   " direction(s), has_biases=", has_biases ? "true" : "false",
                   ", projections=", proj ? "true" : "false", "), but got ", params.size());
  std::vector<LayerWeights> out;
  for (size_t i = 0; i < params.size(); i += per) {
    LayerWeights w;
    w.w_ih = params[i];
    w.w_hh = params[i + 1];
    if (has_biases) {
      w.b_ih = params[i + 2];
      w.b_hh = params[i + 3];
    }
    if (proj) w.w_hr = params[i + per - 1];
    out.push_back(w);
  }
  return out;
}

// The steps of a sequence: batch size and first row of each step in the packed data.
struct Steps {
  std::vector<int64_t> sizes;
  std::vector<int64_t> offsets;
};

Steps steps_of(std::vector<int64_t> sizes) {
  Steps s{std::move(sizes), {}};
  int64_t offset = 0;
  for (int64_t b : s.sizes) {
    s.offsets.push_back(offset);
    offset += b;
  }
  return s;
}

struct State {
  Tensor h, c;  // c: the LSTM's cell state only
  State slice(int64_t start, int64_t length) const {
    return {h.narrow(0, start, length), c.defined() ? c.narrow(0, start, length) : c};
  }
};

State cat_states(const std::vector<State>& parts) {
  std::vector<Tensor> h, c;
  for (const State& s : parts) {
    h.push_back(s.h);
    if (s.c.defined()) c.push_back(s.c);
  }
  return {cat(h, 0), c.empty() ? Tensor() : cat(c, 0)};
}

State step(RNNMode mode, const LayerWeights& w, const Tensor& igates, const State& s) {
  switch (mode) {
    case RNNMode::LSTM: {
      auto [h, c] = lstm_step(igates, s.h, s.c, w.w_hh, w.w_hr);
      return {h, c};
    }
    case RNNMode::GRU: return {gru_step(igates, s.h, w.w_hh, w.b_hh), Tensor()};
    case RNNMode::RNN_TANH: return {rnn_step(igates, s.h, w.w_hh, false), Tensor()};
    case RNNMode::RNN_RELU: return {rnn_step(igates, s.h, w.w_hh, true), Tensor()};
  }
  return {};
}

struct Run {
  Tensor output;  // [N, P], packed as the input
  State last;     // [B, P] and [B, H]
};

// One direction of one layer over packed rows [N, in]; `initial` has batch_sizes[0] rows. A
// sequence's final state is the one after its last step (forward) or its first (reverse).
Run run_direction(RNNMode mode, const Tensor& input, const Steps& steps, const LayerWeights& w,
                  const State& initial, bool reverse) {
  const std::vector<Tensor> igates =
      split_parts(input_gates(mode, input, w.w_ih, w.b_ih, w.b_hh), 0, steps.sizes);
  const size_t count = steps.sizes.size();
  std::vector<Tensor> outputs(count);
  if (!reverse) {
    std::vector<State> finished;  // states of sequences that ended, the shortest last
    State s = initial;
    int64_t last = steps.sizes[0];
    for (size_t t = 0; t < count; ++t) {
      const int64_t b = steps.sizes[t];
      if (b < last) {
        finished.push_back(s.slice(b, last - b));
        s = s.slice(0, b);
      }
      last = b;
      s = step(mode, w, igates[t], s);
      outputs[t] = s.h;
    }
    finished.push_back(s);
    std::reverse(finished.begin(), finished.end());
    return {cat(outputs, 0), finished.size() == 1 ? s : cat_states(finished)};
  }
  int64_t last = steps.sizes[count - 1];
  State s = initial.slice(0, last);
  for (size_t t = count; t-- > 0;) {
    const int64_t b = steps.sizes[t];
    if (b > last) s = cat_states({s, initial.slice(last, b - last)});
    last = b;
    s = step(mode, w, igates[t], s);
    outputs[t] = s.h;
  }
  return {cat(outputs, 0), s};
}

// Checks hx [L*D, B, P] (and cx [L*D, B, H]) against the weights and the input's batch.
void check_states(const char* op, const Tensor& data, const Tensor& hx, const Tensor& cx,
                  int64_t layers_dirs, int64_t batch, const LayerWeights& first, int64_t gates) {
  const int64_t hidden = first.w_hh.size(0) / gates;
  const int64_t out = first.w_hr.defined() ? first.w_hr.size(0) : hidden;
  KILN_CHECK_VALUE(hx.dim() == 3 && hx.size(0) == layers_dirs && hx.size(1) == batch &&
                       hx.size(2) == out,
                   op, ": expected hx of size [", layers_dirs, ", ", batch, ", ", out,
                   "], but got ", hx.sizes());
  KILN_CHECK_VALUE(!cx.defined() || (cx.dim() == 3 && cx.size(0) == layers_dirs &&
                                     cx.size(1) == batch && cx.size(2) == hidden),
                   op, ": expected cx of size [", layers_dirs, ", ", batch, ", ", hidden,
                   "], but got ", cx.sizes());
  KILN_CHECK_VALUE(hx.device() == data.device() && (!cx.defined() || cx.device() == hx.device()),
                   op, ": input and hidden tensors are not on the same device: input on ",
                   data.device(), ", hx on ", hx.device(), cx.defined() ? ", cx on " : "",
                   cx.defined() ? cx.device().str() : "");
}

struct Result {
  Tensor output, h, c;
};

// Every layer over packed rows data [N, I] with batch sizes `sizes`.
Result run_layers(const char* op, RNNMode mode, const Tensor& data, std::vector<int64_t> sizes,
                  const Tensor& hx, const Tensor& cx, TensorList params, bool has_biases,
                  int64_t num_layers, double dropout, bool train, bool bidirectional) {
  const int64_t dirs = bidirectional ? 2 : 1;
  const bool proj = mode == RNNMode::LSTM && cx.defined() && hx.dim() == 3 && cx.dim() == 3 &&
                    hx.size(2) != cx.size(2);
  std::vector<LayerWeights> weights = unpack_params(op, params, has_biases, num_layers, dirs, proj);
  KILN_CHECK_VALUE(!sizes.empty(), op, ": expected a sequence of at least one step");
  check_states(op, data, hx, cx, num_layers * dirs, sizes[0], weights[0], gate_count(mode));
  KILN_CHECK_VALUE(data.dim() == 2 && data.size(1) == weights[0].w_ih.size(1), op,
                   ": expected input features of size ", weights[0].w_ih.size(1),
                   " (w_ih of layer 0 is ", weights[0].w_ih.sizes(), "), but got input rows of ",
                   "size ", data.sizes());
  const Steps steps = steps_of(std::move(sizes));
  Tensor layer_input = data;
  std::vector<Tensor> hs, cs;
  for (int64_t layer = 0; layer < num_layers; ++layer) {
    std::vector<Tensor> outputs;
    for (int64_t d = 0; d < dirs; ++d) {
      const int64_t index = layer * dirs + d;
      State initial{hx[index], cx.defined() ? cx[index] : Tensor()};
      Run run = run_direction(mode, layer_input, steps, weights[index], initial, d == 1);
      outputs.push_back(run.output);
      hs.push_back(run.last.h);
      if (run.last.c.defined()) cs.push_back(run.last.c);
    }
    layer_input = dirs == 1 ? outputs[0] : cat(outputs, 1);
    if (dropout > 0 && train && layer + 1 < num_layers) {
      layer_input = functional::dropout(layer_input, dropout, true);
    }
  }
  return {layer_input, stack(hs, 0), cs.empty() ? Tensor() : stack(cs, 0)};
}

// Padded input [T, B, I] (or [B, T, I]) as packed rows with T steps of B.
Result run_padded(const char* op, RNNMode mode, const Tensor& input, const Tensor& hx,
                  const Tensor& cx, TensorList params, bool has_biases, int64_t num_layers,
                  double dropout, bool train, bool bidirectional, bool batch_first) {
  KILN_CHECK_VALUE(input.dim() == 3, op, ": expected input of 3 dimensions ([seq_len, batch, ",
                   "input_size], or [batch, seq_len, input_size] with batch_first), but got ",
                   "input of size ", input.sizes());
  const Tensor x = batch_first ? input.transpose(0, 1) : input;
  const int64_t steps = x.size(0), batch = x.size(1);
  KILN_CHECK_VALUE(steps > 0 && batch > 0, op, ": expected a non-empty input, but got input of ",
                   "size ", input.sizes());
  Result r = run_layers(op, mode, x.reshape({steps * batch, x.size(2)}),
                        std::vector<int64_t>(steps, batch), hx, cx, params, has_biases, num_layers,
                        dropout, train, bidirectional);
  r.output = r.output.view({steps, batch, r.output.size(1)});
  if (batch_first) r.output = r.output.transpose(0, 1);
  return r;
}

// A PackedSequence's batch sizes: a CPU int64 vector, positive, non-increasing, summing to N.
std::vector<int64_t> packed_sizes(const char* op, const Tensor& data, const Tensor& batch_sizes) {
  KILN_CHECK_VALUE(batch_sizes.dim() == 1 && batch_sizes.dtype() == kLong &&
                       batch_sizes.device().type() == kCPU,
                   op, ": expected batch_sizes as a 1-D CPU int64 tensor, but got a ",
                   batch_sizes.dim(), "-D ", dtype_name(batch_sizes.dtype()), " tensor on ",
                   batch_sizes.device());
  Tensor b = batch_sizes.contiguous();
  std::vector<int64_t> sizes(b.data_ptr<int64_t>(), b.data_ptr<int64_t>() + b.numel());
  int64_t total = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    KILN_CHECK_VALUE(sizes[i] > 0 && (i == 0 || sizes[i] <= sizes[i - 1]), op,
                     ": expected positive, non-increasing batch_sizes, but got ", sizes[i],
                     " at step ", i);
    total += sizes[i];
  }
  KILN_CHECK_VALUE(data.dim() == 2 && data.size(0) == total, op, ": expected packed data of ",
                   total, " rows (the sum of batch_sizes) and 2 dimensions, but got ",
                   data.sizes());
  return sizes;
}

using LstmOp =
    Operator<std::tuple<Tensor, Tensor, Tensor>(const Tensor&, TensorList, TensorList, bool,
                                                int64_t, double, bool, bool, bool)>;
using LstmDataOp =
    Operator<std::tuple<Tensor, Tensor, Tensor>(const Tensor&, const Tensor&, TensorList,
                                                TensorList, bool, int64_t, double, bool, bool)>;
using RnnOp = Operator<std::tuple<Tensor, Tensor>(const Tensor&, const Tensor&, TensorList, bool,
                                                  int64_t, double, bool, bool, bool)>;
using RnnDataOp =
    Operator<std::tuple<Tensor, Tensor>(const Tensor&, const Tensor&, const Tensor&, TensorList,
                                        bool, int64_t, double, bool, bool)>;

void check_lstm_hx(const char* op, TensorList hx) {
  KILN_CHECK_VALUE(hx.size() == 2, op, ": expects two hidden states (h0, c0), but got ", hx.size());
}

std::tuple<Tensor, Tensor, Tensor> lstm_composite(const LstmOp& op, const Tensor& input,
                                                  TensorList hx, TensorList params, bool has_biases,
                                                  int64_t num_layers, double dropout, bool train,
                                                  bool bidirectional, bool batch_first) {
  check_lstm_hx(op.name(), hx);
  Result r = run_padded(op.name(), RNNMode::LSTM, input, hx[0], hx[1], params, has_biases,
                        num_layers, dropout, train, bidirectional, batch_first);
  return {r.output, r.h, r.c};
}

std::tuple<Tensor, Tensor, Tensor> lstm_data_composite(const LstmDataOp& op, const Tensor& data,
                                                       const Tensor& batch_sizes, TensorList hx,
                                                       TensorList params, bool has_biases,
                                                       int64_t num_layers, double dropout,
                                                       bool train, bool bidirectional) {
  check_lstm_hx(op.name(), hx);
  Result r = run_layers(op.name(), RNNMode::LSTM, data, packed_sizes(op.name(), data, batch_sizes),
                        hx[0], hx[1], params, has_biases, num_layers, dropout, train,
                        bidirectional);
  return {r.output, r.h, r.c};
}

template <RNNMode Mode>
std::tuple<Tensor, Tensor> rnn_composite(const RnnOp& op, const Tensor& input, const Tensor& hx,
                                         TensorList params, bool has_biases, int64_t num_layers,
                                         double dropout, bool train, bool bidirectional,
                                         bool batch_first) {
  Result r = run_padded(op.name(), Mode, input, hx, Tensor(), params, has_biases, num_layers,
                        dropout, train, bidirectional, batch_first);
  return {r.output, r.h};
}

template <RNNMode Mode>
std::tuple<Tensor, Tensor> rnn_data_composite(const RnnDataOp& op, const Tensor& data,
                                              const Tensor& batch_sizes, const Tensor& hx,
                                              TensorList params, bool has_biases,
                                              int64_t num_layers, double dropout, bool train,
                                              bool bidirectional) {
  Result r = run_layers(op.name(), Mode, data, packed_sizes(op.name(), data, batch_sizes), hx,
                        Tensor(), params, has_biases, num_layers, dropout, train, bidirectional);
  return {r.output, r.h};
}

#define KILN_RNN_SCHEMA(name, hx)                                                         \
#name "(Tensor input, " hx ", Tensor[] params, bool has_biases, int num_layers, float " \
        "dropout, bool train, bool bidirectional, bool batch_first)"
#define KILN_RNN_DATA_SCHEMA(name, hx)                                                      \
#name ".data(Tensor data, Tensor batch_sizes, " hx ", Tensor[] params, bool has_biases, " \
        "int num_layers, float dropout, bool train, bool bidirectional)"

LstmOp lstm_op("lstm", KILN_RNN_SCHEMA(lstm, "Tensor[] hx") " -> (Tensor, Tensor, Tensor)",
               lstm_composite, /*primitive=*/false);
LstmDataOp lstm_data_op("lstm.data",
                        KILN_RNN_DATA_SCHEMA(lstm, "Tensor[] hx") " -> (Tensor, Tensor, Tensor)",
                        lstm_data_composite, /*primitive=*/false);
RnnOp gru_op("gru", KILN_RNN_SCHEMA(gru, "Tensor hx") " -> (Tensor, Tensor)",
             rnn_composite<RNNMode::GRU>, /*primitive=*/false);
RnnDataOp gru_data_op("gru.data", KILN_RNN_DATA_SCHEMA(gru, "Tensor hx") " -> (Tensor, Tensor)",
                      rnn_data_composite<RNNMode::GRU>, /*primitive=*/false);
RnnOp rnn_tanh_op("rnn_tanh", KILN_RNN_SCHEMA(rnn_tanh, "Tensor hx") " -> (Tensor, Tensor)",
                  rnn_composite<RNNMode::RNN_TANH>, /*primitive=*/false);
RnnDataOp rnn_tanh_data_op("rnn_tanh.data",
                           KILN_RNN_DATA_SCHEMA(rnn_tanh, "Tensor hx") " -> (Tensor, Tensor)",
                           rnn_data_composite<RNNMode::RNN_TANH>, /*primitive=*/false);
RnnOp rnn_relu_op("rnn_relu", KILN_RNN_SCHEMA(rnn_relu, "Tensor hx") " -> (Tensor, Tensor)",
                  rnn_composite<RNNMode::RNN_RELU>, /*primitive=*/false);
RnnDataOp rnn_relu_data_op("rnn_relu.data",
                           KILN_RNN_DATA_SCHEMA(rnn_relu, "Tensor hx") " -> (Tensor, Tensor)",
                           rnn_data_composite<RNNMode::RNN_RELU>, /*primitive=*/false);

// cuDNN's layers run in the region's lower dtype on CUDA (its Autocast kernel casts them); on
// the CPU they are left to their parts. See Note [Recurrent autocast].
[[maybe_unused]] const bool policies_declared = [] {
  declare_recurrent_policy(lstm_op);
  declare_recurrent_policy(lstm_data_op);
  declare_recurrent_policy(gru_op);
  declare_recurrent_policy(gru_data_op);
  declare_recurrent_policy(rnn_tanh_op);
  declare_recurrent_policy(rnn_tanh_data_op);
  declare_recurrent_policy(rnn_relu_op);
  declare_recurrent_policy(rnn_relu_data_op);
  return true;
}();

}  // namespace
}  // namespace kiln::nn::detail

namespace kiln {

using nn::detail::gru_data_op;
using nn::detail::gru_op;
using nn::detail::lstm_data_op;
using nn::detail::lstm_op;
using nn::detail::rnn_relu_data_op;
using nn::detail::rnn_relu_op;
using nn::detail::rnn_tanh_data_op;
using nn::detail::rnn_tanh_op;

std::tuple<Tensor, Tensor, Tensor> lstm(const Tensor& input, TensorList hx, TensorList params,
                                        bool has_biases, int64_t num_layers, double dropout,
                                        bool train, bool bidirectional, bool batch_first) {
  return lstm_op(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
                 batch_first);
}

std::tuple<Tensor, Tensor, Tensor> lstm(const Tensor& data, const Tensor& batch_sizes,
                                        TensorList hx, TensorList params, bool has_biases,
                                        int64_t num_layers, double dropout, bool train,
                                        bool bidirectional) {
  return lstm_data_op(data, batch_sizes, hx, params, has_biases, num_layers, dropout, train,
                      bidirectional);
}

std::tuple<Tensor, Tensor> gru(const Tensor& input, const Tensor& hx, TensorList params,
                               bool has_biases, int64_t num_layers, double dropout, bool train,
                               bool bidirectional, bool batch_first) {
  return gru_op(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
                batch_first);
}

std::tuple<Tensor, Tensor> gru(const Tensor& data, const Tensor& batch_sizes, const Tensor& hx,
                               TensorList params, bool has_biases, int64_t num_layers,
                               double dropout, bool train, bool bidirectional) {
  return gru_data_op(data, batch_sizes, hx, params, has_biases, num_layers, dropout, train,
                     bidirectional);
}

std::tuple<Tensor, Tensor> rnn_tanh(const Tensor& input, const Tensor& hx, TensorList params,
                                    bool has_biases, int64_t num_layers, double dropout, bool train,
                                    bool bidirectional, bool batch_first) {
  return rnn_tanh_op(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
                     batch_first);
}

std::tuple<Tensor, Tensor> rnn_tanh(const Tensor& data, const Tensor& batch_sizes, const Tensor& hx,
                                    TensorList params, bool has_biases, int64_t num_layers,
                                    double dropout, bool train, bool bidirectional) {
  return rnn_tanh_data_op(data, batch_sizes, hx, params, has_biases, num_layers, dropout, train,
                          bidirectional);
}

std::tuple<Tensor, Tensor> rnn_relu(const Tensor& input, const Tensor& hx, TensorList params,
                                    bool has_biases, int64_t num_layers, double dropout, bool train,
                                    bool bidirectional, bool batch_first) {
  return rnn_relu_op(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
                     batch_first);
}

std::tuple<Tensor, Tensor> rnn_relu(const Tensor& data, const Tensor& batch_sizes, const Tensor& hx,
                                    TensorList params, bool has_biases, int64_t num_layers,
                                    double dropout, bool train, bool bidirectional) {
  return rnn_relu_data_op(data, batch_sizes, hx, params, has_biases, num_layers, dropout, train,
                          bidirectional);
}

}  // namespace kiln
