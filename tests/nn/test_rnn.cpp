// RNN, LSTM and GRU layers and their cells against PyTorch's goldens (tests/golden/
// make_rnn_golden.py): outputs, final states and the gradients of every parameter, the input and
// the initial states, for stacked, bidirectional, batch_first, projected and bias-free layers;
// parameter names, initialisation, printing, dropout between layers, autocast dtypes and errors.
#include "rnn_golden.h"

#include <kiln/amp.h>

#include <cmath>

namespace nn = kiln::nn;
using kiln::Tensor;
using nn_test::golden;
using rnn_test::bool_option;
using rnn_test::int_option;
using rnn_test::option;

namespace {

// Runs layer case `name`: the module its options describe, PyTorch's weights, its input and
// initial states; checks outputs and gradients.
void check_layer_case(const std::string& name) {
  const std::string kind = option(name, "kind");
  const int64_t in = int_option(name, "input_size", 0), hidden = int_option(name, "hidden_size", 0);
  const int64_t layers = int_option(name, "num_layers", 1);
  const bool bias = bool_option(name, "bias", true), bf = bool_option(name, "batch_first", false);
  const bool bidir = bool_option(name, "bidirectional", false);
  const bool with_state = nn_test::golden_case(name).tensors.count("h0") != 0;
  Tensor x = golden(name, "x", std::nullopt, true);
  std::map<std::string, Tensor> inputs{{"x", x}};
  Tensor h0 = with_state ? golden(name, "h0", std::nullopt, true) : Tensor();
  if (with_state) inputs["h0"] = h0;
  if (kind == "lstm") {
    nn::LSTM m(nn::LSTMOptions(in, hidden)
                   .num_layers(layers)
                   .bias(bias)
                   .batch_first(bf)
                   .bidirectional(bidir)
                   .proj_size(int_option(name, "proj_size", 0)));
    rnn_test::load_parameters(*m, name);
    std::tuple<Tensor, std::tuple<Tensor, Tensor>> r;
    if (with_state) {
      Tensor c0 = golden(name, "c0", std::nullopt, true);
      inputs["c0"] = c0;
      r = m(x, std::make_tuple(h0, c0));
    } else {
      r = m(x);
    }
    auto [out, state] = r;
    rnn_test::check_outputs_and_gradients(
        name, *m, {{"out", out}, {"hn", std::get<0>(state)}, {"cn", std::get<1>(state)}}, inputs);
  } else if (kind == "gru") {
    nn::GRU m(nn::GRUOptions(in, hidden)
                  .num_layers(layers)
                  .bias(bias)
                  .batch_first(bf)
                  .bidirectional(bidir));
    rnn_test::load_parameters(*m, name);
    auto [out, hn] = m(x, h0);
    rnn_test::check_outputs_and_gradients(name, *m, {{"out", out}, {"hn", hn}}, inputs);
  } else {
    nn::RNNOptions o(in, hidden);
    o.num_layers(layers).bias(bias).batch_first(bf).bidirectional(bidir);
    if (option(name, "nonlinearity") == "relu") o.nonlinearity(kiln::kReLU);
    nn::RNN m(o);
    rnn_test::load_parameters(*m, name);
    auto [out, hn] = m(x, h0);
    rnn_test::check_outputs_and_gradients(name, *m, {{"out", out}, {"hn", hn}}, inputs);
  }
}

void check_cell_case(const std::string& name) {
  const std::string kind = option(name, "kind");
  const int64_t in = int_option(name, "input_size", 0), hidden = int_option(name, "hidden_size", 0);
  const bool bias = bool_option(name, "bias", true);
  Tensor x = golden(name, "x", std::nullopt, true), h0 = golden(name, "h0", std::nullopt, true);
  std::map<std::string, Tensor> inputs{{"x", x}, {"h0", h0}};
  if (kind == "lstm") {
    nn::LSTMCell m(nn::LSTMCellOptions(in, hidden).bias(bias));
    rnn_test::load_parameters(*m, name);
    Tensor c0 = golden(name, "c0", std::nullopt, true);
    inputs["c0"] = c0;
    auto [hn, cn] = m(x, std::make_tuple(h0, c0));
    rnn_test::check_outputs_and_gradients(name, *m, {{"hn", hn}, {"cn", cn}}, inputs);
  } else if (kind == "gru") {
    nn::GRUCell m(nn::GRUCellOptions(in, hidden).bias(bias));
    rnn_test::load_parameters(*m, name);
    rnn_test::check_outputs_and_gradients(name, *m, {{"hn", m(x, h0)}}, inputs);
  } else {
    nn::RNNCellOptions o(in, hidden);
    o.bias(bias);
    if (option(name, "nonlinearity") == "relu") o.nonlinearity(kiln::kReLU);
    nn::RNNCell m(o);
    rnn_test::load_parameters(*m, name);
    rnn_test::check_outputs_and_gradients(name, *m, {{"hn", m(x, h0)}}, inputs);
  }
}

std::string printed(const nn::Module& m) {
  std::ostringstream out;
  out << m;
  return out.str();
}

std::vector<std::string> names_of(const nn::Module& m) {
  std::vector<std::string> names;
  for (const auto& item : m.named_parameters()) {
    std::ostringstream s;
    s << item.key() << item.value().sizes();
    names.push_back(s.str());
  }
  return names;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(rnn)

BOOST_AUTO_TEST_CASE(layers_match_pytorch) {
  for (const char* name :
       {"lstm_2layer", "lstm_bidir_batch_first", "lstm_proj_bidir", "lstm_nobias",
        "gru_2layer_bidir", "gru_batch_first", "rnn_tanh_2layer", "rnn_relu_bidir_nobias"}) {
    BOOST_TEST_CONTEXT(name) { check_layer_case(name); }
  }
}

BOOST_AUTO_TEST_CASE(cells_match_pytorch) {
  for (const char* name :
       {"cell_lstm", "cell_gru", "cell_gru_nobias", "cell_rnn_tanh", "cell_rnn_relu"}) {
    BOOST_TEST_CONTEXT(name) { check_cell_case(name); }
  }
}

BOOST_AUTO_TEST_CASE(parameter_names_and_shapes_are_pytorchs) {
  nn::LSTM lstm(nn::LSTMOptions(10, 20).num_layers(2).bidirectional(true).proj_size(5));
  std::vector<std::string> want = {"weight_ih_l0[80, 10]",
                                   "weight_hh_l0[80, 5]",
                                   "bias_ih_l0[80]",
                                   "bias_hh_l0[80]",
                                   "weight_hr_l0[5, 20]",
                                   "weight_ih_l0_reverse[80, 10]",
                                   "weight_hh_l0_reverse[80, 5]",
                                   "bias_ih_l0_reverse[80]",
                                   "bias_hh_l0_reverse[80]",
                                   "weight_hr_l0_reverse[5, 20]",
                                   "weight_ih_l1[80, 10]",
                                   "weight_hh_l1[80, 5]",
                                   "bias_ih_l1[80]",
                                   "bias_hh_l1[80]",
                                   "weight_hr_l1[5, 20]",
                                   "weight_ih_l1_reverse[80, 10]",
                                   "weight_hh_l1_reverse[80, 5]",
                                   "bias_ih_l1_reverse[80]",
                                   "bias_hh_l1_reverse[80]",
                                   "weight_hr_l1_reverse[5, 20]"};
  BOOST_TEST(names_of(*lstm) == want, boost::test_tools::per_element());
  nn::GRU gru(nn::GRUOptions(3, 4).bias(false));
  BOOST_TEST(names_of(*gru) ==
                 std::vector<std::string>({"weight_ih_l0[12, 3]", "weight_hh_l0[12, 4]"}),
             boost::test_tools::per_element());
  nn::LSTMCell cell(3, 4);
  BOOST_TEST(names_of(*cell) == std::vector<std::string>({"weight_ih[16, 3]", "weight_hh[16, 4]",
                                                          "bias_ih[16]", "bias_hh[16]"}),
             boost::test_tools::per_element());
  BOOST_TEST(lstm->all_weights().size() == 20u);
  lstm->flatten_parameters();  // a no-op, as libtorch's on the CPU
}

BOOST_AUTO_TEST_CASE(initialisation_is_uniform_in_one_over_sqrt_hidden) {
  kiln::manual_seed(3);
  nn::LSTM lstm(nn::LSTMOptions(30, 16).num_layers(2));
  const double bound = 0.25;
  double largest = 0;
  for (const Tensor& p : lstm->parameters()) {
    largest = std::max(largest, kiln::amax(kiln::abs(p)).item<double>());
  }
  BOOST_TEST(largest <= bound);
  BOOST_TEST(largest > 0.9 * bound);  // spread over the whole range
  nn::GRUCell cell(8, 4);
  for (const Tensor& p : cell->parameters())
    BOOST_TEST(kiln::amax(kiln::abs(p)).item<double>() <= 0.5);
}

BOOST_AUTO_TEST_CASE(modules_print_as_libtorch) {
  BOOST_TEST(printed(*nn::LSTM(nn::LSTMOptions(10, 20).num_layers(2))) ==
             "kiln::nn::LSTM(input_size=10, hidden_size=20, num_layers=2, bias=true, "
             "batch_first=false, dropout=0, bidirectional=false)");
  BOOST_TEST(printed(*nn::LSTM(nn::LSTMOptions(10, 20).proj_size(5).dropout(0.5).num_layers(2))) ==
             "kiln::nn::LSTM(input_size=10, hidden_size=20, num_layers=2, bias=true, "
             "batch_first=false, dropout=0.5, bidirectional=false, proj_size=5)");
  BOOST_TEST(printed(*nn::GRU(nn::GRUOptions(3, 4).batch_first(true).bidirectional(true))) ==
             "kiln::nn::GRU(input_size=3, hidden_size=4, num_layers=1, bias=true, "
             "batch_first=true, dropout=0, bidirectional=true)");
  BOOST_TEST(printed(*nn::RNN(nn::RNNOptions(3, 4).nonlinearity(kiln::kReLU).bias(false))) ==
             "kiln::nn::RNN(input_size=3, hidden_size=4, num_layers=1, bias=false, "
             "batch_first=false, dropout=0, bidirectional=false)");
  BOOST_TEST(printed(*nn::LSTMCell(10, 20)) == "kiln::nn::LSTMCell(10, 20)");
  BOOST_TEST(printed(*nn::GRUCell(nn::GRUCellOptions(3, 4).bias(false))) ==
             "kiln::nn::GRUCell(3, 4, bias=false)");
  BOOST_TEST(printed(*nn::RNNCell(nn::RNNCellOptions(3, 4).nonlinearity(kiln::kReLU))) ==
             "kiln::nn::RNNCell(3, 4, nonlinearity=kReLU)");
}

BOOST_AUTO_TEST_CASE(default_states_are_zeros_and_unbatched_input_works) {
  kiln::manual_seed(1);
  nn::GRU gru(nn::GRUOptions(3, 4).num_layers(2));
  Tensor x = kiln::randn({5, 2, 3});
  auto [out, hn] = gru(x);
  auto [out0, hn0] = gru(x, kiln::zeros({2, 2, 4}));
  nn_test::check_close(out, out0, 0, 0, "default h0");
  // one sequence without its batch dimension, as PyTorch
  auto [single, h_single] = gru(x.select(1, 1), kiln::zeros({2, 4}));
  BOOST_TEST(single.sizes() == kiln::IntArrayRef({5, 4}));
  nn_test::check_close(single, out.select(1, 1), 1e-6, 1e-6, "unbatched output");
  nn_test::check_close(h_single, hn.select(1, 1), 1e-6, 1e-6, "unbatched state");
  nn::LSTMCell cell(3, 4);
  auto [h, c] = cell(x[0][0]);
  BOOST_TEST(h.sizes() == kiln::IntArrayRef({4}));
  auto [hb, cb] = cell(x[0]);
  nn_test::check_close(c, cb[0], 1e-6, 1e-6, "unbatched cell");
}

BOOST_AUTO_TEST_CASE(dropout_applies_between_layers_in_training_only) {
  kiln::manual_seed(2);
  nn::LSTM lstm(nn::LSTMOptions(3, 4).num_layers(2).dropout(1.0));
  Tensor a = kiln::randn({4, 2, 3}), b = kiln::randn({4, 2, 3});
  // p = 1 zeroes the first layer's output: the second layer sees zeros whatever the input
  auto out_a = std::get<0>(lstm(a)), out_b = std::get<0>(lstm(b));
  nn_test::check_close(out_a, out_b, 0, 0, "dropout 1 in training");
  lstm->eval();
  auto eval_a = std::get<0>(lstm(a)), eval_b = std::get<0>(lstm(b));
  BOOST_TEST(!kiln::allclose(eval_a, eval_b));
  // the last layer's output is never dropped
  BOOST_TEST(kiln::all(kiln::ne(out_a, 0)).item<bool>());
}

BOOST_AUTO_TEST_CASE(autocast_on_cpu_follows_pytorch) {
  // PyTorch 1.13's CPU lists leave the recurrent operators to their parts: linear runs in
  // bfloat16 and float32 states promote what they touch (checked with torch.autocast("cpu")).
  kiln::manual_seed(4);
  Tensor x = kiln::randn({3, 2, 4});
  kiln::amp::autocast region(kiln::kCPU);
  auto [lstm_out, lstm_state] = nn::LSTM(4, 5)(x);
  BOOST_TEST(lstm_out.dtype() == kiln::kFloat);
  auto [proj_out, proj_state] = nn::LSTM(nn::LSTMOptions(4, 5).proj_size(2))(x);
  BOOST_TEST(proj_out.dtype() == kiln::kBFloat16);
  BOOST_TEST(std::get<1>(proj_state).dtype() == kiln::kFloat);
  BOOST_TEST(std::get<0>(nn::GRU(4, 5)(x)).dtype() == kiln::kFloat);
  auto [rnn_out, rnn_h] = nn::RNN(4, 5)(x);
  BOOST_TEST(rnn_out.dtype() == kiln::kBFloat16);
  BOOST_TEST(rnn_h.dtype() == kiln::kBFloat16);
  BOOST_TEST(nn::RNNCell(4, 5)(x[0]).dtype() == kiln::kBFloat16);
  BOOST_TEST(nn::GRUCell(4, 5)(x[0]).dtype() == kiln::kFloat);
  BOOST_TEST(std::get<1>(nn::LSTMCell(4, 5)(x[0])).dtype() == kiln::kFloat);
}

BOOST_AUTO_TEST_CASE(errors_name_the_shapes) {
  nn::LSTM lstm(nn::LSTMOptions(5, 7).num_layers(2));
  CHECK_ERROR(kiln::ValueError, lstm(kiln::zeros({1, 2, 3, 5})),
              "LSTM: Expected input to be 2-D or 3-D but received 4-D tensor", "[1, 2, 3, 5]");
  CHECK_ERROR(kiln::ValueError, lstm(kiln::zeros({4, 3, 6})),
              "input.size(-1) must be equal to input_size. Expected 5, got 6");
  CHECK_ERROR(kiln::ValueError,
              lstm(kiln::zeros({4, 3, 5}),
                   std::make_tuple(kiln::zeros({2, 3, 6}), kiln::zeros({2, 3, 7}))),
              "LSTM: Expected hidden[0] size [2, 3, 7], got [2, 3, 6]");
  CHECK_ERROR(kiln::ValueError,
              lstm(kiln::zeros({4, 3, 5}),
                   std::make_tuple(kiln::zeros({2, 3, 7}), kiln::zeros({1, 3, 7}))),
              "Expected hidden[1] size [2, 3, 7], got [1, 3, 7]");
  CHECK_ERROR(kiln::ValueError,
              lstm(kiln::zeros({4, 3, 5}),
                   std::make_tuple(kiln::zeros({3, 7}), kiln::zeros({3, 7}))),
              "For batched 3-D input, hx should also be 3-D but got 2-D tensor");
  nn::GRU gru(4, 6);
  CHECK_ERROR(kiln::ValueError, gru(kiln::zeros({2, 3, 4}), kiln::zeros({1, 2, 6})),
              "GRU: Expected hidden size [1, 3, 6], got [1, 2, 6]");
  CHECK_ERROR(kiln::TypeError, gru(kiln::zeros({2, 3, 4}, kiln::kDouble)),
              "GRU: input must have the type float32, got type float64");
  CHECK_ERROR(kiln::ValueError, nn::LSTM(nn::LSTMOptions(4, 6).proj_size(6)),
              "proj_size has to be smaller than hidden_size");
  CHECK_ERROR(kiln::ValueError, nn::GRU(nn::GRUOptions(4, 6).dropout(1.5)),
              "dropout should be a number in range [0, 1]");
  nn::LSTMCell cell(4, 5);
  CHECK_ERROR(kiln::ValueError, cell(kiln::zeros({2, 3})),
              "lstm_cell: input has inconsistent input_size: got 3, expected 4");
  CHECK_ERROR(kiln::ValueError,
              cell(kiln::zeros({2, 4}), std::make_tuple(kiln::zeros({3, 5}), kiln::zeros({2, 5}))),
              "lstm_cell: expected hx[0] of size [2, 5]", "but got [3, 5]");
  CHECK_ERROR(kiln::ValueError, nn::RNNCell(4, 5)(kiln::zeros({1, 2, 4})),
              "RNNCell: Expected input to be 1D or 2D, got 3D instead");
  // the operator checks its parameter list
  Tensor x = kiln::zeros({2, 1, 3}), h = kiln::zeros({1, 1, 4});
  CHECK_ERROR(kiln::ValueError,
              kiln::gru(x, h, {kiln::zeros({12, 3})}, false, 1, 0, false, false, false),
              "gru: got an incorrect number of RNN parameters: expected 2");
}

BOOST_AUTO_TEST_CASE(cell_operators_pass_gradcheck) {
  kiln::manual_seed(5);
  auto leaf = [](std::vector<int64_t> sizes) {
    return kiln::randn(sizes, kiln::kDouble).requires_grad_();
  };
  Tensor x = leaf({2, 3}), h = leaf({2, 4}), c = leaf({2, 4});
  Tensor w_ih = leaf({16, 3}), w_hh = leaf({16, 4}), b_ih = leaf({16}), b_hh = leaf({16});
  kiln::autograd::Fn lstm = [](const std::vector<Tensor>& in) {
    auto [hy, cy] = kiln::lstm_cell(in[0], {in[1], in[2]}, in[3], in[4], in[5], in[6]);
    return std::vector<Tensor>{hy, cy};
  };
  BOOST_TEST(kiln::autograd::gradcheck(lstm, {x, h, c, w_ih, w_hh, b_ih, b_hh}));
  Tensor g_ih = leaf({12, 3}), g_hh = leaf({12, 4}), gb_ih = leaf({12}), gb_hh = leaf({12});
  kiln::autograd::Fn gru = [](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{kiln::gru_cell(in[0], in[1], in[2], in[3], in[4], in[5])};
  };
  BOOST_TEST(kiln::autograd::gradcheck(gru, {x, h, g_ih, g_hh, gb_ih, gb_hh}));
}

BOOST_AUTO_TEST_SUITE_END()
