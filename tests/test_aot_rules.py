"""Issue 17: every derivative rule of ``fx/src/autodiff`` checked against torch.autograd.

Each case is compiled with torchferro on float64 inputs that require grad; the gradients our
derived backward graph computes (``torch.autograd.grad`` through the compiled function) are
compared with eager torch's on the same inputs and output gradient (gradcheck-style: random
inputs, random cotangents). ``_aot.counters`` proves the compiled backward ran, not the eager
fallback. Hypothesis varies shapes and broadcasting."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

import torchferro
from torchferro import _aot


@pytest.fixture(autouse=True)
def _aot_on(monkeypatch):
    """The inductor's training path is opt-in for now (TORCHFERRO_AOT=1)."""
    monkeypatch.setenv("TORCHFERRO_AOT", "1")


# The cases' inputs are drawn when the module is imported, which in a full run comes after every
# earlier test module's import: drawn from the global RNG they depended on what those modules
# drew (test_float32_end_to_end passed alone and failed in the full suite on another draw, where
# eager float32 happened to be closer to float64 than ours). A generator of the module's own
# makes the draw the same in any order.
_INPUTS = torch.Generator().manual_seed(20260)


def _rand(*shape, positive=False, gen=None):
    t = torch.randn(*shape, dtype=torch.float64, generator=gen)
    if positive:
        t = t.abs() + 0.5
    return t


def check(fn, inputs, backend="inductor", grad_mask=None, rtol=1e-7, atol=1e-9):
    """Compiled vs eager gradients of ``fn`` at ``inputs`` (tensors that are float require
    grad unless ``grad_mask`` says otherwise); asserts the compiled backward ran."""
    torchferro.compiler.reset()
    _aot.reset()
    if grad_mask is None:
        grad_mask = [
            isinstance(t, torch.Tensor) and t.is_floating_point() for t in inputs
        ]

    def leaves():
        return [
            t.detach().clone().requires_grad_(m) if isinstance(t, torch.Tensor) else t
            for t, m in zip(inputs, grad_mask)
        ]

    eager_in = leaves()
    comp_in = leaves()
    out_e = fn(*eager_in)
    out_c = torchferro.compile(fn, backend=backend)(*comp_in)
    outs_e = out_e if isinstance(out_e, tuple) else (out_e,)
    outs_c = out_c if isinstance(out_c, tuple) else (out_c,)
    for a, b in zip(outs_e, outs_c):
        torch.testing.assert_close(b, a, rtol=rtol, atol=atol)
    gen = torch.Generator().manual_seed(1)
    cot = [torch.randn(o.shape, dtype=o.dtype, generator=gen) for o in outs_e]
    wrt_e = [t for t, m in zip(eager_in, grad_mask) if m]
    wrt_c = [t for t, m in zip(comp_in, grad_mask) if m]
    ge = torch.autograd.grad(outs_e, wrt_e, cot, allow_unused=True)
    gc = torch.autograd.grad(outs_c, wrt_c, cot, allow_unused=True)
    assert _aot.counters["fallback"] == 0, _aot.fallback_reasons
    assert _aot.counters["compiled"] == 1
    # Every autograd node the forward made ran its backward once: outputs sharing no op
    # (`two_outputs`: `x * y` beside `(x + y).sum()`) are one node each, as in eager.
    assert _aot.counters["forward"] == 1
    assert _aot.counters["backward"] == _aot.counters["nodes"] >= 1
    for a, b in zip(ge, gc):
        if a is None:
            assert b is None or torch.count_nonzero(b) == 0
            continue
        torch.testing.assert_close(b, a, rtol=rtol, atol=atol)


def _written(x, write):
    """``write`` applied in place to an intermediate that requires grad (eager rebases its
    history; the functional graph writes a clone)."""
    h = x * 1.5
    write(h)
    return h * h


def _setitem(h, i, v):
    h[i] = v


X = lambda *s: _rand(*s, gen=_INPUTS)  # noqa: E731
P = lambda *s: _rand(*s, positive=True, gen=_INPUTS)  # noqa: E731

CASES = {
    "add_broadcast": (lambda x, y: x + y * 2, [X(3, 4), X(4)]),
    "add_alpha": (lambda x, y: torch.add(x, y, alpha=3.0), [X(3, 1), X(1, 4)]),
    "sub_broadcast": (lambda x, y: x - y, [X(2, 3, 4), X(3, 1)]),
    "rsub_scalar": (lambda x: 1.5 - x, [X(5)]),
    "mul_broadcast": (lambda x, y: x * y, [X(2, 1, 4), X(3, 1)]),
    "mul_scalar": (lambda x: x * 3.0, [X(4)]),
    "div_broadcast": (lambda x, y: x / y, [X(3, 4), P(4)]),
    "rdiv_scalar": (lambda x: 2.0 / x, [P(6)]),
    "div_scalar": (lambda x: x / 4.0, [X(6)]),
    "neg": (lambda x: -x, [X(3)]),
    "exp": (lambda x: x.exp(), [X(3, 2)]),
    "log": (lambda x: torch.log(x), [P(3, 2)]),
    "sqrt": (lambda x: x.sqrt(), [P(7)]),
    "rsqrt": (lambda x: torch.rsqrt(x), [P(7)]),
    "tanh": (lambda x: torch.tanh(x), [X(3, 3)]),
    "sigmoid": (lambda x: torch.sigmoid(x), [X(3, 3)]),
    "relu": (lambda x: F.relu(x), [X(4, 5)]),
    "gelu": (lambda x: F.gelu(x), [X(4, 5)]),
    "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"), [X(4, 5)]),
    "silu": (lambda x: F.silu(x), [X(4, 5)]),
    "pow_int": (lambda x: x**3, [X(4)]),
    "pow_float": (lambda x: x.pow(2.5), [P(4)]),
    "abs": (lambda x: x.abs(), [X(6)]),
    "clamp": (lambda x: x.clamp(-0.5, 0.5), [X(10)]),
    "clamp_min": (lambda x: torch.clamp(x, min=0.1), [X(10)]),
    "where": (lambda c, x, y: torch.where(c, x, y), [X(3, 4) > 0, X(3, 4), X(4)]),
    "masked_fill": (lambda x, m: x.masked_fill(m, 0.0), [X(3, 4), X(3, 4) > 0]),
    "sum_all": (lambda x: x.sum(), [X(3, 4)]),
    "sum_dim": (lambda x: x.sum(1), [X(3, 4, 2)]),
    "sum_keepdim": (lambda x: x.sum((0, 2), keepdim=True), [X(3, 4, 2)]),
    "mean_all": (lambda x: x.mean(), [X(3, 4)]),
    "mean_dim": (lambda x: x.mean(-1, keepdim=True), [X(3, 4)]),
    "amax": (lambda x: x.amax(1), [X(3, 4)]),
    "matmul_2d": (lambda a, b: a @ b, [X(3, 4), X(4, 5)]),
    "matmul_batched_broadcast": (lambda a, b: a @ b, [X(2, 3, 4), X(4, 5)]),
    "matmul_two_batch_dims": (lambda a, b: a @ b, [X(2, 3, 2, 4), X(4, 5)]),
    "matmul_vec": (lambda a, b: a @ b, [X(3, 4), X(4)]),
    "matmul_vec_left": (lambda a, b: a @ b, [X(4), X(4, 5)]),
    "mm": (lambda a, b: torch.mm(a, b), [X(3, 4), X(4, 2)]),
    "bmm": (lambda a, b: torch.bmm(a, b), [X(2, 3, 4), X(2, 4, 2)]),
    "linear": (lambda x, w, b: F.linear(x, w, b), [X(2, 3, 4), X(5, 4), X(5)]),
    "linear_nobias": (lambda x, w: F.linear(x, w), [X(3, 4), X(5, 4)]),
    "addmm": (
        lambda b, m1, m2: torch.addmm(b, m1, m2, beta=0.5, alpha=2.0),
        [X(5), X(3, 4), X(4, 5)],
    ),
    # Session 26: nn.MultiheadAttention adds its (broadcast) mask by `baddbmm` where it
    # returns the attention weights.
    "baddbmm": (
        lambda b, m1, m2: torch.baddbmm(b, m1, m2, beta=0.5, alpha=2.0),
        [X(1, 3, 5), X(2, 3, 4), X(2, 4, 5)],
    ),
    "baddbmm_plain": (
        lambda b, m1, m2: torch.baddbmm(b, m1, m2),
        [X(2, 3, 5), X(2, 3, 4), X(2, 4, 5)],
    ),
    "square": (lambda x: x.square() + torch.square(x * 2), [X(3, 4)]),
    "view": (lambda x: x.view(6, 2) * 2, [X(3, 4)]),
    "reshape": (lambda x: x.reshape(-1) * 2, [X(3, 4)]),
    "permute": (lambda x: x.permute(2, 0, 1) * 2, [X(2, 3, 4)]),
    "transpose": (lambda x: x.transpose(0, 2) * 2, [X(2, 3, 4)]),
    "t": (lambda x: x.t() * 2, [X(2, 3)]),
    "expand": (lambda x: x.expand(3, 4) * 2, [X(1, 4)]),
    "unsqueeze_squeeze": (lambda x: x.unsqueeze(1).squeeze(0) * 2, [X(1, 4)]),
    "slice": (lambda x: x[:, 1:3] * 2, [X(3, 4)]),
    "select_index": (lambda x: x[1] * 2, [X(3, 4)]),
    "select": (lambda x: x.select(1, 2) * 2, [X(3, 4)]),
    "narrow": (lambda x: x.narrow(0, 1, 2) * 2, [X(4, 3)]),
    "cat": (lambda a, b: torch.cat([a, b], dim=1) * 2, [X(2, 3), X(2, 2)]),
    "stack": (lambda a, b: torch.stack([a, b], dim=1) * 2, [X(2, 3), X(2, 3)]),
    "split": (lambda x: x.split(2, dim=1)[0] * 3 + 1, [X(2, 5)]),
    "chunk_all": (
        lambda x: sum(c * (i + 1) for i, c in enumerate(x.chunk(3, dim=0))),
        [X(6, 2)],
    ),
    "contiguous": (lambda x: x.t().contiguous() * 2, [X(2, 3)]),
    "clone": (lambda x: x.clone() * 2, [X(2, 3)]),
    "to_float32": (lambda x: x.float() * 2, [X(2, 3)]),
    "softmax": (lambda x: x.softmax(-1), [X(3, 5)]),
    "softmax_dim0": (lambda x: F.softmax(x, dim=0), [X(3, 5)]),
    "log_softmax": (lambda x: F.log_softmax(x, dim=1), [X(3, 5)]),
    "layer_norm": (
        lambda x, w, b: F.layer_norm(x, (4,), w, b),
        [X(2, 3, 4), X(4), X(4)],
    ),
    "layer_norm_2d_noaffine": (lambda x: F.layer_norm(x, (3, 4)), [X(2, 3, 4)]),
    "embedding": (
        lambda i, w: F.embedding(i, w),
        [torch.tensor([[0, 2, 2], [4, 0, 1]]), X(5, 3)],
    ),
    "embedding_padding": (
        lambda i, w: F.embedding(i, w, padding_idx=2),
        [torch.tensor([[0, 2, 2], [4, 0, 1]]), X(5, 3)],
    ),
    "cross_entropy": (
        lambda x, t: F.cross_entropy(x, t),
        [X(6, 4), torch.tensor([0, 3, 1, 1, 2, 0])],
    ),
    "cross_entropy_ignore": (
        lambda x, t: F.cross_entropy(x, t, ignore_index=1),
        [X(6, 4), torch.tensor([0, 3, 1, 1, 2, 0])],
    ),
    "cross_entropy_sum": (
        lambda x, t: F.cross_entropy(x, t, reduction="sum"),
        [X(6, 4), torch.tensor([0, 3, 1, 1, 2, 0])],
    ),
    "cross_entropy_none": (
        lambda x, t: F.cross_entropy(x, t, reduction="none"),
        [X(6, 4), torch.tensor([0, 3, 1, 1, 2, 0])],
    ),
    "mse_loss": (lambda x, t: F.mse_loss(x, t), [X(4, 3), X(4, 3)]),
    "mse_loss_sum_broadcast": (
        lambda x, t: F.mse_loss(x, t.expand(4, 3), reduction="sum"),
        [X(4, 3), X(3)],
    ),
    "mse_loss_none": (lambda x, t: F.mse_loss(x, t, reduction="none"), [X(5), X(5)]),
    "nll_loss": (
        lambda x, t: F.nll_loss(F.log_softmax(x, 1), t),
        [X(6, 4), torch.tensor([0, 3, 1, 1, 2, 0])],
    ),
    "conv2d": (
        lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1),
        [X(2, 3, 7, 7), X(4, 3, 3, 3), X(4)],
    ),
    "conv2d_groups_dilation": (
        lambda x, w: F.conv2d(x, w, None, 1, 2, 2, 2),
        [X(1, 4, 8, 8), X(6, 2, 3, 3)],
    ),
    "conv1d": (lambda x, w: F.conv1d(x, w), [X(2, 3, 9), X(5, 3, 4)]),
    "dropout_eval": (lambda x: F.dropout(x, 0.5, training=False) * 2, [X(3, 4)]),
    "batch_norm_batch_stats": (
        lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
        [X(3, 4, 5, 2), X(4), X(4)],
    ),
    "batch_norm_1d_noaffine": (
        lambda x: F.batch_norm(x, None, None, training=True, eps=1e-3),
        [X(6, 3)],
    ),
    "adaptive_avg_pool2d_1": (lambda x: F.adaptive_avg_pool2d(x, 1), [X(2, 3, 5, 4)]),
    "adaptive_avg_pool2d_uneven": (
        lambda x: F.adaptive_avg_pool2d(x, (3, 2)),
        [X(2, 3, 7, 5)],
    ),
    "max_pool2d": (lambda x: F.max_pool2d(x, 3, 2, 1), [X(2, 3, 7, 7)]),
    "max_pool2d_default_stride": (lambda x: F.max_pool2d(x, 2), [X(1, 2, 6, 4)]),
    "max_pool2d_ceil": (
        lambda x: F.max_pool2d(x, 2, stride=2, ceil_mode=True),
        [X(1, 2, 5, 5)],
    ),
    "sdpa": (
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v),
        [X(2, 3, 4, 5), X(2, 3, 6, 5), X(2, 3, 6, 7)],
    ),
    "sdpa_causal": (
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
        [X(2, 2, 5, 4), X(2, 2, 5, 4), X(2, 2, 5, 4)],
    ),
    "sdpa_scale": (
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, scale=0.3),
        [X(2, 4, 3), X(2, 6, 3), X(2, 6, 3)],
    ),
    "sdpa_float_mask": (
        lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m),
        [X(2, 2, 4, 3), X(2, 2, 5, 3), X(2, 2, 5, 3), X(4, 5)],
    ),
    "sdpa_bool_mask": (
        lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m),
        [
            X(2, 2, 4, 3),
            X(2, 2, 5, 3),
            X(2, 2, 5, 3),
            torch.tensor([[1, 0, 1, 1, 0]] * 4, dtype=torch.bool),
        ],
    ),
    "sdpa_gqa": (
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, enable_gqa=True),
        [X(2, 4, 3, 5), X(2, 2, 6, 5), X(2, 2, 6, 7)],
    ),
    "sdpa_gqa_causal_mask": (
        lambda q, k, v, m: F.scaled_dot_product_attention(
            q, k, v, attn_mask=m, enable_gqa=True
        ),
        [X(1, 6, 4, 3), X(1, 2, 4, 3), X(1, 2, 4, 3), X(4, 4)],
    ),
    "hardswish": (lambda x: F.hardswish(x), [X(40) * 3]),
    "hardsigmoid": (lambda x: F.hardsigmoid(x), [X(40) * 3]),
    "relu6": (lambda x: F.relu6(x), [X(40) * 4 + 2]),
    "leaky_relu": (lambda x: F.leaky_relu(x, 0.1), [X(40)]),
    "leaky_relu_default_slope": (lambda x: F.leaky_relu(x), [X(3, 5)]),
    "leaky_relu_inplace": (
        lambda x: F.leaky_relu(x * 2, 0.2, inplace=True) * x,
        [X(4, 6)],
    ),
    "cumsum": (lambda x: torch.cumsum(x, 1) * 2, [X(3, 5)]),
    "cumsum_neg_dim": (lambda x: x.cumsum(-1), [X(2, 3, 4)]),
    "gather": (
        lambda x, i: torch.gather(x, 1, i),
        [X(3, 4), torch.tensor([[0, 0, 3], [1, 2, 1], [3, 3, 3]])],
    ),
    "scatter_src": (
        lambda x, i, s: x.scatter(1, i, s),
        [X(3, 4), torch.tensor([[0, 2], [1, 3], [3, 0]]), X(3, 2)],
    ),
    "scatter_value": (
        lambda x, i: torch.scatter(x, 0, i, 1.5),
        [X(3, 4), torch.tensor([[0, 2, 1, 1]])],
    ),
    "scatter_add": (
        lambda x, i, s: x.scatter_add(1, i, s),
        [X(3, 4), torch.tensor([[0, 0], [1, 3], [3, 3]]), X(3, 2)],
    ),
    "index_select": (
        lambda x, i: x.index_select(0, i) * 2,
        [X(4, 3), torch.tensor([3, 0, 3, 1])],
    ),
    "advanced_index_repeats": (
        lambda x, i: x[i] * 2,
        [X(4, 3), torch.tensor([[3, 0], [3, 3]])],
    ),
    "advanced_index_mixed": (
        lambda x, i, j: x[:, i, j] * 2,
        [X(2, 4, 5), torch.tensor([0, 3, 3]), torch.tensor([1, 4, 1])],
    ),
    "index_put": (
        lambda x, i, v: x.index_put((i,), v),
        [X(5, 3), torch.tensor([4, 0]), X(2, 3)],
    ),
    "index_put_accumulate": (
        lambda x, i, v: torch.index_put(x, (i,), v, accumulate=True),
        [X(5, 3), torch.tensor([4, 4, 1]), X(3)],
    ),
    "repeat_interleave": (lambda x: x.repeat_interleave(3, dim=1) * 2, [X(2, 3)]),
    "avg_pool2d": (lambda x: F.avg_pool2d(x, 3, 2, 1), [X(2, 3, 7, 7)]),
    "avg_pool2d_ceil_no_pad_count": (
        lambda x: F.avg_pool2d(x, 2, ceil_mode=True, count_include_pad=False),
        [X(1, 2, 5, 5)],
    ),
    "setitem_tensor_index": (
        lambda x, i, v: _written(x, lambda h: _setitem(h, i, v)),
        [X(5, 3), torch.tensor([4, 1]), X(3)],
    ),
    "setitem_slice": (
        lambda x, v: _written(x, lambda h: _setitem(h, (slice(None), 1), v)),
        [X(4, 3), X(4)],
    ),
    "write_through_view": (
        lambda x, v: _written(x, lambda h: h[1:].mul_(v)),
        [X(4, 3), X(3)],
    ),
    "copy_into_intermediate": (
        lambda x, v: _written(x, lambda h: h[0].copy_(v)),
        [X(3, 2), X(1)],
    ),
    "index_put_in_place": (
        lambda x, i, v: _written(x, lambda h: h.index_put_((i,), v, accumulate=True)),
        [X(5, 2), torch.tensor([1, 1, 3]), X(3, 2)],
    ),
    # A derivative that is zero keeps its edge (`zeros_like(grad)` in derivatives.yaml): the
    # output requires grad and the input gets zeros, not None (session 33: the edge was dropped,
    # so a loss through these alone did not require grad and `.backward()` raised).
    "floor": (lambda x: (x * 3).floor(), [X(6)]),
    "ceil": (lambda x: torch.ceil(x * 3) * x, [X(6)]),
    "round": (lambda x: torch.round(x * 3), [X(6)]),
    "round_decimals": (lambda x: torch.round(x, decimals=1), [X(6)]),
    "trunc": (lambda x: (x * 3).trunc(), [X(6)]),
    "fix": (lambda x: torch.fix(x * 3), [X(6)]),
    "sign": (lambda x: torch.sign(x), [X(6)]),
    "div_floor": (
        lambda x, y: torch.div(x, y, rounding_mode="floor") * x,
        [X(3, 4), P(4)],
    ),
    "div_trunc": (lambda x: torch.div(x * 3, 2, rounding_mode="trunc"), [X(6)]),
    "floor_in_place": (lambda x: _written(x, lambda h: h.floor_()), [X(6)]),
    # Values all zero: the draw does not matter, the edge does.
    "bernoulli": (lambda x: torch.bernoulli(x.sigmoid()) * 0.0, [X(6)]),
    "zero_whole": (lambda x: _written(x, lambda h: h.zero_()), [X(3, 2)]),
    "fill_whole": (lambda x: _written(x, lambda h: h.fill_(0.5)), [X(3, 2)]),
    "copy_whole": (
        lambda x: _written(x, lambda h: h.copy_(torch.ones(()))),
        [X(3, 2)],
    ),
    "fill_whole_from_grad": (
        lambda x, y: _written(x, lambda h: h.fill_(y.sum())),
        [X(3, 2), X(2)],
    ),
    "copy_whole_from_grad": (
        lambda x, y: _written(x, lambda h: h.copy_(y * 2)),
        [X(3, 2), X(2)],
    ),
    "two_outputs": (lambda x, y: (x * y, (x + y).sum()), [X(3), X(3)]),
    "reuse": (lambda x: x * x + x.exp() * x, [X(4)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_rule_matches_autograd(name):
    fn, inputs = CASES[name]
    check(fn, inputs)


@pytest.mark.parametrize(
    "name", ["linear", "layer_norm", "cross_entropy", "softmax", "split"]
)
def test_rule_aot_eager(name):
    fn, inputs = CASES[name]
    check(fn, inputs, backend="aot_eager")


_DROPOUT_LAYOUTS = {
    "flat": ((64,), lambda x: x),
    # Eager's CPU dropout draws into `empty_like(input)` in memory order: a transposed input
    # (nn.MultiheadAttention's batch_first output) and a non-dense one get their noise laid out
    # as they are, not as fresh contiguous ones (session 26: the rewrite drew on `new_ones`).
    "transposed": ((8, 6), lambda x: x.t()),
    "non_dense": ((4, 6, 8), lambda x: x.permute(2, 0, 1)[1:5]),
}


@pytest.mark.parametrize("layout", sorted(_DROPOUT_LAYOUTS))
def test_dropout_training_matches_eager_rng(layout):
    """Dropout in training: the forward draws exactly eager's noise (same generator calls),
    the backward reuses it (saved, never drawn again)."""
    shape, view = _DROPOUT_LAYOUTS[layout]

    def fn(x):
        return F.dropout(view(x), 0.4, training=True) * 3

    x = _rand(*shape)
    xe = x.clone().requires_grad_()
    xc = x.clone().requires_grad_()
    torchferro.compiler.reset()
    _aot.reset()
    cf = torchferro.compile(fn)
    torch.manual_seed(7)
    ye = fn(xe)
    after_e = torch.rand(1)
    torch.manual_seed(7)
    yc = cf(xc)
    after_c = torch.rand(1)
    assert torch.equal(ye, yc)
    assert torch.equal(after_e, after_c)
    ye.sum().backward()
    yc.sum().backward()
    assert torch.equal(xe.grad, xc.grad)
    assert _aot.counters["backward"] == 1 and _aot.counters["fallback"] == 0


@pytest.mark.parametrize(
    "kind", ["plain", "causal", "bool_mask", "float_mask_gqa", "float32"]
)
def test_sdpa_dropout_matches_eager_rng(kind):
    """Attention with dropout in training: eager's CPU attention draws its noise as
    ``F.dropout`` of the probabilities; the compiled forward draws the same (same generator
    calls, the random stream after it equal), and the backward reuses it."""
    gen = torch.Generator().manual_seed(3)
    heads_kv = 2 if kind == "float_mask_gqa" else 4
    q = torch.randn(2, 4, 5, 6, dtype=torch.float64, generator=gen)
    k = torch.randn(
        2, heads_kv, 7 if kind != "causal" else 5, 6, dtype=torch.float64, generator=gen
    )
    v = torch.randn(2, heads_kv, k.shape[2], 3, dtype=torch.float64, generator=gen)
    kw = {"dropout_p": 0.3}
    if kind == "causal":
        kw["is_causal"] = True
    elif kind == "bool_mask":
        kw["attn_mask"] = torch.rand(5, 7, generator=gen) > 0.3
    elif kind == "float_mask_gqa":
        kw["attn_mask"] = torch.randn(5, 7, dtype=torch.float64, generator=gen)
        kw["enable_gqa"] = True
    ins = [q, k, v]
    tol = {}
    if kind == "float32":
        ins = [t.float() for t in ins]
        tol = {"rtol": 1e-5, "atol": 1e-6}

    def fn(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, **kw) * 2

    torchferro.compiler.reset()
    _aot.reset()
    cf = torchferro.compile(fn)
    res = []
    for f in (fn, cf):
        leaves = [t.clone().requires_grad_() for t in ins]
        torch.manual_seed(11)
        out = f(*leaves)
        after = torch.rand(3)
        grads = torch.autograd.grad(out, leaves, torch.ones_like(out) * 1.5)
        res.append((out, after, grads))
    (oe, ae, ge), (oc, ac, gc) = res
    assert torch.equal(ac, ae)
    torch.testing.assert_close(oc, oe, **tol)
    for a, b in zip(ge, gc):
        torch.testing.assert_close(b, a, **tol)
    assert _aot.counters["fallback"] == 0, _aot.fallback_reasons
    assert _aot.counters["backward"] == 1


def _shapes():
    dim = st.integers(1, 4)
    return st.lists(dim, min_size=1, max_size=3)


@settings(max_examples=25, deadline=None)
@given(
    a=_shapes(),
    mask=st.lists(st.booleans(), min_size=3, max_size=3),
    drop=st.integers(0, 2),
    op=st.sampled_from(["add", "mul", "div", "where"]),
)
def test_broadcasting_grads(a, mask, drop, op):
    """Gradients of broadcast binary ops sum back to each input's shape."""
    b = [1 if m else s for s, m in zip(a, mask)][drop:] or [1]
    x, y = _rand(*a), _rand(*b, positive=True)
    fns = {
        "add": lambda x, y: x + y,
        "mul": lambda x, y: x * y,
        "div": lambda x, y: x / y,
        "where": lambda x, y: torch.where(x > 0, x, y),
    }
    check(fns[op], [x, y])


def test_no_rule_falls_back_and_names_op():
    """An op without a rule: the graph runs through torch's autograd (correct gradients) and
    the reason names the op."""

    def fn(x):
        return torch.cumprod(x, 0) * 2

    torchferro.compiler.reset()
    _aot.reset()
    x = _rand(5).requires_grad_()
    xe = x.detach().clone().requires_grad_()
    torchferro.compile(fn)(x).sum().backward()
    fn(xe).sum().backward()
    assert torch.equal(x.grad, xe.grad)
    assert _aot.counters["fallback"] == 1
    assert "cumprod" in _aot.fallback_reasons[0]
    assert _aot.counters["backward"] == 0


def test_float32_end_to_end():
    """float32 forward and backward against float64: each compiled gradient is within 1e-6 of
    the float64 one or no further from it than twice eager's float32 error (torch's
    ``same(fp64_ref=)`` rule). Against eager float32 alone a fixed atol failed once in CI by
    2.2e-7 on an input gradient (eager's float32 reduction order is not ours)."""
    fn, inputs = CASES["layer_norm"]
    torchferro.compiler.reset()
    _aot.reset()
    gen = torch.Generator().manual_seed(1)
    cot = torch.randn(inputs[0].shape, dtype=torch.float64, generator=gen)

    def grads(f, dtype):
        leaves = [t.detach().to(dtype).requires_grad_() for t in inputs]
        out = f(*leaves)
        return out, torch.autograd.grad(out, leaves, cot.to(dtype))

    out64, ref = grads(fn, torch.float64)
    out_e, ge = grads(fn, torch.float32)
    out_c, gc = grads(torchferro.compile(fn), torch.float32)
    assert _aot.counters["fallback"] == 0, _aot.fallback_reasons
    assert _aot.counters["backward"] == 1
    for got, want in ((out_c, out_e), *zip(gc, ge)):
        torch.testing.assert_close(got, want, rtol=1e-5, atol=3e-6)
    for c, e, r in zip(gc, ge, ref):
        ours = (c.double() - r).abs().max().item()
        eager = (e.double() - r).abs().max().item()
        assert ours <= max(1e-6, 2 * eager), (ours, eager)


FUSED_SDPA_BACKWARD = "aten::_scaled_dot_product_flash_attention_for_cpu_backward"


def _step_ops(fn, inputs, backend="inductor"):
    """The aten ops (profiler names and counts) of one more compiled forward and backward of
    ``fn`` after :func:`check` compiled it: the backward is compiled by then, so the profile
    holds what the step runs, not what compiling it ran."""
    from torch.profiler import ProfilerActivity, profile

    leaves = [
        t.detach().clone().requires_grad_(t.is_floating_point())
        if isinstance(t, torch.Tensor)
        else t
        for t in inputs
    ]
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        out = torchferro.compile(fn, backend=backend)(*leaves)
        out.backward(torch.ones_like(out))
    return {e.key: e.count for e in prof.key_averages()}


# Attention cases of CASES whose operands torch's CPU dispatch runs on its fused kernel (4-d,
# one head size, a mask that takes no gradient) against those it runs in math form: ``check``
# makes a float mask require grad, and torch then takes the math backend (as for 3-d q).
SDPA_FUSED = {
    "sdpa": False,  # v's head size differs from q's
    "sdpa_causal": True,
    "sdpa_scale": False,  # 3-d
    "sdpa_float_mask": False,  # the mask requires grad
    "sdpa_bool_mask": True,
    "sdpa_gqa": False,  # v's head size differs
    "sdpa_gqa_causal_mask": False,  # the mask requires grad
}


@pytest.mark.parametrize("backend", ["inductor", "aot_eager"])
@pytest.mark.parametrize("name", sorted(SDPA_FUSED))
def test_sdpa_backward_fused_or_math(name, backend):
    """Attention's gradients equal autograd's on either path, and the backward is torch's
    fused CPU backward exactly where eager's attention runs the fused kernel (torch.compile
    saves its logsumexp and calls that op); elsewhere it is the math form."""
    fn, inputs = CASES[name]
    check(fn, inputs, backend=backend)
    ops = _step_ops(fn, inputs, backend)
    assert _aot.counters["compiled"] == 1
    assert (FUSED_SDPA_BACKWARD in ops) == SDPA_FUSED[name], sorted(ops)
    if SDPA_FUSED[name]:
        assert "aten::bmm" not in ops and "aten::matmul" not in ops, sorted(ops)


def _sdpa_case(gen, dtype, b, hq, hk, lq, lk, e, mask, causal, scale, gqa):
    q = torch.randn(b, hq, lq, e, dtype=dtype, generator=gen)
    k = torch.randn(b, hk, lk, e, dtype=dtype, generator=gen)
    v = torch.randn(b, hk, lk, e, dtype=dtype, generator=gen)
    kw = {"is_causal": causal, "enable_gqa": gqa}
    if scale is not None:
        kw["scale"] = scale
    if mask == "bool":
        m = torch.rand(lq, lk, generator=gen) > 0.4
        m[:, 0] = True  # no row masked out entirely
        kw["attn_mask"] = m
    elif mask == "float":
        kw["attn_mask"] = torch.randn(1, hq, lq, lk, dtype=dtype, generator=gen)
    elif mask == "float_batch":
        kw["attn_mask"] = torch.randn(b, 1, lq, lk, dtype=dtype, generator=gen)

    def fn(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, **kw) * 2

    return fn, [q, k, v]


@settings(max_examples=20, deadline=None)
@given(
    b=st.integers(1, 2),
    hk=st.integers(1, 3),
    group=st.integers(1, 2),
    lq=st.integers(1, 9),
    lk=st.integers(1, 9),
    e=st.integers(1, 6),
    mask=st.sampled_from(["none", "bool", "float", "float_batch"]),
    causal=st.booleans(),
    scale=st.sampled_from([None, 0.25]),
    dtype=st.sampled_from([torch.float64, torch.float32]),
    seed=st.integers(0, 2**16),
)
def test_sdpa_fused_backward_shapes(
    b, hk, group, lq, lk, e, mask, causal, scale, dtype, seed
):
    """The fused path over shapes, masks (boolean, float per head or per batch), causal,
    scale and grouped heads: values and gradients as eager's, which runs the same kernels
    (float32 bit for bit), and the fused backward is what ran."""
    if causal and mask != "none":
        mask = "none"  # torch refuses a mask with is_causal
    gen = torch.Generator().manual_seed(seed)
    fn, inputs = _sdpa_case(
        gen, dtype, b, hk * group, hk, lq, lk, e, mask, causal, scale, group > 1
    )
    tol = {"rtol": 0, "atol": 0} if dtype == torch.float32 else {}
    check(fn, inputs, **tol)
    ops = _step_ops(fn, inputs)
    assert FUSED_SDPA_BACKWARD in ops, sorted(ops)
    assert "aten::bmm" not in ops, sorted(ops)


def test_sdpa_fused_saves_logsumexp_not_probabilities():
    """What the fused forward saves beyond its inputs q, k, v (which ``saved_bytes`` does not
    count): the output and the rows' logsumexp (float32 of [B, H, L]); no [B, H, L, S] score or
    probability matrix."""
    b, h, l, s, e = 2, 3, 16, 24, 4
    gen = torch.Generator().manual_seed(0)
    q = torch.randn(b, h, l, e, generator=gen)
    k = torch.randn(b, h, s, e, generator=gen)
    v = torch.randn(b, h, s, e, generator=gen)
    check(
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v),
        [q, k, v],
        rtol=0,
        atol=0,
    )
    assert _aot.counters["saved_bytes"] == b * h * l * e * 4 + b * h * l * 4


@pytest.mark.parametrize("mask_grad", [False, True])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float64])
def test_sdpa_float32_mask_beside_other_dtype(dtype, mask_grad):
    """A float32 additive mask beside queries of another dtype (as
    ``nn.Transformer.generate_square_subsequent_mask`` makes whatever the model's dtype):
    eager's math form adds it into the scores in place, in the scores' dtype, so the compiled
    backward does too (it refused before: a float32 product met a bfloat16 one) and the
    mask's gradient is float32."""
    gen = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, 3, 8, 16, generator=gen).to(dtype) for _ in "qkv")
    mask = torch.randn(1, 1, 8, 8, generator=gen)

    def fn(q, k, v, mask):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)

    def run(f):
        ins = [t.clone().requires_grad_() for t in (q, k, v)]
        ins.append(mask.clone().requires_grad_(mask_grad))
        out = f(*ins)
        leaves = [t for t in ins if t.requires_grad]
        return out, torch.autograd.grad((out.double() ** 2).sum(), leaves)

    def widened(q, k, v, mask):
        # torch 2.11's CPU kernel misreads a float32 mask beside float64 queries (values up to
        # 2.5 off the math form on an AVX2 machine, `scripts/sdpa_cpu_mask_dtypes.py`); the
        # compiled graph widens the mask (exact), so the oracle is eager on the widened mask.
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask.to(q.dtype))

    torchferro.compiler.reset()
    _aot.reset()
    want = run(widened if dtype == torch.float64 else fn)
    got = run(torchferro.compile(fn))
    assert _aot.counters["fallback"] == 0, _aot.fallback_reasons
    assert _aot.counters["compiled"] == 1 and _aot.counters["backward"] == 1
    if dtype == torch.float64:
        scores = q @ k.transpose(-2, -1) / 4 + mask.double()
        torch.testing.assert_close(got[0], scores.softmax(-1) @ v, rtol=0, atol=1e-12)
    tol = {torch.bfloat16: 4e-2, torch.float16: 4e-3, torch.float64: 1e-10}[dtype]
    torch.testing.assert_close(got[0], want[0], rtol=tol, atol=tol)
    assert [g.dtype for g in got[1]] == [g.dtype for g in want[1]]
    for a, e in zip(got[1], want[1]):
        torch.testing.assert_close(a, e, rtol=tol, atol=tol * 10)


def test_cuda_attention_host_calls_recompute_branch():
    """The CUDA attention host calls (``torchferro._aot_helpers.sdpa_forward``/``_backward``;
    their fused branches run on the GPU only, ``tests/test_aot_cuda.py``): a head size the
    fused pair does not take (6, not a multiple of 8) gives eager's output, a zero
    logsumexp padded to 32 rows, and autograd's gradients through the attention again."""
    from torchferro import _aot_helpers as helpers

    gen = torch.Generator().manual_seed(0)
    q, k, v = (
        torch.randn(2, 3, 5, 6, dtype=torch.float64, generator=gen) for _ in "qkv"
    )
    out, lse = helpers.sdpa_forward(q, k, v, None, True, 0.5)
    leaves = [t.clone().requires_grad_() for t in (q, k, v)]
    expect = F.scaled_dot_product_attention(*leaves, is_causal=True, scale=0.5)
    assert torch.equal(out, expect.detach())
    assert lse.shape == (2, 3, 32) and lse.dtype == torch.float32
    g = torch.randn(expect.shape, dtype=torch.float64, generator=gen)
    got = helpers.sdpa_backward(g, q, k, v, out, lse, None, True, 0.5)
    for a, b in zip(got, torch.autograd.grad(expect, leaves, g)):
        torch.testing.assert_close(a, b, rtol=0, atol=0)


def test_cudnn_attention_bias_of_a_boolean_mask():
    """The bias the cuDNN attention call gets for a boolean mask (eager's conversion: 0 where
    True, -65504 where False, in q's dtype), converted once per mask for a model's layers and
    again when the mask is written in place, handed another dtype, or is another tensor; an
    additive mask in q's dtype."""
    from torchferro import _aot_helpers as helpers

    mask = torch.ones(4, 4, dtype=torch.bool).tril()
    q = torch.zeros(1, dtype=torch.bfloat16)
    want = torch.zeros(4, 4, dtype=torch.bfloat16).masked_fill(~mask, -65504.0)
    first = helpers._cudnn_bias(mask, q)
    assert first.dtype == torch.bfloat16 and torch.equal(first, want)
    assert helpers._cudnn_bias(mask, q) is first
    mask[0, 1] = True
    second = helpers._cudnn_bias(mask, q)
    assert second is not first and second[0, 1] == 0 and second[0, 2] == want[0, 2]
    half = helpers._cudnn_bias(mask, q.half())
    assert half.dtype == torch.float16 and half[0, 2] == -65504.0
    other = mask.clone()
    assert helpers._cudnn_bias(other, q.half()) is not half
    additive = torch.randn(4, 4, dtype=torch.bfloat16)
    assert helpers._cudnn_bias(additive, q) is additive
    wide = additive.float()
    assert torch.equal(helpers._cudnn_bias(wide, q), additive)


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_running_stats(training):
    """batch_norm with running stats: gradients as eager's, and the running stats written
    once (the forward's input write; the backward never normalizes again in training mode)."""

    def fn(x, w, b, rm, rv):
        return F.batch_norm(x, rm, rv, w, b, training=training, momentum=0.3) * 2

    x, w, b = _rand(4, 3, 5, 5), _rand(3), _rand(3)
    rm, rv = _rand(3), _rand(3, positive=True)
    torchferro.compiler.reset()
    _aot.reset()
    ins_e = [t.clone().requires_grad_() for t in (x, w, b)] + [rm.clone(), rv.clone()]
    ins_c = [t.clone().requires_grad_() for t in (x, w, b)] + [rm.clone(), rv.clone()]
    ye = fn(*ins_e)
    yc = torchferro.compile(fn)(*ins_c)
    torch.testing.assert_close(yc, ye, rtol=1e-7, atol=1e-9)
    cot = torch.randn(ye.shape, dtype=torch.float64)
    ge = torch.autograd.grad(ye, ins_e[:3], cot)
    gc = torch.autograd.grad(yc, ins_c[:3], cot)
    for a, c in zip(ge, gc):
        torch.testing.assert_close(c, a, rtol=1e-7, atol=1e-9)
    for a, c in zip(ins_e[3:], ins_c[3:]):
        torch.testing.assert_close(c, a, rtol=1e-12, atol=1e-12)
    if training:
        assert not torch.equal(ins_c[3], rm)
    assert _aot.counters["fallback"] == 0, _aot.fallback_reasons
    assert _aot.counters["backward"] == 1


@settings(max_examples=15, deadline=None)
@given(
    n=st.integers(1, 3),
    c=st.integers(1, 3),
    h=st.integers(2, 7),
    w=st.integers(2, 7),
    op=st.sampled_from(
        [
            "batch_norm",
            "adaptive_avg_pool2d",
            "max_pool2d",
            "avg_pool2d",
            "sdpa",
            "sdpa_gqa",
        ]
    ),
)
def test_training_op_shapes(n, c, h, w, op):
    """batch_norm, pooling and attention gradients over input shapes."""
    x = _rand(n, c, h, w)
    if op == "batch_norm":
        if n * h * w == 1:
            return
        check(lambda x, g: F.batch_norm(x, None, None, g, training=True), [x, _rand(c)])
    elif op == "adaptive_avg_pool2d":
        check(lambda x: F.adaptive_avg_pool2d(x, (max(h // 2, 1), 2)), [x])
    elif op == "max_pool2d":
        check(lambda x: F.max_pool2d(x, 2, 1, 1), [x])
    elif op == "avg_pool2d":
        check(lambda x: F.avg_pool2d(x, 2, 1, 1, count_include_pad=n == 1), [x])
    elif op == "sdpa":
        check(
            lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=h == w),
            [x, _rand(n, c, w, w), _rand(n, c, w, 3)],
        )
    else:
        q = _rand(n, 2 * c, h, 3)
        check(
            lambda q, k, v: F.scaled_dot_product_attention(q, k, v, enable_gqa=True),
            [q, _rand(n, c, w, 3), _rand(n, c, w, 2)],
        )


@settings(max_examples=20, deadline=None)
@given(
    sizes=st.lists(st.integers(1, 4), min_size=1, max_size=3),
    data=st.data(),
    op=st.sampled_from(
        ["cumsum", "gather", "index_select", "advanced_index", "scatter_add"]
    ),
)
def test_index_op_shapes(sizes, data, op):
    """Gathers, scatters, indexing and running sums over shapes, dims and repeated indices."""
    x = _rand(*sizes)
    d = data.draw(st.integers(-len(sizes), len(sizes) - 1), label="dim")
    n = sizes[d]
    gen = torch.Generator().manual_seed(data.draw(st.integers(0, 99), label="seed"))
    if op == "cumsum":
        check(lambda x: x.cumsum(d), [x])
    elif op == "gather":
        idx = torch.randint(0, n, sizes, generator=gen)
        check(lambda x, i: x.gather(d, i), [x, idx])
    elif op == "index_select":
        idx = torch.randint(
            0, n, (data.draw(st.integers(1, 5), label="k"),), generator=gen
        )
        check(lambda x, i: x.index_select(d, i), [x, idx])
    elif op == "advanced_index":
        idx = torch.randint(0, sizes[0], (2, 3), generator=gen)
        check(lambda x, i: x[i] * 2, [x, idx])
    else:
        idx = torch.randint(0, n, sizes, generator=gen)
        check(lambda x, i, s: x.scatter_add(d, i, s), [x, idx, _rand(*sizes)])
