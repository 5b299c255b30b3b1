"""The Rust inductor against eager torch: extern calls (GEMMs, convolutions, pooling, batch norm)
and the pointwise work fused around them, fusion verified by kernel counts, and the written-out
attention pattern as one fused extern call. Helpers and the module's kernel cache:
``inductor_checks.py`` (see ``test_inductor.py``).
"""

from __future__ import annotations

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchferro
from hypothesis import given
from hypothesis import strategies as st

from inductor_checks import (  # noqa: F401 (the module fixture)
    SETTINGS,
    FLOATS,
    HALF,
    ALL,
    LAYOUTS,
    make,
    layouts,
    seeds,
    check,
    _kernel_cache,
)

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
    # Every output size is lowered (session 18: (2, 2), windows of 3x2 over 5x4, was a
    # fallback op before): global pooling as a mean, others as masked window sums.
    x = make((2, 3, 5, 4), dtype, layout, seed=3)
    entry = check(lambda x: F.adaptive_avg_pool2d(x, size) * 2, x)
    assert entry["fallbacks"] == 0, entry["fallback_reasons"]


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
