"""Issue 17 (session 34): writes that ran through torch's autograd in training graphs.

``index_fill_`` of an intermediate (no derivative rule), ``torch.nn.init.zeros_``/``ones_``/
``constant_`` of an intermediate (every in-place initializer, random ones too: they write under
``no_grad`` themselves, so eager keeps the tensor's history;
``fx::autodiff::modes::writes_under_no_grad``) and
``t.__setitem__(i, v)`` called as a method (traced as an effect, not as the item store
``t[i] = v``) gave eager's values through torch's autograd, with no compiled backward. Each
case here runs eager and compiled (both AOT backends) on the same inputs and compares the
outputs, their ``requires_grad``, the gradients, that the graph was compiled forward and
backward (``_aot.counters``: no fallback), and the graph count against torch.compile's (equal,
or fewer where it breaks)."""

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


def _index_fill_scalar(w, x):
    h = w * x
    h.index_fill_(0, torch.tensor([1]), 0.5)
    return (h * w).sum(), h


def _index_fill_repeated_rows(w, x):
    h = torch.tanh(w @ x.t()) * 2
    h.index_fill_(1, torch.tensor([0, 2, 0]), -1.0)
    return (h * h).sum(), h


def _index_fill_tensor_value(w, x):
    # Out of place with a 0-dim value that requires grad: the value gets the gradient of the
    # filled positions, each once although the index names column 0 twice.
    h = (w * x).index_fill(1, torch.tensor([0, 2, 0]), w[1, 1] * 2)
    return (h * x).sum(), h


def _init_zeros(w, x):
    h = w * x
    torch.nn.init.zeros_(h)
    return (h + w * 2).sum(), h


def _init_ones(w, x):
    h = w * x
    torch.nn.init.ones_(h)
    return (h * w).sum(), h


def _init_constant(w, x):
    h = torch.tanh(w * x + 1) * 2
    torch.nn.init.constant_(h[:, 1:], 0.3)
    return (h * w).sum(), h


def _init_only_path(w, x):
    # The output runs only through the initialized tensor: eager's still requires grad (the
    # history is kept) and `w`'s gradient is the unwritten one at the new values.
    h = w * x
    torch.nn.init.constant_(h, 2.0)
    return (h * h).sum(), h


def _init_normal(w, x):
    # Random: the same draws from the global generator as eager's.
    h = w * x
    torch.nn.init.normal_(h, 0.0, 0.5)
    return (h * w).sum(), h


def _init_kaiming_view(w, x):
    h = (w * x).reshape(4, 3)
    torch.nn.init.kaiming_uniform_(h)
    return (h.reshape(3, 4) * w).sum(), h


def _init_eye(w, x):
    h = w * x
    torch.nn.init.eye_(h)
    return (h * w).sum(), h


def _setitem_method(w, x):
    h = w * x
    h.__setitem__(0, 2.0)
    return (h * w).sum(), h


def _setitem_method_value_grad(w, x):
    h = w * x
    h.__setitem__((slice(None), 1), x[:, 0] * w[:, 0])
    return (h * w).sum(), h


CASES = {
    "index_fill_scalar": _index_fill_scalar,
    "index_fill_repeated_rows": _index_fill_repeated_rows,
    "index_fill_tensor_value": _index_fill_tensor_value,
    "init_zeros": _init_zeros,
    "init_ones": _init_ones,
    "init_constant_view": _init_constant,
    "init_only_path": _init_only_path,
    "init_normal": _init_normal,
    "init_kaiming_uniform_view": _init_kaiming_view,
    "init_eye": _init_eye,
    "setitem_method": _setitem_method,
    "setitem_method_value_grad": _setitem_method_value_grad,
}


def _inputs():
    g = torch.Generator().manual_seed(0)
    w = torch.randn(3, 4, dtype=torch.float64, generator=g)
    x = torch.randn(3, 4, dtype=torch.float64, generator=g)
    return w.requires_grad_(True), x


def _run(fn, compile_fn):
    w, x = _inputs()
    torch.manual_seed(1)
    loss, h = compile_fn(fn)(w, x)
    flags = (loss.requires_grad, h.requires_grad, h.is_leaf)
    loss.backward()
    return loss.detach(), h.detach(), flags, w.grad


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_compiled_backward_as_eager(name, backend):
    fn = CASES[name]
    le, he, fe, ge = _run(fn, lambda f: f)
    _aot.reset()
    lc, hc, fc, gc = _run(fn, lambda f: torchferro.compile(f, backend=backend))
    counters = dict(_aot.counters)
    torch.testing.assert_close(lc, le)
    torch.testing.assert_close(hc, he)
    assert fc == fe
    torch.testing.assert_close(gc, ge)
    assert counters["fallback"] == 0, _aot.fallback_reasons
    assert counters["compiled"] == 1
    assert counters["backward"] == 1
    # No more graphs than torch.compile (which breaks on `init.eye_`: 2).
    assert counters["compiled"] <= torch_compile_graphs(fn, *_inputs())


def test_init_of_a_saved_value_raises_as_eager():
    """``sigmoid`` saves its result; ``init.zeros_`` overwrites it (under ``no_grad``, in the
    initializer): eager's ``.backward()`` raises the version error, and so does ours."""

    def fn(w, x):
        h = torch.sigmoid(w * x)
        torch.nn.init.zeros_(h)
        return (h + w).sum()

    errors = []
    for compile_fn in (lambda f: f, torchferro.compile):
        w, x = _inputs()
        loss = compile_fn(fn)(w, x)
        with pytest.raises(RuntimeError, match="modified by an inplace operation") as e:
            loss.backward()
        errors.append(str(e.value).split(";")[0])
    assert errors[0].split("[")[0] == errors[1].split("[")[0]


def test_init_of_a_parameter_is_an_inference_write():
    """``init.zeros_(w)`` of a leaf that requires grad inside the compiled function, then a use:
    eager writes the leaf under ``no_grad`` (allowed) and differentiates into it; the leaf stays
    a leaf and its version moves once."""

    def fn(w, x):
        torch.nn.init.constant_(w, 0.5)
        return (w * x).sum()

    runs = []
    for compile_fn in (lambda f: f, torchferro.compile):
        torchferro.compiler.reset()
        _aot.reset()
        w, x = _inputs()
        loss = compile_fn(fn)(w, x)
        loss.backward()
        runs.append((loss.detach(), w.detach().clone(), w.is_leaf, w._version, w.grad))
    (le, we, leaf_e, ve, ge), (lc, wc, leaf_c, vc, gc) = runs
    torch.testing.assert_close(lc, le)
    torch.testing.assert_close(wc, we)
    assert (leaf_c, vc) == (leaf_e, ve)
    torch.testing.assert_close(gc, ge)
    assert _aot.counters["fallback"] == 0, _aot.fallback_reasons
