"""Graph counts of float expressions of sizes: torch.compile (backend eager counting) vs ours,
values checked against eager at every call. Usage: python float_idioms.py [name ...]"""

import math
import sys

import torch

sys.path.insert(0, "tests")
from programs.compare import counts_over

SIZES = [4, 7, 1, 9, 4, 3, 2]


def rows(b, gen):
    return [torch.randn(b, 5, generator=gen)]


def cols(b, gen):
    return [torch.randn(3, b + 1, generator=gen)]


IDIOMS = {
    "pow_half_plus_div": (
        lambda x: x * (x.size(0) ** 0.5) + x.size(1) / x.size(0),
        rows,
    ),
    "attn_scale": (lambda x: (x @ x.t()) * x.size(-1) ** -0.5, cols),
    "inv_sqrt": (lambda x: x / math.sqrt(x.size(-1)), cols),
    "one_over_sqrt": (lambda x: x * (1 / math.sqrt(x.size(-1))), cols),
    "div_by_width": (lambda x: x / x.size(1), cols),
    "full_half": (lambda x: torch.full((x.size(0),), x.size(0) / 2) + x[:, 0], rows),
    "float_arith": (lambda x: x * (float(x.size(0)) * 2.0 + 1.5), rows),
    "floats_mixed": (lambda x: x * (x.size(0) / 3 - x.size(0) ** 0.5 * 0.25), rows),
    "sqrt_of_float": (lambda x: x * math.sqrt(x.size(0) / 2), rows),
    "ratio_of_sizes": (lambda x: x * (x.size(1) / x.size(0)), rows),
    "branch_on_float": (lambda x: x * 2 if x.size(0) / 2 > 2 else x - 1, rows),
    "float_returned": (lambda x: (x * 2, x.size(0) ** 0.5), rows),
    "neg_pow": (lambda x: x * x.size(0) ** -1.0, rows),
    "int_pow": (lambda x: x * x.size(0) ** 2, rows),
    "int_neg_pow": (lambda x: x * x.size(0) ** -1, rows),
    "div_by_difference": (
        lambda x: x * (1 / (x.size(0) - 1)) if x.size(0) != 1 else x,
        rows,
    ),
    "float_truth": (lambda x: x * 2 if (x.size(0) / 2 - 2) else x, rows),
    "float_to_int": (lambda x: x * int(x.size(0) / 2), rows),
    "float_formatted": (lambda x: (x * 2, f"{x.size(0) / 2:.2f}"), rows),
    "int_arg_pow": (
        lambda x, n: x * n**0.5,
        lambda b, gen: [torch.randn(3, generator=gen), b],
    ),
    "int_arg_div": (
        lambda x, n: x * (3 / n),
        lambda b, gen: [torch.randn(3, generator=gen), b],
    ),
    "sdpa_scale": (
        lambda q: torch.nn.functional.scaled_dot_product_attention(
            q, q, q, scale=q.size(-1) ** -0.5
        ),
        lambda b, gen: [torch.randn(1, 2, 4, b + 1, generator=gen)],
    ),
    "softmax_temp": (lambda x: (x / math.sqrt(x.size(-1))).softmax(-1), rows),
    "ceil_div": (lambda x: x * math.ceil(x.size(0) / 4), rows),
    "floor_div": (lambda x: x[: math.floor(x.size(0) / 2) + 1] * 2, rows),
    "arange_scaled": (lambda x: torch.arange(x.size(0)) / x.size(0) + x[:, 0], rows),
}


def main(names, idioms=None, sizes=None):
    """Counts of ``idioms`` (this file's by default; session 34's scripts pass theirs)."""
    idioms, sizes = idioms or IDIOMS, sizes or SIZES
    for name in names or idioms:
        prog, make = idioms[name]
        for dyn in [None, True]:
            gen = torch.Generator().manual_seed(0)
            calls = [make(n, gen) for n in sizes]
            try:
                tc, fc = counts_over(prog, calls, dynamic=dyn)
                print(
                    f"{name:20s} dynamic={dyn!s:5s} torch.compile {tc.n}  ours {fc.n}",
                    flush=True,
                )
            except Exception as e:  # noqa: BLE001
                print(
                    f"{name:20s} dynamic={dyn!s:5s} ERROR {type(e).__name__}: {str(e)[:300]}",
                    flush=True,
                )


if __name__ == "__main__":
    main(sys.argv[1:])
