#!/usr/bin/env python3
"""Writes tests/golden/rnn_cases.txt: the recurrent layers and cells of kiln::nn (RNN, LSTM with
and without projections, GRU, their cells, packed sequences) and the word-language-model LSTM,
computed by PyTorch (run with Debian's /usr/bin/python3, torch.manual_seed(0), float64). The
format is nn_cases.txt's (see make_nn_golden.py). A layer case stores its input "x", initial
states "h0" ("c0"), every parameter as "p.<name>" (PyTorch's names), the outputs "out", "hn"
("cn"), the weights "g_out", "g_hn" ("g_cn") of the loss sum(out * g_out) + sum(hn * g_hn) +
sum(cn * g_cn), and the gradients "grad.<name>" of every parameter and "grad_x", "grad_h0"
("grad_c0"). Packed cases store padded input, "lengths", and the padded output; strings give
the options.
"""
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

torch.manual_seed(0)
torch.set_default_dtype(torch.float64)
lines = []


def put(case, field, t):
    t = t.detach()
    dtype = "int64" if t.dtype == torch.int64 else "float64"
    values = t.reshape(-1).tolist()
    shape = ",".join(str(s) for s in t.shape)
    text = " ".join(str(v) if dtype == "int64" else repr(float(v)) for v in values)
    lines.append(f"t {case} {field} {dtype} [{shape}] {text}".rstrip())


def put_str(case, field, value):
    lines.append(f"s {case} {field} {value}")


def leaf(*shape):
    return (torch.rand(*shape) * 2 - 1).requires_grad_()


def record_params(case, module):
    for name, p in module.named_parameters():
        put(case, "p." + name, p)


def record_grads(case, module, inputs):
    for name, p in module.named_parameters():
        put(case, "grad." + name, p.grad)
    for name, t in inputs.items():
        if t is not None:
            put(case, "grad_" + name, t.grad)


def finish(case, module, inputs, outputs):
    loss = 0
    for name, t in outputs.items():
        put(case, name, t)
        g = torch.rand(t.shape) * 2 - 1
        put(case, "g_" + name, g)
        loss = loss + (t * g).sum()
    loss.backward()
    record_grads(case, module, inputs)


def options(case, **kw):
    for k, v in kw.items():
        put_str(case, k, str(v).lower() if isinstance(v, bool) else v)


def layer_case(case, kind, x_shape, with_state, **kw):
    cls = {"lstm": nn.LSTM, "gru": nn.GRU, "rnn": nn.RNN}[kind]
    module = cls(**kw)
    options(case, kind=kind, **kw)
    record_params(case, module)
    x = leaf(*x_shape)
    put(case, "x", x)
    dirs = 2 if kw.get("bidirectional", False) else 1
    layers = kw.get("num_layers", 1)
    batch = x_shape[0] if kw.get("batch_first", False) else x_shape[1]
    proj = kw.get("proj_size", 0)
    out_size = proj if proj > 0 else kw["hidden_size"]
    inputs = {"x": x}
    if kind == "lstm":
        h0 = c0 = None
        if with_state:
            h0 = leaf(layers * dirs, batch, out_size)
            c0 = leaf(layers * dirs, batch, kw["hidden_size"])
            put(case, "h0", h0)
            put(case, "c0", c0)
            inputs.update(h0=h0, c0=c0)
            out, (hn, cn) = module(x, (h0, c0))
        else:
            out, (hn, cn) = module(x)
        finish(case, module, inputs, {"out": out, "hn": hn, "cn": cn})
    else:
        if with_state:
            h0 = leaf(layers * dirs, batch, out_size)
            put(case, "h0", h0)
            inputs["h0"] = h0
            out, hn = module(x, h0)
        else:
            out, hn = module(x)
        finish(case, module, inputs, {"out": out, "hn": hn})


def layer_cases():
    layer_case("lstm_2layer", "lstm", (4, 3, 5), True, input_size=5, hidden_size=7,
               num_layers=2)
    layer_case("lstm_bidir_batch_first", "lstm", (3, 4, 5), False, input_size=5,
               hidden_size=6, num_layers=2, bidirectional=True, batch_first=True)
    layer_case("lstm_proj_bidir", "lstm", (4, 3, 5), True, input_size=5, hidden_size=8,
               num_layers=2, proj_size=3, bidirectional=True)
    layer_case("lstm_nobias", "lstm", (3, 2, 4), True, input_size=4, hidden_size=5, bias=False)
    layer_case("gru_2layer_bidir", "gru", (4, 3, 5), True, input_size=5, hidden_size=6,
               num_layers=2, bidirectional=True)
    layer_case("gru_batch_first", "gru", (2, 5, 3), False, input_size=3, hidden_size=4,
               batch_first=True)
    layer_case("rnn_tanh_2layer", "rnn", (4, 3, 5), True, input_size=5, hidden_size=6,
               num_layers=2)
    layer_case("rnn_relu_bidir_nobias", "rnn", (3, 4, 2), True, input_size=2, hidden_size=5,
               nonlinearity="relu", bidirectional=True, batch_first=True, bias=False)


def packed_case(case, kind, lengths, enforce_sorted, batch_first, **kw):
    cls = {"lstm": nn.LSTM, "gru": nn.GRU, "rnn": nn.RNN}[kind]
    module = cls(batch_first=batch_first, **kw)
    options(case, kind=kind, batch_first=batch_first, enforce_sorted=enforce_sorted, **kw)
    record_params(case, module)
    steps, batch = max(lengths), len(lengths)
    x = leaf(batch, steps, kw["input_size"]) if batch_first else leaf(steps, batch,
                                                                     kw["input_size"])
    put(case, "x", x)
    lengths_t = torch.tensor(lengths, dtype=torch.int64)
    put(case, "lengths", lengths_t)
    packed = pack_padded_sequence(x, lengths_t, batch_first, enforce_sorted)
    put(case, "packed_data", packed.data)
    put(case, "batch_sizes", packed.batch_sizes)
    if packed.sorted_indices is not None:
        put(case, "sorted_indices", packed.sorted_indices)
    dirs = 2 if kw.get("bidirectional", False) else 1
    layers = kw.get("num_layers", 1)
    proj = kw.get("proj_size", 0)
    out_size = proj if proj > 0 else kw["hidden_size"]
    h0 = leaf(layers * dirs, batch, out_size)
    put(case, "h0", h0)
    inputs = {"x": x, "h0": h0}
    if kind == "lstm":
        c0 = leaf(layers * dirs, batch, kw["hidden_size"])
        put(case, "c0", c0)
        inputs["c0"] = c0
        out, (hn, cn) = module(packed, (h0, c0))
        outputs = {"hn": hn, "cn": cn}
    else:
        out, hn = module(packed, h0)
        outputs = {"hn": hn}
    padded, out_lengths = pad_packed_sequence(out, batch_first, padding_value=0.5,
                                              total_length=steps + 1)
    put(case, "out_lengths", out_lengths)
    outputs = {"out": padded, **outputs}
    finish(case, module, inputs, outputs)


def packed_cases():
    packed_case("packed_lstm_bidir_unsorted", "lstm", [3, 5, 1, 4], False, False, input_size=3,
                hidden_size=4, num_layers=2, bidirectional=True)
    packed_case("packed_lstm_proj_batch_first", "lstm", [4, 3, 3, 1], True, True, input_size=3,
                hidden_size=5, proj_size=2)
    packed_case("packed_gru_bidir", "gru", [5, 4, 2], True, False, input_size=2, hidden_size=3,
                bidirectional=True)
    packed_case("packed_rnn_tanh_unsorted", "rnn", [2, 4, 3], False, True, input_size=3,
                hidden_size=4, num_layers=2)


def cell_case(case, kind, batch, **kw):
    cls = {"lstm": nn.LSTMCell, "gru": nn.GRUCell, "rnn": nn.RNNCell}[kind]
    module = cls(**kw)
    options(case, kind=kind, **kw)
    record_params(case, module)
    x = leaf(batch, kw["input_size"])
    h0 = leaf(batch, kw["hidden_size"])
    put(case, "x", x)
    put(case, "h0", h0)
    inputs = {"x": x, "h0": h0}
    if kind == "lstm":
        c0 = leaf(batch, kw["hidden_size"])
        put(case, "c0", c0)
        inputs["c0"] = c0
        hn, cn = module(x, (h0, c0))
        finish(case, module, inputs, {"hn": hn, "cn": cn})
    else:
        finish(case, module, inputs, {"hn": module(x, h0)})


def cell_cases():
    cell_case("cell_lstm", "lstm", 3, input_size=4, hidden_size=5)
    cell_case("cell_gru", "gru", 3, input_size=4, hidden_size=5)
    cell_case("cell_gru_nobias", "gru", 2, input_size=3, hidden_size=4, bias=False)
    cell_case("cell_rnn_tanh", "rnn", 3, input_size=4, hidden_size=5)
    cell_case("cell_rnn_relu", "rnn", 3, input_size=4, hidden_size=5, nonlinearity="relu")


class RNNModel(nn.Module):
    """PyTorch's examples/word_language_model RNNModel with rnn_type "LSTM"."""

    def __init__(self, ntoken, ninp, nhid, nlayers, dropout=0.5, tie_weights=False):
        super().__init__()
        self.ntoken = ntoken
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid, nlayers, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        if tie_weights:
            self.decoder.weight = self.encoder.weight
        initrange = 0.1
        nn.init.uniform_(self.encoder.weight, -initrange, initrange)
        nn.init.zeros_(self.decoder.bias)
        nn.init.uniform_(self.decoder.weight, -initrange, initrange)
        self.nlayers, self.nhid = nlayers, nhid

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        decoded = self.decoder(output).view(-1, self.ntoken)
        return F.log_softmax(decoded, dim=1), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        return (weight.new_zeros(self.nlayers, bsz, self.nhid),
                weight.new_zeros(self.nlayers, bsz, self.nhid))


def lm_case(case, tie):
    ntoken, ninp, nhid, nlayers, seq, batch = 11, 6, 6, 2, 5, 3
    model = RNNModel(ntoken, ninp, nhid, nlayers, dropout=0.0, tie_weights=tie)
    options(case, ntoken=ntoken, ninp=ninp, nhid=nhid, nlayers=nlayers, tie_weights=tie)
    for name, p in model.state_dict().items():
        put(case, "p." + name, p)
    data = torch.randint(0, ntoken, (seq, batch))
    targets = torch.randint(0, ntoken, (seq * batch,))
    put(case, "data", data)
    put(case, "targets", targets)
    hidden = model.init_hidden(batch)
    output, hidden = model(data, hidden)
    loss = nn.NLLLoss()(output, targets)
    put(case, "loss", loss)
    put(case, "hn", hidden[0])
    put(case, "cn", hidden[1])
    loss.backward()
    for name, p in model.named_parameters():
        put(case, "grad." + name, p.grad)
    # the example's update: clip_grad_norm_(0.25), then p -= lr * grad
    torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
    for p in model.parameters():
        p.data.add_(p.grad, alpha=-20.0)
    for name, p in model.named_parameters():
        put(case, "updated." + name, p)


def main():
    layer_cases()
    packed_cases()
    cell_cases()
    lm_case("lstm_lm", False)
    lm_case("lstm_lm_tied", True)
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "rnn_cases.txt")
    with open(path, "w") as f:
        f.write(f"# PyTorch {torch.__version__}; written by make_rnn_golden.py\n")
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
