"""The Rust inductor against eager torch, through ``torchferro.compile`` (default backend).

Every lowering is run on random shapes (size-1 and zero-size dims included), layouts (contiguous,
transposed, sliced with a storage offset, broadcast with stride 0) and dtypes (float32, float64,
int32, int64, bool, float16, bfloat16) drawn by hypothesis, and compared with eager: the same
output structure, dtypes and shapes, values within ``torch.testing.assert_close``'s default
tolerance for the dtype, the same mutations of inputs, and the same exception type where eager
raises. ``cache_entries`` then says how the graph ran: on the inductor (not the eager runner),
with no fallback op where the op is meant to be lowered, and, in the fusion tests, with the
expected number of generated kernels and extern (GEMM) calls.

Generated kernels are cached in a temporary directory for the module (``TORCHFERRO_CACHE_DIR``),
so the file starts cold and never touches the user's cache.
"""

from __future__ import annotations

import os

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchferro
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

EXAMPLES = int(os.environ.get("TORCHFERRO_TEST_EXAMPLES", "4"))
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

FLOATS = [torch.float32, torch.float64]
HALF = [torch.float16, torch.bfloat16]
INTS = [torch.int32, torch.int64]
ALL = FLOATS + INTS + [torch.bool] + HALF


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
# Inputs.

LAYOUTS = ["contiguous", "transposed", "sliced", "broadcast"]


def make(shape, dtype, layout="contiguous", seed=0, low=-4, high=5):
    """A tensor of ``shape`` and ``dtype`` laid out as ``layout``: ``transposed`` (the last two
    dims swapped in memory), ``sliced`` (every other element of a larger tensor, at a storage
    offset) or ``broadcast`` (size-1 dims expanded, stride 0)."""
    g = torch.Generator().manual_seed(seed)
    shape = tuple(shape)

    def values(s):
        if dtype == torch.bool:
            return torch.rand(s, generator=g) > 0.5
        if dtype.is_floating_point:
            return torch.randn(s, generator=g, dtype=torch.float64).to(dtype)
        return torch.randint(low, high, s, generator=g, dtype=dtype)

    if layout == "transposed" and len(shape) >= 2:
        return values(shape[:-2] + (shape[-1], shape[-2])).transpose(-1, -2)
    if layout == "sliced" and len(shape) >= 1:
        big = values(
            (shape[0] + 1,) + shape[1:-1] + (2 * shape[-1] + 1,)
            if len(shape) > 1
            else (2 * shape[0] + 3,)
        )
        return big[1:, ..., 1::2] if len(shape) > 1 else big[3::2]
    if layout == "broadcast" and len(shape) >= 1:
        small = tuple(1 if i % 2 == 0 else s for i, s in enumerate(shape))
        return values(small).expand(shape)
    return values(shape)


dims = st.sampled_from([0, 1, 1, 2, 3, 5, 8])
shapes = st.lists(dims, min_size=0, max_size=3).map(tuple)
nonempty_shapes = st.lists(
    st.sampled_from([1, 2, 3, 5, 8]), min_size=1, max_size=3
).map(tuple)
layouts = st.sampled_from(LAYOUTS)
seeds = st.integers(0, 2**16)


@st.composite
def broadcast_pair(draw):
    """Two shapes that broadcast together (each dim of one is the other's or 1, ranks differ)."""
    out = draw(st.lists(dims, min_size=0, max_size=3))
    a = [d if draw(st.booleans()) else 1 for d in out]
    b = [d if draw(st.booleans()) else 1 for d in out]
    b = b[draw(st.integers(0, len(b))) :]
    if draw(st.booleans()):
        a, b = b, a
    return tuple(a), tuple(b)


# ---------------------------------------------------------------------------------------------
# Running a function compiled and eagerly.


def _clone(x):
    if isinstance(x, torch.Tensor):
        # Keeps strides (and stride-0 broadcasts) so both runs see the same layout.
        if x.numel() and any(s == 0 for s, n in zip(x.stride(), x.shape) if n > 1):
            return x
        out = torch.empty_strided(x.shape, x.stride(), dtype=x.dtype)
        out.copy_(x)
        return out
    if isinstance(x, (list, tuple)):
        return type(x)(_clone(v) for v in x)
    return x


# Half-precision results are computed in float32 and rounded once, where eager rounds after every
# op (as torch.compile does too): fused chains differ from eager by an ulp or two, more than
# assert_close's defaults (about one ulp) allow.
HALF_TOL = {
    torch.float16: dict(rtol=4e-3, atol=1e-3),
    torch.bfloat16: dict(rtol=3e-2, atol=1e-2),
}


def assert_same(expected, actual, path="out"):
    assert type(actual) is type(expected), f"{path}: {type(actual)} != {type(expected)}"
    if isinstance(expected, torch.Tensor):
        assert actual.shape == expected.shape, (
            f"{path}: shape {actual.shape} != {expected.shape}"
        )
        assert actual.dtype == expected.dtype, (
            f"{path}: dtype {actual.dtype} != {expected.dtype}"
        )
        tol = HALF_TOL.get(expected.dtype, {})
        torch.testing.assert_close(
            actual, expected, equal_nan=True, msg=lambda m: f"{path}: {m}", **tol
        )
    elif isinstance(expected, (tuple, list)):
        assert len(actual) == len(expected), path
        for i, (e, a) in enumerate(zip(expected, actual)):
            assert_same(e, a, f"{path}[{i}]")
    else:
        assert actual == expected, f"{path}: {actual!r} != {expected!r}"


def check(fn, *args, lowered=True, kernels=None, externs=None):
    """Runs ``fn`` eagerly and compiled on copies of ``args``; compares results and mutated inputs;
    returns the compiled graph's cache entry. ``lowered``: no fallback op is expected."""
    torchferro.compiler.reset()
    eager_args, compiled_args = _clone(args), _clone(args)
    try:
        expected = fn(*eager_args)
    except Exception as e:  # noqa: BLE001 - the compiled run must raise the same
        with pytest.raises(type(e)):
            torchferro.compile(fn)(*compiled_args)
        return None
    actual = torchferro.compile(fn)(*compiled_args)
    assert_same(expected, actual)
    assert_same(list(eager_args), list(compiled_args), "input")
    entries = torchferro.compiler.cache_entries(fn)
    assert len(entries) == 1, [e.get("runner") for e in entries]
    entry = entries[0]
    assert entry["runner"] == "inductor", entry.get("fallback_reasons")
    if lowered:
        assert entry["fallbacks"] == 0, entry["fallback_reasons"]
    if kernels is not None:
        assert entry["kernels"] == kernels, entry["output_code"]
    if externs is not None:
        assert entry["extern_calls"] == externs, entry["graph"]
    return entry


# ---------------------------------------------------------------------------------------------
# Pointwise ops.

UNARY = {
    "abs": lambda x: x.abs(),
    "neg": lambda x: -x,
    "exp": lambda x: torch.exp(x),
    "exp2": lambda x: torch.exp2(x),
    "expm1": lambda x: x.expm1(),
    "log": lambda x: x.log(),
    "log2": lambda x: torch.log2(x),
    "log10": lambda x: x.log10(),
    "log1p": lambda x: torch.log1p(x),
    "sqrt": lambda x: x.sqrt(),
    "rsqrt": lambda x: torch.rsqrt(x),
    "sin": lambda x: x.sin(),
    "cos": lambda x: torch.cos(x),
    "tan": lambda x: x.tan(),
    "asin": lambda x: x.asin(),
    "acos": lambda x: torch.acos(x),
    "atan": lambda x: x.atan(),
    "sinh": lambda x: x.sinh(),
    "cosh": lambda x: x.cosh(),
    "tanh": lambda x: torch.tanh(x),
    "erf": lambda x: torch.erf(x),
    "floor": lambda x: x.floor(),
    "ceil": lambda x: torch.ceil(x),
    # float16/bfloat16 products are computed in float32 here (as torch.compile's inductor does)
    # where eager rounds `x * 2.5` to 16 bits first; `round` turns that last-bit difference into
    # a whole unit, so the 16-bit types round their inputs directly.
    "round": lambda x: (
        (x * 2.5).round() if x.dtype in (torch.float32, torch.float64) else x.round()
    ),
    "trunc": lambda x: x.trunc(),
    "reciprocal": lambda x: x.reciprocal(),
    "sign": lambda x: x.sign(),
    "sigmoid": lambda x: torch.sigmoid(x),
    "relu": lambda x: x.relu(),
    "square": lambda x: x.square(),
    "isnan": lambda x: (x / x).isnan(),
    "isinf": lambda x: (1 / x).isinf(),
    "isfinite": lambda x: (1 / x).isfinite(),
    "logical_not": lambda x: x.logical_not(),
    "bitwise_not": lambda x: ~x,
    "clone": lambda x: x.clone() + 0,
    "frac": lambda x: x.frac(),
    "pow2": lambda x: x**2,
    "pow_half": lambda x: x**0.5,
    "pow_float": lambda x: x**1.7,
    "rpow": lambda x: 2**x,
    "rsub": lambda x: 1 - x,
    "rdiv": lambda x: 1 / x,
    "nan_to_num": lambda x: torch.nan_to_num(x.log(), posinf=100.0),
}
# Ops that fall back by design for some dtypes (integer pow and division raise on bad values
# in torch, so they keep torch's checks).
UNARY_FALLS_BACK = {("pow_float", d) for d in INTS + [torch.bool]} | {
    ("rpow", d) for d in INTS + [torch.bool]
}


@pytest.mark.parametrize("op", sorted(UNARY))
@SETTINGS
@given(shape=shapes, layout=layouts, dtype=st.sampled_from(ALL), seed=seeds)
def test_unary(op, shape, layout, dtype, seed):
    x = make(shape, dtype, layout, seed)
    check(UNARY[op], x, lowered=(op, dtype) not in UNARY_FALLS_BACK)


BINARY = {
    "add": lambda a, b: a + b,
    "add_alpha": lambda a, b: torch.add(a, b, alpha=2),
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: torch.mul(a, b),
    "div": lambda a, b: a / b,
    "div_trunc": lambda a, b: torch.div(a, b, rounding_mode="trunc"),
    "div_floor": lambda a, b: torch.div(a, b, rounding_mode="floor"),
    "floor_divide": lambda a, b: a // b,
    "remainder": lambda a, b: a % b,
    "fmod": lambda a, b: torch.fmod(a, b),
    "pow": lambda a, b: a**b,
    "maximum": lambda a, b: torch.maximum(a, b),
    "minimum": lambda a, b: torch.minimum(a, b),
    "eq": lambda a, b: a == b,
    "ne": lambda a, b: a != b,
    "lt": lambda a, b: a < b,
    "le": lambda a, b: torch.le(a, b),
    "gt": lambda a, b: a > b,
    "ge": lambda a, b: a >= b,
    "and": lambda a, b: a & b,
    "or": lambda a, b: a | b,
    "xor": lambda a, b: a ^ b,
    "atan2": lambda a, b: torch.atan2(a, b),
    "logical_and": lambda a, b: torch.logical_and(a, b),
    "logical_or": lambda a, b: a.logical_or(b),
    "where": lambda a, b: torch.where(a > b, a, b),
    "clamp": lambda a, b: a.clamp(min=b),
    "copysign": lambda a, b: torch.copysign(a, b),
}


def _binary_lowered(op, da, db):
    if da in HALF or db in HALF:
        return True
    d = torch.promote_types(da, db)
    if (
        op in ("floor_divide", "remainder", "fmod", "div_trunc", "div_floor")
        and not d.is_floating_point
    ):
        return False  # integer division keeps torch's ZeroDivisionError
    if op == "pow" and not d.is_floating_point:
        return False
    return True


@pytest.mark.parametrize("op", sorted(BINARY))
@SETTINGS
@given(
    pair=broadcast_pair(),
    la=layouts,
    lb=layouts,
    da=st.sampled_from(ALL),
    db=st.sampled_from(ALL),
    seed=seeds,
)
def test_binary(op, pair, la, lb, da, db, seed):
    a = make(pair[0], da, la, seed)
    b = make(pair[1], db, lb, seed + 1)
    check(BINARY[op], a, b, lowered=_binary_lowered(op, da, db))


SCALARS = [2, -3, 1.5, -0.25, True]


@pytest.mark.parametrize(
    "op", ["add", "sub", "mul", "div", "pow", "maximum", "eq", "lt", "where", "clamp"]
)
@SETTINGS
@given(
    shape=shapes,
    layout=layouts,
    dtype=st.sampled_from(ALL),
    scalar=st.sampled_from(SCALARS),
    reflected=st.booleans(),
    seed=seeds,
)
def test_binary_with_python_number(op, shape, layout, dtype, scalar, reflected, seed):
    x = make(shape, dtype, layout, seed)
    f = (
        BINARY[op]
        if op not in ("maximum", "where", "clamp")
        else {
            "maximum": lambda a, s: a.clamp(max=s),
            "where": lambda a, s: torch.where(a > 0, a, s),
            "clamp": lambda a, s: a.clamp(min=s),
        }[op]
    )
    if reflected and op in ("add", "sub", "mul", "div", "pow"):
        fn = {
            "add": lambda a: SCALAR[0] + a,
            "sub": lambda a: SCALAR[0] - a,
            "mul": lambda a: SCALAR[0] * a,
            "div": lambda a: SCALAR[0] / a,
            "pow": lambda a: SCALAR[0] ** a,
        }[op]
    else:
        fn = lambda a: f(a, SCALAR[0])  # noqa: E731
    SCALAR[0] = scalar
    res_dtype = (
        torch.result_type(x, scalar) if dtype != torch.bool or op != "where" else dtype
    )
    lowered = not (op == "pow" and not res_dtype.is_floating_point)
    check(fn, x, lowered=lowered)


# The tracer specializes on Python numbers read from globals (a guard on their value), so the
# scalar reaches the graph as a constant.
SCALAR = [0]


@SETTINGS
@given(
    shape=nonempty_shapes,
    src=st.sampled_from(ALL),
    dst=st.sampled_from(ALL),
    layout=layouts,
    seed=seeds,
)
def test_casts(shape, src, dst, layout, seed):
    x = make(shape, src, layout, seed)
    DST[0] = dst
    check(lambda x: x.to(DST[0]) * 1 if DST[0] != torch.bool else x.to(DST[0]), x)


DST = [torch.float32]


ACTIVATIONS = {
    "gelu": lambda x: F.gelu(x),
    "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
    "silu": lambda x: F.silu(x),
    "hardswish": lambda x: F.hardswish(x),
    "hardsigmoid": lambda x: F.hardsigmoid(x),
    "mish": lambda x: F.mish(x),
    "leaky_relu": lambda x: F.leaky_relu(x, 0.2),
    "elu": lambda x: F.elu(x, alpha=0.5),
    "softplus": lambda x: F.softplus(x * 10, beta=2.0, threshold=5.0),
    "relu6": lambda x: F.relu6(x * 4),
    "hardtanh": lambda x: F.hardtanh(x, -0.5, 0.5),
    "dropout_eval": lambda x: F.dropout(x, 0.3, training=False) * 2,
    "tanh": lambda x: F.tanh(x),
    "sigmoid": lambda x: F.sigmoid(x),
}


@pytest.mark.parametrize("op", sorted(ACTIVATIONS))
@SETTINGS
@given(shape=shapes, layout=layouts, dtype=st.sampled_from(FLOATS + HALF), seed=seeds)
def test_activation(op, shape, layout, dtype, seed):
    check(ACTIVATIONS[op], make(shape, dtype, layout, seed))


# ---------------------------------------------------------------------------------------------
# Reductions and normalizations.

REDUCTIONS = {
    "sum": lambda x, d, k: x.sum(d, keepdim=k),
    "sum_all": lambda x, d, k: x.sum(),
    "sum_f64": lambda x, d, k: x.sum(d, dtype=torch.float64),
    "mean": lambda x, d, k: x.float().mean(d, keepdim=k),
    "prod": lambda x, d, k: x.prod(d, keepdim=k),
    "amax": lambda x, d, k: x.amax(d, keepdim=k),
    "amin": lambda x, d, k: torch.amin(x, d, keepdim=k),
    "max_all": lambda x, d, k: x.max(),
    "min_all": lambda x, d, k: x.min(),
    "all": lambda x, d, k: x.all(d, keepdim=k),
    "any": lambda x, d, k: x.any(d, keepdim=k),
    "var": lambda x, d, k: x.double().var(d, keepdim=k),
    "std": lambda x, d, k: x.double().std(d, correction=0, keepdim=k),
    "logsumexp": lambda x, d, k: torch.logsumexp(x.double(), d, keepdim=k),
    "softmax": lambda x, d, k: x.double().softmax(d),
    "log_softmax": lambda x, d, k: F.log_softmax(x.double(), dim=d),
}


def _reduction_lowered(op, x, d):
    empty = x.numel() == 0 or (x.ndim > 0 and x.shape[d] == 0)
    if x.dtype in HALF:
        return not empty
    if not empty:
        return True
    # Reductions torch defines over an empty dim are lowered; the rest keep torch's checks.
    return (
        op in ("sum", "sum_all", "sum_f64", "prod", "all", "any")
        or x.numel() == 0
        and op in ("softmax", "log_softmax")
        and x.shape[d] != 0
    )


@pytest.mark.parametrize("op", sorted(REDUCTIONS))
@SETTINGS
@given(
    shape=shapes,
    layout=layouts,
    dtype=st.sampled_from(ALL),
    keep=st.booleans(),
    seed=seeds,
    data=st.data(),
)
def test_reduction(op, shape, layout, dtype, keep, seed, data):
    x = make(shape, dtype, layout, seed)
    d = data.draw(st.integers(-max(x.ndim, 1), max(x.ndim, 1) - 1))
    ARGS[:] = [d, keep]
    check(
        lambda x: REDUCTIONS[op](x, ARGS[0], ARGS[1]),
        x,
        lowered=_reduction_lowered(op, x, d),
    )


ARGS = [0, False]


@SETTINGS
@given(
    shape=nonempty_shapes,
    dtype=st.sampled_from(FLOATS + HALF),
    layout=layouts,
    affine=st.booleans(),
    seed=seeds,
)
def test_layer_norm(shape, dtype, layout, affine, seed):
    x = make(shape, dtype, layout, seed)
    n = shape[-1:]
    w = make(n, dtype, seed=seed + 1) if affine else None
    b = make(n, dtype, seed=seed + 2) if affine else None
    check(lambda x, w, b: F.layer_norm(x, x.shape[-1:], w, b, 1e-5), x, w, b)


@SETTINGS
@given(
    shape=nonempty_shapes,
    dtype=st.sampled_from(FLOATS + HALF),
    layout=layouts,
    seed=seeds,
)
def test_rms_norm(shape, dtype, layout, seed):
    x = make(shape, dtype, layout, seed)
    w = make(shape[-1:], dtype, seed=seed + 1)
    check(lambda x, w: F.rms_norm(x, x.shape[-1:], w, eps=1e-6), x, w)


# ---------------------------------------------------------------------------------------------
# Views, indexing and data movement.

VIEWS = {
    "t_add": lambda x: x.transpose(0, -1) + 1,
    "reshape": lambda x: x.reshape(-1) * 2,
    "flatten_sum": lambda x: x.flatten().sum(),
    "permute": lambda x: x.permute(*reversed(range(x.ndim))).contiguous(),
    "unsqueeze_expand": lambda x: x.unsqueeze(0).expand(2, *x.shape) * 1,
    "slice": lambda x: x[1:, ::2] + 0,
    "select": lambda x: x[..., 0] * 3,
    "none_index": lambda x: x[None, :, None] - 1,
    "narrow": lambda x: x.narrow(0, 0, 1) + 1,
    "squeeze": lambda x: x.squeeze() + 1,
    "view_as_output": lambda x: x.t() if x.ndim == 2 else x.view(-1),
    "reshape_transpose": lambda x: x.transpose(0, -1).reshape(-1) + 0,
    "reshape_roundtrip": lambda x: x.reshape(-1).reshape(x.shape) * 2,
}


@pytest.mark.parametrize("op", sorted(VIEWS))
@SETTINGS
@given(
    shape=st.lists(st.sampled_from([0, 1, 2, 3, 5]), min_size=2, max_size=3).map(tuple),
    layout=layouts,
    dtype=st.sampled_from([torch.float32, torch.int64, torch.bool]),
    seed=seeds,
)
def test_view(op, shape, layout, dtype, seed):
    f = VIEWS[op]
    if dtype == torch.bool and op in (
        "t_add",
        "unsqueeze_expand",
        "select",
        "narrow",
        "squeeze",
        "reshape",
        "slice",
        "reshape_roundtrip",
        "none_index",
    ):
        dtype = torch.int32
    check(f, make(shape, dtype, layout, seed))


@SETTINGS
@given(shape=nonempty_shapes, layout=layouts, seed=seeds)
def test_inplace_on_input(shape, layout, seed):
    x = make(shape, torch.float32, layout, seed)
    assume(layout != "broadcast")

    def f(x):
        x.mul_(2)
        x.add_(1)
        return x.relu_().sum()

    check(f, x)


def test_inplace_on_intermediate():
    def f(x, y):
        z = x * y
        z.add_(1).mul_(3)
        return z, torch.relu(z)

    check(f, make((4, 5), torch.float32), make((5,), torch.float32), kernels=1)


def test_output_aliases_input():
    def f(x):
        return x, x.t(), x[1]

    x = make((3, 4), torch.float32)
    check(f, x)
    out = torchferro.compile(f)(x)
    assert out[0] is x
    assert out[1].data_ptr() == x.data_ptr() and out[1].stride() == (1, 4)


# ---------------------------------------------------------------------------------------------
# Extern calls (GEMMs, convolutions) and the pointwise work around them.


@SETTINGS
@given(
    m=st.sampled_from([1, 3, 8]),
    k=st.sampled_from([1, 4, 9]),
    n=st.sampled_from([1, 5, 16]),
    dtype=st.sampled_from(FLOATS),
    seed=seeds,
    transposed=st.booleans(),
)
def test_matmul_bias_relu(m, k, n, dtype, seed, transposed):
    x = make((m, k), dtype, "transposed" if transposed else "contiguous", seed)
    w = make((k, n), dtype, seed=seed + 1)
    b = make((n,), dtype, seed=seed + 2)
    check(lambda x, w, b: torch.relu(x @ w + b), x, w, b, kernels=1, externs=1)


MATMULS = {
    "mm": (lambda a, b: torch.mm(a, b) * 2, [(3, 4), (4, 5)]),
    "bmm": (lambda a, b: torch.bmm(a, b) + 1, [(2, 3, 4), (2, 4, 5)]),
    "matmul_3d_2d": (lambda a, b: (a @ b).sigmoid(), [(2, 3, 4), (4, 5)]),
    "matmul_vec": (lambda a, b: a @ b, [(4,), (4, 5)]),
    "matmul_broadcast": (lambda a, b: torch.matmul(a, b), [(2, 1, 3, 4), (3, 4, 5)]),
    "addmm": (
        lambda a, b: torch.addmm(b[0], a, b, beta=0.5, alpha=2.0),
        [(3, 4), (4, 4)],
    ),
    "linear": (lambda a, b: F.linear(a, b, b[0]), [(2, 3, 4), (4, 4)]),
    "linear_nobias": (lambda a, b: F.linear(a, b).tanh(), [(3, 4), (5, 4)]),
}


@pytest.mark.parametrize("op", sorted(MATMULS))
@pytest.mark.parametrize("dtype", FLOATS)
def test_matmul(op, dtype):
    f, shapes_ = MATMULS[op]
    check(f, *[make(s, dtype, seed=i) for i, s in enumerate(shapes_)], externs=1)


@pytest.mark.parametrize("stride,padding,bias", [(1, 1, True), (2, 0, False)])
def test_conv2d_relu(stride, padding, bias):
    x = make((2, 3, 9, 9), torch.float32)
    w = make((4, 3, 3, 3), torch.float32, seed=1)
    b = make((4,), torch.float32, seed=2) if bias else None
    check(
        lambda x, w, b: F.conv2d(x, w, b, stride=stride, padding=padding).relu(),
        x,
        w,
        b,
        # The input copied to channels-last (what oneDNN convolves without reordering), then
        # the ReLU writing the output in eager's layout.
        kernels=2,
        externs=1,
    )


def test_conv_net_outputs_keep_eager_strides():
    """Intermediates of a convolution graph are channels-last; what the caller gets is not."""
    torch.manual_seed(0)
    x = make((2, 3, 8, 8), torch.float32)
    w = make((4, 3, 3, 3), torch.float32, seed=1)
    w2 = make((5, 4, 1, 1), torch.float32, seed=2)

    def fn(x, w, w2):
        y = F.conv2d(x, w, padding=1)
        z = F.conv2d(y.relu(), w2)
        return y, z, F.max_pool2d(z, 2), z.flatten(1)

    check(fn, x, w, w2, lowered=False, externs=2)
    got = torchferro.compile(fn)(x, w, w2)
    for e, a in zip(fn(x, w, w2), got):
        assert a.stride() == e.stride(), (a.stride(), e.stride())


@SETTINGS
@given(
    shape=st.tuples(
        st.integers(1, 2), st.integers(1, 3), st.integers(1, 9), st.integers(1, 9)
    ),
    k=st.integers(1, 4),
    s=st.one_of(st.none(), st.integers(1, 3)),
    p=st.integers(0, 2),
    d=st.integers(1, 2),
    dtype=st.sampled_from(FLOATS + HALF),
    layout=layouts,
    rank3=st.booleans(),
    seed=seeds,
)
def test_max_pool2d(shape, k, s, p, d, dtype, layout, rank3, seed):
    x = make(shape[1:] if rank3 else shape, dtype, layout, seed)
    if seed % 3 == 0 and x.numel() and dtype in FLOATS:
        x = x.contiguous().clone()
        x.view(-1)[seed % x.numel()] = float("nan")
    lowered = p <= k // 2 and (x.shape[-1] + 2 * p - d * (k - 1) - 1) >= 0
    lowered = lowered and (x.shape[-2] + 2 * p - d * (k - 1) - 1) >= 0
    check(lambda x: F.max_pool2d(x, k, s, p, d).relu() + 1, x, lowered=lowered)


@pytest.mark.parametrize("dtype", FLOATS + HALF)
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("size", [1, (1, 1), (2, 2)])
def test_adaptive_avg_pool2d(size, layout, dtype):
    x = make((2, 3, 5, 4), dtype, layout, seed=3)
    entry = check(
        lambda x: F.adaptive_avg_pool2d(x, size) * 2, x, lowered=size != (2, 2)
    )
    if size == (2, 2):
        assert entry["fallbacks"] == 1


def test_conv2d_channels_last_input():
    # torch returns a channels-last result here: the kernels after it expect the contiguous
    # layout, so the result is copied into it instead of being adopted.
    x = make((2, 3, 9, 9), torch.float32).to(memory_format=torch.channels_last)
    w = make((4, 3, 3, 3), torch.float32, seed=1)
    check(lambda x, w: F.conv2d(x, w, padding=1).relu() + 1, x, w, externs=1)


@SETTINGS
@given(
    n=st.integers(1, 3),
    c=st.integers(1, 5),
    spatial=st.lists(st.integers(1, 6), min_size=0, max_size=2),
    dtype=st.sampled_from(FLOATS + HALF),
    layout=layouts,
    affine=st.booleans(),
    seed=seeds,
)
def test_batch_norm_eval(n, c, spatial, dtype, layout, affine, seed):
    x = make((n, c, *spatial), dtype, layout, seed)
    pd = torch.float32 if dtype in HALF else dtype
    mean = make((c,), pd, seed=seed + 1)
    var = make((c,), pd, seed=seed + 2).abs() + 0.5
    w = make((c,), pd, seed=seed + 3) if affine else None
    b = make((c,), pd, seed=seed + 4) if affine else None
    check(
        lambda x, m, v, w, b: F.batch_norm(x, m, v, w, b, False, 0.1, 1e-3).relu(),
        x,
        mean,
        var,
        w,
        b,
    )


def test_batch_norm_module_fuses_with_conv_and_relu():
    torch.manual_seed(0)
    net = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU()
    ).eval()
    with torch.no_grad():
        net[1].running_mean.normal_()
        net[1].running_var.uniform_(0.5, 2.0)
        # The input copied to channels-last, one kernel for the per-channel scale and shift, one
        # for scale, shift and ReLU.
        check(
            lambda x: net(x), make((2, 3, 10, 10), torch.float32), kernels=3, externs=1
        )


def test_batch_norm_training_falls_back():
    x = make((4, 3, 5), torch.float32)
    mean, var = torch.zeros(3), torch.ones(3)
    entry = check(
        lambda x, m, v: F.batch_norm(x, m, v, training=True) * 2,
        x,
        mean,
        var,
        lowered=False,
    )
    assert entry is None or entry["fallbacks"] == 1


MASKED_FILL_VALUES = [0.0, float("-inf"), 3, True, 1e10, "tensor"]


@pytest.mark.parametrize("value", MASKED_FILL_VALUES, ids=str)
@pytest.mark.parametrize("dtype", ALL)
def test_masked_fill(value, dtype):
    x = make((3, 4, 5), dtype, "transposed", seed=1)
    mask = make((4, 1), torch.int64, seed=2, low=0, high=2).bool()
    v = torch.tensor(-2.5, dtype=dtype) if value == "tensor" else value
    lowered = dtype.is_floating_point or (
        isinstance(value, (bool, int)) and dtype != torch.bool
    )
    if dtype == torch.float16 and value == 1e10:
        lowered = False  # torch raises: the value overflows half
    if value == "tensor":
        lowered = True
    if dtype == torch.bool and value is True:
        lowered = True
    check(lambda x, m, v: x.masked_fill(m, v) * 1, x, mask, v, lowered=lowered)


def test_masked_fill_attention_mask_fuses_into_softmax():
    scores = make((2, 4, 6, 6), torch.float32)
    causal = torch.tril(torch.ones(6, 6)).view(1, 1, 6, 6)
    check(
        lambda s, m: torch.softmax(s.masked_fill(m == 0, float("-inf")), dim=-1),
        scores,
        causal,
        kernels=1,
    )


# ---------------------------------------------------------------------------------------------
# Fusion, verified by kernel counts.


def test_fusion_pointwise_chain():
    check(
        lambda x: (x.sin() * 2 + x.cos()).relu(),
        make((33, 65), torch.float32),
        kernels=1,
        externs=0,
    )


@pytest.mark.parametrize("shape", [(7, 129), (2, 3, 40), (1, 1)])
def test_fusion_softmax_last_dim(shape):
    check(lambda x: torch.softmax(x, dim=-1), make(shape, torch.float32), kernels=1)


def test_fusion_layer_norm():
    x, w, b = (
        make((6, 40), torch.float32),
        make((40,), torch.float32, seed=1),
        make((40,), torch.float32, seed=2),
    )
    check(lambda x, w, b: F.layer_norm(x, (40,), w, b), x, w, b, kernels=1)


def test_fusion_mlp_gelu():
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 8), nn.GELU()
    ).eval()
    x = make((4, 16), torch.float32)
    with torch.no_grad():
        expected = model(x)
        compiled = torchferro.compile(model)
        torchferro.compiler.reset()
        torch.testing.assert_close(compiled(x), expected)
    [entry] = torchferro.compiler.cache_entries(model)
    assert entry["runner"] == "inductor"
    assert entry["fallbacks"] == 0, entry["fallback_reasons"]
    assert (entry["extern_calls"], entry["kernels"]) == (2, 2), entry["output_code"]


def test_fusion_transformer_block_pieces():
    def f(x, w, b):
        h = F.layer_norm(x, (x.shape[-1],), w, b)
        return F.gelu(h) * torch.softmax(h, -1)

    x = make((8, 32), torch.float32)
    check(
        f,
        x,
        make((32,), torch.float32, seed=1),
        make((32,), torch.float32, seed=2),
        kernels=1,
    )


def test_fusion_reductions_share_a_kernel():
    check(
        lambda x: (x - x.mean(-1, keepdim=True)) / (x.std(-1, keepdim=True) + 1e-5),
        make((16, 24), torch.float32),
        kernels=1,
    )


# ---------------------------------------------------------------------------------------------
# Attention: the written-out pattern becomes one fused extern call (extern_calls counts it; the
# two GEMMs it replaces would count 2).


def _attn(scale_op, mask_kind, head_dim):
    scale = head_dim**-0.5

    def f(q, k, v, *m):
        att = q @ k.transpose(-2, -1)
        att = att * scale if scale_op == "mul" else att / (1.0 / scale)
        if mask_kind == "causal":
            att = att.masked_fill(m[0] == 0, float("-inf"))
        elif mask_kind == "bool":
            att = att.masked_fill(m[0], float("-inf"))
        return F.softmax(att, dim=-1) @ v

    return f


@pytest.mark.parametrize("head_dim", [8, 16, 64])
@pytest.mark.parametrize("mask_kind", ["none", "causal", "bool"])
@pytest.mark.parametrize("scale_op", ["mul", "div"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_attention_pattern_is_one_extern(head_dim, mask_kind, scale_op, dtype):
    b, h, lq, lk = 2, 3, 12, 12
    q = make((b, h, lq, head_dim), dtype, seed=1)
    k = make((b, h, lk, head_dim), dtype, seed=2)
    v = make((b, h, lk, head_dim), dtype, seed=3)
    masks = {
        "none": (),
        "causal": (torch.tril(torch.ones(lq, lk)).view(1, 1, lq, lk),),
        "bool": (make((1, h, lq, lk), torch.bool, seed=4),),
    }[mask_kind]
    # Kernels: the mask's `== 0` (when there is one) is computed by a kernel.
    check(_attn(scale_op, mask_kind, head_dim), q, k, v, *masks, externs=1)


def test_attention_pattern_fully_masked_rows_are_nan_as_in_eager():
    q, k, v = (make((1, 2, 6, 8), torch.float32, seed=i) for i in range(3))
    mask = torch.zeros(1, 1, 6, 6, dtype=torch.bool)
    mask[..., 2, :] = True
    entry = check(_attn("mul", "bool", 8), q, k, v, mask, externs=1)
    assert entry is not None


def test_attention_pattern_3d_bmm_and_head_dim_of_v():
    def f(q, k, v):
        return torch.bmm(torch.softmax(torch.bmm(q, k.transpose(1, 2)) * 0.3, -1), v)

    q, k = make((4, 10, 16), torch.float32), make((4, 7, 16), torch.float32, seed=1)
    check(f, q, k, make((4, 7, 5), torch.float32, seed=2), externs=1)


def test_attention_pattern_not_rewritten_when_softmax_is_also_returned():
    def f(q, k, v):
        p = F.softmax((q @ k.transpose(-2, -1)) * 0.25, dim=-1)
        return p @ v, p

    q, k, v = (make((2, 2, 8, 16), torch.float32, seed=i) for i in range(3))
    check(f, q, k, v, externs=2)


def test_attention_pattern_not_rewritten_for_finite_fill_or_other_dim():
    q, k, v = (make((2, 2, 8, 16), torch.float32, seed=i) for i in range(3))
    m = make((1, 1, 8, 8), torch.bool, seed=5)
    check(
        lambda q, k, v, m: (
            F.softmax((q @ k.transpose(-2, -1)).masked_fill(m, -1e9), dim=-1) @ v
        ),
        q,
        k,
        v,
        m,
        externs=2,
    )
    check(
        lambda q, k, v: F.softmax(q @ k.transpose(-2, -1), dim=-2) @ v,
        q,
        k,
        v,
        externs=2,
    )


@pytest.mark.parametrize("mask", ["none", "bool", "float", "causal"])
def test_scaled_dot_product_attention_call_is_one_extern(mask):
    q, k, v = (make((2, 4, 9, 16), torch.float32, seed=i) for i in range(3))
    args = {
        "none": {},
        "bool": {"attn_mask": torch.tril(torch.ones(9, 9, dtype=torch.bool))},
        "float": {"attn_mask": make((1, 4, 9, 9), torch.float32, seed=7)},
        "causal": {"is_causal": True},
    }[mask]
    masks = tuple(args.values()) if mask in ("bool", "float") else ()

    def f(q, k, v, *m):
        if m:
            return F.scaled_dot_product_attention(q, k, v, attn_mask=m[0], scale=0.2)
        return F.scaled_dot_product_attention(q, k, v, is_causal=mask == "causal")

    check(f, q, k, v, *masks, kernels=0, externs=1)


def test_attention_module_calling_sdpa_runs_it_as_an_extern():
    class Attn(nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv, self.proj = nn.Linear(32, 96), nn.Linear(32, 32)

        def forward(self, x):
            b, t, c = x.shape
            q, k, v = self.qkv(x).split(c, dim=2)
            q, k, v = (z.view(b, t, 4, c // 4).transpose(1, 2) for z in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            return self.proj(y.transpose(1, 2).reshape(b, t, c))

    torch.manual_seed(0)
    model = Attn().eval()
    x = make((2, 10, 32), torch.float32)
    with torch.no_grad():
        expected = model(x)
        torchferro.compiler.reset()
        torch.testing.assert_close(torchferro.compile(model)(x), expected)
    [entry] = torchferro.compiler.cache_entries(model)
    assert entry["runner"] == "inductor"
    assert entry["fallbacks"] == 0, entry["fallback_reasons"]
    # The two linears and the attention.
    assert entry["extern_calls"] == 3, entry["output_code"]


def test_zero_size_and_scalar_graphs():
    check(lambda x: (x.exp() + 1).sum(-1), make((0, 4), torch.float32))
    check(lambda x: (x.exp() + 1) * x, make((), torch.float32))


# ---------------------------------------------------------------------------------------------
# cat / stack, gathers, arg reductions.


@st.composite
def cat_inputs(draw):
    rank = draw(st.integers(1, 3))
    base = [draw(st.sampled_from([1, 2, 3, 4])) for _ in range(rank)]
    dim = draw(st.integers(-rank, rank - 1))
    shapes_ = []
    for _ in range(draw(st.integers(1, 4))):
        s = list(base)
        s[dim] = draw(st.sampled_from([0, 1, 2, 5]))
        shapes_.append(tuple(s))
    return shapes_, dim


@SETTINGS
@given(
    spec=cat_inputs(),
    dtypes=st.lists(st.sampled_from(ALL), min_size=4, max_size=4),
    lay=layouts,
    seed=seeds,
)
def test_cat(spec, dtypes, lay, seed):
    shapes_, dim = spec
    ts = [
        make(s, dtypes[i], lay if i == 0 else "contiguous", seed + i)
        for i, s in enumerate(shapes_)
    ]
    ARGS[:] = [dim, False]
    check(
        lambda *ts: torch.cat(
            [t * 1 if t.dtype != torch.bool else t for t in ts], ARGS[0]
        ),
        *ts,
    )


@SETTINGS
@given(
    shape=shapes,
    n=st.integers(1, 3),
    dtype=st.sampled_from(ALL),
    lay=layouts,
    seed=seeds,
    data=st.data(),
)
def test_stack(shape, n, dtype, lay, seed, data):
    ts = [make(shape, dtype, lay, seed + i) for i in range(n)]
    ARGS[:] = [data.draw(st.integers(-len(shape) - 1, len(shape))), False]
    check(lambda *ts: torch.stack(ts, dim=ARGS[0]), *ts)


@SETTINGS
@given(
    ids_shape=shapes,
    vocab=st.sampled_from([1, 3, 10]),
    dim=st.sampled_from([1, 4]),
    dtype=st.sampled_from(FLOATS + HALF),
    seed=seeds,
)
def test_embedding(ids_shape, vocab, dim, dtype, seed):
    ids = make(ids_shape, torch.int64, seed=seed, low=0, high=vocab)
    w = make((vocab, dim), dtype, seed=seed + 1)
    pos = make((dim,), dtype, seed=seed + 2)
    check(lambda ids, w, pos: F.embedding(ids, w) + pos, ids, w, pos)


def test_embedding_module_and_out_of_range_ids():
    emb = nn.Embedding(10, 8).eval()
    ids = torch.tensor([[1, 2, 9], [0, 0, 3]])
    with torch.no_grad():
        check(lambda ids: emb(ids) * 2, ids)
        torchferro.compiler.reset()
        f = torchferro.compile(lambda ids: emb(ids) * 2)
        f(ids)
        # Out of range: the compiled kernels raise what eager raises, an IndexError.
        for bad in ([[1, 2, 10], [0, 0, 3]], [[1, -1, 3], [0, 0, 3]]):
            with pytest.raises(IndexError, match="^index out of range in self$"):
                emb(torch.tensor(bad))
            with pytest.raises(IndexError, match="^index out of range in self$"):
                f(torch.tensor(bad))
        # The graph stays usable after the error (the out-of-range flag was cleared).
        assert_same(emb(ids) * 2, f(ids))


def test_index_select_out_of_range_raises_index_error():
    x = torch.randn(5, 3)

    def fn(x, i):
        return torch.index_select(x, 0, i) + 1

    torchferro.compiler.reset()
    f = torchferro.compile(fn)
    good = torch.tensor([0, 4, 2])
    assert_same(fn(x, good), f(x, good))
    assert torchferro.compiler.cache_entries(fn)[0]["runner"] == "inductor"
    for bad in ([0, 5, 1], [-1, 0, 0]):
        with pytest.raises(IndexError, match="index out of range in self"):
            fn(x, torch.tensor(bad))
        with pytest.raises(IndexError, match="^index out of range in self$"):
            f(x, torch.tensor(bad))


@SETTINGS
@given(
    shape=nonempty_shapes,
    n=st.integers(0, 4),
    dtype=st.sampled_from(ALL),
    lay=layouts,
    seed=seeds,
    data=st.data(),
)
def test_index_select_and_tensor_index(shape, n, dtype, lay, seed, data):
    x = make(shape, dtype, lay, seed)
    d = data.draw(st.integers(-len(shape), len(shape) - 1))
    idx = make((n,), torch.int64, seed=seed + 1, low=0, high=shape[d])
    ARGS[:] = [d, False]
    check(lambda x, i: torch.index_select(x, ARGS[0], i), x, idx)
    # Python indexing wraps negative positions.
    neg = make((n,), torch.int64, seed=seed + 2, low=-shape[0], high=shape[0])
    check(lambda x, i: x[i], x, neg)


@SETTINGS
@given(
    shape=nonempty_shapes,
    dtype=st.sampled_from(FLOATS + INTS + HALF),
    lay=layouts,
    keep=st.booleans(),
    seed=seeds,
    data=st.data(),
)
def test_arg_reductions_and_max_with_dim(shape, dtype, lay, keep, seed, data):
    # Few distinct values, so ties (the first index wins) are common.
    x = make(shape, dtype, lay, seed, low=-2, high=2)
    if dtype.is_floating_point:
        x = (x * 2).round()
    d = data.draw(st.integers(-len(shape), len(shape) - 1))
    ARGS[:] = [d, keep]
    check(
        lambda x: (x.argmax(ARGS[0], keepdim=ARGS[1]), torch.argmin(x, dim=ARGS[0])), x
    )
    check(lambda x: x.argmax() + x.argmin(), x)
    # (values, indices): both used, so no unused getitem is left for the tracer to drop.
    check(
        lambda x: tuple(x.max(ARGS[0], keepdim=ARGS[1])) + tuple(torch.min(x, ARGS[0])),
        x,
    )


def test_argmax_nan_and_ties():
    x = torch.tensor(
        [[1.0, 5.0, 5.0, 2.0], [1.0, float("nan"), 9.0, float("nan")], [3.0] * 4]
    )
    check(lambda x: (x.argmax(-1), x.argmin(-1), x.max(-1)[0], x.max(-1)[1]), x)
    # Rows long enough for the vectorized lane scans, with ties and NaNs across lanes.
    y = (make((5, 53), torch.float32, seed=3) * 1.5).round()
    y[1, 40] = y[1, 20] = y[3, 52] = float("nan")
    check(lambda y: (y.argmax(-1), y.argmin(1), y.argmax(), torch.max(y, 1)[1]), y)


# ---------------------------------------------------------------------------------------------
# The disk cache across processes.

_WARM_PROGRAM = r"""
import json, os, torch, torchferro

def fn(x, w):
    return torch.softmax(x @ w, dim=-1).sin() * 2 + x.sum()

torch.manual_seed(0)
x, w = torch.randn(16, 8), torch.randn(8, 32)
out = torchferro.compile(fn)(x, w)
torch.testing.assert_close(out, fn(x, w))
entry = torchferro.compiler.cache_entries(fn)[0]
cache = os.environ["TORCHFERRO_CACHE_DIR"]
maps = {line.split()[-1] for line in open("/proc/self/maps") if line.rstrip().endswith(".so")}
print(json.dumps({
    "runner": entry["runner"],
    "kernels": entry["kernels"],
    "loaded": sorted(m for m in maps if m.startswith(cache)),
}))
"""


def test_warm_cache_loads_kernels_without_the_compiler(tmp_path):
    """A second process compiling the same graph loads the shared object from the cache
    directory and never runs the C compiler (a wrapper around it counts its invocations; the
    wrapper is the compiler both processes see, so the cache key is the same)."""
    import subprocess
    import sys

    log = tmp_path / "cc.log"
    cc = tmp_path / "cc-counting"
    cc.write_text(f'#!/bin/sh\necho run >> "{log}"\nexec cc "$@"\n')
    cc.chmod(0o755)
    env = dict(os.environ, CC=str(cc), TORCHFERRO_CACHE_DIR=str(tmp_path / "kernels"))

    def run():
        p = subprocess.run(
            [sys.executable, "-c", _WARM_PROGRAM],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert p.returncode == 0, p.stderr
        import json

        return json.loads(p.stdout.strip().splitlines()[-1])

    def cc_runs():
        return len(log.read_text().splitlines()) if log.exists() else 0

    cold = run()
    assert cold["runner"] == "inductor" and cold["kernels"] >= 1
    assert cc_runs() >= 1
    assert len(cold["loaded"]) == 1 and cold["loaded"][0].endswith(".so")
    runs = cc_runs()
    warm = run()
    assert cc_runs() == runs, "the warm process ran the C compiler"
    assert warm == cold


def test_first_call_imports_nothing_heavy():
    """Deciding which files to skip finds library paths without importing them: a fresh
    process's first compiled call used to import sympy and hypothesis (about 0.5 s)."""
    import subprocess
    import sys

    prog = (
        "import sys, torch, torchferro\n"
        "before = {m for m in ('sympy', 'hypothesis') if m in sys.modules}\n"
        "f = torchferro.compile(lambda x: (x.sin() * 2).relu())\n"
        "x = torch.randn(8)\n"
        "torch.testing.assert_close(f(x), (x.sin() * 2).relu())\n"
        "print(sorted({m for m in ('sympy', 'hypothesis') if m in sys.modules} - before))\n"
    )
    p = subprocess.run(
        [sys.executable, "-c", prog], capture_output=True, text=True, timeout=300
    )
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip().splitlines()[-1] == "[]"


@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("backend", ["inductor", "eager"])
def test_multihead_attention_fast_path_in_eval(backend, need_weights):
    """nn.MultiheadAttention's inference fast path (`torch._native_multi_head_attention`, whose
    weights output is None when not asked for) under no_grad, on both runners."""
    torchferro.compiler.reset()
    torch.manual_seed(0)
    m = torch.nn.MultiheadAttention(16, 4, batch_first=True).eval()

    def f(x):
        return m(x, x, x, need_weights=need_weights)

    x = torch.randn(2, 5, 16)
    with torch.no_grad():
        want = f(x)
        got = torchferro.compile(f, backend=backend)(x)
    torch.testing.assert_close(got[0], want[0])
    if need_weights:
        torch.testing.assert_close(got[1], want[1])
    else:
        assert got[1] is None and want[1] is None


def test_multihead_attention_fast_path_output_only_compiles():
    """The fast path's output alone (torchvision's ViT: `m(x, x, x, need_weights=False)[0]`)
    keeps the graph on the inductor: the op runs through torch, its undefined weights result
    is dropped unread, and the layer_norm around it is a generated kernel."""
    torchferro.compiler.reset()
    torch.manual_seed(0)
    m = torch.nn.MultiheadAttention(16, 4, batch_first=True).eval()

    def f(x):
        y = torch.nn.functional.layer_norm(x, (16,))
        return m(y, y, y, need_weights=False)[0] + x

    x = torch.randn(2, 5, 16)
    with torch.no_grad():
        want = f(x)
        got = torchferro.compile(f)(x)
    torch.testing.assert_close(got, want)
    (entry,) = torchferro.compiler.cache_entries(f)
    assert entry["runner"] == "inductor", entry


@pytest.mark.parametrize("exponent", [True, False])
def test_bool_tensor_to_a_bool_power_stays_bool(exponent):
    """`x ** True` / `x ** False` on a bool tensor is bool in eager (meta tensors say int64)."""
    x = torch.tensor([[False, True], [True, False]])
    check(lambda t: (t**exponent, torch.pow(t, exponent)), x, lowered=False)
