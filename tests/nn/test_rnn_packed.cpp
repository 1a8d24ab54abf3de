// Packed sequences (kiln::nn::utils::rnn) against PyTorch's goldens (make_rnn_golden.py):
// pack_padded_sequence's data, batch sizes and sort, layers over packed input (final states of
// each sequence, outputs padded back with padding_value and total_length) and their gradients;
// pad_sequence, pack_sequence, and the errors of PyTorch.
#include "rnn_golden.h"

namespace nn = kiln::nn;
namespace rnn_utils = kiln::nn::utils::rnn;
using kiln::Tensor;
using nn_test::check_close;
using nn_test::golden;
using rnn_test::bool_option;
using rnn_test::int_option;
using rnn_test::option;

namespace {

void check_packed_case(const std::string& name) {
  const std::string kind = option(name, "kind");
  const int64_t in = int_option(name, "input_size", 0), hidden = int_option(name, "hidden_size", 0);
  const int64_t layers = int_option(name, "num_layers", 1);
  const bool bf = bool_option(name, "batch_first", false);
  const bool bidir = bool_option(name, "bidirectional", false);
  const bool sorted = bool_option(name, "enforce_sorted", true);
  Tensor x = golden(name, "x", std::nullopt, true), h0 = golden(name, "h0", std::nullopt, true);
  Tensor lengths = golden(name, "lengths");
  std::map<std::string, Tensor> inputs{{"x", x}, {"h0", h0}};
  rnn_utils::PackedSequence packed = rnn_utils::pack_padded_sequence(x, lengths, bf, sorted);
  check_close(packed.data(), golden(name, "packed_data"), 0, 0, name + " packed data");
  check_close(packed.batch_sizes(), golden(name, "batch_sizes"), 0, 0, name + " batch_sizes");
  BOOST_TEST(packed.batch_sizes().device().type() == kiln::kCPU);
  if (!sorted) {
    check_close(packed.sorted_indices(), golden(name, "sorted_indices"), 0, 0,
                name + " sorted_indices");
  }
  const int64_t steps = kiln::amax(lengths).item<int64_t>();
  std::map<std::string, Tensor> outputs;
  rnn_utils::PackedSequence out_packed(Tensor{}, Tensor{});
  std::shared_ptr<nn::Module> module;
  if (kind == "lstm") {
    nn::LSTM m(nn::LSTMOptions(in, hidden)
                   .num_layers(layers)
                   .batch_first(bf)
                   .bidirectional(bidir)
                   .proj_size(int_option(name, "proj_size", 0)));
    rnn_test::load_parameters(*m, name);
    Tensor c0 = golden(name, "c0", std::nullopt, true);
    inputs["c0"] = c0;
    auto [out, state] = m->forward_with_packed_input(packed, std::make_tuple(h0, c0));
    out_packed = out;
    outputs = {{"hn", std::get<0>(state)}, {"cn", std::get<1>(state)}};
    module = m.ptr();
  } else if (kind == "gru") {
    nn::GRU m(nn::GRUOptions(in, hidden).num_layers(layers).batch_first(bf).bidirectional(bidir));
    rnn_test::load_parameters(*m, name);
    auto [out, hn] = m->forward_with_packed_input(packed, h0);
    out_packed = out;
    outputs = {{"hn", hn}};
    module = m.ptr();
  } else {
    nn::RNN m(nn::RNNOptions(in, hidden).num_layers(layers).batch_first(bf).bidirectional(bidir));
    rnn_test::load_parameters(*m, name);
    auto [out, hn] = m->forward_with_packed_input(packed, h0);
    out_packed = out;
    outputs = {{"hn", hn}};
    module = m.ptr();
  }
  auto [padded, out_lengths] = rnn_utils::pad_packed_sequence(out_packed, bf, 0.5, steps + 1);
  check_close(out_lengths, golden(name, "out_lengths"), 0, 0, name + " out_lengths");
  outputs["out"] = padded;
  rnn_test::check_outputs_and_gradients(name, *module, outputs, inputs);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(rnn_packed)

BOOST_AUTO_TEST_CASE(layers_over_packed_sequences_match_pytorch) {
  for (const char* name : {"packed_lstm_bidir_unsorted", "packed_lstm_proj_batch_first",
                           "packed_gru_bidir", "packed_rnn_tanh_unsorted"}) {
    BOOST_TEST_CONTEXT(name) { check_packed_case(name); }
  }
}

BOOST_AUTO_TEST_CASE(pad_and_pack_sequence) {
  Tensor a = kiln::arange(6, kiln::kDouble).view({3, 2});
  Tensor b = kiln::arange(6, 8, kiln::kDouble).view({1, 2});
  Tensor c = kiln::arange(8, 12, kiln::kDouble).view({2, 2});
  Tensor padded = rnn_utils::pad_sequence({a, b, c}, /*batch_first=*/true, -1);
  BOOST_TEST(padded.sizes() == kiln::IntArrayRef({3, 3, 2}));
  std::vector<double> want_b = {6, 7, -1, -1, -1, -1};
  check_close(padded[1], kiln::from_blob(want_b.data(), {3, 2}, kiln::kDouble), 0, 0, "padded b");
  Tensor time_major = rnn_utils::pad_sequence({a, b, c}, false, -1);
  check_close(time_major, padded.transpose(0, 1), 0, 0, "time major");
  CHECK_ERROR(kiln::ValueError, rnn_utils::pack_sequence({a, b, c}),
              "must be sorted in decreasing order when `enforce_sorted` is True");
  rnn_utils::PackedSequence packed = rnn_utils::pack_sequence({a, b, c}, false);
  // steps: a0 c0 b0 | a1 c1 | a2
  check_close(packed.batch_sizes(), kiln::arange(3, 0, -1, kiln::kLong), 0, 0, "batch_sizes");
  check_close(packed.data().select(1, 0),
              kiln::from_blob(std::vector<double>{0, 8, 6, 2, 10, 4}.data(), {6}, kiln::kDouble), 0,
              0, "packed data");
  auto [back, lengths] = rnn_utils::pad_packed_sequence(packed, true, -1);
  check_close(back, padded, 0, 0, "round trip");
  check_close(lengths, kiln::from_blob(std::vector<int64_t>{3, 1, 2}.data(), {3}, kiln::kLong), 0,
              0, "lengths");
  check_close(rnn_utils::invert_permutation(packed.sorted_indices()), packed.unsorted_indices(), 0,
              0, "unsorted_indices");
}

BOOST_AUTO_TEST_CASE(packing_errors_are_pytorchs) {
  Tensor x = kiln::zeros({4, 3, 2});
  auto lengths = [](std::vector<int64_t> v) {
    return kiln::from_blob(v.data(), {static_cast<int64_t>(v.size())}, kiln::kLong).clone();
  };
  CHECK_ERROR(kiln::ValueError, rnn_utils::pack_padded_sequence(x, lengths({2, 4, 1})),
              "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True",
              "enforce_sorted=False");
  CHECK_ERROR(kiln::ValueError, rnn_utils::pack_padded_sequence(x, lengths({4, 1})),
              "Expected `len(lengths)` to be equal to batch_size, but got 2 (batch_size=3)");
  CHECK_ERROR(kiln::ValueError, rnn_utils::pack_padded_sequence(x, lengths({4, 2, 0})),
              "Length of all samples has to be greater than 0");
  CHECK_ERROR(kiln::ValueError, rnn_utils::pack_padded_sequence(x, lengths({5, 2, 1})),
              "exceeds the input's 4 steps");
  CHECK_ERROR(kiln::ValueError, rnn_utils::pack_padded_sequence(x, lengths({4, 2, 1}).view({1, 3})),
              "'lengths' argument should be a 1D CPU int64 tensor, but got 2D cpu");
  rnn_utils::PackedSequence packed = rnn_utils::pack_padded_sequence(x, lengths({4, 2, 1}));
  CHECK_ERROR(kiln::ValueError, rnn_utils::pad_packed_sequence(packed, false, 0, 3),
              "Expected total_length to be at least the length of the longest sequence in input, "
              "but got total_length=3 and max sequence length being 4");
  CHECK_ERROR(kiln::ValueError, rnn_utils::pad_sequence({kiln::zeros({2, 3}), kiln::zeros({2, 4})}),
              "pad_sequence", "[2, 4]");
  // the layer checks packed input's rank
  nn::LSTM lstm(2, 3);
  rnn_utils::PackedSequence bad(kiln::zeros({7, 1, 2}), packed.batch_sizes());
  CHECK_ERROR(kiln::ValueError, lstm->forward_with_packed_input(bad),
              "LSTM: input must have 2 dimensions, got 3");
}

BOOST_AUTO_TEST_SUITE_END()
