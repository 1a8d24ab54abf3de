# Writes the seed corpora of the libFuzzer targets fuzz_npy and fuzz_safetensors (see
# tests/serialize/CMakeLists.txt): small valid files of several dtypes, orders and shapes.
#   /usr/bin/python3 tests/serialize/fuzz_seeds/make_seeds.py
import io
import json
import os
import struct

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
os.makedirs(os.path.join(here, "npy"), exist_ok=True)
os.makedirs(os.path.join(here, "safetensors"), exist_ok=True)

arrays = {
    "f4_c": np.arange(6, dtype="<f4").reshape(2, 3),
    "i2_be_fortran": np.asfortranarray(np.arange(6, dtype=">i2").reshape(2, 3)),
    "b1": np.array([True, False, True]),
    "u1_3d": np.arange(24, dtype=np.uint8).reshape(2, 3, 4),
    "f8_scalar": np.array(2.5),
    "f2_empty": np.zeros((0, 4), dtype=np.float16),
    "i8_v2": np.arange(3, dtype=np.int64),
}
for name, a in arrays.items():
    buf = io.BytesIO()
    version = (2, 0) if name.endswith("_v2") else None
    np.lib.format.write_array(buf, a, version=version)
    with open(os.path.join(here, "npy", name + ".npy"), "wb") as f:
        f.write(buf.getvalue())


def safetensors(tensors, metadata=None):
    header, data = {}, b""
    if metadata:
        header["__metadata__"] = metadata
    for name, (code, shape, raw) in tensors.items():
        offsets = [len(data), len(data) + len(raw)]
        header[name] = {"dtype": code, "shape": shape, "data_offsets": offsets}
        data += raw
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    return struct.pack("<Q", len(text)) + text + data


files = {
    "two": safetensors({"w": ("F32", [2, 2], struct.pack("<4f", 1, 2, 3, 4)),
                        "b": ("I64", [1], struct.pack("<q", 7))}, {"format": "pt"}),
    "bool_empty": safetensors({"m": ("BOOL", [3], b"\x01\x00\x01"), "e": ("F16", [0, 5], b"")}),
    "bf16": safetensors({"h": ("BF16", [2], b"\x80\x3f\x00\x40")}),
    "empty": safetensors({}),
}
for name, raw in files.items():
    with open(os.path.join(here, "safetensors", name + ".safetensors"), "wb") as f:
        f.write(raw)
