#!/usr/bin/python3
"""Appends PyTorch's outputs for new unary operators to conformance_unary_cases.txt, in the format
of make_conformance_golden.py (whose Writer it uses). Run with Debian's python3-torch 1.13:

    /usr/bin/python3 tests/golden/make_unary_golden.py NAME [NAME...]

Each NAME is a kiln unary operator (a KILN_UNARY entry of core/src/ops/unary.cpp) whose PyTorch
counterpart is torch.NAME. Its records: special values in each floating dtype (a dtype PyTorch's
CPU kernel lacks is skipped, with a comment), and integer and bool inputs. A name that already
has records in a conformance_*_cases.txt file is refused: records are appended, never
regenerated (float64 results change in their last bits between runs).

tools/conformance/cases_unary.cpp gives every unary operator without a golden case of its own
one that reads these records (register_unary_goldens), so a new operator needs no C++ line here.
"""
import glob
import math
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_conformance_golden import FLOATS, T, Writer  # noqa: E402

nan, inf = math.nan, math.inf
PATH = os.path.join(HERE, "conformance_unary_cases.txt")
FLOAT_VALUES = [-1e4, -3.5, -2.0, -1.0, -0.5, -1e-3, -0.0, 0.0, 1e-3, 0.25, 0.5, 1.0, 1.5, 2.0,
                3.0, 100.0, -inf, inf, nan]
INT_VALUES = {"bool": [True, False], "uint8": [0, 1, 2, 7, 100, 255],
              "int8": [-128, -7, -1, 0, 1, 2, 100], "int32": [-7, -1, 0, 1, 2, 100],
              "int64": [-1000, -1, 0, 1, 2, 100]}


def recorded_names():
    names = set()
    for path in glob.glob(os.path.join(HERE, "conformance_*cases.txt")):
        with open(path) as f:
            for line in f:
                if line.startswith("case "):
                    names.add(line.split()[1])
    return names


def main(names):
    if not names:
        sys.exit(__doc__)
    known = recorded_names()
    for name in names:
        if name in known:
            sys.exit("make_unary_golden.py: %s already has records; they are never regenerated"
                     % name)
        if not hasattr(torch, name):
            sys.exit("make_unary_golden.py: PyTorch %s has no torch.%s" % (torch.__version__, name))
    new_file = not os.path.exists(PATH)
    with open(PATH, "a") as f:
        if new_file:
            f.write("# PyTorch outputs for kiln's unary operators, appended one operator at a time "
                    "by make_unary_golden.py\n# (see make_conformance_golden.py's docstring for "
                    "the format)\n")
        for name in names:
            w = Writer()
            fn = getattr(torch, name)
            for dt in FLOATS:
                w.case(name, dt, fn, T(FLOAT_VALUES, dt))
            for dt, values in INT_VALUES.items():
                w.case(name, dt, fn, T(values, dt))
            f.write("# %s: PyTorch %s, make_unary_golden.py %s\n" % (name, torch.__version__, name))
            for s in w.skipped:
                f.write("# skipped (PyTorch lacks it): %s\n" % s)
            f.write("\n".join(w.lines) + "\n")
            print("%s: %d records appended to %s" % (name, w.count, PATH))


if __name__ == "__main__":
    main(sys.argv[1:])
