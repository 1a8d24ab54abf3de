// RNN, LSTM and GRU modules (kiln/nn/modules/rnn.h): parameters, argument checks and printing,
// as libtorch's and PyTorch's torch/nn/modules/rnn.py; the recurrence is the operators of
// kiln/nn/functional/rnn.h.
#include <kiln/amp/autocast.h>
#include <kiln/autograd.h>
#include <kiln/nn/functional/rnn.h>
#include <kiln/nn/init.h>
#include <kiln/nn/modules/rnn.h>
#include <kiln/ops.h>
#include <kiln/warning.h>

#include "repr.h"

#include <cmath>

namespace kiln::nn {
namespace detail {
namespace {

int64_t gate_count(RNNMode mode) {
  return mode == RNNMode::LSTM ? 4 : mode == RNNMode::GRU ? 3 : 1;
}

std::string shape_str(IntArrayRef sizes) {
  std::ostringstream out;
  out << sizes;
  return out.str();
}

}  // namespace

RNNImplBase::RNNImplBase(const RNNOptionsBase& options) : options_base(options) {
  const char* k = kind();
  const RNNOptionsBase& o = options_base;
  KILN_CHECK_VALUE(o.dropout() >= 0 && o.dropout() <= 1, k, ": dropout should be a number in ",
                   "range [0, 1] representing the probability of an element being zeroed, but ",
                   "got ", o.dropout());
  KILN_CHECK_VALUE(o.input_size() >= 0 && o.hidden_size() > 0 && o.num_layers() > 0, k,
                   ": expected input_size >= 0, hidden_size > 0 and num_layers > 0, but got ",
                   o.input_size(), ", ", o.hidden_size(), " and ", o.num_layers());
  KILN_CHECK_VALUE(o.proj_size() >= 0, k, ": proj_size should be a positive integer or zero to ",
                   "disable projections, but got ", o.proj_size());
  KILN_CHECK_VALUE(o.proj_size() < o.hidden_size(), k, ": proj_size has to be smaller than ",
                   "hidden_size, but got proj_size=", o.proj_size(),
                   " and hidden_size=", o.hidden_size());
  KILN_CHECK_VALUE(o.proj_size() == 0 || o.mode() == RNNMode::LSTM, k,
                   ": proj_size argument is only supported for LSTM, not RNN or GRU");
  if (o.dropout() > 0 && o.num_layers() == 1) {
    KILN_WARN("dropout option adds dropout after all but last recurrent layer, so non-zero ",
              "dropout expects num_layers greater than 1, but got dropout=", o.dropout(),
              " and num_layers=", o.num_layers());
  }
  const int64_t gate_size = gate_count(o.mode()) * o.hidden_size();
  const int64_t real_hidden = o.proj_size() > 0 ? o.proj_size() : o.hidden_size();
  const int64_t dirs = o.bidirectional() ? 2 : 1;
  for (int64_t layer = 0; layer < o.num_layers(); ++layer) {
    for (int64_t d = 0; d < dirs; ++d) {
      const int64_t in = layer == 0 ? o.input_size() : real_hidden * dirs;
      const std::string suffix = "_l" + std::to_string(layer) + (d == 1 ? "_reverse" : "");
      std::vector<std::pair<std::string, std::vector<int64_t>>> params = {
          {"weight_ih" + suffix, {gate_size, in}},
          {"weight_hh" + suffix, {gate_size, real_hidden}}};
      if (o.bias()) {
        params.push_back({"bias_ih" + suffix, {gate_size}});
        params.push_back({"bias_hh" + suffix, {gate_size}});
      }
      if (o.proj_size() > 0)
        params.push_back({"weight_hr" + suffix, {o.proj_size(), o.hidden_size()}});
      std::vector<std::string> names;
      for (auto& [name, sizes] : params) {
        flat_weights_.push_back(register_parameter(name, kiln::empty(sizes)));
        flat_weights_names_.push_back(name);
        names.push_back(name);
      }
      all_weights_.push_back(names);
    }
  }
  reset_parameters();
}

void RNNImplBase::reset_parameters() {
  const double stdv = 1.0 / std::sqrt(static_cast<double>(options_base.hidden_size()));
  for (Tensor& w : parameters()) init::uniform_(w, -stdv, stdv);
}

std::vector<Tensor> RNNImplBase::all_weights() const {
  std::vector<Tensor> out;
  for (const std::string& name : flat_weights_names_) out.push_back(parameters_[name]);
  return out;
}

const char* RNNImplBase::kind() const {
  switch (options_base.mode()) {
    case RNNMode::LSTM: return "LSTM";
    case RNNMode::GRU: return "GRU";
    default: return "RNN";
  }
}

void RNNImplBase::pretty_print(std::ostream& stream) const {
  const RNNOptionsBase& o = options_base;
  stream << "kiln::nn::" << kind() << "(input_size=" << o.input_size()
         << ", hidden_size=" << o.hidden_size() << ", num_layers=" << o.num_layers()
         << ", bias=" << bool_str(o.bias()) << ", batch_first=" << bool_str(o.batch_first())
         << ", dropout=" << o.dropout() << ", bidirectional=" << bool_str(o.bidirectional());
  if (o.proj_size() > 0) stream << ", proj_size=" << o.proj_size();
  stream << ")";
}

void RNNImplBase::check_input(const Tensor& input, const Tensor& batch_sizes) const {
  const int64_t expected = batch_sizes.defined() ? 2 : 3;
  KILN_CHECK_VALUE(input.dim() == expected, kind(), ": input must have ", expected,
                   " dimensions, got ", input.dim(), " (input of size ", input.sizes(), ")");
  KILN_CHECK_VALUE(input.size(-1) == options_base.input_size(), kind(),
                   ": input.size(-1) must be equal to input_size. Expected ",
                   options_base.input_size(), ", got ", input.size(-1), " (input of size ",
                   input.sizes(), ")");
  const Tensor& w = parameters_[flat_weights_names_[0]];
  KILN_CHECK_TYPE(input.dtype() == w.dtype() || amp::is_autocast_enabled(input.device().type()),
                  kind(), ": input must have the type ", dtype_name(w.dtype()), ", got type ",
                  dtype_name(input.dtype()));
}

std::vector<int64_t> RNNImplBase::expected_hidden_size(const Tensor& input,
                                                       const Tensor& batch_sizes,
                                                       int64_t features) const {
  int64_t batch = 0;
  if (batch_sizes.defined()) {
    batch = batch_sizes.numel() > 0 ? batch_sizes[0].item<int64_t>() : 0;
  } else {
    batch = options_base.batch_first() ? input.size(0) : input.size(1);
  }
  const int64_t dirs = options_base.bidirectional() ? 2 : 1;
  return {options_base.num_layers() * dirs, batch, features};
}

void RNNImplBase::check_hidden_size(const Tensor& hx, const std::vector<int64_t>& expected,
                                    const char* what) const {
  KILN_CHECK_VALUE(hx.sizes() == IntArrayRef(expected), kind(), ": Expected ", what, " size ",
                   shape_str(expected), ", got ", shape_str(hx.sizes()));
}

Tensor RNNImplBase::permute_hidden(const Tensor& hx, const Tensor& permutation) {
  if (!permutation.defined()) return hx;
  return hx.index_select(1, permutation);
}

}  // namespace detail

namespace {

// PyTorch's unbatched input: [T, I] runs as a batch of one; hx must then be 2-D.
struct Batching {
  bool batched = true;
  int64_t batch_dim = 1;
};

Batching batching(const char* kind, const Tensor& input, bool batch_first) {
  KILN_CHECK_VALUE(input.dim() == 2 || input.dim() == 3, kind, ": Expected input to be 2-D or ",
                   "3-D but received ", input.dim(), "-D tensor (input of size ", input.sizes(),
                   ")");
  return {input.dim() == 3, batch_first ? 0 : 1};
}

Tensor batch_hidden(const char* kind, const Batching& b, const Tensor& hx) {
  if (!hx.defined()) return hx;
  if (!b.batched) {
    KILN_CHECK_VALUE(hx.dim() == 2, kind, ": For unbatched 2-D input, hx should also be 2-D but ",
                     "got ", hx.dim(), "-D tensor (hx of size ", hx.sizes(), ")");
    return hx.unsqueeze(1);
  }
  KILN_CHECK_VALUE(hx.dim() == 3, kind, ": For batched 3-D input, hx should also be 3-D but got ",
                   hx.dim(), "-D tensor (hx of size ", hx.sizes(), ")");
  return hx;
}

detail::RNNOptionsBase base_of(const RNNOptions& o) {
  detail::RNNMode mode = std::holds_alternative<enumtype::kTanh>(o.nonlinearity())
                             ? detail::RNNMode::RNN_TANH
                             : detail::RNNMode::RNN_RELU;
  return detail::RNNOptionsBase(mode, o.input_size(), o.hidden_size())
      .num_layers(o.num_layers())
      .bias(o.bias())
      .batch_first(o.batch_first())
      .dropout(o.dropout())
      .bidirectional(o.bidirectional());
}

detail::RNNOptionsBase base_of(const LSTMOptions& o) {
  return detail::RNNOptionsBase(detail::RNNMode::LSTM, o.input_size(), o.hidden_size())
      .num_layers(o.num_layers())
      .bias(o.bias())
      .batch_first(o.batch_first())
      .dropout(o.dropout())
      .bidirectional(o.bidirectional())
      .proj_size(o.proj_size());
}

detail::RNNOptionsBase base_of(const GRUOptions& o) {
  return detail::RNNOptionsBase(detail::RNNMode::GRU, o.input_size(), o.hidden_size())
      .num_layers(o.num_layers())
      .bias(o.bias())
      .batch_first(o.batch_first())
      .dropout(o.dropout())
      .bidirectional(o.bidirectional());
}

Tensor zero_state(const std::vector<int64_t>& sizes, const Tensor& input) {
  return zeros(sizes, TensorOptions(input.dtype()).device(input.device()));
}

}  // namespace

// --- RNN and GRU ---------------------------------------------------------------------------------

RNNImpl::RNNImpl(const RNNOptions& options) : RNNImplBase(base_of(options)), options(options) {}

std::tuple<Tensor, Tensor> RNNImpl::forward_helper(const Tensor& input, const Tensor& batch_sizes,
                                                   const Tensor& sorted_indices, Tensor hx) {
  check_input(input, batch_sizes);
  std::vector<int64_t> expected = expected_hidden_size(input, batch_sizes, options.hidden_size());
  hx = hx.defined() ? permute_hidden(hx, sorted_indices) : zero_state(expected, input);
  check_hidden_size(hx, expected, "hidden");
  const bool tanh = options_base.mode() == detail::RNNMode::RNN_TANH;
  const auto& o = options;
  if (batch_sizes.defined()) {
    return tanh ? kiln::rnn_tanh(input, batch_sizes, hx, all_weights(), o.bias(), o.num_layers(),
                                 o.dropout(), is_training(), o.bidirectional())
                : kiln::rnn_relu(input, batch_sizes, hx, all_weights(), o.bias(), o.num_layers(),
                                 o.dropout(), is_training(), o.bidirectional());
  }
  return tanh ? kiln::rnn_tanh(input, hx, all_weights(), o.bias(), o.num_layers(), o.dropout(),
                               is_training(), o.bidirectional(), o.batch_first())
              : kiln::rnn_relu(input, hx, all_weights(), o.bias(), o.num_layers(), o.dropout(),
                               is_training(), o.bidirectional(), o.batch_first());
}

std::tuple<Tensor, Tensor> RNNImpl::forward(const Tensor& input, Tensor hx) {
  Batching b = batching("RNN", input, options.batch_first());
  hx = batch_hidden("RNN", b, hx);
  auto [output, hidden] =
      forward_helper(b.batched ? input : input.unsqueeze(b.batch_dim), {}, {}, hx);
  if (!b.batched) return {output.squeeze(b.batch_dim), hidden.squeeze(1)};
  return {output, hidden};
}

std::tuple<utils::rnn::PackedSequence, Tensor> RNNImpl::forward_with_packed_input(
    const utils::rnn::PackedSequence& packed_input, Tensor hx) {
  auto [output, hidden] = forward_helper(packed_input.data(), packed_input.batch_sizes(),
                                         packed_input.sorted_indices(), hx);
  return {utils::rnn::PackedSequence(output, packed_input.batch_sizes(),
                                     packed_input.sorted_indices(),
                                     packed_input.unsorted_indices()),
          permute_hidden(hidden, packed_input.unsorted_indices())};
}

GRUImpl::GRUImpl(const GRUOptions& options) : RNNImplBase(base_of(options)), options(options) {}

std::tuple<Tensor, Tensor> GRUImpl::forward_helper(const Tensor& input, const Tensor& batch_sizes,
                                                   const Tensor& sorted_indices, Tensor hx) {
  check_input(input, batch_sizes);
  std::vector<int64_t> expected = expected_hidden_size(input, batch_sizes, options.hidden_size());
  hx = hx.defined() ? permute_hidden(hx, sorted_indices) : zero_state(expected, input);
  check_hidden_size(hx, expected, "hidden");
  const auto& o = options;
  if (batch_sizes.defined()) {
    return kiln::gru(input, batch_sizes, hx, all_weights(), o.bias(), o.num_layers(), o.dropout(),
                     is_training(), o.bidirectional());
  }
  return kiln::gru(input, hx, all_weights(), o.bias(), o.num_layers(), o.dropout(), is_training(),
                   o.bidirectional(), o.batch_first());
}

std::tuple<Tensor, Tensor> GRUImpl::forward(const Tensor& input, Tensor hx) {
  Batching b = batching("GRU", input, options.batch_first());
  hx = batch_hidden("GRU", b, hx);
  auto [output, hidden] =
      forward_helper(b.batched ? input : input.unsqueeze(b.batch_dim), {}, {}, hx);
  if (!b.batched) return {output.squeeze(b.batch_dim), hidden.squeeze(1)};
  return {output, hidden};
}

std::tuple<utils::rnn::PackedSequence, Tensor> GRUImpl::forward_with_packed_input(
    const utils::rnn::PackedSequence& packed_input, Tensor hx) {
  auto [output, hidden] = forward_helper(packed_input.data(), packed_input.batch_sizes(),
                                         packed_input.sorted_indices(), hx);
  return {utils::rnn::PackedSequence(output, packed_input.batch_sizes(),
                                     packed_input.sorted_indices(),
                                     packed_input.unsorted_indices()),
          permute_hidden(hidden, packed_input.unsorted_indices())};
}

// --- LSTM ----------------------------------------------------------------------------------------

LSTMImpl::LSTMImpl(const LSTMOptions& options) : RNNImplBase(base_of(options)), options(options) {}

std::tuple<Tensor, std::tuple<Tensor, Tensor>> LSTMImpl::forward_helper(
    const Tensor& input, const Tensor& batch_sizes, const Tensor& sorted_indices,
    std::optional<std::tuple<Tensor, Tensor>> hx_opt) {
  check_input(input, batch_sizes);
  const int64_t real_hidden = options.proj_size() > 0 ? options.proj_size() : options.hidden_size();
  std::vector<int64_t> expected_h = expected_hidden_size(input, batch_sizes, real_hidden);
  std::vector<int64_t> expected_c = expected_hidden_size(input, batch_sizes, options.hidden_size());
  Tensor h, c;
  if (hx_opt) {
    h = permute_hidden(std::get<0>(*hx_opt), sorted_indices);
    c = permute_hidden(std::get<1>(*hx_opt), sorted_indices);
  } else {
    h = zero_state(expected_h, input);
    c = zero_state(expected_c, input);
  }
  check_hidden_size(h, expected_h, "hidden[0]");
  check_hidden_size(c, expected_c, "hidden[1]");
  const auto& o = options;
  std::tuple<Tensor, Tensor, Tensor> r =
      batch_sizes.defined()
          ? kiln::lstm(input, batch_sizes, {h, c}, all_weights(), o.bias(), o.num_layers(),
                       o.dropout(), is_training(), o.bidirectional())
          : kiln::lstm(input, {h, c}, all_weights(), o.bias(), o.num_layers(), o.dropout(),
                       is_training(), o.bidirectional(), o.batch_first());
  return {std::get<0>(r), {std::get<1>(r), std::get<2>(r)}};
}

std::tuple<Tensor, std::tuple<Tensor, Tensor>> LSTMImpl::forward(
    const Tensor& input, std::optional<std::tuple<Tensor, Tensor>> hx_opt) {
  Batching b = batching("LSTM", input, options.batch_first());
  if (hx_opt) {
    hx_opt = std::make_tuple(batch_hidden("LSTM", b, std::get<0>(*hx_opt)),
                             batch_hidden("LSTM", b, std::get<1>(*hx_opt)));
  }
  auto [output, state] =
      forward_helper(b.batched ? input : input.unsqueeze(b.batch_dim), {}, {}, hx_opt);
  if (!b.batched) {
    return {output.squeeze(b.batch_dim),
            {std::get<0>(state).squeeze(1), std::get<1>(state).squeeze(1)}};
  }
  return {output, state};
}

std::tuple<utils::rnn::PackedSequence, std::tuple<Tensor, Tensor>>
LSTMImpl::forward_with_packed_input(const utils::rnn::PackedSequence& packed_input,
                                    std::optional<std::tuple<Tensor, Tensor>> hx_opt) {
  auto [output, state] = forward_helper(packed_input.data(), packed_input.batch_sizes(),
                                        packed_input.sorted_indices(), hx_opt);
  const Tensor& unsorted = packed_input.unsorted_indices();
  return {utils::rnn::PackedSequence(output, packed_input.batch_sizes(),
                                     packed_input.sorted_indices(), unsorted),
          {permute_hidden(std::get<0>(state), unsorted),
           permute_hidden(std::get<1>(state), unsorted)}};
}

}  // namespace kiln::nn
