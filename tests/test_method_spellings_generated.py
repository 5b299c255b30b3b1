"""Generated method and function spellings of the op catalog's method rows, compiled on the
inductor and compared with eager.

A method's receiver is bound where the schema puts `input`, which is not always the first
parameter: `x.where(cond, y)` is `torch.where(cond, x, y)` (a wrong value in session 12, bound as
`torch.where(x, cond, y)`), and `x.normal_(mean, std)`'s receiver is no parameter of
`torch.normal(mean, std)` at all. `test_every_method_row_has_a_recipe` reads the catalog
(`fx/src/ops/table.rs`) so that a new method row gets a recipe here; the generator draws an op,
a dtype, a shape and a spelling (method, function, keywords, in-place) and checks the compiled
call against eager: values, dtype, and the receiver's contents after an in-place call.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import hypothesis.strategies as st
import pytest
import torch
from hypothesis import HealthCheck, Phase, given, note, settings

import torchferro

EXAMPLES = int(os.environ.get("TORCHFERRO_METHOD_GEN_EXAMPLES", "150"))
TABLE = Path(__file__).resolve().parents[1] / "fx" / "src" / "ops" / "table.rs"

FLOAT = (torch.float32, torch.float64)
REAL = (torch.float32, torch.float64, torch.int64)
ANY = (torch.float32, torch.float64, torch.int64, torch.bool)
INT = (torch.int64, torch.int32)
BOOL = (torch.bool,)


def _other(x, d, dtype=None):
    """A second tensor of `x`'s shape (a fresh draw of values)."""
    g = torch.Generator().manual_seed(d.draw(st.integers(0, 99)))
    t = torch.randn(x.shape, generator=g, dtype=torch.float64) * 3
    dtype = dtype or x.dtype
    if dtype == torch.bool:
        return t > 0
    return t.to(dtype)


def _dim(x, d):
    return d.draw(st.integers(-x.dim(), x.dim() - 1))


def _mask(x, d):
    return _other(x, d, torch.bool)


def _index(x, d, dim):
    g = torch.Generator().manual_seed(d.draw(st.integers(0, 99)))
    return torch.randint(0, x.shape[dim], x.shape, generator=g)


def _perm(x, d):
    return d.draw(st.permutations(list(range(x.dim()))))


def _scalar(d, lo=-2.0, hi=2.0):
    return d.draw(st.sampled_from([lo, hi, 0.5, 1, 3]))


def _kw(d, names, args):
    """`args` with a drawn tail passed by keyword under `names` (the method's own names)."""
    k = d.draw(st.integers(0, len(names)))
    pos = list(args[: len(args) - k]) if k else list(args)
    kw = dict(zip(names[len(names) - k :], args[len(args) - k :])) if k else {}
    return pos, kw


# name -> (dtypes, recipe): the recipe draws the method call's arguments for a receiver `x`
# (a 2-d tensor) as (args, kwargs). Function spellings pass the receiver first (`FUNCTION`).
RECIPES = {
    # Views and layout.
    "view": (ANY, lambda x, d: ([x.shape[1], x.shape[0]], {})),
    "view_as": (ANY, lambda x, d: ([x.t()], {})),
    "permute": (ANY, lambda x, d: (_perm(x, d), {})),
    "transpose": (ANY, lambda x, d: ([0, -1], {})),
    "swapaxes": (ANY, lambda x, d: ([1, 0], {})),
    "swapdims": (ANY, lambda x, d: ([0, 1], {})),
    "t": (ANY, lambda x, d: ([], {})),
    "adjoint": (FLOAT, lambda x, d: ([], {})),
    "unsqueeze": (ANY, lambda x, d: ([d.draw(st.integers(-3, 2))], {})),
    "squeeze": (ANY, lambda x, d: ([], {})),
    "expand": (ANY, lambda x, d: ([3, *x.shape], {})),
    "expand_as": (ANY, lambda x, d: ([x.expand(2, *x.shape)], {})),
    "broadcast_to": (ANY, lambda x, d: ([(2, *x.shape)], {})),
    "narrow": (ANY, lambda x, d: _kw(d, ["length"], [1, 0, 1])),
    "select": (ANY, lambda x, d: _kw(d, ["dim", "index"], [1, x.shape[1] - 1])),
    "diagonal": (ANY, lambda x, d: _kw(d, ["offset", "dim1", "dim2"], [0, 1, 0])),
    "movedim": (ANY, lambda x, d: _kw(d, ["source", "destination"], [0, 1])),
    "moveaxis": (ANY, lambda x, d: ([1, 0], {})),
    "unfold": (FLOAT, lambda x, d: ([1, 2, 1], {})),
    "as_strided": (ANY, lambda x, d: _kw(d, ["storage_offset"], [(2, 2), (1, 2), 1])),
    "detach": (ANY, lambda x, d: ([], {})),
    "unflatten": (ANY, lambda x, d: ([0, (1, x.shape[0])], {})),
    "split": (
        ANY,
        lambda x, d: _kw(d, ["dim"], [d.draw(st.integers(1, 3)), _dim(x, d)]),
    ),
    "chunk": (
        ANY,
        lambda x, d: _kw(d, ["dim"], [d.draw(st.integers(1, 3)), _dim(x, d)]),
    ),
    "unbind": (ANY, lambda x, d: _kw(d, ["dim"], [_dim(x, d)])),
    "tensor_split": (ANY, lambda x, d: _kw(d, ["dim"], [2, _dim(x, d)])),
    "hsplit": (ANY, lambda x, d: ([[1]], {})),
    "vsplit": (ANY, lambda x, d: ([[1]], {})),
    "dsplit": (ANY, lambda x, d: ([[1]], {})),
    "split_with_sizes": (ANY, lambda x, d: ([[1, x.shape[1] - 1], 1], {})),
    "reshape": (ANY, lambda x, d: ([-1], {})),
    "reshape_as": (ANY, lambda x, d: ([x.t()], {})),
    "flatten": (ANY, lambda x, d: ([], {})),
    "ravel": (ANY, lambda x, d: ([], {})),
    "contiguous": (ANY, lambda x, d: ([], {})),
    "to": (
        ANY,
        lambda x, d: ([d.draw(st.sampled_from([torch.float64, torch.int32]))], {}),
    ),
    "type_as": (ANY, lambda x, d: ([torch.zeros(1, dtype=torch.float16)], {})),
    "cpu": (ANY, lambda x, d: ([], {})),
    "positive": (REAL, lambda x, d: ([], {})),
    "clone": (ANY, lambda x, d: ([], {})),
    # Random (seeded alike in both runs).
    "bernoulli": (FLOAT, lambda x, d: ([d.draw(st.sampled_from([0.2, 0.7]))], {})),
    "multinomial": (FLOAT, lambda x, d: _kw(d, ["replacement"], [2, True])),
    "normal": (FLOAT, lambda x, d: _kw(d, ["mean", "std"], [_scalar(d), 0.5])),
    "uniform": (FLOAT, lambda x, d: _kw(d, ["from", "to"], [2.0, 3.0])),
    "exponential": (FLOAT, lambda x, d: _kw(d, ["lambd"], [2.0])),
    "geometric": (FLOAT, lambda x, d: _kw(d, ["p"], [0.3])),
    "cauchy": (FLOAT, lambda x, d: _kw(d, ["median", "sigma"], [1.0, 2.0])),
    "log_normal": (FLOAT, lambda x, d: _kw(d, ["mean", "std"], [1.0, 0.5])),
    "random": (
        FLOAT + INT,
        lambda x, d: (d.draw(st.sampled_from([[], [10], [2, 9]])), {}),
    ),
    # Binary arithmetic.
    "add": (REAL, lambda x, d: _kw(d, ["alpha"], [_other(x, d), 2])),
    "sub": (REAL, lambda x, d: _kw(d, ["alpha"], [_other(x, d), 3])),
    "mul": (REAL, lambda x, d: ([_other(x, d)], {})),
    "div": (FLOAT, lambda x, d: ([_other(x, d)], {})),
    "true_divide": (FLOAT, lambda x, d: ([_other(x, d)], {})),
    "floor_divide": (FLOAT, lambda x, d: ([_scalar(d)], {})),
    "remainder": (REAL, lambda x, d: ([3], {})),
    "fmod": (REAL, lambda x, d: ([3], {})),
    "pow": (FLOAT, lambda x, d: ([d.draw(st.sampled_from([2, 0.5, 3.0]))], {})),
    "float_power": (FLOAT, lambda x, d: ([2], {})),
    "atan2": (FLOAT, lambda x, d: ([_other(x, d)], {})),
    "arctan2": (FLOAT, lambda x, d: ([_other(x, d)], {})),
    "hypot": (FLOAT, lambda x, d: ([_other(x, d)], {})),
    "copysign": (FLOAT, lambda x, d: ([_other(x, d)], {})),
    "xlogy": (FLOAT, lambda x, d: ([_other(x, d).abs()], {})),
    "fmax": (FLOAT, lambda x, d: ([_other(x, d)], {})),
    "fmin": (FLOAT, lambda x, d: ([_other(x, d)], {})),
    "maximum": (REAL, lambda x, d: ([_other(x, d)], {})),
    "minimum": (REAL, lambda x, d: ([_other(x, d)], {})),
    "lerp": (FLOAT, lambda x, d: ([_other(x, d), _scalar(d, 0.0, 1.0)], {})),
    "addcmul": (FLOAT, lambda x, d: _kw(d, ["value"], [_other(x, d), _other(x, d), 2])),
    "addcdiv": (
        FLOAT,
        lambda x, d: _kw(d, ["value"], [_other(x, d), _other(x, d).exp(), 2]),
    ),
    "multiply": (REAL, lambda x, d: ([_other(x, d)], {})),
    "divide": (FLOAT, lambda x, d: ([_other(x, d)], {"rounding_mode": "floor"})),
    "subtract": (REAL, lambda x, d: _kw(d, ["alpha"], [_other(x, d), 2])),
    # Comparisons and logic.
    "eq": (ANY, lambda x, d: ([_other(x, d)], {})),
    "ne": (ANY, lambda x, d: ([_other(x, d)], {})),
    "lt": (REAL, lambda x, d: ([_other(x, d)], {})),
    "le": (REAL, lambda x, d: ([0], {})),
    "gt": (REAL, lambda x, d: ([_other(x, d)], {})),
    "ge": (REAL, lambda x, d: ([0.5], {})),
    "greater": (REAL, lambda x, d: ([_other(x, d)], {})),
    "greater_equal": (REAL, lambda x, d: ([_other(x, d)], {})),
    "less": (REAL, lambda x, d: ([_other(x, d)], {})),
    "less_equal": (REAL, lambda x, d: ([_other(x, d)], {})),
    "not_equal": (ANY, lambda x, d: ([_other(x, d)], {})),
    "logical_and": (ANY, lambda x, d: ([_other(x, d)], {})),
    "logical_or": (ANY, lambda x, d: ([_other(x, d)], {})),
    "logical_xor": (ANY, lambda x, d: ([_other(x, d)], {})),
    "logical_not": (ANY, lambda x, d: ([], {})),
    "bitwise_and": (INT + BOOL, lambda x, d: ([_other(x, d)], {})),
    "bitwise_or": (INT + BOOL, lambda x, d: ([_other(x, d)], {})),
    "bitwise_xor": (INT + BOOL, lambda x, d: ([_other(x, d)], {})),
    "bitwise_not": (INT + BOOL, lambda x, d: ([], {})),
    "where": (ANY, lambda x, d: _kw(d, ["other"], [_mask(x, d), _other(x, d)])),
    # Clamps, fills, scatters.
    "clamp": (REAL, lambda x, d: _kw(d, ["min", "max"], [-1, 1])),
    "clamp_min": (REAL, lambda x, d: ([0], {})),
    "clamp_max": (REAL, lambda x, d: ([0], {})),
    "clip": (FLOAT, lambda x, d: _kw(d, ["min", "max"], [-0.5, 0.5])),
    "masked_fill": (ANY, lambda x, d: _kw(d, ["value"], [_mask(x, d), 1])),
    "masked_scatter": (ANY, lambda x, d: ([_mask(x, d), _other(x, d)], {})),
    "index_put": (
        REAL,
        lambda x, d: _kw(
            d, ["accumulate"], [(torch.tensor([0, 0]),), _other(x, d)[:1], True]
        ),
    ),
    "index_add": (
        REAL,
        lambda x, d: _kw(d, ["alpha"], [0, torch.tensor([1, 0]), _other(x, d)[:2], 2]),
    ),
    "index_fill": (ANY, lambda x, d: ([1, torch.tensor([0]), 1], {})),
    "index_copy": (ANY, lambda x, d: ([0, torch.tensor([1, 0]), _other(x, d)[:2]], {})),
    "scatter": (REAL, lambda x, d: ([1, _index(x, d, 1), _other(x, d)], {})),
    "scatter_add": (REAL, lambda x, d: ([1, _index(x, d, 1), _other(x, d)], {})),
    "scatter_reduce": (
        FLOAT,
        lambda x, d: _kw(
            d,
            ["include_self"],
            [
                0,
                _index(x, d, 0),
                _other(x, d),
                d.draw(st.sampled_from(["sum", "amax", "mean", "prod"])),
                False,
            ],
        ),
    ),
    "tril": (ANY, lambda x, d: _kw(d, ["diagonal"], [d.draw(st.integers(-1, 1))])),
    "triu": (ANY, lambda x, d: _kw(d, ["diagonal"], [d.draw(st.integers(-1, 1))])),
    "nan_to_num": (
        FLOAT,
        lambda x, d: _kw(d, ["nan", "posinf", "neginf"], [0.0, 9.0, -9.0]),
    ),
    "logit": (FLOAT, lambda x, d: _kw(d, ["eps"], [1e-3])),
    "fill": (ANY, lambda x, d: ([1], {})),
    "zero": (ANY, lambda x, d: ([], {})),
    "copy": (ANY, lambda x, d: ([_other(x, d, torch.float64)], {})),
    "resize": (ANY, lambda x, d: ([x.numel()], {})),
    "resize_as": (ANY, lambda x, d: ([x.t()], {})),
    "addmm": (
        FLOAT,
        lambda x, d: _kw(
            d,
            ["beta", "alpha"],
            [_other(x, d) @ _other(x, d).t() @ x / 9, x.t(), 0.5, 2],
        ),
    ),
    # Reductions and queries.
    "all": (ANY, lambda x, d: ([], {})),
    "any": (ANY, lambda x, d: ([], {})),
    "amax": (REAL, lambda x, d: _kw(d, ["dim", "keepdim"], [_dim(x, d), True])),
    "amin": (REAL, lambda x, d: _kw(d, ["dim", "keepdim"], [_dim(x, d), False])),
    "argmax": (REAL, lambda x, d: _kw(d, ["dim", "keepdim"], [_dim(x, d), True])),
    "argmin": (REAL, lambda x, d: _kw(d, ["dim", "keepdim"], [_dim(x, d), False])),
    "logsumexp": (FLOAT, lambda x, d: _kw(d, ["dim", "keepdim"], [_dim(x, d), True])),
    "max": (REAL, lambda x, d: ([], {})),
    "min": (REAL, lambda x, d: ([], {})),
    "mean": (FLOAT, lambda x, d: ([], {"dtype": torch.float64})),
    "nansum": (FLOAT, lambda x, d: _kw(d, ["dim", "keepdim"], [_dim(x, d), True])),
    "prod": (REAL, lambda x, d: ([], {})),
    "sum": (ANY, lambda x, d: ([], {})),
    "std": (FLOAT, lambda x, d: _kw(d, ["unbiased"], [False])),
    "var": (FLOAT, lambda x, d: _kw(d, ["unbiased"], [True])),
    "softmax": (FLOAT, lambda x, d: _kw(d, ["dim"], [_dim(x, d)])),
    "log_softmax": (FLOAT, lambda x, d: _kw(d, ["dim"], [_dim(x, d)])),
    "isfinite": (FLOAT, lambda x, d: ([], {})),
    "isinf": (FLOAT, lambda x, d: ([], {})),
    "isnan": (FLOAT, lambda x, d: ([], {})),
    "isneginf": (FLOAT, lambda x, d: ([], {})),
    "isposinf": (FLOAT, lambda x, d: ([], {})),
    "nonzero": (ANY, lambda x, d: ([], {})),
    "unique": (REAL, lambda x, d: _kw(d, ["return_inverse"], [True, True])),
    "index_select": (ANY, lambda x, d: ([1, torch.tensor([0, x.shape[1] - 1])], {})),
    "item": (ANY, lambda x, d: ([], {})),
    "numel": (ANY, lambda x, d: ([], {})),
    "dim": (ANY, lambda x, d: ([], {})),
    "size": (ANY, lambda x, d: ([], {})),
    "stride": (ANY, lambda x, d: ([], {})),
    # Matmuls.
    "matmul": (FLOAT, lambda x, d: ([_other(x, d).t()], {})),
    "mm": (FLOAT, lambda x, d: ([_other(x, d).t()], {})),
    "mv": (FLOAT, lambda x, d: ([_other(x, d)[0]], {})),
    "dot": (FLOAT, lambda x, d: ([], {})),
    "bmm": (FLOAT, lambda x, d: ([], {})),
    # New tensors.
    "new_empty": (ANY, lambda x, d: ([(0,)], {})),
    "new_full": (ANY, lambda x, d: _kw(d, ["fill_value"], [(2, 3), 1])),
    "new_ones": (ANY, lambda x, d: ([(2,)], {"dtype": torch.float64})),
    "new_zeros": (ANY, lambda x, d: ([(3, 1)], {})),
}

# Unary float ops: no arguments.
UNARY = (
    "neg negative abs absolute exp exp2 expm1 log log2 log10 log1p sqrt rsqrt sin cos tan asin "
    "acos atan arcsin arccos arctan sinh cosh tanh asinh acosh atanh sigmoid relu erf erfc erfinv "
    "floor ceil trunc fix frac round reciprocal sign sgn square digamma lgamma deg2rad rad2deg i0 "
    "sinc"
).split()
for _name in UNARY:
    RECIPES[_name] = (FLOAT, lambda x, d: ([], {}))

# Method rows with no recipe, and why.
NOT_DRAWN = {
    "cuda": "a CUDA device (tests/test_cuda.py)",
    "set": "swaps the receiver's storage; not a value op",
    "storage": "returns a TypedStorage, no tensor",
    "backward": "autograd entry point (tests/test_aot_*.py)",
    "register_hook": "autograd hook registration (tests/test_aot_*.py)",
    "pin_memory": "needs a CUDA-capable host",
    "as_strided_scatter": "covered by tests/test_functionalize.py",
}

# Receivers the recipes above do not build as a plain 2-d tensor.
RECEIVER = {
    "dot": lambda x: x.flatten(),
    "bmm": lambda x: x.unsqueeze(0),
    "mv": lambda x: x,
    "dsplit": lambda x: x.unsqueeze(-1),
    "multinomial": lambda x: x.abs() + 0.1,
    "item": lambda x: x[0, 0],
    "erfinv": lambda x: x.tanh(),
    "acosh": lambda x: x.abs() + 1,
    "bernoulli": lambda x: x.sigmoid(),
}
SECOND = {
    "dot": lambda x: (x.flatten().flip(0),),
    "bmm": lambda x: (x.transpose(-1, -2),),
}


def method_rows() -> dict[str, tuple[set[str], list[str]]]:
    """The catalog's rows with a method spelling: name -> (spelling bits, signature)."""
    text = TABLE.read_text()
    rows = {}
    pattern = r'row\("([^"]+)",\s*[^,]+,\s*([^,]+),\s*"[^"]*",\s*&\[([^\]]*)\]\)'
    for name, spellings, sig in re.findall(pattern, text):
        bits = {b.strip() for b in spellings.split("|")}
        if bits & {"M", "MI"}:
            params = [p.strip().strip('"') for p in sig.split(",") if p.strip()]
            rows[name] = (bits, params)
    return rows


ROWS = method_rows()


def test_every_method_row_has_a_recipe():
    assert len(ROWS) > 200, "the catalog's format changed: fix the pattern above"
    missing = sorted(set(ROWS) - set(RECIPES) - set(NOT_DRAWN))
    assert not missing, f"method rows without a recipe or a reason: {missing}"
    # The rows whose receiver is not the signature's first parameter, which the binding moves
    # (`fx::ops::positional_order`): every one is drawn here in both spellings.
    odd = sorted(n for n, (_, sig) in ROWS.items() if not sig or sig[0] != "input")
    assert odd == ["normal", "where"]


def _spellings(name):
    bits, _ = ROWS[name]
    out = []
    if "M" in bits:
        out.append("method")
    if "MI" in bits:
        out.append("inplace")
    if "T" in bits and hasattr(torch, name) and name != "normal":
        out.append("function")
    return out


def _call(name, spelling, x, args, kwargs):
    if spelling == "method":
        return getattr(x, name)(*args, **kwargs)
    if spelling == "inplace":
        r = getattr(x, name + "_")(*args, **kwargs)
        return r, x
    if name == "where":
        # `x.where(cond, y)` is `torch.where(cond, x, y)`.
        return torch.where(args[0], x, *args[1:], **kwargs)
    return getattr(torch, name)(x, *args, **kwargs)


def _run(fn, x, extra, seed):
    torch.manual_seed(seed)
    x = x.clone()
    try:
        return fn(x, *extra), None
    except Exception as e:  # the compiled call must raise what eager raises
        return None, e


def _assert_same(got, want, path="out"):
    if isinstance(want, (tuple, list)):
        assert type(got) is type(want) and len(got) == len(want), path
        for i, (g, w) in enumerate(zip(got, want)):
            _assert_same(g, w, f"{path}[{i}]")
    elif isinstance(want, torch.Tensor):
        assert isinstance(got, torch.Tensor), path
        assert got.dtype == want.dtype, f"{path}: {got.dtype} != {want.dtype}"
        assert got.shape == want.shape, f"{path}: {got.shape} != {want.shape}"
        if want.dtype.is_floating_point:
            torch.testing.assert_close(got, want, equal_nan=True, atol=1e-5, rtol=1e-4)
        else:
            assert torch.equal(got, want), path
    else:
        assert got == want, f"{path}: {got!r} != {want!r}"


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    # Hypothesis's explain phase traces lines with `sys.settrace`, under which torchferro runs
    # frames eagerly: shrinking would then report that instead of the failure.
    phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_generated_method_spellings_match_eager(data):
    d = data
    name = d.draw(st.sampled_from(sorted(set(RECIPES) & set(ROWS))), label="op")
    dtypes, recipe = RECIPES[name]
    spelling = d.draw(st.sampled_from(_spellings(name)), label="spelling")
    dtype = d.draw(st.sampled_from(dtypes), label="dtype")
    shape = (d.draw(st.integers(2, 5)), d.draw(st.integers(2, 5)))
    g = torch.Generator().manual_seed(d.draw(st.integers(0, 99)))
    base = torch.randn(shape, generator=g, dtype=torch.float64) * 2
    x = (base > 0) if dtype == torch.bool else base.to(dtype)
    x = RECEIVER.get(name, lambda t: t)(x)
    args, kwargs = recipe(x, d)
    args = list(args) + list(SECOND.get(name, lambda t: ())(x))
    note(f"{spelling}: {name}{tuple(args)} {kwargs} on {x.dtype}{tuple(x.shape)}")

    def fn(x):
        return _call(name, spelling, x, args, kwargs)

    seed = d.draw(st.integers(0, 9))
    want, err = _run(fn, x, (), seed)
    torchferro.compiler.reset()
    got, gerr = _run(torchferro.compile(fn), x, (), seed)
    if err is not None:
        assert gerr is not None and type(gerr) is type(err), (err, gerr)
        return
    assert gerr is None, gerr
    _assert_same(got, want)


# torch's functions take a size or dim list as one sequence; only the methods spread it or take
# one int. torchferro bound `torch.reshape(x, -1)` and `torch.permute(x, 1, 0)` as the methods
# and returned a value where eager raises (found by the generator above).
FUNCTION_SIZE_LISTS = {
    "reshape_int": lambda x: torch.reshape(x, -1),
    "reshape_spread": lambda x: torch.reshape(x, 3, 2),
    "permute_spread": lambda x: torch.permute(x, 1, 0),
    "permute_int": lambda x: torch.permute(x.flatten(), 0),
}


@pytest.mark.parametrize("dynamic", [False, True])
@pytest.mark.parametrize("case", sorted(FUNCTION_SIZE_LISTS))
def test_a_function_given_a_spread_size_list_raises_as_in_eager(case, dynamic):
    fn = FUNCTION_SIZE_LISTS[case]
    x = torch.randn(2, 3)
    with pytest.raises(TypeError) as eager:
        fn(x)
    with pytest.raises(TypeError) as compiled:
        torchferro.compile(fn, dynamic=dynamic)(x)
    assert str(compiled.value) == str(eager.value)


@pytest.mark.parametrize("dynamic", [False, True])
def test_the_method_spellings_still_take_spread_sizes(dynamic):
    def fn(x):
        return (
            x.reshape(3, 2),
            x.reshape(-1),
            x.permute(1, 0),
            x.view(6),
            x.expand(2, 2, 3),
        )

    x = torch.randn(2, 3)
    want = fn(x)
    got = torchferro.compile(fn, dynamic=dynamic)(x)
    for g, w in zip(got, want):
        assert torch.equal(g, w) and g.shape == w.shape and g.stride() == w.stride()
