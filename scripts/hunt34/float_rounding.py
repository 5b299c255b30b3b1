"""Graph counts of float rounding, float floor division and float max/min of sizes:
torch.compile (backend eager counting) vs ours, values checked against eager at every call.
Usage: python float_rounding.py [name ...]"""

import math
import sys

import torch

sys.path.insert(0, "tests")
sys.path.insert(0, "scripts/hunt33")
sys.path.insert(0, "scripts/hunt34")
import float_idioms

SIZES = [4, 7, 1, 9, 4, 3, 2, 6]


def rows(b, gen):
    return [torch.randn(b, 5, generator=gen)]


IDIOMS = {
    "round": (lambda x: x * round(x.size(0) / 2), rows),
    "round_half_even": (lambda x: x * round(x.size(0) / 2 + 0.5), rows),
    "float_floordiv": (lambda x: x * (x.size(0) / 2 // 1), rows),
    "float_mod": (lambda x: x * (x.size(0) / 2 % 1), rows),
    "float_max": (lambda x: x * max(x.size(0) / 2, 3), rows),
    "float_min": (lambda x: x * min(x.size(0) / 2, 3), rows),
    "float_abs": (lambda x: x * abs(x.size(0) / 2 - 3), rows),
    "floor_of_float": (lambda x: x * math.floor(x.size(0) / 2), rows),
    "int_neg_quotient": (lambda x: x * int((3 - x.size(0)) / 2), rows),
    "round_slice": (lambda x: x[: round(x.size(0) / 2) + 1] * 2, rows),
    "max_full": (
        lambda x: torch.full((x.size(0),), max(x.size(0) / 2, 1.5)) + x[:, 0],
        rows,
    ),
}


if __name__ == "__main__":
    float_idioms.main(sys.argv[1:], IDIOMS, SIZES)
