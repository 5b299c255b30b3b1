"""Session 34 hunt: complex tensors on the inductor (the differential cases are in
``differential/cases_hunt34.py``).

A write into a complex tensor (``X[3:6] = 0`` of an FFT's spectrum, an in-place update of a
complex input) was lowered to a kernel, and code generation panicked ("no C type for
Complex64"): the frame ran eagerly as an internal error, with no compiled entry. A graph with
complex tensors now runs on the eager runner (``InductorProgram::admit``); the kernels have no
complex type. ``abs`` of a complex tensor is real-valued (the native metadata rule kept the
complex dtype, and the inductor's fallback raised on the result)."""

from __future__ import annotations

import pytest
import torch

import torchferro


def band_stop(x):
    X = torch.fft.fft(x)
    X[3:6] = 0
    return torch.fft.ifft(X).real, X.abs().max()


def scale_complex_input(z):
    z.mul_(2)
    z[0] = 1
    return z.abs(), z.real.sum()


def magnitude(x):
    return torch.fft.rfft(x).abs() * 2


@pytest.mark.parametrize(
    "fn,make",
    [
        (band_stop, lambda: (torch.randn(8),)),
        (scale_complex_input, lambda: (torch.randn(4, dtype=torch.complex64),)),
        (magnitude, lambda: (torch.randn(4, 10),)),
    ],
    ids=["band_stop", "complex_input_written", "magnitude"],
)
def test_complex_graph_compiles(fn, make):
    """Eager's values and written inputs, with a compiled entry (not a frame run eagerly after
    an internal error)."""
    torch.manual_seed(0)
    want_args = make()
    got_args = tuple(a.clone() for a in want_args)
    want = fn(*want_args)
    torchferro.compiler.reset()
    try:
        f = torchferro.compile(fn)
        got = f(*got_args)
        entries = torchferro.compiler.cache_entries(f)
    finally:
        torchferro.compiler.reset()
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w)
    for g, w in zip(got_args, want_args):
        torch.testing.assert_close(g, w)
    assert len(entries) == 1
