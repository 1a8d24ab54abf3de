#!/usr/bin/python3
"""Goldens of kiln::models (tests/models/test_models.cpp) from torchvision, written at test time.

    /usr/bin/python3 tests/golden/make_models_weights.py OUT_DIR

The weight files are tens of megabytes, so they are not committed: a ctest fixture runs this
script into the build directory before test_models. For each case below it builds torchvision's
model at a fixed seed (its own random initialisation, nothing downloaded) and writes, in the
safetensors format (make_safetensors_golden.py's writer):

OUT_DIR/<case>.weights.safetensors  the model's state_dict, by torchvision's names
OUT_DIR/<case>.golden.safetensors   "input" [2, 3, 64, 64] and "target" [2] (class indices);
    "eval.output": the logits in eval mode, after calibrate();
    with train (train mode, from the same weights, cross_entropy(logits, target).backward()):
    "train.output", "train.loss", "grad.<name>" for the parameters listed in CASES,
    "grad_norms" (the 2-norm of every parameter's gradient, in named_parameters() order), and
    "buffer.<name>" for every buffer after the step (the running statistics it updated).
    Each floating point result R has a twin "error.R": max |R - R64| where R64 is the same
    computation in float64 from the same weights: PyTorch's own float32 rounding error on it,
    which the C++ test uses as the scale of its tolerance.
The metadata holds the case's constructor arguments ("arch", "num_classes", "width_mult",
"zero_init_residual", "dropout") for the C++ test to build the same model.

When torch or torchvision cannot be imported, the script writes OUT_DIR/SKIPPED with the reason
and exits with status 77 (ctest's SKIP_RETURN_CODE for this fixture); test_models then skips and
prints the reason.
"""
import copy
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SKIP_STATUS = 77

# name, arch, constructor arguments, what is recorded (True: eval and the training step; False:
# eval only; None: nothing, the weights as torchvision initialised them, not calibrated), and
# the parameters whose whole gradient is stored (the others are checked by their norms)
CASES = [
    ("resnet18", "resnet18", {"num_classes": 10}, True,
     ["conv1.weight", "layer1.0.conv1.weight", "layer2.0.downsample.0.weight",
      "layer4.1.bn2.weight", "fc.weight", "fc.bias"]),
    ("resnet34", "resnet34", {"num_classes": 10}, False, []),
    ("resnet50", "resnet50", {"num_classes": 10}, True,
     ["conv1.weight", "layer1.0.downsample.0.weight", "layer3.5.conv2.weight",
      "layer4.2.bn3.bias", "fc.weight"]),
    ("resnet18_zero_init", "resnet18", {"num_classes": 10, "zero_init_residual": True}, None,
     []),
    ("mobilenet_v2", "mobilenet_v2", {"num_classes": 10, "dropout": 0.0}, True,
     ["features.0.0.weight", "features.1.conv.0.0.weight", "features.2.conv.1.1.weight",
      "features.17.conv.2.weight", "features.18.1.bias", "classifier.1.weight"]),
    ("mobilenet_v2_w050", "mobilenet_v2", {"num_classes": 10, "width_mult": 0.5}, False, []),
]


def skip(out_dir, reason):
    with open(os.path.join(out_dir, "SKIPPED"), "w") as f:
        f.write(reason + "\n")
    print("make_models_weights.py: skipped: " + reason)
    sys.exit(SKIP_STATUS)


def calibrate(model):
    """Gives every BatchNorm2d running statistics of real activations (one training-mode pass
    over a random batch with momentum None: the batch's mean and unbiased variance) and affine
    parameters away from 1 and 0, so that eval mode exercises them: torchvision's fresh
    statistics (mean 0, variance 1) let MobileNetV2's activations vanish to 1e-9 in eval mode."""
    torch = sys.modules["torch"]
    norms = [m for m in model.modules() if isinstance(m, torch.nn.BatchNorm2d)]
    for m in norms:
        m.momentum = None
        m.reset_running_stats()
    model.train()
    with torch.no_grad():
        model(torch.randn(4, 3, 64, 64))
        for m in norms:
            m.momentum = 0.1
            m.weight.mul_(1 + 0.2 * torch.rand_like(m.weight) - 0.1)
            m.bias.add_(0.2 * torch.rand_like(m.bias) - 0.1)


def state_of(model):
    return [(k, v.detach().clone()) for k, v in model.state_dict().items()]


def run(model, x, target, train):
    """(results as [(key, tensor)]): the eval logits, and with train the training step's."""
    torch = sys.modules["torch"]
    model.eval()
    with torch.no_grad():
        results = [("eval.output", model(x))]
    if not train:
        return results
    model.train()
    out = model(x)
    loss = torch.nn.functional.cross_entropy(out, target)
    loss.backward()
    results += [("train.output", out.detach()), ("train.loss", loss.detach())]
    return results


def write_case(out_dir, name, arch, kwargs, train, grads, writer):
    import torch
    import torchvision

    torch.manual_seed(0)
    model = getattr(torchvision.models, arch)(**kwargs)
    if train is not None:
        calibrate(model)
    model64 = copy.deepcopy(model).double()
    weights = state_of(model)
    torch.manual_seed(1)
    x = torch.randn(2, 3, 64, 64)
    target = torch.randint(0, kwargs["num_classes"], (2,))

    results = run(model, x, target, train) if train is not None else []
    results64 = dict(run(model64, x.double(), target, train)) if train is not None else {}
    if train:
        params = list(model.named_parameters())
        params64 = dict(model64.named_parameters())
        results += [("grad." + n, p.grad) for n, p in params if n in grads]
        norms = [p.grad.norm() for _, p in params]
        results.append(("grad_norms", torch.stack(norms)))
        results64.update(("grad." + n, params64[n].grad) for n in grads)
        results64["grad_norms"] = torch.stack([params64[n].grad.norm() for n, _ in params])
        missing = set(grads) - {n for n, _ in params}
        assert not missing, "no such parameters in %s: %s" % (arch, missing)
    if train:
        buffers64 = dict(model64.named_buffers())
        results += [("buffer." + n, b) for n, b in model.named_buffers()]
        results64.update(("buffer." + n, b) for n, b in buffers64.items())
    items = [("input", x), ("target", target)]
    for key, value in results:
        items.append((key, value.detach()))
        if value.is_floating_point():
            error = (value.double() - results64[key]).abs().max()
            items.append(("error." + key, error.float()))

    meta = {"arch": arch, "num_classes": str(kwargs["num_classes"]),
            "width_mult": str(kwargs.get("width_mult", 1.0)),
            "zero_init_residual": str(kwargs.get("zero_init_residual", False)).lower(),
            "dropout": str(kwargs.get("dropout", 0.2))}
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
        import torchvision
    except ImportError as e:
        skip(out_dir, "%s cannot import torch and torchvision (%s); on Debian: apt-get install "
             "python3-torch python3-torchvision" % (sys.executable, e))
    print("torch %s, torchvision %s" % (torch.__version__, torchvision.__version__))
    sys.path.insert(0, HERE)
    import make_safetensors_golden as safetensors

    def writer(path, items, meta):
        # the library's layout (data by element size, then name); atomic for concurrent readers
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
