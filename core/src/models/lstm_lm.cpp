// The LSTM language model (kiln/models/lstm_lm.h).
#include <kiln/autograd.h>
#include <kiln/models/lstm_lm.h>
#include <kiln/nn/functional.h>
#include <kiln/nn/init.h>

namespace kiln::models {
namespace {

// A Linear whose weight can be replaced by another module's parameter: weight tying keeps one
// tensor, registered in both modules (the model's parameters() lists it once, as PyTorch's).
class TiedLinearImpl : public nn::LinearImpl {
 public:
  using nn::LinearImpl::LinearImpl;
  void tie_weight(const Tensor& shared) {
    weight = shared;
    parameters_["weight"] = shared;
  }
};

}  // namespace

LSTMLMImpl::LSTMLMImpl(const LSTMLMOptions& options) : options(options) {
  KILN_CHECK_VALUE(options.ntoken() > 0 && options.ninp() > 0 && options.nhid() > 0 &&
                       options.nlayers() > 0,
                   "LSTMLM: expected positive ntoken, ninp, nhid and nlayers, but got ",
                   options.ntoken(), ", ", options.ninp(), ", ", options.nhid(), " and ",
                   options.nlayers());
  KILN_CHECK_VALUE(!options.tie_weights() || options.nhid() == options.ninp(),
                   "LSTMLM: When using the tied flag, nhid must be equal to emsize (got nhid=",
                   options.nhid(), ", ninp=", options.ninp(), ")");
  drop = register_module("drop", nn::Dropout(options.dropout()));
  encoder = register_module("encoder", nn::Embedding(options.ntoken(), options.ninp()));
  rnn = register_module("rnn", nn::LSTM(nn::LSTMOptions(options.ninp(), options.nhid())
                                            .num_layers(options.nlayers())
                                            .dropout(options.dropout())));
  auto linear = std::make_shared<TiedLinearImpl>(options.nhid(), options.ntoken());
  if (options.tie_weights()) linear->tie_weight(encoder->weight);
  decoder = register_module("decoder", nn::Linear(std::shared_ptr<nn::LinearImpl>(linear)));
  init_weights();
}

void LSTMLMImpl::init_weights() {
  const double range = 0.1;
  nn::init::uniform_(encoder->weight, -range, range);
  nn::init::zeros_(decoder->bias);
  nn::init::uniform_(decoder->weight, -range, range);
}

std::tuple<Tensor, std::tuple<Tensor, Tensor>> LSTMLMImpl::forward(
    const Tensor& input, std::tuple<Tensor, Tensor> hidden) {
  Tensor emb = drop(encoder(input));
  auto [output, next] = rnn(emb, hidden);
  Tensor decoded = decoder(drop(output)).view({-1, options.ntoken()});
  return {nn::functional::log_softmax(decoded, 1), next};
}

std::tuple<Tensor, Tensor> LSTMLMImpl::init_hidden(int64_t batch) const {
  const Tensor& w = encoder->weight;
  TensorOptions o = TensorOptions(w.dtype()).device(w.device());
  return {zeros({options.nlayers(), batch, options.nhid()}, o),
          zeros({options.nlayers(), batch, options.nhid()}, o)};
}

}  // namespace kiln::models
