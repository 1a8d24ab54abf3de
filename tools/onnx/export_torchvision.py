#!/usr/bin/python3
"""Exports torchvision models (random initialization, fixed seed, no downloads) to ONNX with
torch.onnx.export, in the layout of ONNX's backend test data:

    <out>/test_<name>/model.onnx
    <out>/test_<name>/test_data_set_<k>/input_0.pb, output_0.pb   (PyTorch's outputs)

Run with Debian's /usr/bin/python3 (torch 1.13, torchvision, python3-onnx):

    /usr/bin/python3 tools/onnx/export_torchvision.py <out> [name ...]

Models: resnet18, mobilenet_v2, vit (a small torchvision VisionTransformer). The batch
dimension is dynamic; data set 0 has batch 1 and data set 1 batch 3, so that kiln retraces.
"""
import os
import sys

try:
    import onnx
    import onnx.numpy_helper
    import torch
    import torchvision
except ImportError as e:  # ctest reads 77 as "skipped"
    print("skipped: %s (apt-get install python3-torch python3-torchvision python3-onnx)" % e)
    sys.exit(77)


def small_vit():
    return torchvision.models.VisionTransformer(
        image_size=32, patch_size=8, num_layers=2, num_heads=4, hidden_dim=64, mlp_dim=128,
        num_classes=10)


MODELS = {
    "resnet18": (lambda: torchvision.models.resnet18(weights=None), (3, 224, 224)),
    "mobilenet_v2": (lambda: torchvision.models.mobilenet_v2(weights=None), (3, 224, 224)),
    "vit": (small_vit, (3, 32, 32)),
}


def export(name, out):
    make, shape = MODELS[name]
    torch.manual_seed(0)
    model = make().eval()
    # batch norms with non-trivial running statistics (a fresh model has mean 0, var 1)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 1.5)
    folder = os.path.join(out, "test_" + name)
    os.makedirs(folder, exist_ok=True)
    example = torch.randn(1, *shape)
    torch.onnx.export(model, (example,), os.path.join(folder, "model.onnx"), opset_version=17,
                      input_names=["input"], output_names=["output"],
                      dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}},
                      do_constant_folding=True)
    onnx.checker.check_model(os.path.join(folder, "model.onnx"), full_check=True)
    for k, batch in enumerate((1, 3)):
        x = torch.randn(batch, *shape)
        with torch.no_grad():
            y = model(x)
        data = os.path.join(folder, "test_data_set_%d" % k)
        os.makedirs(data, exist_ok=True)
        for fname, t in (("input_0.pb", x), ("output_0.pb", y)):
            with open(os.path.join(data, fname), "wb") as f:
                f.write(onnx.numpy_helper.from_array(t.numpy()).SerializeToString())
    print("exported", folder)


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    names = sys.argv[2:] or list(MODELS)
    for name in names:
        export(name, sys.argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
