"""Edge cases of float expressions of sizes: values and exceptions against eager at every
call (sizes crossing a zero divisor, a negative base or root, int arguments of any sign), on the
counting backend and the inductor."""

import math
import sys

import torch
import torchferro
import torchferro.compiler

sys.path.insert(0, "tests")
from programs.compare import same

rows = [4, 7, 5, 9, 5, 3, 2, 6]


def t(n):
    return [torch.randn(n, 3, generator=torch.Generator().manual_seed(n))]


CASES = {
    "neg_base_pow": (lambda x: x * (x.size(0) - 5) ** 0.5, t),
    "sqrt_of_difference": (lambda x: x * math.sqrt(x.size(0) - 5), t),
    "div_reaching_zero": (lambda x: x * (1 / (x.size(0) - 5)), t),
    "int_arg_sqrt": (
        lambda x, n: x * math.sqrt(n),
        lambda n: [torch.ones(2), n - 5],
    ),
    "int_arg_div": (lambda x, n: x * (1 / n), lambda n: [torch.ones(2), n - 5]),
    "int_arg_pow": (lambda x, n: x * n**-0.5, lambda n: [torch.ones(2), n - 5]),
    "round_half": (lambda x: x * round(x.size(0) / 2), t),
    "float_floordiv": (lambda x: x * (x.size(0) / 2 // 1), t),
    "max_of_float": (lambda x: x * max(x.size(0) / 2, 3), t),
    "mixed_compare": (lambda x: x + 1 if x.size(0) > 4.5 else x - 1, t),
    "augmented": (None, t),
    "tuple_returned": (lambda x: (x.sum(), x.size(0) / 2, x.size(0) ** 0.5), t),
    "trunc_of_negative": (lambda x: x * int((x.size(0) - 6) / 4), t),
    "ceil_of_negative": (lambda x: x * math.ceil((x.size(0) - 6) / 4), t),
    "floor_of_negative": (lambda x: x * math.floor((x.size(0) - 6) / 4), t),
    "long_full": (
        lambda x: torch.full((x.size(0),), x.size(0) / 2, dtype=torch.float64),
        t,
    ),
    "sym_float_compare_int": (lambda x: x * 2 if float(x.size(0)) == 5 else x, t),
    "truth_of_float": (lambda x: x * 2 if x.size(0) / 5 - 1 else x, t),
}


def augmented(x):
    s = x.size(0)
    s /= 2
    s **= 0.5
    s *= 3.0
    return x * s


CASES["augmented"] = (augmented, t)


def outcome(f, args):
    try:
        return ("ok", f(*args))
    except Exception as e:  # noqa: BLE001
        return ("raise", type(e).__name__)


for name, (prog, make) in CASES.items():
    if len(sys.argv) > 1 and name not in sys.argv[1:]:
        continue
    for backend in ["eager", None]:
        torchferro.compiler.reset()
        f = (
            torchferro.compile(prog, dynamic=True, backend=backend)
            if backend
            else torchferro.compile(prog, dynamic=True)
        )
        bad = []
        for n in rows:
            want = outcome(prog, make(n))
            got = outcome(f, make(n))
            if want[0] != got[0] or (want[0] == "raise" and want[1] != got[1]):
                bad.append((n, want[0], want[1] if want[0] == "raise" else "", got))
                continue
            if want[0] == "ok":
                try:
                    same(got[1], want[1])
                except AssertionError as e:
                    bad.append((n, "value", str(e)[:200]))
        entries = len(torchferro.compiler.cache_entries(f))
        print(
            f"{name:22s} {backend or 'inductor':8s} entries {entries} {'OK' if not bad else bad}",
            flush=True,
        )
