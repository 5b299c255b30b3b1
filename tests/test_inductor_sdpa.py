"""`F.scaled_dot_product_attention` as the inductor's extern call: grouped-query attention
(`enable_gqa=True`, what transformers' Llama/Mistral/Qwen2 pass with a KV cache) runs as one
extern call with no torch fallback, a q computed in the graph is stored so that torch's kernel
returns its result in the layout the graph reads (no copy by the host), and `torch.tensor([])`
(DynamicCache's empty start) is a lowered empty tensor. A hypothesis strategy draws whole
calls (q/k/v layouts, kv heads, masks, `is_causal`, `scale`, dtype) and compares values and the
result's strides with eager."""

from __future__ import annotations

import os

import hypothesis.strategies as st
import pytest
import torch
import torch.nn.functional as F
import torchferro
from hypothesis import HealthCheck, given, note, settings
from inductor_checks import (  # noqa: F401 (the module fixture)
    _kernel_cache,
    check,
    make,
)
from torch.overrides import TorchFunctionMode


@pytest.mark.parametrize("mask", ["none", "bool", "float", "causal"])
@pytest.mark.parametrize("lq", [1, 9])
@pytest.mark.parametrize("heads", [(4, 2), (4, 1), (3, 3)])
def test_grouped_query_attention_is_one_extern(mask, lq, heads):
    hq, hk = heads
    q = make((2, hq, lq, 16), torch.float32, seed=1)
    k, v = (make((2, hk, 9, 16), torch.float32, seed=i) for i in (2, 3))
    masks = {
        "none": (),
        "causal": (),
        "bool": (make((2, 1, lq, 9), torch.bool, seed=4),),
        "float": (make((1, hq, lq, 9), torch.float32, seed=5),),
    }[mask]

    def f(q, k, v, *m):
        if m:
            return F.scaled_dot_product_attention(
                q, k, v, attn_mask=m[0], enable_gqa=True
            )
        return F.scaled_dot_product_attention(
            q, k, v, is_causal=mask == "causal", enable_gqa=True
        )

    check(f, q, k, v, *masks, kernels=0, externs=1)


def test_grouped_query_attention_with_heads_not_a_multiple_raises_as_eager():
    q = make((1, 3, 4, 8), torch.float32, seed=1)
    k, v = (make((1, 2, 4, 8), torch.float32, seed=i) for i in (2, 3))
    entry = check(
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, enable_gqa=True),
        q,
        k,
        v,
    )
    assert entry is None  # eager raised, and the compiled call raised the same type


class _Count(TorchFunctionMode):
    """Counts the torch calls made while it is active (the host's included)."""

    def __init__(self):
        super().__init__()
        self.names: list[str] = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.names.append(getattr(func, "__name__", str(func)))
        return func(*args, **(kwargs or {}))


def test_attention_result_comes_in_the_layout_the_graph_reads():
    """q is computed in the graph (a rotary-like pointwise of a projection): stored [B, L, H,
    E], torch's kernel returns its result in that order, which `transpose(1, 2).reshape` then
    reads as it is: the host does not copy it (it copied it into that layout when q was stored
    contiguous)."""
    b, t, h, e = 2, 8, 4, 16
    w = make((h * e, h * e), torch.float32, seed=9)

    def f(x, k, v, cos):
        q = (x @ w).view(b, t, h, e).transpose(1, 2)
        rotated = torch.cat((-q[..., e // 2 :], q[..., : e // 2]), dim=-1)
        q = q * cos + rotated * (1 - cos)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return y.transpose(1, 2).reshape(b, t, h * e) @ w

    x = make((b, t, h * e), torch.float32, seed=1)
    k, v = (make((b, h, t, e), torch.float32, seed=i) for i in (2, 3))
    cos = make((t, e), torch.float32, seed=4)
    check(f, x, k, v, cos, externs=3)
    compiled = torchferro.compile(f)
    compiled(x, k, v, cos)
    with _Count() as counted:
        got = compiled(x, k, v, cos)
    torch.testing.assert_close(got, f(x, k, v, cos))
    assert "scaled_dot_product_attention" in counted.names, counted.names
    assert "copy_" not in counted.names, counted.names


def test_empty_tensor_data_is_lowered():
    def f(x):
        keys = torch.tensor([], dtype=x.dtype)
        grid = torch.tensor([[], []])
        return torch.cat([keys, x], dim=-2), grid, torch.tensor(()).sum() + x.sum()

    check(f, make((2, 3, 4, 5), torch.float32), kernels=None)


def test_tensor_data_with_values_still_runs_through_torch():
    entry = check(
        lambda x: x + torch.tensor([1.0, 2.0, 3.0]),
        make((2, 3), torch.float32),
        lowered=False,
    )
    assert "tensor data with values" in str(entry["fallback_reasons"])


def _two_attentions(q, k, v, m):
    a = F.scaled_dot_product_attention(q, k, v, attn_mask=m)
    return F.scaled_dot_product_attention(a, k, v, attn_mask=m), a


@pytest.mark.parametrize(
    "dtype", [torch.float32, torch.float64, torch.bfloat16, torch.float16]
)
def test_a_boolean_mask_read_by_two_attention_calls_is_converted_once_as_torch_does(
    dtype,
):
    """The host makes the additive form of a boolean mask once per call and both attention
    calls read it: bitwise eager's results, fully masked rows included (torch's kernel makes
    the same additive mask itself)."""
    q, k, v = (make((2, 4, 9, 16), dtype, seed=i) for i in range(3))
    m = make((2, 1, 9, 9), torch.bool, seed=4)
    m[0, 0, 3, :] = False
    check(_two_attentions, q, k, v, m, kernels=0, externs=2)
    compiled = torchferro.compile(_two_attentions)
    got = compiled(q, k, v, m)
    want = _two_attentions(q, k, v, m)
    for g, w in zip(got, want):
        assert torch.equal(g.nan_to_num(7.0), w.nan_to_num(7.0))
        assert torch.equal(g.isnan(), w.isnan())
    with _Count() as counted:
        compiled(q, k, v, m)
    assert counted.names.count("where") == 1, counted.names


def test_boolean_mask_with_another_default_dtype():
    q, k, v = (make((2, 4, 9, 16), torch.float32, seed=i) for i in range(3))
    m = make((2, 1, 9, 9), torch.bool, seed=4)
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        check(_two_attentions, q, k, v, m, kernels=0, externs=2)
    finally:
        torch.set_default_dtype(old)


def _q_layout(name, b=2, h=4, t=8, e=16):
    """q of size [b, h, t, e] in one of the memory orders models give it."""
    g = torch.Generator().manual_seed(11)
    if name == "BHLE":
        return torch.randn(b, h, t, e, generator=g)
    if name == "BLHE":
        return torch.randn(b, t, h, e, generator=g).transpose(1, 2)
    if name == "HBLE":
        return torch.randn(h, b, t, e, generator=g).transpose(0, 1)
    if name == "split_view":  # GPT-2: a third of a fused qkv projection
        qkv = torch.randn(b, t, 3 * h * e, generator=g)
        return qkv[..., : h * e].view(b, t, h, e).transpose(1, 2)
    if name == "expanded":
        return torch.randn(1, h, t, e, generator=g).expand(b, h, t, e)
    if name == "last_dim_strided":  # torch runs the math path
        return torch.randn(b, h, e, t, generator=g).transpose(2, 3)
    raise ValueError(name)


@pytest.mark.parametrize(
    "layout",
    ["BHLE", "BLHE", "HBLE", "split_view", "expanded", "last_dim_strided"],
)
@pytest.mark.parametrize("ev", [16, 8])
@pytest.mark.parametrize("causal", [False, True])
def test_a_returned_attention_result_has_eagers_strides_and_is_not_copied(
    layout, ev, causal
):
    """torch's CPU kernel allocates the result like q (dense, in q's memory order) and its
    math path (v's head size unlike q's, q's last dim strided) returns it contiguous: the
    compiled graph promises the host the same strides, so a returned result has eager's
    strides and the host does not copy it into others (session 31 promised `[B, L, H, E]`
    memory for every q)."""
    q = _q_layout(layout)
    k = make((2, 4, 8, 16), torch.float32, seed=2)
    v = make((2, 4, 8, ev), torch.float32, seed=3)

    def f(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal)

    check(f, q, k, v, kernels=0, externs=1)
    compiled = torchferro.compile(f)
    compiled(q, k, v)
    with _Count() as counted:
        got = compiled(q, k, v)
    want = f(q, k, v)
    torch.testing.assert_close(got, want)
    assert got.stride() == want.stride()
    assert "copy_" not in counted.names, counted.names


# ---------------------------------------------------------------------------------------------
# Generated calls: the layouts models hand to `scaled_dot_product_attention`, compared with
# eager on values and on the result's strides (review33: the result-stride rule is one rule over
# q's layout, `fx::infer::attention::sdpa_result_layout`; this draws the layouts it reads).

SDPA_EXAMPLES = int(os.environ.get("TORCHFERRO_SDPA_EXAMPLES", "60"))

# q's (and k's / v's) memory orders: how a model's projection and views leave them.
OPERAND_LAYOUTS = ["BHLE", "BLHE", "HBLE", "split_view", "expanded", "last_dim_strided"]


def _operand(layout, b, h, t, e, dtype, g):
    """A [b, h, t, e] operand in ``layout``; ``expanded`` broadcasts the batch for q and the
    heads for k and v (one kv head read by every q head, stride 0)."""

    def randn(*shape):
        return torch.randn(*shape, generator=g).to(dtype)

    if layout == "BHLE":
        return randn(b, h, t, e)
    if layout == "BLHE":
        return randn(b, t, h, e).transpose(1, 2)
    if layout == "HBLE":
        return randn(h, b, t, e).transpose(0, 1)
    if layout == "split_view":
        return (
            randn(b, t, 3 * h * e)[..., h * e : 2 * h * e]
            .view(b, t, h, e)
            .transpose(1, 2)
        )
    if layout == "expanded":
        return randn(b, 1, t, e).expand(b, h, t, e)
    if layout == "last_dim_strided":
        return randn(b, h, e, t).transpose(2, 3)
    raise ValueError(layout)


@st.composite
def sdpa_calls(draw):
    """One attention call: sizes, dtype, the layouts of q, k and v, kv heads (as many as q's,
    expanded from one, or fewer under ``enable_gqa``), a mask (none, boolean, float, or
    ``is_causal``), ``scale``, an explicit ``dropout_p=0`` and whether q is computed in the graph
    (stored there in the order the inductor picks) or passed in."""
    b = draw(st.sampled_from([1, 2]), label="batch")
    hq = draw(st.sampled_from([1, 2, 4]), label="q heads")
    lq = draw(st.sampled_from([1, 3, 8]), label="q length")
    s = draw(st.sampled_from([1, 5, 8]), label="kv length")
    e = draw(st.sampled_from([8, 16]), label="head size")
    ev = draw(st.sampled_from([e, 8]), label="v head size")
    dtype = draw(st.sampled_from([torch.float32, torch.bfloat16]), label="dtype")
    kv = draw(
        st.sampled_from(["same", "gqa"] if hq > 1 else ["same"]), label="kv heads"
    )
    hk = (
        hq
        if kv == "same"
        else draw(st.sampled_from([d for d in (1, 2) if hq % d == 0 and d < hq]))
    )
    layouts = {
        "q": draw(st.sampled_from(OPERAND_LAYOUTS), label="q layout"),
        "k": draw(st.sampled_from(OPERAND_LAYOUTS), label="k layout"),
        "v": draw(st.sampled_from(OPERAND_LAYOUTS), label="v layout"),
    }
    mask = draw(st.sampled_from(["none", "bool", "float", "causal"]), label="mask")
    mask_heads = draw(st.sampled_from([1, hq]), label="mask heads")
    scale = draw(st.sampled_from([None, 0.25, 1.0]), label="scale")
    dropout = draw(st.booleans(), label="dropout_p=0 passed")
    computed = draw(st.booleans(), label="q computed in the graph")
    seed = draw(st.integers(0, 2**16), label="seed")
    return {
        "b": b,
        "hq": hq,
        "hk": hk,
        "lq": lq,
        "s": s,
        "e": e,
        "ev": ev,
        "dtype": dtype,
        "layouts": layouts,
        "mask": mask,
        "mask_heads": mask_heads,
        "scale": scale,
        "dropout": dropout,
        "computed": computed,
        "seed": seed,
    }


def _sdpa_program(c):
    g = torch.Generator().manual_seed(c["seed"])
    lay = c["layouts"]
    q = _operand(lay["q"], c["b"], c["hq"], c["lq"], c["e"], c["dtype"], g)
    k = _operand(lay["k"], c["b"], c["hk"], c["s"], c["e"], c["dtype"], g)
    v = _operand(lay["v"], c["b"], c["hk"], c["s"], c["ev"], c["dtype"], g)
    shape = (c["b"], c["mask_heads"], c["lq"], c["s"])
    masks = {
        "none": (),
        "causal": (),
        "bool": (torch.rand(shape, generator=g) > 0.3,),
        "float": (torch.randn(shape, generator=g).to(c["dtype"]),),
    }[c["mask"]]
    kwargs = {"enable_gqa": c["hk"] != c["hq"]}
    if c["scale"] is not None:
        kwargs["scale"] = c["scale"]
    if c["dropout"]:
        kwargs["dropout_p"] = 0.0
    if c["mask"] == "causal":
        kwargs["is_causal"] = True
    computed = c["computed"]

    def f(q, k, v, *m):
        if computed:
            q = q * 0.5 + 0.25
        return F.scaled_dot_product_attention(
            q, k, v, attn_mask=m[0] if m else None, **kwargs
        )

    return f, (q, k, v, *masks)


@settings(
    max_examples=SDPA_EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(call=sdpa_calls())
def test_generated_attention_calls_match_eager_values_and_strides(call):
    """Every drawn call: the compiled result equals eager's (NaN rows of a boolean mask that
    masks a row out entirely included) and has eager's strides."""
    note(repr(call))
    f, args = _sdpa_program(call)
    want = f(*args)
    torchferro.compiler.reset()
    try:
        got = torchferro.compile(f)(*args)
    finally:
        torchferro.compiler.reset()
    tol = {"atol": 2e-2, "rtol": 2e-2} if call["dtype"] == torch.bfloat16 else {}
    torch.testing.assert_close(got, want, equal_nan=True, **tol)
    assert got.dtype == want.dtype
    assert got.stride() == want.stride(), (got.stride(), want.stride())
