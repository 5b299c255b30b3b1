"""The runner the generated-program tests share: a program over a sequence of calls eagerly, under
torch.compile and under torchferro, each compiler with a counting backend, values against
eager's at every call (tests/test_dynamic_generated.py, tests/test_frozen_keys_generated.py)."""

from __future__ import annotations

import contextlib
import re

import pytest
import torch
import torch._dynamo
from hypothesis import HealthCheck, Phase, settings
import torchferro
import torchferro.compiler

from programs import counting


class Count(counting.Count):
    def __init__(self):
        super().__init__()
        # Set where torch.compile's value differed from eager's: its graph count then rests on
        # a guard it should not have dropped and proves nothing.
        self.wrong = False


def same(got, want):
    """``got`` is eager's ``want``: tensors close, other items (sizes, ints) equal, item by item
    of a tuple."""
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert type(g) is type(w), (g, w)
        if isinstance(w, torch.Tensor):
            torch.testing.assert_close(g, w)
        else:
            assert g == w


def counts_over(program, calls, *, oracle=True, eager_errors=False, **options):
    """``program(*args)`` for each ``args`` of ``calls`` eagerly, under torch.compile (unless
    ``oracle`` is false: its count is not compared then) and under torchferro, both compiled
    with ``options`` (``dynamic=``, ``fullgraph=``). torchferro's values must be eager's; where
    torch.compile's are not, ``wrong`` is set on its counter. Returns the two counters.

    ``eager_errors``: a call eager raises for (a ``RuntimeError``) must raise under both, under
    torchferro with eager's message; the sequence ends there, and the counts are those before
    that call (torch.compile raises from its trace, torchferro may break the graph at the op
    and compile what precedes it: a graph torch.compile does not count)."""
    torch._dynamo.reset()
    torchferro.compiler.reset()
    tc, fc = Count(), Count()
    t = torch.compile(program, backend=tc, **options)
    f = torchferro.compile(program, backend=fc, **options)
    try:
        for args in calls:
            try:
                want = program(*args)
            except (RuntimeError, IndexError) as e:
                # torch's size errors are `RuntimeError`s, its dimension errors `IndexError`s
                # (a generated program indexing a dim a size-1 squeeze removed, session 31).
                if not eager_errors:
                    raise
                before = tc.n, fc.n
                if oracle:
                    # torch.compile wraps an error its fake tensors raise (`TorchRuntimeError`).
                    with pytest.raises((type(e), RuntimeError)):
                        t(*args)
                with pytest.raises(type(e), match=re.escape(str(e)[:40])):
                    f(*args)
                tc.n, fc.n = before
                break
            if oracle:
                try:
                    same(t(*args), want)
                except AssertionError:
                    tc.wrong = True
            same(f(*args), want)
    finally:
        torch._dynamo.reset()
        torchferro.compiler.reset()
    return tc, fc


def generated(examples: int):
    """The hypothesis settings of the generated-program tests: ``examples`` per run, no deadline
    (a compile takes seconds), and no explain phase: it traces lines with ``sys.settrace``,
    under which torchferro runs frames eagerly (0 graphs), so shrinking would report that
    instead of the failure."""
    return settings(
        max_examples=examples,
        deadline=None,
        phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink],
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


@contextlib.contextmanager
def compiled_pair(program, dynamic):
    """``program`` under torch.compile (a counting backend: the graph-count oracle) and
    torchferro's default backend, from fresh caches (reset again on the way out); yields the
    counter, both compiled callables and a seeded generator."""
    torch._dynamo.reset()
    torchferro.compiler.reset()
    tc = Count()
    t = torch.compile(program, backend=tc, dynamic=dynamic)
    f = torchferro.compile(program, dynamic=dynamic)
    try:
        yield tc, t, f, torch.Generator().manual_seed(0)
    finally:
        torch._dynamo.reset()
        torchferro.compiler.reset()


def run_over_sizes(program, make, sizes, compiled):
    """``compiled`` over ``sizes`` (``make(size, generator)`` gives a call's inputs, seeded by
    the size): each call's result and inputs after it against eager's (a fresh copy of the
    same inputs)."""
    for s in sizes:
        want_args = make(s, torch.Generator().manual_seed(s))
        want = program(*want_args)
        args = make(s, torch.Generator().manual_seed(s))
        same(compiled(*args), want)
        same(tuple(args), tuple(want_args))


def graph_counts_over_sizes(program, make, sizes, dynamic):
    """Graph counts of torch.compile and torchferro (counting backends) over ``sizes``, values
    and written inputs checked against eager at each call (``run_over_sizes``)."""
    torch._dynamo.reset()
    torchferro.compiler.reset()
    tc, fc = counting.Count(), counting.Count()
    try:
        run_over_sizes(
            program, make, sizes, torch.compile(program, backend=tc, dynamic=dynamic)
        )
        run_over_sizes(
            program,
            make,
            sizes,
            torchferro.compile(program, backend=fc, dynamic=dynamic),
        )
    finally:
        torch._dynamo.reset()
        torchferro.compiler.reset()
    return tc.n, fc.n


def assert_inductor_entries(program, make, sizes, dynamic, entries_want):
    """The default backend (the inductor) over ``sizes``, no grad: values eager's
    (``run_over_sizes``), ``entries_want`` cache entries, each on the inductor."""
    torchferro.compiler.reset()
    f = torchferro.compile(program, dynamic=dynamic)
    try:
        with torch.no_grad():
            run_over_sizes(program, make, sizes, f)
        entries = torchferro.compiler.cache_entries(f)
    finally:
        torchferro.compiler.reset()
    assert len(entries) == entries_want
    assert all(e["runner"] == "inductor" for e in entries), [
        e["runner"] for e in entries
    ]
