"""Issue 17 (session 35): in-place writes whose value requires grad, their out-of-place twins
and the elementary functions, trained through the compiled backward.

``masked_fill_`` with a 0-dim tensor value, ``scatter_``/``scatter_add_`` with a ``src``,
``index_copy_``/``index_add_``/``masked_scatter_`` with a ``source`` that requires grad (and
``masked_fill``/``index_copy``/``index_add``/``masked_scatter`` out of place, ``sin``/``cos``/
``atan``/``erf``/``log1p``/... and the fused ``addcmul``/``addcdiv``/``lerp``/``atan2``) gave
eager's values through torch's autograd: functionalization leaves an in-place op whose
arguments it cannot type-check as ``on_clone(Tensor.name_, x, *args)``, which had rules only
for a few paths, and the out-of-place ops had none. ``on_clone`` of an op with an out-of-place
twin now takes the twin's rule (``autodiff::rules::twin_of_write``), and the twins have rules
(facts of ``derivatives.yaml``). ``index_fill_``, ``index_put_``, the item store and ``copy_``
of a slice with a grad value compiled already; they are here as the pinned neighbours.

Each case runs eager and compiled (both AOT backends) on the same inputs and compares the
outputs, their ``requires_grad``/``is_leaf``, the gradients of every input that requires grad
(the written tensor's parameter and the value), that the graph trained compiled
(``_aot.counters``: no fallback, one backward) and the graph count against torch.compile's."""

from __future__ import annotations

import pytest
import torch

import torchferro
from aot_oracle import torch_compile_graphs
from torchferro import _aot

BACKENDS = ["aot_eager", "inductor"]


@pytest.fixture(autouse=True)
def _aot_default(monkeypatch):
    monkeypatch.delenv("TORCHFERRO_AOT", raising=False)
    torchferro.compiler.reset()
    _aot.reset()


IDX2 = [[0, 1], [2, 3], [1, 0]]


def _masked_fill_value(w, x, v):
    h = w * x
    h.masked_fill_(x > 0, v * 3)
    return (h * x).sum(), h


def _masked_fill_value_broadcast_mask(w, x, v):
    h = w * x
    h.masked_fill_(x[0] > 0, v)
    return (h * w).sum(), h


def _masked_fill_value_into_constant(w, x, v):
    # The written tensor carries no gradient; only the value does.
    h = x.clone()
    h.masked_fill_(x > 0, v * 3)
    return (h * x).sum(), h


def _masked_fill_value_through_view(w, x, v):
    h = w * x
    h[:, 1:].masked_fill_(x[:, 1:] > 0, v)
    return (h * x).sum(), h


def _index_fill_value(w, x, v):
    h = w * x
    h.index_fill_(1, torch.tensor([0, 2, 0]), v * 2)
    return (h * x).sum(), h


def _index_fill_parameter_element(w, x, v):
    h = w * x
    h.index_fill_(1, torch.tensor([1, 3]), w[1, 1] * 2)
    return (h * x).sum(), h


def _scatter_src(w, x, v):
    h = w * x
    h.scatter_(1, torch.tensor(IDX2), torch.sin(w[:, :2]) * v)
    return (h * x).sum(), h


def _scatter_src_into_constant(w, x, v):
    h = x.clone()
    h.scatter_(1, torch.tensor(IDX2), w[:, 1:3] * v)
    return (h * x).sum(), h


def _scatter_number(w, x, v):
    h = w * x
    h.scatter_(1, torch.tensor([[0], [2], [1]]), 2.0)
    return (h * v).sum(), h


def _scatter_add_src(w, x, v):
    h = w * x
    h.scatter_add_(1, torch.tensor([[0, 0], [2, 3], [1, 1]]), torch.cos(w[:, :2]) * v)
    return (h * x).sum(), h


def _index_copy_source(w, x, v):
    h = w * x
    h.index_copy_(0, torch.tensor([2, 0]), w[:2] * v)
    return (h * x).sum(), h


def _index_add_source(w, x, v):
    h = w * x
    h.index_add_(1, torch.tensor([0, 0]), w[:, :2] * v, alpha=2)
    return (h * x).sum(), h


def _masked_scatter_source(w, x, v):
    h = w * x
    h.masked_scatter_(x > 0, w * v)
    return (h * x).sum(), h


def _index_put_value(w, x, v):
    h = w * x
    h.index_put_((torch.tensor([0, 2, 0]),), v * x[0], accumulate=True)
    return (h * x).sum(), h


def _setitem_mask_value(w, x, v):
    h = w * x
    h[x > 0] = v * 2
    return (h * x).sum(), h


def _copy_into_slice(w, x, v):
    h = x * 2
    h[:, 1:3].copy_(w[:, :2] * v)
    return (h * x).sum(), h


def _masked_fill_out_of_place(w, x, v):
    h = (w[:, :1] * 2).masked_fill(x > 0, v * 3)
    return (h * x).sum(), h


def _index_copy_out_of_place(w, x, v):
    h = (w * x).index_copy(0, torch.tensor([2, 0]), w[:2] * v)
    return (h * x).sum(), h


def _index_add_out_of_place(w, x, v):
    h = (w * x).index_add(1, torch.tensor([0, 0]), w[:, :2] * v, alpha=2)
    return (h * x).sum(), h


def _masked_scatter_out_of_place(w, x, v):
    h = (w * x).masked_scatter(x > 0, w * v)
    return (h * x).sum(), h


def _elementary(w, x, v):
    h = (
        torch.sin(w) * torch.cos(x * w)
        + torch.atan(w * v)
        + torch.erf(w) * torch.erfc(x)
    )
    h = h + torch.log1p(w.abs()) + torch.expm1(w * 0.5) + torch.tan(w * 0.3)
    h = (
        h
        + torch.sinh(w) * torch.cosh(v)
        + torch.reciprocal(w.abs() + 1)
        + torch.frac(w * 3)
    )
    h = h + torch.asin(torch.tanh(w) * 0.9) + torch.acos(torch.tanh(x * w) * 0.9)
    h = h + torch.log2(w.abs() + 1) + torch.log10(w.abs() + 2) + torch.exp2(w)
    return (h * x).sum(), h


def _fused_pointwise(w, x, v):
    h = torch.addcmul(w, w, x, value=0.5) + torch.addcdiv(x, w, x.abs() + 1, value=-2)
    h = h + torch.lerp(w, x * w, 0.3) + torch.lerp(x, w, torch.sigmoid(w))
    h = h + torch.atan2(w, x + v) + w.clamp_min(0.1) + w.clamp_max(v)
    return (h * x).sum(), h


def _elementary_in_place(w, x, v):
    h = w * x
    h.sin_()
    h.addcmul_(w, x * v, value=0.5)
    return (h * w).sum(), h


def _weight_norm_dims(w, x, v):
    # `torch._weight_norm(v, g, dim)`: the norm over every dim but `dim`, all of them for -1.
    h = torch._weight_norm(w, w[:, :1].abs() + v, 0)
    h = h + torch._weight_norm(w * x, (w[:1] * v).exp(), 1)
    h = h + torch._weight_norm(w, v * 2, -1)
    return (h * x).sum(), h


CASES = {
    "weight_norm_dims": _weight_norm_dims,
    "masked_fill_value": _masked_fill_value,
    "masked_fill_value_broadcast_mask": _masked_fill_value_broadcast_mask,
    "masked_fill_value_into_constant": _masked_fill_value_into_constant,
    "masked_fill_value_through_view": _masked_fill_value_through_view,
    "index_fill_value": _index_fill_value,
    "index_fill_parameter_element": _index_fill_parameter_element,
    "scatter_src": _scatter_src,
    "scatter_src_into_constant": _scatter_src_into_constant,
    "scatter_number": _scatter_number,
    "scatter_add_src": _scatter_add_src,
    "index_copy_source": _index_copy_source,
    "index_add_source": _index_add_source,
    "masked_scatter_source": _masked_scatter_source,
    "index_put_value": _index_put_value,
    "setitem_mask_value": _setitem_mask_value,
    "copy_into_slice": _copy_into_slice,
    "masked_fill_out_of_place": _masked_fill_out_of_place,
    "index_copy_out_of_place": _index_copy_out_of_place,
    "index_add_out_of_place": _index_add_out_of_place,
    "masked_scatter_out_of_place": _masked_scatter_out_of_place,
    "elementary": _elementary,
    "fused_pointwise": _fused_pointwise,
    "elementary_in_place": _elementary_in_place,
}


def _inputs():
    g = torch.Generator().manual_seed(0)
    w = torch.randn(3, 4, dtype=torch.float64, generator=g)
    x = torch.randn(3, 4, dtype=torch.float64, generator=g)
    v = torch.tensor(0.7, dtype=torch.float64)
    return w.requires_grad_(True), x, v.requires_grad_(True)


def _run(fn, compile_fn):
    w, x, v = _inputs()
    loss, h = compile_fn(fn)(w, x, v)
    flags = (loss.requires_grad, h.requires_grad, h.is_leaf)
    loss.backward()
    return loss.detach(), h.detach(), flags, w.grad, v.grad


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_compiled_backward_as_eager(name, backend):
    fn = CASES[name]
    le, he, fe, gwe, gve = _run(fn, lambda f: f)
    _aot.reset()
    lc, hc, fc, gwc, gvc = _run(fn, lambda f: torchferro.compile(f, backend=backend))
    counters = dict(_aot.counters)
    torch.testing.assert_close(lc, le)
    torch.testing.assert_close(hc, he)
    assert fc == fe
    torch.testing.assert_close(gwc, gwe)
    torch.testing.assert_close(gvc, gve)
    assert counters["fallback"] == 0, _aot.fallback_reasons
    assert counters["compiled"] == 1
    assert counters["backward"] == 1
    assert counters["compiled"] <= torch_compile_graphs(fn, *_inputs())


def test_scatter_of_a_wider_src_raises_as_eager():
    """A ``src`` wider than its index: eager's ``ScatterBackward0`` returns a gradient of the
    index's shape and the engine raises at ``.backward()``; no rule is guessed (the graph runs
    through torch's autograd) and the same error is raised."""

    def fn(w, x, v):
        h = w * x
        h.scatter_(1, torch.tensor(IDX2), torch.sin(w) * v)
        return (h * x).sum()

    errors = []
    for compile_fn in (lambda f: f, torchferro.compile):
        loss = compile_fn(fn)(*_inputs())
        with pytest.raises(RuntimeError, match="invalid gradient") as e:
            loss.backward()
        errors.append(str(e.value).split(" - ")[0])
    assert errors[0] == errors[1]


def test_bfloat16_activation_gradients_round_once():
    """Under CPU autocast the halves run on the eager runner; eager's ``gelu``/``tanh``/
    ``sigmoid``/``silu``/``softmax`` backward kernels compute a bfloat16 gradient in float32
    and round once, and so does the rule now (a chain of bfloat16 ops rounded at each: the
    weights of a bfloat16 step were off by a unit in the last place); the elementary functions'
    rules follow eager's composite formulas op for op. Exact equality with eager's gradients."""
    torch.manual_seed(0)
    w = torch.randn(16, 8, requires_grad=True)
    x = torch.randn(6, 8)
    acts = [
        torch.nn.functional.gelu,
        lambda h: torch.nn.functional.gelu(h, approximate="tanh"),
        torch.tanh,
        torch.sigmoid,
        torch.nn.functional.silu,
        lambda h: torch.softmax(h, -1),
        lambda h: torch.log_softmax(h, -1),
        # Composite in eager (`grad * self.cos()`, `grad / (self * self + 1)`, ...): the rule
        # runs eager's ops in eager's order, so a bfloat16 gradient rounds as eager's.
        torch.sin,
        torch.atan,
        torch.erf,
        lambda h: torch.log1p(h.abs()),
    ]
    for act in acts:

        def f(x, act=act):
            with torch.autocast("cpu", dtype=torch.bfloat16):
                h = act(torch.nn.functional.linear(x, w))
            return (h.float() * torch.arange(16.0)).sum()

        grads = []
        for compile_fn in (
            lambda f: f,
            lambda f: torchferro.compile(f, backend="aot_eager"),
        ):
            torchferro.compiler.reset()
            _aot.reset()
            w.grad = None
            compile_fn(f)(x).backward()
            grads.append(w.grad.clone())
        assert _aot.counters["fallback"] == 0, _aot.fallback_reasons
        torch.testing.assert_close(grads[1], grads[0], rtol=0, atol=0)


def test_weight_norm_parametrization_trains_compiled():
    """``nn.utils.parametrizations.weight_norm`` (``torch._weight_norm`` in the traced step,
    no catalog op: it ran through torch's autograd) trains compiled, with eager's losses and
    parameters over three steps, in no more graphs than torch.compile."""
    from torch import nn
    from torch.nn.utils.parametrizations import weight_norm

    from aot_oracle import assert_trains_as_eager

    torch.manual_seed(0)
    base = nn.Sequential(
        weight_norm(nn.Linear(8, 16)),
        nn.Tanh(),
        weight_norm(nn.Linear(16, 4), dim=None),
    )

    def batch(step):
        g = torch.Generator().manual_seed(step)
        return torch.randn(6, 8, generator=g), torch.randn(6, 4, generator=g)

    tc = assert_trains_as_eager(
        base,
        lambda m, x, y: torch.nn.functional.mse_loss(m(x), y),
        batch,
        lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9),
        3,
    )
    assert _aot.counters["compiled"] <= tc


def _topk_scattered_back(w, x):
    # A top-k sparsified activation: the values scattered back at their indices.
    h = w * x
    vals, idx = h.topk(2, dim=1)
    return (torch.zeros_like(h).scatter(1, idx, vals) * x).sum() + vals.sum(), h


def _topk_values_only(w, x):
    # Only `.values` taken: the backward computes the indices again.
    h = w * x
    return (torch.topk(h, 3, largest=False).values ** 2).sum(), h


def _max_min_dim(w, x):
    h = w * x
    return (torch.max(h, 1).values * 2).sum() + h.min(dim=0, keepdim=True)[0].sum(), h


def _sort_descending(w, x):
    s, _ = torch.sort(w * x, dim=0, descending=True)
    return (s * torch.arange(3.0, dtype=torch.float64)[:, None]).sum(), s


def _kthvalue_median(w, x):
    h = w * x
    return torch.kthvalue(h, 2, 1)[0].sum() + h.median(dim=1).values.pow(2).sum(), h


SELECTING = {
    "topk_scattered_back": _topk_scattered_back,
    "topk_values_only": _topk_values_only,
    "max_min_dim": _max_min_dim,
    "sort_descending": _sort_descending,
    "kthvalue_median": _kthvalue_median,
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(SELECTING))
def test_value_selecting_ops_train_compiled(name, backend):
    """``topk``, ``sort``, ``max``/``min``/``kthvalue``/``median`` along a dim had no rule (the
    graph ran through torch's autograd): the values' gradient scattered to the indices
    (``value_selecting_reduction_backward``)."""
    fn = SELECTING[name]

    def run(compile_fn):
        w, x, _ = _inputs()
        x = torch.cat([x, x[:, :1] * 0.5], 1)
        w = torch.cat([w.detach(), w.detach()[:, :1]], 1).requires_grad_(True)
        loss, h = compile_fn(fn)(w, x)
        loss.backward()
        return loss.detach(), h.detach(), w.grad

    le, he, ge = run(lambda f: f)
    _aot.reset()
    lc, hc, gc = run(lambda f: torchferro.compile(f, backend=backend))
    torch.testing.assert_close(lc, le)
    torch.testing.assert_close(hc, he)
    torch.testing.assert_close(gc, ge)
    assert _aot.counters["fallback"] == 0, _aot.fallback_reasons
    assert _aot.counters["compiled"] == 1
    assert _aot.counters["backward"] == 1
