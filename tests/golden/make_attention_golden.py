#!/usr/bin/env python3
"""Writes tests/golden/attention_cases.txt: scaled dot-product attention, MultiheadAttention and
the Transformer modules, computed by PyTorch (run with Debian's /usr/bin/python3, torch 1.13).

The format is nn_cases.txt's (see make_nn_golden.py). torch 1.13 has no
F.scaled_dot_product_attention, so its cases use the explicit formula of PyTorch 2.0's math
path in float64 (a boolean mask is true where a key takes part; is_causal keeps key j <= query
i). The module cases run torch.nn's modules in float64 in training mode with dropout 0 (so
1.13's inference fast path never runs); each stores the parameters as "p:<name>", the inputs,
"out" (and "weights"), "gy", and the gradients of sum(out * gy): "grad_<input>" and
"g:<parameter>". Boolean masks are stored as int64 0/1.
"""
import math
import os

import torch
import torch.nn as nn

torch.manual_seed(0)
torch.set_default_dtype(torch.float64)
lines = []


def put(case, field, t):
    t = t.detach()
    if t.dtype == torch.bool:
        t = t.to(torch.int64)
    dtype = "int64" if t.dtype == torch.int64 else "float64"
    values = t.reshape(-1).tolist()
    shape = ",".join(str(s) for s in t.shape)
    text = " ".join(str(v) if dtype == "int64" else repr(float(v)) for v in values)
    lines.append(f"t {case} {field} {dtype} [{shape}] {text}".rstrip())


def leaf(*shape, low=-1.0, high=1.0):
    return (torch.rand(*shape) * (high - low) + low).requires_grad_()


def sdpa(q, k, v, mask=None, is_causal=False):
    """PyTorch 2.0's scaled_dot_product_attention (math path), in float64."""
    L, S = q.size(-2), k.size(-2)
    attn = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if is_causal:
        mask = torch.ones(L, S, dtype=torch.bool).tril()
    if mask is not None:
        if mask.dtype == torch.bool:
            attn = attn.masked_fill(~mask, float("-inf"))
        else:
            attn = attn + mask
    return torch.softmax(attn, -1) @ v


def keep_mask(*shape, p=0.3):
    """A boolean mask (true: take part) in which every query keeps its first key."""
    m = torch.rand(*shape) > p
    m[..., 0] = True
    return m


def sdpa_cases():
    for name, qs, ks, vs, mask, causal in [
        ("sdpa_basic", (2, 3, 5, 8), (2, 3, 7, 8), (2, 3, 7, 6), None, False),
        ("sdpa_bool_mask", (2, 3, 5, 8), (2, 3, 7, 8), (2, 3, 7, 6), keep_mask(5, 7), False),
        ("sdpa_float_mask", (2, 2, 5, 4), (2, 2, 7, 4), (2, 2, 7, 4),
         torch.rand(2, 1, 5, 7) * 2 - 1, False),
        ("sdpa_causal", (2, 2, 5, 4), (2, 2, 7, 4), (2, 2, 7, 3), None, True),
        ("sdpa_3d_causal", (3, 6, 4), (3, 6, 4), (3, 6, 5), None, True),
        ("sdpa_2d", (5, 4), (7, 4), (7, 3), None, False),
        # several tiles of the fused kernel (32 queries x 64 keys), with a mask and causal
        ("sdpa_tiles_mask", (2, 40, 16), (2, 70, 16), (2, 70, 8), keep_mask(2, 40, 70), False),
        ("sdpa_tiles_causal", (1, 2, 70, 16), (1, 2, 70, 16), (1, 2, 70, 8), None, True),
        ("sdpa_tiles_float_mask", (2, 1, 37, 8), (2, 1, 75, 8), (2, 1, 75, 8),
         torch.rand(1, 1, 37, 75) * 4 - 2, False),
    ]:
        q, k, v = leaf(*qs), leaf(*ks), leaf(*vs)
        out = sdpa(q, k, v, mask, causal)
        for field, t in [("q", q), ("k", k), ("v", v)]:
            put(name, field, t)
        if mask is not None:
            put(name, "mask", mask)
        put(name, "causal", torch.tensor([int(causal)]))
        put(name, "out", out)
        gy = torch.rand(out.shape) * 2 - 1
        put(name, "gy", gy)
        (out * gy).sum().backward()
        for field, t in [("q", q), ("k", k), ("v", v)]:
            put(name, "grad_" + field, t.grad)


def record_module(case, module, inputs, outputs):
    """Parameters, inputs (a dict; tensors requiring grad get gradients), outputs (a dict)."""
    for name, p in module.named_parameters():
        put(case, "p:" + name, p)
    for name, t in inputs.items():
        if t is not None:
            put(case, name, t)
    for name, t in outputs.items():
        if t is not None:
            put(case, name, t)
    out = outputs["out"]
    gy = torch.rand(out.shape) * 2 - 1
    put(case, "gy", gy)
    (out * gy).sum().backward()
    for name, t in inputs.items():
        if t is not None and t.requires_grad:
            put(case, "grad_" + name, t.grad)
    for name, p in module.named_parameters():
        put(case, "g:" + name, p.grad)


def randomize(module):
    """Nonzero biases and bias_k/bias_v, so that every parameter shows in the result."""
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.rand(p.shape) - 0.5)


def mha_cases():
    L, S, N, E, H = 5, 6, 3, 8, 2
    m = nn.MultiheadAttention(E, H)
    randomize(m)
    q, k, v = leaf(L, N, E), leaf(S, N, E), leaf(S, N, E)
    kpm = torch.zeros(N, S, dtype=torch.bool)
    kpm[0, 4:] = True
    kpm[2, 1] = True
    am = ~keep_mask(L, S)  # PyTorch's modules: true is masked out
    am[:, 0] = False
    out, w = m(q, k, v, key_padding_mask=kpm, attn_mask=am)
    record_module("mha_masks", m, {"query": q, "key": k, "value": v, "key_padding_mask": kpm,
                                   "attn_mask": am}, {"out": out, "weights": w})

    m = nn.MultiheadAttention(E, H, add_bias_kv=True, add_zero_attn=True, kdim=5, vdim=7)
    randomize(m)
    q, k, v = leaf(L, N, E), leaf(S, N, 5), leaf(S, N, 7)
    am = torch.rand(N * H, L, S) * 2 - 1
    out, w = m(q, k, v, attn_mask=am, average_attn_weights=False)
    record_module("mha_kdim_bias_kv_zero_attn", m,
                  {"query": q, "key": k, "value": v, "attn_mask": am}, {"out": out, "weights": w})

    m = nn.MultiheadAttention(E, 4, bias=False, batch_first=True)
    randomize(m)
    q = leaf(N, L, E)
    out, _ = m(q, q, q, need_weights=False)
    record_module("mha_batch_first_self", m, {"query": q}, {"out": out})

    m = nn.MultiheadAttention(E, H)
    randomize(m)
    q, k = leaf(L, E), leaf(S, E)
    out, w = m(q, k, k)
    record_module("mha_unbatched", m, {"query": q, "key": k}, {"out": out, "weights": w})


def transformer_cases():
    S, T, N, E, H, F = 6, 5, 2, 8, 2, 12
    layer = nn.TransformerEncoderLayer(E, H, F, dropout=0.0)
    randomize(layer)
    src = leaf(S, N, E)
    mask = nn.Transformer.generate_square_subsequent_mask(S)
    kpm = torch.zeros(N, S, dtype=torch.bool)
    kpm[1, 4:] = True
    out = layer(src, src_mask=mask, src_key_padding_mask=kpm)
    record_module("encoder_layer", layer, {"src": src, "src_mask": mask, "kpm": kpm},
                  {"out": out})

    layer = nn.TransformerEncoderLayer(E, H, F, dropout=0.0, activation="gelu", norm_first=True,
                                       batch_first=True, layer_norm_eps=1e-6)
    randomize(layer)
    src = leaf(N, S, E)
    out = layer(src)
    record_module("encoder_layer_gelu_norm_first_batch_first", layer, {"src": src}, {"out": out})

    layer = nn.TransformerDecoderLayer(E, H, F, dropout=0.0)
    randomize(layer)
    tgt, memory = leaf(T, N, E), leaf(S, N, E)
    tmask = nn.Transformer.generate_square_subsequent_mask(T)
    mkpm = torch.zeros(N, S, dtype=torch.bool)
    mkpm[0, 3:] = True
    out = layer(tgt, memory, tgt_mask=tmask, memory_key_padding_mask=mkpm)
    record_module("decoder_layer", layer,
                  {"tgt": tgt, "memory": memory, "tgt_mask": tmask, "mkpm": mkpm}, {"out": out})

    layer = nn.TransformerDecoderLayer(E, H, F, dropout=0.0, activation="gelu", norm_first=True)
    randomize(layer)
    tgt, memory = leaf(T, N, E), leaf(S, N, E)
    out = layer(tgt, memory)
    record_module("decoder_layer_gelu_norm_first", layer, {"tgt": tgt, "memory": memory},
                  {"out": out})

    layer = nn.TransformerEncoderLayer(E, H, F, dropout=0.0)
    randomize(layer)
    encoder = nn.TransformerEncoder(layer, 2, norm=nn.LayerNorm(E))
    src = leaf(S, N, E)
    out = encoder(src, mask=mask)
    record_module("encoder_stack", encoder, {"src": src, "src_mask": mask}, {"out": out})

    model = nn.Transformer(E, H, 2, 2, F, dropout=0.0)
    randomize(model)
    src, tgt = leaf(S, N, E), leaf(T, N, E)
    tkpm = torch.zeros(N, T, dtype=torch.bool)
    tkpm[1, 3:] = True
    out = model(src, tgt, tgt_mask=tmask, src_key_padding_mask=kpm, tgt_key_padding_mask=tkpm,
                memory_key_padding_mask=kpm)
    record_module("transformer", model, {"src": src, "tgt": tgt, "tgt_mask": tmask,
                                         "src_kpm": kpm, "tgt_kpm": tkpm}, {"out": out})
    put("square_subsequent_mask", "out", nn.Transformer.generate_square_subsequent_mask(4))


def main():
    sdpa_cases()
    mha_cases()
    transformer_cases()
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "attention_cases.txt")
    with open(path, "w") as f:
        f.write("# PyTorch %s; written by make_attention_golden.py\n" % torch.__version__)
        f.write("\n".join(lines) + "\n")
    print("attention_cases.txt: %d lines" % len(lines))


if __name__ == "__main__":
    main()
