"""More rounding idioms (edges): counts against torch.compile, values against eager.
Usage: python float_rounding_more.py [name ...]"""

import math
import sys

import torch

sys.path.insert(0, "tests")
sys.path.insert(0, "scripts/hunt33")
sys.path.insert(0, "scripts/hunt34")
import float_idioms
from float_rounding import SIZES, rows

IDIOMS = {
    "abs_of_int": (lambda x: x * abs(x.size(0) - 5), rows),
    "round_ndigits": (lambda x: x * round(x.size(0) / 3, 1), rows),
    "divmod": (lambda x: x * divmod(x.size(0) / 2, 1)[0], rows),
    "int_floordiv_float": (lambda x: x * (x.size(0) // 2.0), rows),
    "int_mod_float": (lambda x: x * (x.size(0) % 2.5), rows),
    "max_of_two_sizes": (lambda x: x * max(x.size(0) / 2, x.size(1) / 3), rows),
    "neg_floordiv": (lambda x: x * (-(x.size(0) / 2) // 1), rows),
    "floor_neg_quotient": (lambda x: x * math.floor(-x.size(0) / 3), rows),
    "round_branch": (lambda x: x + 1 if round(x.size(0) / 3) > 1 else x - 1, rows),
    "round_of_root": (lambda x: x * round(x.size(0) ** 0.5), rows),
    "ceil_of_root_view": (
        lambda x: (
            torch.nn.functional.pad(x, (0, 0, 0, math.ceil(x.size(0) ** 0.5))) * 2
        ),
        rows,
    ),
    "round_returned_int_arg": (
        lambda x, n: (x * round(n / 3), round(n / 3)),
        lambda b, gen: [torch.randn(3, generator=gen), b - 5],
    ),
    "trunc_int_arg": (
        lambda x, n: x * int(n / 4),
        lambda b, gen: [torch.randn(3, generator=gen), 3 - b],
    ),
}


if __name__ == "__main__":
    float_idioms.main(sys.argv[1:], IDIOMS, SIZES)
