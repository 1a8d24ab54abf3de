// One step of each recurrence, shared by the cell operators (rnn_cells.cpp) and the layers
// (rnn_layers.cpp). Internal to libkiln_core.
//
// Note [Recurrent input gates]: as PyTorch's CPU layers, a layer computes the input's share of
// the gates for the whole sequence at once, igates = x W_ih^T + b_ih, one matrix product over
// every step, and each step adds the hidden state's share. For the LSTM and the Elman RNN the
// hidden bias is folded in, igates = linear(x, W_ih, b_ih + b_hh), so a step is one
// addmm(igates_t, h, W_hh^T) (inside linear the bias takes linear's autocast dtype, as in
// PyTorch's two linears); the GRU needs h W_hn^T + b_hn alone (the reset gate scales it), so
// its step keeps b_hh.
#pragma once

#include "../amp/policy.h"

#include <kiln/nn/options/rnn.h>
#include <kiln/tensor.h>

#include <utility>

namespace kiln::nn::detail {

// x split along dim into parts of `sizes`, as views. Their gradient is one cat of the parts'
// gradients (undefined ones as zeros); narrow's own gradient would write each part's into a zero
// tensor of x's size, which for the T steps of a sequence costs T times x.
std::vector<Tensor> split_parts(const Tensor& x, int64_t dim, const std::vector<int64_t>& sizes);

// The input's share of the gates [N, G*H] of input [N, I] (See Note [Recurrent input gates]).
Tensor input_gates(RNNMode mode, const Tensor& input, const Tensor& w_ih, const Tensor& b_ih,
                   const Tensor& b_hh);

// The steps take the weights as stored and multiply by w.t() each step: the transposed product's
// gradient then reaches the weight contiguous, and accumulates into its .grad in place (a w.t()
// made once per layer would sum the T steps' gradients in the transposed layout, which the
// elementwise kernels add an order of magnitude slower).
//
// The next (h, c) of an LSTM from igates_t [B, 4H], h [B, P], c [B, H]; w_hr [P, H] projects h
// when defined.
std::pair<Tensor, Tensor> lstm_step(const Tensor& igates, const Tensor& h, const Tensor& c,
                                    const Tensor& w_hh, const Tensor& w_hr);
// The next h of a GRU from igates_t [B, 3H] and h [B, H].
Tensor gru_step(const Tensor& igates, const Tensor& h, const Tensor& w_hh, const Tensor& b_hh);
// The next h of an Elman RNN (tanh, or relu when `relu`) from igates_t [B, H] and h [B, H].
Tensor rnn_step(const Tensor& igates, const Tensor& h, const Tensor& w_hh, bool relu);

// Note [Recurrent autocast]: PyTorch's CUDA lists run the recurrent cells (and cuDNN's layers)
// in the region's lower dtype, while its CPU lists leave them alone, so that under a CPU region
// their parts are cast one by one (linear and addmm in bfloat16, float32 states promoting what
// they touch). The generic Autocast kernel excludes the Autocast layer below it even for a
// policy that casts nothing, which would leave a composite's parts uncast; so the recurrent
// composites (which have no Autograd layer) get this kernel instead: on the CPU a fallthrough
// straight to the composite, elsewhere the generic kernel with the lower dtype.
template <class R, class... Args>
R recurrent_autocast(const Operator<R(Args...)>& op, Args... args) {
  std::vector<const Tensor*> inputs;
  (amp::detail::collect_tensors(inputs, args), ...);
  if (amp::detail::autocast_device_type(inputs) == kCPU) {
    return op.call_layer(DispatchKey::Backend, args...);
  }
  return amp::detail::autocast_kernel<R, Args...>(op, args...);
}

// Gives op the recurrent policy (See Note [Recurrent autocast]).
template <class Signature>
void declare_recurrent_policy(Operator<Signature>& op) {
  amp::detail::set_declared_policy(op, {amp::detail::CastPolicy::none,
                                        amp::detail::CastPolicy::lower_precision});
  op.set_kernel(DispatchKey::Autocast, &recurrent_autocast);
}

}  // namespace kiln::nn::detail
