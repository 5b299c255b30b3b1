"""Session 34 hunt: a ``with torch.no_grad():`` region over parameters inside a call made in
grad mode, on the inductor.

Such a graph computes nothing with a gradient, so the backend compiles it for the inductor
without its grad-mode switches (``aot::without_no_grad_switches``, meant for an optimizer's
update). The kernels record no backward, but the ops the inductor hands to torch (fallback ops
such as ``group_norm`` or ``_transformer_encoder_layer_fwd``, extern calls such as a
convolution, whose result is copied into the output buffer) ran in the caller's grad mode: over
parameters that require grad their results required grad, and the compiled function returned
a tensor with ``requires_grad=True`` (and a ``grad_fn``) where eager's, made under
``no_grad``, has none (found on ``nn.TransformerEncoder`` in eval mode under ``no_grad``). The
program now runs such a graph under ``no_grad`` (``InductorProgram::without_grad``).

Each program is run eagerly and compiled (the inductor, then the eager backend as a control)
on the same inputs: values, ``requires_grad``, ``grad_fn`` presence and the grad mode after
the call must be eager's, in one graph on the inductor, as torch.compile makes one."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st
from torch import nn

import torchferro
from aot_oracle import torch_compile_graphs
from programs.compare import generated


def _params():
    torch.manual_seed(0)
    return {
        "w": torch.randn(6, 6, requires_grad=True),
        "b": torch.randn(6, requires_grad=True),
        "cw": torch.randn(6, 6, 3, requires_grad=True),
        "emb": torch.randn(10, 6, requires_grad=True),
    }


P = _params()

# Ops from a (4, 6) tensor to a (4, 6) tensor over the parameters in `P`, lowered to kernels,
# extern calls or fallback ops.
OPS = {
    "group_norm": lambda x: F.group_norm(x, 2, P["b"], P["b"]),
    "layer_norm": lambda x: F.layer_norm(x, (6,), P["b"], P["b"]),
    "conv1d": lambda x: F.conv1d(x.t().unsqueeze(0), P["cw"], padding=1)[0].t(),
    "linear": lambda x: F.linear(x, P["w"], P["b"]),
    "matmul": lambda x: x @ P["w"],
    "embedding": lambda x: x + F.embedding(torch.tensor([1, 2, 3, 4]), P["emb"]),
    "sdpa": lambda x: F.scaled_dot_product_attention(
        (x @ P["w"])[None], x[None], x[None]
    )[0],
    "softmax": lambda x: (x * P["b"]).softmax(-1),
    "cumsum": lambda x: (x + P["b"]).cumsum(0),
    "sort": lambda x: (x + P["b"]).sort(-1).values,
}


def _check(fn, x, graphs=1):
    """``fn(x)`` eagerly and compiled (inductor, eager backend): outputs' values,
    ``requires_grad`` and ``grad_fn`` presence, and the grad mode after the call."""
    want = fn(x)
    want = want if isinstance(want, tuple) else (want,)
    assert torch_compile_graphs(fn, x) == graphs
    for backend in ("inductor", "eager"):
        torchferro.compiler.reset()
        f = torchferro.compile(fn, backend=backend)
        try:
            for _ in range(2):  # the second call runs the cached entry
                got = f(x)
                got = got if isinstance(got, tuple) else (got,)
                assert torch.is_grad_enabled()
                assert len(got) == len(want)
                for g, w in zip(got, want):
                    torch.testing.assert_close(g, w, atol=1e-5, rtol=1e-5)
                    assert (g.requires_grad, g.grad_fn is None) == (
                        w.requires_grad,
                        w.grad_fn is None,
                    ), backend
            entries = torchferro.compiler.cache_entries(f)
            assert len(entries) == graphs
            if backend == "inductor":
                assert [e["runner"] for e in entries] == ["inductor"] * graphs
        finally:
            torchferro.compiler.reset()


@pytest.mark.parametrize("op", sorted(OPS))
def test_op_under_no_grad(op):
    """One op over parameters under ``no_grad``, its result returned next to a grad-mode
    product of the (non-grad) input."""

    def fn(x):
        with torch.no_grad():
            y = OPS[op](x)
        return y, x * 2

    _check(fn, torch.randn(4, 6))


def test_no_grad_result_used_in_grad_mode():
    """The region's result used after the region (it requires no grad, so nothing
    differentiates): a convolution and a group norm."""

    def fn(x):
        with torch.no_grad():
            y = OPS["group_norm"](OPS["conv1d"](x))
        return y * x + 1

    _check(fn, torch.randn(4, 6))


def test_no_grad_decorated_helper():
    """A ``@torch.no_grad()`` helper over a module's parameters (a teacher's forward)."""
    torch.manual_seed(0)
    teacher = nn.Sequential(nn.Conv1d(4, 4, 3, padding=1), nn.GroupNorm(2, 4))

    @torch.no_grad()
    def target(x):
        return teacher(x)

    def fn(x):
        return target(x).softmax(-1)

    _check(fn, torch.randn(2, 4, 6))


def test_encoder_fast_path_eval_no_grad():
    """``nn.TransformerEncoder`` in eval mode under ``no_grad``: its fast path
    (``torch._transformer_encoder_layer_fwd``, a fallback op) over the layers' parameters."""
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(8, 2, 16, batch_first=True, dropout=0.0)
    enc = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False).eval()

    def fn(x):
        kpm = torch.zeros(3, 5, dtype=torch.bool)
        kpm[1, 3:] = True
        with torch.no_grad():
            return enc(x, src_key_padding_mask=kpm)

    _check(fn, torch.randn(3, 5, 8))


@generated(40)
@given(
    ops=st.lists(st.sampled_from(sorted(OPS)), min_size=1, max_size=3),
    use_after=st.booleans(),
)
def test_generated_no_grad_regions(ops, use_after):
    """Chains of the ops above under ``no_grad``, the result returned or used after the
    region."""

    def fn(x):
        with torch.no_grad():
            y = x
            for op in ops:
                y = OPS[op](y)
        return y * x if use_after else (y, x + 1)

    _check(fn, torch.randn(4, 6))
