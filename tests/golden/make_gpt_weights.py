#!/usr/bin/python3
"""Goldens of kiln::models::GPT (tests/models/test_gpt.cpp) from PyTorch, written at test time.

    /usr/bin/python3 tests/golden/make_gpt_weights.py OUT_DIR

The GPT below is nanoGPT's model (Karpathy, "nanoGPT", model.py, the path without flash
attention that PyTorch 1.13 takes), written out again here: the same modules, names,
initialisation, forward and configure_optimizers. As make_models_weights.py does for ResNet, a
ctest fixture runs this script into the build directory before test_gpt. For each case it builds
the model at a fixed seed and writes, in the safetensors format (make_safetensors_golden.py's
writer):

OUT_DIR/<case>.weights.safetensors  the state_dict without lm_head.weight (tied to
    transformer.wte.weight) and the .attn.bias causal masks (buffers nanoGPT's from_pretrained
    drops too)
OUT_DIR/<case>.golden.safetensors   "idx" and "targets" [4, 32] int64;
    "logits" [4, 32, vocab] and "loss": forward(idx, targets); "logits_last": forward(idx);
    "grad.<name>" for every parameter after loss.backward();
    "amp.logits" and "amp.loss": forward(idx, targets) under autocast("cpu", bfloat16) (the
    logits in bfloat16, stored as float32);
    with steps: "batches.x", "batches.y" [20, 4, 32] and "train.losses" [20], the losses of 20
    AdamW steps from configure_optimizers(0.1, 1e-3, (0.9, 0.95)) on those batches, and
    "train.<name>" for every parameter after them.
    Each floating point result R has a twin "error.R": max |R - R64| where R64 is the same
    computation in float64 from the same weights: PyTorch's own float32 rounding error on it,
    which the C++ test uses as the scale of its tolerance.
The metadata holds the configuration (block_size, vocab_size, n_layer, n_head, n_embd, dropout,
bias) for the C++ test to build the same model.

Without torch the script writes OUT_DIR/SKIPPED with the reason and exits with status 77
(ctest's SKIP_RETURN_CODE for this fixture); test_gpt then skips and prints the reason.
"""
import copy
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SKIP_STATUS = 77
STEPS = 20

# name, bias, whether the 20 training steps are recorded
CASES = [("gpt", True, True), ("gpt_nobias", False, False)]
CONFIG = {"block_size": 32, "vocab_size": 65, "n_layer": 2, "n_head": 2, "n_embd": 64,
          "dropout": 0.0}


def skip(out_dir, reason):
    with open(os.path.join(out_dir, "SKIPPED"), "w") as f:
        f.write(reason + "\n")
    print("make_gpt_weights.py: skipped: " + reason)
    sys.exit(SKIP_STATUS)


def define_gpt(torch):
    nn = torch.nn
    F = torch.nn.functional

    class LayerNorm(nn.Module):
        def __init__(self, ndim, bias):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(ndim))
            self.bias = nn.Parameter(torch.zeros(ndim)) if bias else None

        def forward(self, x):
            return F.layer_norm(x, self.weight.shape, self.weight, self.bias, 1e-5)

    class CausalSelfAttention(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.c_attn = nn.Linear(c["n_embd"], 3 * c["n_embd"], bias=c["bias"])
            self.c_proj = nn.Linear(c["n_embd"], c["n_embd"], bias=c["bias"])
            self.attn_dropout = nn.Dropout(c["dropout"])
            self.resid_dropout = nn.Dropout(c["dropout"])
            self.n_head = c["n_head"]
            self.n_embd = c["n_embd"]
            n = c["block_size"]
            self.register_buffer("bias", torch.tril(torch.ones(n, n)).view(1, 1, n, n))

        def forward(self, x):
            B, T, C = x.size()
            q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
            k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
            att = F.softmax(att, dim=-1)
            att = self.attn_dropout(att)
            y = att @ v
            y = y.transpose(1, 2).contiguous().view(B, T, C)
            return self.resid_dropout(self.c_proj(y))

    class MLP(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.c_fc = nn.Linear(c["n_embd"], 4 * c["n_embd"], bias=c["bias"])
            self.gelu = nn.GELU()
            self.c_proj = nn.Linear(4 * c["n_embd"], c["n_embd"], bias=c["bias"])
            self.dropout = nn.Dropout(c["dropout"])

        def forward(self, x):
            return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))

    class Block(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.ln_1 = LayerNorm(c["n_embd"], bias=c["bias"])
            self.attn = CausalSelfAttention(c)
            self.ln_2 = LayerNorm(c["n_embd"], bias=c["bias"])
            self.mlp = MLP(c)

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class GPT(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.transformer = nn.ModuleDict(dict(
                wte=nn.Embedding(c["vocab_size"], c["n_embd"]),
                wpe=nn.Embedding(c["block_size"], c["n_embd"]),
                drop=nn.Dropout(c["dropout"]),
                h=nn.ModuleList([Block(c) for _ in range(c["n_layer"])]),
                ln_f=LayerNorm(c["n_embd"], bias=c["bias"])))
            self.lm_head = nn.Linear(c["n_embd"], c["vocab_size"], bias=False)
            self.transformer.wte.weight = self.lm_head.weight
            self.apply(self._init_weights)
            for pn, p in self.named_parameters():
                if pn.endswith("c_proj.weight"):
                    torch.nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * c["n_layer"]))

        def _init_weights(self, module):
            if isinstance(module, nn.Linear):
                torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
                if module.bias is not None:
                    torch.nn.init.zeros_(module.bias)
            elif isinstance(module, nn.Embedding):
                torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)

        def forward(self, idx, targets=None):
            t = idx.size(1)
            pos = torch.arange(0, t, dtype=torch.long, device=idx.device)
            x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(pos))
            for block in self.transformer.h:
                x = block(x)
            x = self.transformer.ln_f(x)
            if targets is not None:
                logits = self.lm_head(x)
                loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1),
                                       ignore_index=-1)
            else:
                logits = self.lm_head(x[:, [-1], :])
                loss = None
            return logits, loss

        def configure_optimizers(self, weight_decay, learning_rate, betas):
            params = [p for p in self.parameters() if p.requires_grad]
            decay = [p for p in params if p.dim() >= 2]
            no_decay = [p for p in params if p.dim() < 2]
            groups = [{"params": decay, "weight_decay": weight_decay},
                      {"params": no_decay, "weight_decay": 0.0}]
            return torch.optim.AdamW(groups, lr=learning_rate, betas=betas)

    return GPT


def run(torch, model, idx, targets, batches):
    """[(key, tensor)]: forward, gradients, and with batches the training run."""
    logits, loss = model(idx, targets)
    loss.backward()
    out = [("logits", logits.detach()), ("loss", loss.detach())]
    with torch.no_grad():
        out.append(("logits_last", model(idx)[0]))
    out += [("grad." + n, p.grad.clone()) for n, p in model.named_parameters()]
    if batches is None:
        return out
    model.zero_grad(set_to_none=True)
    opt = model.configure_optimizers(0.1, 1e-3, (0.9, 0.95))
    losses = []
    for x, y in zip(*batches):
        _, loss = model(x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(loss.detach())
    out.append(("train.losses", torch.stack(losses)))
    out += [("train." + n, p.detach().clone()) for n, p in model.named_parameters()]
    return out


def autocast_forward(torch, model, idx, targets):
    """[(key, tensor)]: forward(idx, targets) under autocast("cpu", bfloat16), before any step."""
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        logits, loss = model(idx, targets)
    return [("amp.logits", logits.float()), ("amp.loss", loss.float())]


def write_case(out_dir, name, bias, steps, writer):
    import torch

    config = dict(CONFIG, bias=bias)
    torch.manual_seed(0)
    model = define_gpt(torch)(config)
    model64 = copy.deepcopy(model).double()
    weights = [(k, v.detach().clone()) for k, v in model.state_dict().items()
               if k != "lm_head.weight" and not k.endswith(".attn.bias")]
    torch.manual_seed(1)
    v, t = config["vocab_size"], config["block_size"]
    idx = torch.randint(0, v, (4, t))
    targets = torch.randint(0, v, (4, t))
    targets[0, :3] = -1  # ignored positions
    batches = None
    if steps:
        # a learnable sequence: y is x shifted by one, x a noisy ramp
        start = torch.randint(0, v, (STEPS, 4, 1))
        ramp = (start + torch.arange(t + 1)) % v
        noise = torch.randint(0, v, ramp.shape) * (torch.rand(ramp.shape) < 0.1)
        seq = (ramp + noise) % v
        batches = (seq[:, :, :-1].contiguous(), seq[:, :, 1:].contiguous())

    amp = autocast_forward(torch, model, idx, targets)
    results = run(torch, model, idx, targets, batches)
    results64 = dict(run(torch, model64, idx, targets, batches))
    for key, value in amp:  # its error: bfloat16's, against the float64 forward
        results.append((key, value))
        results64[key] = results64[key[len("amp."):]]
    items = [("idx", idx), ("targets", targets)]
    if steps:
        items += [("batches.x", batches[0]), ("batches.y", batches[1])]
    for key, value in results:
        items.append((key, value))
        error = (value.double() - results64[key]).abs().max()
        items.append(("error." + key, error.float()))
    meta = {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in config.items()}
    writer(os.path.join(out_dir, name + ".weights.safetensors"), weights, meta)
    writer(os.path.join(out_dir, name + ".golden.safetensors"), items, meta)
    print("%s: %d state_dict entries, %d golden tensors" % (name, len(weights), len(items)))


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    for old in os.listdir(out_dir):
        if old == "SKIPPED" or old.endswith(".safetensors"):
            os.remove(os.path.join(out_dir, old))
    try:
        import torch
    except ImportError as e:
        skip(out_dir, "%s cannot import torch (%s); on Debian: apt-get install python3-torch"
             % (sys.executable, e))
    print("torch %s" % torch.__version__)
    sys.path.insert(0, HERE)
    import make_safetensors_golden as safetensors

    def writer(path, items, meta):
        order = sorted(range(len(items)), key=lambda i: (-items[i][1].element_size(),
                                                         items[i][0]))
        safetensors.write(path + ".tmp", items, meta, order, order, safetensors.json.dumps)
        os.replace(path + ".tmp", path)

    torch.set_num_threads(min(2, torch.get_num_threads()))
    for case in CASES:
        write_case(out_dir, *case, writer)
    return 0


if __name__ == "__main__":
    sys.exit(main())
