// Options of the recurrent layers and cells, as libtorch's torch/nn/options/rnn.h:
// `LSTMOptions(10, 20).num_layers(2).bidirectional(true)`, `RNNOptions(4, 8).nonlinearity(kReLU)`,
// `GRUCellOptions(4, 8).bias(false)`.
#pragma once

#include <kiln/nn/options.h>
#include <kiln/nn/options/conv.h>

#include <cstdint>
#include <variant>

namespace kiln::nn {

namespace detail {

// Which recurrence a layer or cell runs.
enum class RNNMode { LSTM, GRU, RNN_TANH, RNN_RELU };

// The options every recurrent layer has (RNNImplBase reads these).
struct RNNOptionsBase {
  RNNOptionsBase(RNNMode mode, int64_t input_size, int64_t hidden_size)
      : mode_(mode), input_size_(input_size), hidden_size_(hidden_size) {}
  KILN_ARG(RNNMode, mode);
  KILN_ARG(int64_t, input_size);
  KILN_ARG(int64_t, hidden_size);
  KILN_ARG(int64_t, num_layers) = 1;
  KILN_ARG(bool, bias) = true;
  KILN_ARG(bool, batch_first) = false;
  KILN_ARG(double, dropout) = 0.0;
  KILN_ARG(bool, bidirectional) = false;
  KILN_ARG(int64_t, proj_size) = 0;
};

// The options every recurrent cell has.
struct RNNCellOptionsBase {
  RNNCellOptionsBase(RNNMode mode, int64_t input_size, int64_t hidden_size, bool bias)
      : mode_(mode), input_size_(input_size), hidden_size_(hidden_size), bias_(bias) {}
  KILN_ARG(RNNMode, mode);
  KILN_ARG(int64_t, input_size);
  KILN_ARG(int64_t, hidden_size);
  KILN_ARG(bool, bias);
};

}  // namespace detail

// An Elman RNN: h_t = nonlinearity(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh).
struct RNNOptions {
  using nonlinearity_t = std::variant<enumtype::kTanh, enumtype::kReLU>;
  RNNOptions(int64_t input_size, int64_t hidden_size)
      : input_size_(input_size), hidden_size_(hidden_size) {}
  KILN_ARG(int64_t, input_size);
  KILN_ARG(int64_t, hidden_size);
  // Stacked layers: each after the first reads the previous one's output.
  KILN_ARG(int64_t, num_layers) = 1;
  KILN_ARG(nonlinearity_t, nonlinearity) = kiln::kTanh;
  KILN_ARG(bool, bias) = true;
  // Input and output as [batch, seq, feature] instead of [seq, batch, feature].
  KILN_ARG(bool, batch_first) = false;
  // Dropout on the outputs of every layer but the last, in training.
  KILN_ARG(double, dropout) = 0.0;
  KILN_ARG(bool, bidirectional) = false;
};

// A long short-term memory layer; proj_size > 0 projects h_t to proj_size features.
struct LSTMOptions {
  LSTMOptions(int64_t input_size, int64_t hidden_size)
      : input_size_(input_size), hidden_size_(hidden_size) {}
  KILN_ARG(int64_t, input_size);
  KILN_ARG(int64_t, hidden_size);
  KILN_ARG(int64_t, num_layers) = 1;
  KILN_ARG(bool, bias) = true;
  KILN_ARG(bool, batch_first) = false;
  KILN_ARG(double, dropout) = 0.0;
  KILN_ARG(bool, bidirectional) = false;
  KILN_ARG(int64_t, proj_size) = 0;
};

// A gated recurrent unit layer.
struct GRUOptions {
  GRUOptions(int64_t input_size, int64_t hidden_size)
      : input_size_(input_size), hidden_size_(hidden_size) {}
  KILN_ARG(int64_t, input_size);
  KILN_ARG(int64_t, hidden_size);
  KILN_ARG(int64_t, num_layers) = 1;
  KILN_ARG(bool, bias) = true;
  KILN_ARG(bool, batch_first) = false;
  KILN_ARG(double, dropout) = 0.0;
  KILN_ARG(bool, bidirectional) = false;
};

// One step of an Elman RNN.
struct RNNCellOptions {
  using nonlinearity_t = std::variant<enumtype::kTanh, enumtype::kReLU>;
  RNNCellOptions(int64_t input_size, int64_t hidden_size)
      : input_size_(input_size), hidden_size_(hidden_size) {}
  KILN_ARG(int64_t, input_size);
  KILN_ARG(int64_t, hidden_size);
  KILN_ARG(bool, bias) = true;
  KILN_ARG(nonlinearity_t, nonlinearity) = kiln::kTanh;
};

// One step of an LSTM.
struct LSTMCellOptions {
  LSTMCellOptions(int64_t input_size, int64_t hidden_size)
      : input_size_(input_size), hidden_size_(hidden_size) {}
  KILN_ARG(int64_t, input_size);
  KILN_ARG(int64_t, hidden_size);
  KILN_ARG(bool, bias) = true;
};

// One step of a GRU.
struct GRUCellOptions {
  GRUCellOptions(int64_t input_size, int64_t hidden_size)
      : input_size_(input_size), hidden_size_(hidden_size) {}
  KILN_ARG(int64_t, input_size);
  KILN_ARG(int64_t, hidden_size);
  KILN_ARG(bool, bias) = true;
};

}  // namespace kiln::nn
