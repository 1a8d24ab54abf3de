#!/usr/bin/python3
"""Interop files for kiln's safetensors reader and writer (tests/serialize/test_interop.cpp).

    /usr/bin/python3 tests/golden/make_safetensors_golden.py            writes the two files below
    /usr/bin/python3 tests/golden/make_safetensors_golden.py --check F  reads F (written by kiln)
                                                                        and checks its tensors and
                                                                        metadata; exit status 0 if
                                                                        they are TENSORS, METADATA

safetensors/torch_written.safetensors   TENSORS and METADATA written the way the safetensors
                                        library lays a file out (data sorted by dtype alignment,
                                        then name; header in data order; json.dumps's default
                                        spacing and \\u escapes), for kiln to load.
safetensors/kiln_expected.safetensors   the same tensors, byte for byte as kiln::save writes them
                                        (header in the given order, compact JSON, UTF-8 names,
                                        data stable-sorted by element size), for the C++ test to
                                        compare with when no Python is at hand.

The safetensors Python package is used when importable (to read in --check); Debian lacks it, so
the writers and the reader here follow the format's specification by hand:
8-byte little-endian header length N; N bytes of JSON ({"__metadata__": {str: str},
name: {"dtype", "shape", "data_offsets": [begin, end]}}), padded with spaces to a multiple of 8;
then the data, which the offsets (relative to its start) cover without holes or overlaps.
The tensor values are simple formulas that tests/serialize/test_interop.cpp rebuilds with kiln.
"""
import json
import math
import os
import struct
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "safetensors")

CODES = {
    torch.bool: "BOOL", torch.uint8: "U8", torch.int8: "I8", torch.int16: "I16",
    torch.int32: "I32", torch.int64: "I64", torch.float16: "F16", torch.bfloat16: "BF16",
    torch.float32: "F32", torch.float64: "F64",
}
DTYPES = {v: k for k, v in CODES.items()}

METADATA = {"format": "pt", "note": "line\nbreak \"quoted\" \u00e9!"}


def tensors():
    """The interop tensors, in order (test_interop.cpp's expected_tensors() builds the same)."""
    base = torch.arange(12).reshape(3, 4)
    f32 = torch.arange(12, dtype=torch.float32).reshape(3, 4) * 0.1 - 0.5
    return [
        ("bool", base % 3 == 0),
        ("u8", (base * 21).to(torch.uint8)),
        ("i8", (base * 11 - 60).to(torch.int8)),
        ("i16", (base * 3000 - 16000).to(torch.int16)),
        ("i32", (base * 190000000 - 1000000000).to(torch.int32)),
        ("i64", base * 1000000000000 - 5000000000000),
        ("f16", f32.to(torch.float16)),
        ("bf16", f32.to(torch.bfloat16)),
        ("f32", f32),
        ("f64", torch.arange(12, dtype=torch.float64).reshape(3, 4) * 0.1 - 0.5),
        ("specials", torch.tensor([math.nan, math.inf, -math.inf, -0.0, 1e-45,
                                   3.4028234663852886e38], dtype=torch.float32)),
        ("scalar", torch.tensor(3.5, dtype=torch.float32)),
        ("empty", torch.zeros(2, 0, dtype=torch.float32)),
        ("layer.0/w\u00f6rd \"q\"\\\t\U0001F600", torch.tensor([7, -8], dtype=torch.int32)),
    ]


def data_bytes(t):
    t = t.contiguous()
    if t.numel() == 0:
        return b""
    if t.dtype == torch.bfloat16 or t.dtype == torch.float16:
        return t.view(torch.int16).numpy().astype("<i2").tobytes()
    if t.dtype == torch.bool:
        return t.to(torch.uint8).numpy().tobytes()
    return t.numpy().astype(t.numpy().dtype.newbyteorder("<")).tobytes()


def write(path, items, metadata, header_order, data_order, dumps):
    """items: [(name, tensor)]; *_order: lists of indices into items."""
    blobs = [data_bytes(t) for _, t in items]
    offsets = {}
    pos = 0
    for i in data_order:
        offsets[i] = (pos, pos + len(blobs[i]))
        pos += len(blobs[i])
    header = {}
    if metadata:
        header["__metadata__"] = metadata
    for i in header_order:
        name, t = items[i]
        header[name] = {"dtype": CODES[t.dtype], "shape": list(t.shape),
                        "data_offsets": list(offsets[i])}
    text = dumps(header).encode("utf-8")
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for i in data_order:
            f.write(blobs[i])


def write_library_style(path, items):
    # The safetensors library: data sorted by alignment (descending), then name; header keys
    # in data order after __metadata__.
    order = sorted(range(len(items)),
                   key=lambda i: (-items[i][1].element_size(), items[i][0]))
    write(path, items, METADATA, order, order, json.dumps)


def write_kiln_style(path, items):
    order = sorted(range(len(items)), key=lambda i: -items[i][1].element_size())  # stable
    meta = dict(sorted(METADATA.items()))
    write(path, items, meta, list(range(len(items))), order,
          lambda h: json.dumps(h, separators=(",", ":"), ensure_ascii=False))


def read(path):
    """The format's reader: (list of (name, tensor) in header order, metadata); raises
    ValueError for any violation of the specification."""
    with open(path, "rb") as f:
        blob = f.read()
    if len(blob) < 8:
        raise ValueError("shorter than the header length")
    (n,) = struct.unpack("<Q", blob[:8])
    if 8 + n > len(blob):
        raise ValueError("header length beyond the file")
    header = json.loads(blob[8:8 + n].decode("utf-8"))
    data = blob[8 + n:]
    metadata = header.pop("__metadata__", {})
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
        raise ValueError("metadata must map strings to strings")
    out, spans = [], []
    for name, info in header.items():
        begin, end = info["data_offsets"]
        dtype = DTYPES[info["dtype"]]
        shape = info["shape"]
        size = torch.empty(0, dtype=dtype).element_size() * math.prod(shape)
        if end - begin != size or not 0 <= begin <= end <= len(data):
            raise ValueError("bad data_offsets for %r" % name)
        spans.append((begin, end))
        raw = bytearray(data[begin:end])
        if size == 0:
            t = torch.zeros(shape, dtype=dtype)
        else:
            t = torch.frombuffer(raw, dtype=dtype).reshape(shape).clone()
        out.append((name, t))
    pos = 0
    for begin, end in sorted(spans):
        if begin != pos:
            raise ValueError("data has holes or overlaps at byte %d" % pos)
        pos = end
    if pos != len(data):
        raise ValueError("data after the last tensor")
    return out, metadata


def same(a, b):
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.is_floating_point():
        a, b = a.double(), b.double()
        both_nan = torch.isnan(a) & torch.isnan(b)
        signs = torch.signbit(a) == torch.signbit(b)
        return bool(((a == b) & signs | both_nan).all())
    return torch.equal(a, b)


def check(path, ordered=True):
    """0 when the file at path holds TENSORS (in their order, when ordered) and METADATA."""
    items, metadata = read(path)
    want = tensors()
    problems = []
    names, want_names = [n for n, _ in items], [n for n, _ in want]
    if (names if ordered else sorted(names)) != (want_names if ordered else sorted(want_names)):
        problems.append("names %r, expected %r" % (names, want_names))
    got_by_name = dict(items)
    for name, exp in want:
        if name in got_by_name and not same(got_by_name[name], exp):
            problems.append("tensor %r: got %r, expected %r" % (name, got_by_name[name], exp))
    if metadata != METADATA:
        problems.append("metadata %r, expected %r" % (metadata, METADATA))
    try:
        from safetensors.torch import load_file  # the library, where installed
        lib = load_file(path)
        for name, exp in want:
            if not same(lib[name], exp):
                problems.append("safetensors library: tensor %r differs" % name)
    except ImportError:
        pass
    for p in problems:
        print("make_safetensors_golden.py --check %s: %s" % (path, p), file=sys.stderr)
    if not problems:
        print("%s: %d tensors and the metadata as expected" % (path, len(items)))
    return 0 if not problems else 1


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--check":
        return check(sys.argv[2])
    if len(sys.argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    os.makedirs(OUT, exist_ok=True)
    items = tensors()
    write_library_style(os.path.join(OUT, "torch_written.safetensors"), items)
    write_kiln_style(os.path.join(OUT, "kiln_expected.safetensors"), items)
    assert check(os.path.join(OUT, "torch_written.safetensors"), ordered=False) == 0
    assert check(os.path.join(OUT, "kiln_expected.safetensors")) == 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
