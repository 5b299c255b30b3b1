"""Differential test of the Rust inductor against eager torch, over every lowering it has.

The lowerings are read from the lowering table itself (``inductor/src/lower/table.rs`` and the
view lowerings in ``views.rs``): ``test_every_lowering_has_a_case`` fails when a lowering is
added without a case here, and the elementwise ops of the table's ``unary_op``/``binary_op``
get their cases generated. Each case runs compiled (torchferro's inductor, one graph per case
holding every dtype and layout, to keep the compiles few) and eagerly, on inputs that hold
extremal values (NaN, +-inf, -0.0, denormals, the dtype's largest and smallest values, integer
min/max) laid out contiguous, transposed, strided with an offset, broadcast (``expand``,
stride 0), overlapping (``as_strided`` with strides that revisit elements) and with a zero-size
dim, in every dtype the op takes in eager. Results are compared bit for bit (``torch.equal``
with NaN positions equal and the sign of zero checked) where eager's result is a single
correctly rounded operation; within a few ulps of the dtype where eager calls a vector math
library torchferro does not share (exp, sin, ...); within the dtype's rounding for reductions,
whose summation order is eager's own choice.

Also here: the kernels' fixed mechanisms (sign of NaN, clamping at -0.0, storage-reading ops
on intermediates, unused fallback results), compiled models seeing every way a weight can
change (``.data``, ``set_``, ``load_state_dict``, storage writes), and non-strided layouts.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
import torchferro

ROOT = Path(__file__).resolve().parents[1]
LOWER = ROOT / "inductor" / "src" / "lower"


@pytest.fixture(scope="module", autouse=True)
def _kernel_cache(tmp_path_factory):
    old = os.environ.get("TORCHFERRO_CACHE_DIR")
    os.environ["TORCHFERRO_CACHE_DIR"] = str(tmp_path_factory.mktemp("kernels"))
    yield
    if old is None:
        del os.environ["TORCHFERRO_CACHE_DIR"]
    else:
        os.environ["TORCHFERRO_CACHE_DIR"] = old


# ---------------------------------------------------------------------------------------------
# The lowering table.


def _fn_body(text: str, name: str) -> str:
    start = text.index(f"fn {name}(")
    ends = [
        i
        for i in (text.find("\nfn ", start + 1), text.find("\npub fn ", start + 1))
        if i != -1
    ]
    return text[start : min(ends) if ends else len(text)]


def _arms(body: str) -> set[str]:
    """The string patterns of the `match` arms in a Rust function body."""
    names: set[str] = set()
    for m in re.finditer(
        r'((?:"[a-z0-9_]+"\s*\|\s*)*"[a-z0-9_]+")\s*(?:if [^=]*)?=>', body
    ):
        names |= set(re.findall(r'"([a-z0-9_]+)"', m.group(1)))
    return names


def lowering_table() -> dict[str, set[str]]:
    table = (LOWER / "table.rs").read_text()
    views = (LOWER / "views.rs").read_text()
    return {
        "unary": _arms(_fn_body(table, "unary_op")),
        "binary": _arms(_fn_body(table, "binary_op")),
        "torch": _arms(_fn_body(table, "lower")),
        "functional": _arms(_fn_body(table, "functional")),
        "views": _arms(_fn_body(views, "lower_view")),
    }


# ---------------------------------------------------------------------------------------------
# Inputs.

FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
INTS = [torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64]
ALL = FLOATS + INTS + [torch.bool]
R, C = 6, 8
LAYOUTS = ["contiguous", "transposed", "strided", "expand", "overlap", "empty"]
NARROW = {torch.uint8, torch.int8, torch.int16}


def values(dtype: torch.dtype, n: int, seed: int) -> torch.Tensor:
    """``n`` values of ``dtype``: the extremal ones first (then cycled), random ones after,
    shuffled by ``seed``."""
    g = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        return torch.rand(n, generator=g) > 0.5
    if dtype.is_floating_point:
        fi = torch.finfo(dtype)
        special = [
            float("nan"),
            float("inf"),
            float("-inf"),
            -0.0,
            0.0,
            fi.smallest_normal / 4,
            -fi.smallest_normal / 4,
            fi.max,
            fi.min,
            1.0,
            -1.0,
            0.5,
            -2.5,
            3.0,
        ]
        rest = (
            torch.randn(max(n - len(special), 0), generator=g, dtype=torch.float64) * 3
        ).tolist()
        v = torch.tensor((special + rest)[:n], dtype=torch.float64).to(dtype)
    else:
        ii = torch.iinfo(dtype)
        special = [ii.min, ii.max, 0, 1, 2, ii.max - 1, 7]
        if ii.min < 0:
            special += [-1, -2, ii.min + 1]
        lo = max(ii.min, -9)
        rest = torch.randint(lo, 10, (max(n - len(special), 0),), generator=g).tolist()
        v = torch.tensor((special + rest)[:n], dtype=torch.int64).to(dtype)
    return v[torch.randperm(n, generator=g)]


def make(dtype: torch.dtype, layout: str, seed: int, shape=(R, C)) -> torch.Tensor:
    r, c = shape
    if layout == "contiguous":
        return values(dtype, r * c, seed).reshape(r, c)
    if layout == "transposed":
        return values(dtype, r * c, seed).reshape(c, r).t()
    if layout == "strided":
        big = torch.zeros(2 * r + 1, 3 * c, dtype=dtype)
        big[1::2, ::3] = values(dtype, r * c, seed).reshape(r, c)
        return big[1::2, ::3]
    if layout == "expand":
        return values(dtype, c, seed).reshape(1, c).expand(r, c)
    if layout == "overlap":
        # Rows start one element apart: every element is read by several (row, col) positions.
        return values(dtype, r + c - 1, seed).as_strided((r, c), (1, 1))
    if layout == "empty":
        return values(dtype, 0, seed).reshape(0, c)
    raise ValueError(layout)


def clone_like(x):
    """A copy with the same strides (overlapping and broadcast inputs are not written to, so
    they are shared)."""
    if not isinstance(x, torch.Tensor):
        return x
    if x.numel() and any(s == 0 for s, n in zip(x.stride(), x.shape) if n > 1):
        return x
    if x.numel() and not _dense(x):
        return x
    out = torch.empty_strided(x.shape, x.stride(), dtype=x.dtype)
    out.copy_(x)
    return out


def _dense(x):
    dims = sorted((st, n) for st, n in zip(x.stride(), x.shape) if n != 1)
    expect = 1
    for st, n in dims:
        if st != expect:
            return False
        expect *= n
    return True


# ---------------------------------------------------------------------------------------------
# Comparison.

EXACT, ULP, REDUCE = "exact", "ulp", "reduce"


def _ulp_tol(dtype):
    # Eager's float32 transcendental functions come from SLEEF, ours from glibc's libmvec/libm:
    # both within a few ulps of the true value. Half types compute in float32 and round once.
    return {
        torch.float32: dict(rtol=8e-7, atol=1e-37),
        torch.float64: dict(rtol=4e-15, atol=1e-300),
        torch.float16: dict(rtol=1e-3, atol=1e-7),
        torch.bfloat16: dict(rtol=8e-3, atol=1e-38),
    }[dtype]


def _reduce_tol(dtype):
    return {
        torch.float32: dict(rtol=2e-5, atol=1e-5),
        torch.float64: dict(rtol=1e-12, atol=1e-12),
        torch.float16: dict(rtol=2e-3, atol=2e-3),
        torch.bfloat16: dict(rtol=1.6e-2, atol=1.6e-2),
    }[dtype]


def _layout(t):
    """The strides that matter: those of dims longer than 1 (torch leaves the others free)."""
    if t.numel() == 0:
        return ()
    return tuple(st for st, n in zip(t.stride(), t.shape) if n > 1)


def differs(e, c, mode) -> str | None:
    """Why ``c`` is not eager's ``e`` under ``mode``; ``None`` when it is."""
    if isinstance(e, (tuple, list)):
        if not isinstance(c, (tuple, list)) or len(c) != len(e):
            return f"structure {type(c).__name__} != {type(e).__name__}"
        for i, (a, b) in enumerate(zip(e, c)):
            why = differs(a, b, mode)
            if why:
                return f"[{i}] {why}"
        return None
    if not isinstance(e, torch.Tensor):
        return None if e == c else f"{c!r} != {e!r}"
    if not isinstance(c, torch.Tensor):
        return f"got {type(c).__name__}"
    if e.dtype != c.dtype or e.shape != c.shape:
        return f"{c.dtype}{tuple(c.shape)} != {e.dtype}{tuple(e.shape)}"
    if _layout(c) != _layout(e):
        return f"strides {c.stride()} != eager's {e.stride()}"
    if not e.dtype.is_floating_point:
        if torch.equal(e, c):
            return None
        bad = (e != c).nonzero()[0].tolist()
        return f"at {bad}: {c[tuple(bad)].item()} != {e[tuple(bad)].item()}"
    en, cn = e.isnan(), c.isnan()
    if not torch.equal(en, cn):
        bad = (en != cn).nonzero()[0].tolist()
        return f"NaN at {bad}: {c[tuple(bad)].item()} != {e[tuple(bad)].item()}"
    e0, c0 = e.masked_fill(en, 0), c.masked_fill(cn, 0)
    if mode == EXACT:
        if torch.equal(e0, c0) and torch.equal(e0.signbit(), c0.signbit()):
            return None
        bad = ((e0 != c0) | (e0.signbit() != c0.signbit())).nonzero()[0].tolist()
        return f"at {bad}: {c0[tuple(bad)].item()!r} != {e0[tuple(bad)].item()!r} (bitwise)"
    # Infinities in the same places with the same sign, finite values within tolerance.
    ei, ci = e0.isinf(), c0.isinf()
    if not torch.equal(ei, ci) or not torch.equal(e0[ei], c0[ci]):
        bad = ((ei != ci) | ((e0 != c0) & ei)).nonzero()
        bad = bad[0].tolist() if len(bad) else "?"
        return f"inf at {bad}"
    tol = _ulp_tol(e.dtype) if mode == ULP else _reduce_tol(e.dtype)
    try:
        torch.testing.assert_close(c0.double(), e0.double(), **tol)
    except AssertionError as err:
        return str(err).splitlines()[-3:]
    return None


# ---------------------------------------------------------------------------------------------
# Cases.


class Case:
    """An op applied to ``arity`` inputs of each dtype in ``dtypes`` and each layout."""

    def __init__(
        self, fn, arity=1, dtypes=ALL, mode=EXACT, layouts=LAYOUTS, inputs=None
    ):
        self.fn, self.arity, self.dtypes, self.mode = fn, arity, dtypes, mode
        self.layouts = layouts
        # inputs(dtype, layout) -> tuple of inputs, for ops that need special ones.
        self.inputs = inputs or (
            lambda d, lay: tuple(make(d, lay, 11 * i + 1) for i in range(arity))
        )


def _t(name):
    return getattr(torch, name)


ULP_UNARY = {
    "sqrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "rsqrt", "sin", "cos", "tan", "asin",
    "acos", "atan", "sinh", "cosh", "tanh", "erf", "arcsin", "arccos", "arctan",
}  # fmt: skip
ULP_BINARY = {"atan2", "arctan2", "remainder", "floor_divide"}


def tame(x: torch.Tensor) -> torch.Tensor:
    """``x`` without the dtype's largest values and denormals (NaN, inf, 0 and -0.0 stay). Eager
    computes ``fmod``/``remainder`` in its vector lanes as ``a - trunc(a / b) * b``, which is NaN
    where ``a / b`` overflows, while its scalar tail (and C's ``fmod``) gives the exact finite
    result: eager itself answers differently by position there."""
    if not x.dtype.is_floating_point:
        return x
    fi = torch.finfo(x.dtype)
    a = x.abs()
    wild = (a >= fi.max / 4) | ((a > 0) & (a < fi.smallest_normal))
    return torch.where(wild & ~x.isinf(), torch.full_like(x, 1.25), x)


def _tamed(arity):
    return lambda d, lay: tuple(tame(make(d, lay, 11 * i + 1)) for i in range(arity))


DIVISIONS = {"fmod", "remainder", "floor_divide"}


def generated_cases(table) -> dict[str, Case]:
    """One case per elementwise op of the table's ``unary_op``/``binary_op``."""
    cases = {}
    for n in sorted(table["unary"]):
        cases[n] = Case(lambda x, f=_t(n): f(x), mode=ULP if n in ULP_UNARY else EXACT)
    for n in sorted(table["binary"]):
        inputs = _tamed(2) if n in DIVISIONS else None
        mode = ULP if n in ULP_BINARY else EXACT
        cases[n] = Case(lambda x, y, f=_t(n): f(x, y), 2, mode=mode, inputs=inputs)
    return cases


def _moderate(x):
    if not x.dtype.is_floating_point:
        return x.clamp(-2, 2) if x.dtype != torch.uint8 else x.clamp(0, 2)
    a = x.abs()
    odd = x.isfinite() & (a != 0) & ((a < 0.25) | (a > 4))
    return torch.where(odd, torch.full_like(x, -1.5), x)


def _idx(n, hi):
    return lambda d, lay: (torch.tensor([0, hi - 1, 1, 0, 3][:n]),)


def _ids_and(d, lay, n=4, hi=R):
    return (make(d, lay, 3), torch.tensor([0, hi - 1, 1, 0][:n]))


def _mask(d, lay):
    x = make(d, lay, 5)
    return (x, make(torch.bool, lay, 6))


def _pos(d, lay):
    x = make(d, lay, 7)
    return (x.abs() if d.is_floating_point else x,)


FL = FLOATS
NUM = FLOATS + INTS


def _setitem(x, y):
    """Writes into clones by `setitem` with basic keys (`on_clone(operator.setitem)`, lowered as
    a scatter into the clone): a tensor value, a broadcast number, a value broadcast over a
    dim."""
    z = x.clone()
    z[1:] = y[:-1]
    z[:, ::3] = 1
    w = x.clone()
    w[-1:, 2:5] = y[:1, 4:7]
    w[..., 0] = y[..., -1]
    return z, w


CASES: dict[str, Case] = {
    # Arithmetic with Python numbers on either side (extremal numbers too).
    "add": Case(lambda x, y: (x + y, x + 2.5, -0.0 + x, torch.add(x, y, alpha=2)), 2, NUM),
    "sub": Case(lambda x, y: (x - y, x - 0.0, 1 - x, torch.sub(x, y, alpha=3)), 2, NUM),
    "rsub": Case(lambda x, y: torch.rsub(x, y), 2, NUM),
    "div": Case(lambda x, y: (x / y, x / -0.0, torch.div(x, y, rounding_mode="trunc")), 2, FL),
    "divide": Case(lambda x, y: torch.divide(x, y, rounding_mode="floor"), 2, FL, ULP),
    "true_divide": Case(lambda x, y: torch.true_divide(x, y), 2, FL),
    "pow": Case(lambda x, y: (x**2, x**0.5, x**y, 2**x), 2, FL, ULP),
    "neg": Case(lambda x: -x, dtypes=NUM),
    "negative": Case(lambda x: torch.negative(x), dtypes=NUM),
    # `+x` of an input is the input itself (eager's `positive` returns `self`; session 35
    # traces it so, `test_hunt35_*`): the lowering is of a computed operand's.
    "pos": Case(lambda x: +(x * 2), dtypes=NUM),
    "positive": Case(lambda x: torch.positive(x * 2), dtypes=NUM),
    "clone": Case(lambda x: x.clone()),
    "contiguous": Case(lambda x: x.contiguous() * 1 if x.dtype != torch.bool else ~x.contiguous()),
    "detach": Case(lambda x: x.detach()),
    "alias": Case(lambda x: torch.ops.aten.alias(x)),
    "sigmoid": Case(lambda x: (torch.sigmoid(x), F.sigmoid(x)), dtypes=FL, mode=ULP),
    "relu": Case(lambda x: (x.relu(), F.relu(x)), dtypes=NUM),
    "square": Case(lambda x: x.square(), dtypes=NUM),
    "round": Case(lambda x: x.round(), dtypes=NUM),
    "isnan": Case(lambda x: x.isnan()),
    "isinf": Case(lambda x: x.isinf()),
    "isfinite": Case(lambda x: x.isfinite()),
    "isposinf": Case(lambda x: x.isposinf(), dtypes=NUM),
    "isneginf": Case(lambda x: x.isneginf(), dtypes=NUM),
    "sign": Case(lambda x: x.sign(), dtypes=NUM),
    "sgn": Case(lambda x: x.sgn(), dtypes=NUM),
    "frac": Case(lambda x: x.frac(), dtypes=FL),
    "nan_to_num": Case(lambda x: (x.nan_to_num(), x.nan_to_num(1.5, 2.0, -3.0)), dtypes=FL),
    "logical_not": Case(lambda x: x.logical_not()),
    "bitwise_not": Case(lambda x: ~x, dtypes=INTS + [torch.bool]),
    "logical_and": Case(lambda x, y: x.logical_and(y), 2),
    "logical_or": Case(lambda x, y: x.logical_or(y), 2),
    "logical_xor": Case(lambda x, y: x.logical_xor(y), 2),
    # Both spellings: the method's receiver is the schema's `input`, not its first parameter.
    "where": Case(lambda x, y, m: (torch.where(m, x, y), x.where(m, y), x.where(m, other=y)), 3,
                  inputs=lambda d, lay: (make(d, lay, 1), make(d, lay, 2), make(torch.bool, lay, 3))),
    "masked_fill": Case(lambda x, m: (x.masked_fill(m, 0), x.masked_fill(m, -0.0) if x.dtype.is_floating_point else x),
                        2, NUM, inputs=_mask),
    "clamp": Case(lambda x, y: (x.clamp(-1, 2), x.clamp(min=0), x.clamp(max=-0.0), x.clamp(y, y + 1),
                                x.clamp(min=float("nan")) if x.dtype.is_floating_point else x), 2, NUM),
    "clip": Case(lambda x: x.clip(-0.0, 0.0), dtypes=FL),
    "clamp_min": Case(lambda x, y: (x.clamp_min(0), x.clamp_min(y)), 2, NUM),
    "clamp_max": Case(lambda x, y: (x.clamp_max(0), x.clamp_max(y)), 2, NUM),
    # Conversions, from every dtype to every dtype.
    "to": Case(lambda x: tuple(x.to(d) for d in ALL)),
    "type": Case(lambda x: x.type(torch.int32)),
    "float": Case(lambda x: x.float()),
    "double": Case(lambda x: x.double()),
    "long": Case(lambda x: x.long()),
    "int": Case(lambda x: x.int()),
    "short": Case(lambda x: x.short()),
    "char": Case(lambda x: x.char()),
    "byte": Case(lambda x: x.byte()),
    "bool": Case(lambda x: x.bool()),
    # Reductions.
    "sum": Case(lambda x: (x.sum(), x.sum(0), x.sum(1, keepdim=True)), dtypes=NUM + [torch.bool], mode=REDUCE),
    "mean": Case(lambda x: (x.mean(), x.mean((0, 1)), x.mean(1)), dtypes=FL, mode=REDUCE),
    # Moderate magnitudes: a product that overflows or underflows part way is order-dependent.
    "prod": Case(lambda x: (x.prod(0), x.prod(1)), dtypes=NUM, mode=REDUCE,
                 inputs=lambda d, lay: (_moderate(make(d, lay, 3)),)),
    "amax": Case(lambda x: (x.amax(0), x.amax((0, 1))), dtypes=NUM, mode=REDUCE),
    "amin": Case(lambda x: (x.amin(1), x.amin()), dtypes=NUM, mode=REDUCE),
    "max": Case(lambda x, y: (x.max(), x.max(1).values, torch.max(x, y)), 2, NUM, REDUCE),
    "min": Case(lambda x, y: (x.min(), x.min(0).values, torch.min(x, y)), 2, NUM, REDUCE),
    "argmax": Case(lambda x: (x.argmax(), x.argmax(1)), dtypes=NUM),
    "argmin": Case(lambda x: (x.argmin(0), x.argmin(1, keepdim=True)), dtypes=NUM),
    "all": Case(lambda x: (x.all(), x.all(1))),
    "any": Case(lambda x: (x.any(), x.any(0))),
    "var": Case(lambda x: (x.var(), x.var(1), x.var((0, 1), correction=0)), dtypes=FL, mode=REDUCE),
    "std": Case(lambda x: (x.std(0), x.std((0, 1), keepdim=True)), dtypes=FL, mode=REDUCE),
    "logsumexp": Case(lambda x: x.logsumexp(1), dtypes=FL, mode=REDUCE),
    "softmax": Case(lambda x: (x.softmax(1), F.softmax(x, 0)), dtypes=FL, mode=REDUCE),
    "log_softmax": Case(lambda x: (x.log_softmax(1), F.log_softmax(x, 0)), dtypes=FL, mode=REDUCE),
    # Matmul-class externs.
    "mm": Case(lambda x, y: x @ y.t(), 2, [torch.float32, torch.float64], REDUCE),
    "bmm": Case(lambda x, y: torch.bmm(x[None], y.t()[None]), 2, [torch.float32, torch.float64], REDUCE),
    "matmul": Case(lambda x, y: torch.matmul(x, y.t()), 2, [torch.float32, torch.float64], REDUCE),
    "addmm": Case(lambda x, y: torch.addmm(x[:, :1], x, y.t(), beta=0.5), 2, [torch.float32, torch.float64], REDUCE),
    "linear": Case(lambda x, y: F.linear(x, y, y[0, :R] if y.shape[0] else None), 2, [torch.float32, torch.float64], REDUCE),
    # Joins and indexing.
    "cat": Case(lambda x, y: (torch.cat([x, y]), torch.cat([x, y], 1)), 2),
    "concat": Case(lambda x, y: torch.concat([x, y], 0), 2),
    "concatenate": Case(lambda x, y: torch.concatenate([y, x], 1), 2),
    "stack": Case(lambda x, y: (torch.stack([x, y]), torch.stack([x, y], 2)), 2),
    "index_select": Case(lambda x, i: (x.index_select(1, i), x.index_select(0, i[:2])), 2,
                         inputs=lambda d, lay: (make(d, lay, 3), torch.tensor([0, 5, 1, 0]))),
    "embedding": Case(lambda x, i: F.embedding(i, x), 2, FL,
                      inputs=lambda d, lay: (make(d, lay, 3), torch.tensor([[0, 5], [1, 0]]))),
    # Mask and position-id construction (issue 14): factories, a running sum, differences.
    "arange": Case(lambda x: (torch.arange(C), torch.arange(1, 2 * C, 3), torch.arange(5, -4, -2, dtype=x.dtype),
                              torch.arange(-1.5, 2.0, 0.25) * 1, x * 1 if x.dtype != torch.bool else x), dtypes=NUM),
    "tensor": Case(lambda x: (torch.tensor([], dtype=x.dtype), torch.tensor([[], []]),
                              torch.cat([torch.tensor([], dtype=x.dtype, device=x.device), x.flatten()]))),
    "zeros": Case(lambda x: (torch.zeros(R, C, dtype=x.dtype), torch.zeros(())) ),
    "ones": Case(lambda x: torch.ones((2, C), dtype=x.dtype)),
    "full": Case(lambda x: (torch.full((R,), 3, dtype=x.dtype), torch.full((2, 2), True), torch.full((1,), -0.0))),
    "eye": Case(lambda x: (torch.eye(C, dtype=x.dtype, device=x.device), torch.eye(2, R, device=x.device) * 1,
                           torch.eye(R, device=x.device) @ (x * 1)), dtypes=FL),
    "new_zeros": Case(lambda x: x.new_zeros((3, 2))),
    "new_ones": Case(lambda x: (x.new_ones(()), x.new_ones(2, 3, dtype=torch.bool))),
    "new_full": Case(lambda x: x.new_full((2,), 1)),
    "zeros_like": Case(lambda x: torch.zeros_like(x)),
    "ones_like": Case(lambda x: torch.ones_like(x)),
    "full_like": Case(lambda x: (torch.full_like(x, 2), torch.full_like(x, 0, dtype=torch.float64))),
    # Index maps (session 29, `lower/index_maps.rs`): repeats past the rank and of size-1 dims,
    # windows of one element and of the whole dim, diagonals off both sides and empty, a
    # gather along either dim, nearest scales exact (2, 0.5, a size) and in float32 (1.5, 3,
    # 5 of 8), 1-d linear with and without align_corners.
    "repeat": Case(lambda x: (x.repeat(2, 1), x.repeat(1, 3, 2), x[:1].repeat(3, 1) * 1, x.repeat(1, 1))),
    "unflatten": Case(lambda x: (x.unflatten(1, (2, 4)), torch.unflatten(x, 1, (-1, 2)) * 1, x.unflatten(0, (1, -1)))),
    "unfold": Case(lambda x: (x.unfold(1, 3, 2), x.unfold(1, 1, 1) * 1, x.unfold(1, 8, 3), x.t().unfold(0, 2, 5))),
    "unfold_rows": Case(lambda x: (x.unfold(0, 2, 1), x.unfold(0, 6, 1) * 1, x.t().unfold(1, 1, 4))),
    "diagonal": Case(lambda x: (x.diagonal(), torch.diagonal(x, 2) * 1, x.diagonal(-3), torch.diagonal(x[None], 0, 1, 2),
                                x.diagonal(10), x.t().diagonal(1, 1, 0))),
    "gather": Case(lambda x, i: (x.gather(1, i), torch.gather(x, 0, i.t()[:, :4].clamp(max=R - 1)) * 1, x.gather(1, i[:2, :1])), 2,
                   inputs=lambda d, lay: (make(d, lay, 3), torch.tensor([[0, 7, 1], [3, 3, 2], [7, 0, 0], [1, 2, 3], [5, 6, 4], [2, 2, 2]]))),
    "interpolate": Case(lambda x: (F.interpolate(x[None], scale_factor=2), F.interpolate(x[None], scale_factor=0.5) * 1,
                                   F.interpolate(x[None], size=5), F.interpolate(x[None], scale_factor=1.5),
                                   F.interpolate(x[None], scale_factor=3), F.interpolate(x[None, None], scale_factor=(2, 0.5)),
                                   F.interpolate(x[None], size=1)), dtypes=FL),
    # Eager's CPU kernel contracts `t0 * w0 + t1 * w1` into an fma, ours rounds both products
    # (`-ffp-contract=off`): where the two terms cancel the results differ by a few ulps of the
    # larger term (float16/bfloat16 run through torch).
    "interpolate_linear": Case(lambda x: (F.interpolate(x[None], scale_factor=0.5, mode="linear"),
                                          F.interpolate(x[None], size=11, mode="linear", align_corners=True),
                                          F.interpolate(x[None], size=3, mode="linear"),
                                          F.interpolate(x[None], size=1, mode="linear", align_corners=True)),
                               dtypes=FL, mode=REDUCE),
    # A sum over a triangle: summation order differs from eager's running sum.
    "cumsum": Case(lambda x: (x.cumsum(0), torch.cumsum(x, 1), x.cumsum(-1, dtype=torch.float64)), mode=REDUCE),
    "diff": Case(lambda x, y: (torch.diff(x), x.diff(2, 0), torch.diff(x, dim=0, prepend=y[:1], append=y)), 2),
    # Activations.
    "relu6": Case(lambda x: F.relu6(x), dtypes=NUM),
    "hardtanh": Case(lambda x: (F.hardtanh(x), F.hardtanh(x, -0.0, 0.0)), dtypes=FL),
    "leaky_relu": Case(lambda x: F.leaky_relu(x, 0.2), dtypes=FL),
    "elu": Case(lambda x: F.elu(x), dtypes=FL, mode=ULP),
    "silu": Case(lambda x: F.silu(x), dtypes=FL, mode=ULP),
    "mish": Case(lambda x: F.mish(x), dtypes=FL, mode=ULP),
    # Eager's vector lanes give NaN for gelu(+inf), its scalar tail gives inf: no +-inf here,
    # and no values near the dtype's maximum (whether `x * (1 + erf)` overflows before the
    # halving is eager's order of operations).
    # `1 + erf(x / sqrt 2)` cancels for large negative x, in eager as here, so the absolute
    # error is the dtype's epsilon, not a few ulps of the tiny result.
    "gelu": Case(lambda x: (F.gelu(x), F.gelu(x, approximate="tanh")), dtypes=FL, mode=REDUCE,
                 inputs=lambda d, lay: (tame(make(d, lay, 3)).nan_to_num(posinf=2.0, neginf=-2.0),)),
    "softplus": Case(lambda x: (F.softplus(x), F.softplus(x, 2.0, 3.0)), dtypes=FL, mode=ULP),
    "hardswish": Case(lambda x: F.hardswish(x), dtypes=FL, mode=ULP),
    "hardsigmoid": Case(lambda x: F.hardsigmoid(x), dtypes=FL, mode=ULP),
    "tanh": Case(lambda x: F.tanh(x), dtypes=FL, mode=ULP),
    "dropout": Case(lambda x: F.dropout(x, 0.5, training=False), dtypes=FL),
    # Normalizations and pooling (4-d inputs built from the 2-d ones).
    # Rows near the dtype's maximum overflow the variance in float, in an order-dependent way.
    "layer_norm": Case(lambda x: (F.layer_norm(x, (C,)), F.layer_norm(x, (C,), x[0].abs() + 1, x[1])),
                       dtypes=FL, mode=REDUCE, inputs=lambda d, lay: (tame(make(d, lay, 3)),)),
    "rms_norm": Case(lambda x: F.rms_norm(x, (C,), eps=1e-5), dtypes=FL, mode=REDUCE),
    "batch_norm": Case(lambda x: F.batch_norm(x, x[0].abs() * 0 + 0.5, x[1].abs() + 1, x[2], x[3], False),
                       dtypes=[torch.float32, torch.float64], mode=REDUCE,
                       inputs=lambda d, lay: (make(d, lay, 3).reshape(-1, C) if lay != "empty" else make(d, lay, 3),)),
    # ceil_mode: the last window runs past the edge (kept) or would start in the padding (dropped).
    "max_pool2d": Case(lambda x: (F.max_pool2d(x[None], 2, 1, 1), F.max_pool2d(x[None], 3, 2, ceil_mode=True),
                                  F.max_pool2d(x[None], (2, 3), (2, 1), 1, (2, 1), ceil_mode=True)),
                       dtypes=[torch.float32, torch.float64]),
    "max_pool1d": Case(lambda x: (F.max_pool1d(x, 3, 2, 1, ceil_mode=True), F.max_pool1d(x, 2)),
                       dtypes=[torch.float32, torch.float64]),
    "max_pool3d": Case(lambda x: F.max_pool3d(x[None, None], (1, 3, 2), (1, 2, 2), (0, 1, 1), ceil_mode=True),
                       dtypes=[torch.float32, torch.float64]),
    # Sums divide by the count as eager does (not by a reciprocal); float sums for half inputs.
    "avg_pool2d": Case(lambda x: (F.avg_pool2d(x[None], 2), F.avg_pool2d(x[None], 3, 2, 1),
                                  F.avg_pool2d(x[None], 3, 2, 1, ceil_mode=True, count_include_pad=False),
                                  F.avg_pool2d(x[None], 3, 2, 1, ceil_mode=True),
                                  F.avg_pool2d(x[None], (2, 3), 1, (1, 0), divisor_override=4)),
                       dtypes=FL, mode=REDUCE),
    "avg_pool1d": Case(lambda x: (F.avg_pool1d(x, 3, 2, 1, ceil_mode=True), F.avg_pool1d(x, 2, count_include_pad=False)),
                       dtypes=FL, mode=REDUCE),
    "avg_pool3d": Case(lambda x: F.avg_pool3d(x[None, None], (1, 2, 3), (1, 2, 2), (0, 1, 1), ceil_mode=True),
                       dtypes=[torch.float32, torch.float64], mode=REDUCE),
    # Adaptive windows of varying size (unrolled with masks), and past 25 elements (a reduction).
    "adaptive_avg_pool2d": Case(lambda x: (F.adaptive_avg_pool2d(x[None], 1), F.adaptive_avg_pool2d(x[None], (4, 3)),
                                           F.adaptive_avg_pool2d(x[None], (1, 2))), dtypes=FL, mode=REDUCE),
    "adaptive_avg_pool1d": Case(lambda x: (F.adaptive_avg_pool1d(x, 3), F.adaptive_avg_pool1d(x, 1)),
                                dtypes=FL, mode=REDUCE),
    # Half precision falls back (eager's CPU kernel sums in the half type): float types only.
    "adaptive_avg_pool3d": Case(lambda x: F.adaptive_avg_pool3d(x[None, None], (1, 4, 3)),
                                dtypes=[torch.float32, torch.float64], mode=REDUCE),
    "adaptive_max_pool2d": Case(lambda x: (F.adaptive_max_pool2d(x[None], (4, 3)), F.adaptive_max_pool2d(x[None], (1, 2))),
                                dtypes=[torch.float32, torch.float64]),
    "adaptive_max_pool1d": Case(lambda x: F.adaptive_max_pool1d(x, 3), dtypes=[torch.float32, torch.float64]),
    "adaptive_max_pool3d": Case(lambda x: F.adaptive_max_pool3d(x[None, None], (1, 5, 3)),
                                dtypes=[torch.float32, torch.float64]),
    "conv1d": Case(lambda x, w: F.conv1d(x[None], w[:, :R, None].expand(-1, -1, 3).contiguous()), 2,
                   [torch.float32, torch.float64], REDUCE, layouts=["contiguous", "transposed", "strided"]),
    "conv2d": Case(lambda x, w: F.conv2d(x[None, None], w[:2, None, :2, None].expand(-1, -1, -1, 3).contiguous()), 2,
                   [torch.float32, torch.float64], REDUCE, layouts=["contiguous", "transposed", "strided"]),
    "conv3d": Case(lambda x, w: F.conv3d(x[None, None, None], w[:2, :2].reshape(2, 1, 1, 1, 2)), 2,
                   [torch.float32, torch.float64], REDUCE, layouts=["contiguous", "transposed", "strided"]),
    "scaled_dot_product_attention": Case(lambda q, k: F.scaled_dot_product_attention(q[None], k[None], k[None]), 2,
                                         [torch.float32, torch.float64], REDUCE),
    # Views (their results are compared, and used by a kernel so the view is not just returned).
    "view": Case(lambda x: (x.reshape(-1).view(C, R) * 1 if x.dtype != torch.bool else x.reshape(-1).view(C, R))),
    "reshape": Case(lambda x: (x.reshape(C, R), x.reshape(-1, 2))),
    "view_as": Case(lambda x, y: x.reshape(-1).view_as(y), 2),
    "reshape_as": Case(lambda x, y: x.reshape_as(y.t()), 2),
    "expand": Case(lambda x: x[:, :1].expand(R, C)),
    "expand_as": Case(lambda x, y: x[:1].expand_as(y), 2),
    "broadcast_to": Case(lambda x: torch.broadcast_to(x[:1], (2, R, C))),
    "permute": Case(lambda x: x[None].permute(2, 0, 1)),
    "transpose": Case(lambda x: x.transpose(0, 1)),
    "swapaxes": Case(lambda x: x.swapaxes(0, 1)),
    "swapdims": Case(lambda x: x.swapdims(1, 0)),
    "t": Case(lambda x: x.t()),
    "squeeze": Case(lambda x: (x[None].squeeze(), x[:, :1].squeeze(1))),
    "unsqueeze": Case(lambda x: x.unsqueeze(1)),
    "flatten": Case(lambda x: x.flatten()),
    "narrow": Case(lambda x: x.narrow(1, 2, 3)),
    "select": Case(lambda x: x.select(1, 3)),
    "split": Case(lambda x: x.split(3, 1)),
    "split_with_sizes": Case(lambda x: x.split_with_sizes([2, 1, 5], 1)),
    "chunk": Case(lambda x: x.chunk(2, 1)),
    "unbind": Case(lambda x: x.unbind(1)),
    "getitem": Case(lambda x: (x[1:, ::2], x[..., None, 3], x[-1])),
    "setitem": Case(_setitem, 2),
    # Several index tensors (aranges, broadcast against each other; negatives wrap).
    "getitem_tensors": Case(lambda x: (x[torch.arange(2)[:, None], torch.arange(-3, 3)[None, :]],
                                       x[torch.arange(R - 1, -1, -2), torch.arange(3)])),
    # Negative, zero and positive padding run on torch through the fallback path.
    "constant_pad_nd": Case(lambda x: (F.pad(x, (-1, 2, 1, -2)), F.pad(x, (-2, -3)), F.pad(x * 2, (0, 0, -1, -1)),
                                       torch.constant_pad_nd(x, (1, 1), 0.5)), dtypes=NUM),
}  # fmt: skip

# Table names that are a case under another name, or not an op of their own.
SAME_AS = {"absolute": "abs", "multiply": "mul", "not_equal": "ne", "fix": "trunc"}

# Known failures, each a precise reason: (case, dtype) -> reason. Strict: fixing one fails the
# test until the entry is removed.
XFAIL: dict[tuple[str, torch.dtype], str] = {
    (
        name,
        d,
    ): "sub/rsub with alpha: eager computes `x - alpha * y` with one fused multiply-add "
    "(one rounding); the inductor's IR has no fma, so it rounds the product first"
    for name in ("sub",)
    for d in FLOATS
}


def all_cases() -> dict[str, Case]:
    cases = generated_cases(lowering_table())
    cases.update(CASES)
    return cases


def test_every_lowering_has_a_case():
    """A lowering added to the table without a case here fails this test."""
    table = lowering_table()
    assert len(table["unary"]) > 20 and len(table["torch"]) > 50, table
    have = set(all_cases()) | set(SAME_AS)
    missing = set().union(*table.values()) - have
    assert not missing, f"lowerings without a differential case: {sorted(missing)}"


# ---------------------------------------------------------------------------------------------
# Running a case: one compiled graph for all its dtypes and layouts.


_results: dict[str, dict] = {}


def _run_case(name: str) -> dict:
    """{(dtype, layout): (eager, compiled or exception)} plus the graph's fallback reasons."""
    if name in _results:
        return _results[name]
    case = all_cases()[name]
    groups, keys = [], []
    for d in case.dtypes:
        # The narrow integer types differ from the wide ones in values, not in addressing: two
        # layouts each keep the compiles (most of the test's time) down.
        layouts = (
            case.layouts
            if d not in NARROW
            else [x for x in case.layouts if x in ("contiguous", "overlap")]
        )
        for lay in layouts:
            args = case.inputs(d, lay)
            try:
                eager = case.fn(*[clone_like(a) for a in args])
            except Exception:  # noqa: BLE001 - eager rejects this dtype/layout: not a case
                continue
            groups.append(args)
            keys.append((d, lay, eager))
    arities = [len(g) for g in groups]

    def graph(*flat):
        out, i = [], 0
        for n in arities:
            out.append(case.fn(*flat[i : i + n]))
            i += n
        return out

    flat = [clone_like(a) for g in groups for a in g]
    torchferro.compiler.reset()
    compiled = torchferro.compile(graph)(*flat)
    entries = torchferro.compiler.cache_entries(graph)
    res = {
        "entries": [(e.get("runner"), e.get("fallback_reasons")) for e in entries],
        "out": {},
    }
    for (d, lay, eager), c in zip(keys, compiled):
        res["out"].setdefault(d, []).append((lay, eager, c))
    _results[name] = res
    return res


def _params():
    ps = []
    for name, case in sorted(all_cases().items()):
        for d in case.dtypes:
            marks = []
            if (name, d) in XFAIL:
                marks.append(pytest.mark.xfail(strict=True, reason=XFAIL[(name, d)]))
            ps.append(pytest.param(name, d, id=f"{name}-{str(d)[6:]}", marks=marks))
    return ps


@pytest.mark.parametrize("name,dtype", _params())
def test_lowering_matches_eager(name, dtype):
    res = _run_case(name)
    assert res["out"], f"eager accepts none of {name}'s inputs: the case is broken"
    assert res["entries"] and all(r == "inductor" for r, _ in res["entries"]), res[
        "entries"
    ]
    mode = all_cases()[name].mode
    bad = []
    for lay, eager, compiled in res["out"].get(dtype, []):
        why = differs(eager, compiled, mode)
        if why:
            bad.append(f"{lay}: {why}")
    assert not bad, (
        f"{name} {dtype} (fallbacks: {res['entries'][0][1]}):\n" + "\n".join(bad)
    )


# ---------------------------------------------------------------------------------------------
# Mechanisms fixed in the kernels, each with the program that showed it.


def _compiled_vs_eager(fn, *args):
    torchferro.compiler.reset()
    expected = fn(*[clone_like(a) for a in args])
    actual = torchferro.compile(fn)(*[clone_like(a) for a in args])
    why = differs(expected, actual, EXACT)
    assert why is None, why
    return torchferro.compiler.cache_entries(fn)


@pytest.mark.parametrize(
    "prog",
    [
        # The input of as_strided is a lazy intermediate: it is realized with eager's layout.
        lambda x: torch.as_strided(x * 1, (4, 4), (2, 1)),
        lambda x: (x * 1).as_strided((4, 4), (2, 1), 3) + 1,
        # A transposed view of an intermediate: its storage is the intermediate's.
        lambda x: (x.view(4, 5) * 1).t().as_strided((4, 4), (2, 1), 1) + 0,
        # A slice of an intermediate (storage offset 2 into eager's storage).
        lambda x: (x * 2)[2:].as_strided((4, 4), (2, 1), 1) + 0,
        # A view of an input: the caller's own storage, offset included.
        lambda x: x[2:].as_strided((4, 4), (2, 1), 1) + 0,
        # `contiguous()` of a non-contiguous input copies in eager.
        lambda x: x.view(4, 5).t().contiguous().as_strided((3, 3), (1, 1)) * 2,
    ],
)
def test_as_strided_reads_eagers_storage(prog):
    entries = _compiled_vs_eager(prog, torch.arange(20.0))
    assert entries, "nothing compiled"


def test_overlapping_and_broadcast_inputs():
    base = torch.arange(20.0)
    _compiled_vs_eager(lambda x: (x + 1).sum(0), base.as_strided((5, 4), (1, 2)))
    _compiled_vs_eager(lambda x: x * 2, base.as_strided((4, 4), (2, 1)))
    _compiled_vs_eager(lambda x: x.relu() + x, base[:4].expand(3, 4))


def test_unused_results_of_a_fallback_are_not_checked():
    """torch's meta kernel and its CPU kernel disagree on the sizes of `_embedding_bag`'s
    `offset2bag`; the graph uses only the bags, so the others are dropped unchecked."""
    w = torch.randn(10, 3)
    ids, offsets = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9]), torch.tensor([0, 4])
    entries = _compiled_vs_eager(
        lambda i, o, w: torch._embedding_bag(w, i, o)[0] * 2, ids, offsets, w
    )
    assert entries[0]["runner"] == "inductor"
    for mode in ("sum", "mean", "max"):
        _compiled_vs_eager(
            lambda i, o, w, mode=mode: F.embedding_bag(i, w, o, mode=mode) + 1,
            ids,
            offsets,
            w,
        )


def test_constant_pad_nd_negative_padding_on_non_contiguous_inputs():
    x = torch.randn(6, 8).t()
    for pads in [(-1, -2, 1, -1), (-1, -1), (-2, -3, -1, -1), (0, 0, -2, 1)]:
        _compiled_vs_eager(lambda x, p=pads: F.pad(x, p), x)
        _compiled_vs_eager(lambda x, p=pads: F.pad((x * 2).t(), p) + 1, x)
    y = torch.randn(2, 5, 6, 3).permute(0, 3, 1, 2)
    _compiled_vs_eager(lambda x: F.pad(x, (-1, -1, -1, -1)) * 1, y)


# ---------------------------------------------------------------------------------------------
# A compiled model sees every change to its weights.


def _conv_model():
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3),
        torch.nn.BatchNorm2d(8),
        torch.nn.ReLU(),
        torch.nn.Conv2d(8, 4, 3),
        torch.nn.Flatten(),
        torch.nn.Linear(4 * 12 * 12, 5),
    ).eval()


def _set_state(m):
    m.load_state_dict({k: v * 0.5 for k, v in m.state_dict().items()})


def _storage_write(m):
    src = torch.randn(m[0].weight.shape, generator=torch.Generator().manual_seed(1))
    m[0].weight.untyped_storage().copy_(src.untyped_storage())


WEIGHT_CHANGES = {
    "data_mul_": lambda m: m[0].weight.data.mul_(0.5),
    "data_row_zero_": lambda m: m[0].weight.data[0].zero_(),
    "data_copy_": lambda m: m[3].weight.data.copy_(m[3].weight.data * 0.7),
    "data_set_": lambda m: m[0].weight.data.set_(m[0].weight.data * -1),
    "param_data_assign": lambda m: setattr(
        m[0], "weight", torch.nn.Parameter(m[0].weight * 2)
    ),
    "load_state_dict": _set_state,
    "no_grad_copy_": lambda m: m[0].weight.copy_(m[0].weight.flip(0)),
    "no_grad_mul_": lambda m: m[3].weight.mul_(2),
    "detach_add_": lambda m: m[0].weight.detach().add_(1.0),
    "storage_write": _storage_write,
    "bn_running_mean_data": lambda m: m[1].running_mean.data.add_(1.0),
    "linear_weight_data": lambda m: m[5].weight.data[0].zero_(),
}


@pytest.mark.parametrize("change", sorted(WEIGHT_CHANGES))
def test_compiled_model_sees_weight_changes(change):
    x = torch.randn(2, 3, 16, 16, generator=torch.Generator().manual_seed(2))
    model, reference = _conv_model(), _conv_model()
    compiled = torchferro.compile(model)
    with torch.no_grad():
        compiled(x)
        compiled(x)
        WEIGHT_CHANGES[change](model)
        WEIGHT_CHANGES[change](reference)
        expected = reference(x)
        actual = compiled(x)
    torch.testing.assert_close(actual, expected, rtol=1e-4, atol=1e-4)
    entries = torchferro.compiler.cache_entries(model)
    assert entries and entries[0]["runner"] == "inductor"


# ---------------------------------------------------------------------------------------------
# Non-strided layouts run eagerly (each in a child process: the failure was a crash).

LAYOUT_PROBE = r"""
import sys, torch, torchferro
make = {
    "sparse_coo": lambda: torch.eye(4).to_sparse(),
    "sparse_csr": lambda: torch.eye(4).to_sparse_csr(),
    "mkldnn": lambda: torch.randn(4, 4).to_mkldnn(),
    "nested": lambda: torch.nested.nested_tensor([torch.randn(2), torch.randn(3)]),
}[sys.argv[1]]
def f(x, y):
    return x.to_dense() * 2 + y if not x.is_nested else x.to_padded_tensor(0.0) + 1
y = torch.ones(4, 4)
x = make()
torchferro.compiler.reset()
expected = f(x, y)
# A strided tensor of the same shape first, then the non-strided one (its guards must fail).
g = torchferro.compile(f)
g(torch.zeros(4, 4) if not x.is_nested else x, y)
actual = g(x, y)
assert torch.equal(actual, expected), (actual, expected)
print("ok")
"""


@pytest.mark.parametrize("layout", ["sparse_coo", "sparse_csr", "mkldnn", "nested"])
def test_non_strided_layouts_run_eagerly(layout):
    r = subprocess.run(
        [sys.executable, "-c", LAYOUT_PROBE, layout],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), (
        r.returncode,
        r.stderr[-2000:],
    )


def test_fallback_results_torch_cannot_size_ahead_run_eagerly():
    """`_embedding_bag`'s other results are sized by the data on CPU, not as its meta kernel
    says: a graph that returns them runs on the eager runner instead of raising."""
    w = torch.randn(10, 3)
    ids, offsets = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9]), torch.tensor([0, 4])
    for mode in (0, 1, 2):
        entries = _compiled_vs_eager(
            lambda i, o, w, mode=mode: torch._embedding_bag(w, i, o, False, mode),
            ids,
            offsets,
            w,
        )
        assert entries[0]["runner"] == "eager"


@pytest.mark.parametrize(
    "name",
    [
        "repeat",
        "unflatten",
        "unfold",
        "unfold_rows",
        "diagonal",
        "gather",
        "interpolate",
        "interpolate_linear",
    ],
)
def test_index_maps_are_lowered(name):
    """The index-map cases (session 29) run as kernels, not through torch: no fallback node
    but linear interpolation of float16/bfloat16 (torch's reduced-precision weights)."""
    res = _run_case(name)
    reasons = [r for _, rs in res["entries"] for r in rs]
    assert all("reduced float dtype" in r for r in reasons), reasons
