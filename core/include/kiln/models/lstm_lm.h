// An LSTM language model, as PyTorch's examples/word_language_model RNNModel with rnn_type
// "LSTM" ("Regularizing and Optimizing LSTM Language Models", Merity et al. 2017, uses the
// same shape): Embedding -> Dropout -> LSTM -> Dropout -> Linear -> log_softmax, with the
// decoder's weight optionally tied to the embedding ("Using the Output Embedding to Improve
// Language Models", Press and Wolf 2016). Names are the example's, so its state_dict loads by
// name: encoder.weight, rnn.weight_ih_l0, ..., decoder.weight, decoder.bias.
//
//   kiln::models::LSTMLM model(kiln::models::LSTMLMOptions(10000, 200, 200, 2).tie_weights(true));
//   auto hidden = model->init_hidden(batch);
//   auto [log_probs, next] = model(tokens, hidden);  // tokens [T, B] -> [T*B, ntoken]
//   auto loss = kiln::nn::functional::nll_loss(log_probs, targets);
#pragma once

#include <kiln/nn/module.h>
#include <kiln/nn/modules/dropout.h>
#include <kiln/nn/modules/embedding.h>
#include <kiln/nn/modules/linear.h>
#include <kiln/nn/modules/rnn.h>
#include <kiln/nn/options.h>

#include <cstdint>
#include <tuple>

namespace kiln::models {

struct LSTMLMOptions {
  LSTMLMOptions(int64_t ntoken, int64_t ninp, int64_t nhid, int64_t nlayers)
      : ntoken_(ntoken), ninp_(ninp), nhid_(nhid), nlayers_(nlayers) {}
  // Vocabulary size.
  KILN_ARG(int64_t, ntoken);
  // Embedding size.
  KILN_ARG(int64_t, ninp);
  // LSTM hidden size.
  KILN_ARG(int64_t, nhid);
  KILN_ARG(int64_t, nlayers);
  // Dropout on the embeddings, between LSTM layers and on the LSTM's output.
  KILN_ARG(double, dropout) = 0.5;
  // The decoder uses the embedding's weight (nhid must equal ninp).
  KILN_ARG(bool, tie_weights) = false;
};

class KILN_API LSTMLMImpl : public nn::Module {
 public:
  explicit LSTMLMImpl(const LSTMLMOptions& options);

  // The example's initialisation: encoder and decoder weights uniform in +-0.1, decoder bias 0
  // (the LSTM keeps its own).
  void init_weights();
  // tokens [T, B] (int64) and (h, c) [nlayers, B, nhid] -> (log-probabilities [T*B, ntoken],
  // the final (h, c)).
  std::tuple<Tensor, std::tuple<Tensor, Tensor>> forward(const Tensor& input,
                                                         std::tuple<Tensor, Tensor> hidden);
  // Zero states for a batch of `batch`, of the parameters' dtype and device.
  std::tuple<Tensor, Tensor> init_hidden(int64_t batch) const;

  LSTMLMOptions options;
  nn::Dropout drop{nullptr};
  nn::Embedding encoder{nullptr};
  nn::LSTM rnn{nullptr};
  nn::Linear decoder{nullptr};
};
KILN_MODULE(LSTMLM);

}  // namespace kiln::models
