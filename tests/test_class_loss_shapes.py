"""`F.cross_entropy` / `F.nll_loss` through the native shape rule (`fx/src/infer/nn.rs::
class_loss`, session 23) over generated forms: class indices with and without a batch and
extra dims, probabilities, weights, ignore_index, label smoothing, every reduction, shapes torch
rejects. Values and dtypes against eager, one graph where eager runs, eager's error where it
raises, and no internal error (a rule that asked for a parameter nll_loss does not have
panicked and ran the frame eagerly)."""

from __future__ import annotations

import logging

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

import torchferro


@settings(max_examples=60, deadline=None)
@given(
    loss=st.sampled_from(["cross_entropy", "nll_loss"]),
    batch=st.sampled_from([None, 1, 3]),
    extra=st.sampled_from([(), (2,), (2, 3)]),
    classes=st.integers(1, 5),
    reduction=st.sampled_from(["mean", "sum", "none"]),
    weight=st.booleans(),
    ignore=st.booleans(),
    probs=st.booleans(),
    smoothing=st.sampled_from([0.0, 0.1]),
    bad_target=st.booleans(),
)
def test_class_loss_forms(
    loss,
    batch,
    extra,
    classes,
    reduction,
    weight,
    ignore,
    probs,
    smoothing,
    bad_target,
):
    fn_loss = getattr(F, loss)
    if batch is None:
        extra = ()
    lead = () if batch is None else (batch,)
    g = torch.Generator().manual_seed(0)
    x = torch.randn(*lead, classes, *extra, generator=g)
    probs = probs and loss == "cross_entropy"
    if probs:
        target = torch.randn(x.shape, generator=g).softmax(1 if batch else 0)
    else:
        tshape = lead + extra
        if bad_target:
            tshape = tshape + (2,)
        target = torch.randint(0, classes, tshape, generator=g)
    kw = {"reduction": reduction}
    if weight:
        kw["weight"] = torch.rand(classes, generator=g) + 0.5
    if ignore and not probs:
        kw["ignore_index"] = 0
    if loss == "cross_entropy":
        kw["label_smoothing"] = smoothing

    def fn(x, t):
        return fn_loss(x, t, **kw) * 2

    try:
        want = fn(x, target)
    except (RuntimeError, ValueError, IndexError) as e:
        want = e
    torchferro.compiler.reset()
    compiled = torchferro.compile(fn)
    records = []
    handler = logging.Handler(logging.WARNING)
    handler.emit = records.append
    logger = logging.getLogger("torchferro")
    logger.addHandler(handler)
    try:
        if isinstance(want, Exception):
            with pytest.raises(type(want)):
                compiled(x, target)
            return
        got = compiled(x, target)
    finally:
        logger.removeHandler(handler)
    assert not [r for r in records if "internal error" in r.getMessage()]
    assert got.dtype == want.dtype and got.shape == want.shape
    torch.testing.assert_close(got, want, equal_nan=True)
    entries = torchferro.compiler.cache_entries(fn)
    assert len(entries) == 1, entries
