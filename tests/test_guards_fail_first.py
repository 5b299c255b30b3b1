"""A code object with several cache entries: each miss tries first the subtree of the guard trie
that failed last (so a miss is cheap), and still walks everything else before it admits a call.
The entry that runs is recorded per call, so a walk that stopped after the remembered subtree
passed would show as the wrong entry running, not only as a count."""

import pytest
import torch

import torchferro


class Recorder:
    """A backend that tags each graph with its compile index and records which one ran."""

    def __init__(self):
        self.graphs = 0
        self.ran = []

    def __call__(self, gm, example_inputs):
        tag = self.graphs
        self.graphs += 1

        def run(*args):
            self.ran.append(tag)
            return gm.forward(*args)

        return run


@pytest.fixture(autouse=True)
def _reset():
    torchferro.compiler.reset()
    yield
    torchferro.compiler.reset()


def two_args(a, b):
    return a.sum() * 2 + b.sum()


def nested(d):
    return d["x"].sum() * 2 + d["y"].sum()


def _call(f, rec, args, expected_entry, eager):
    out = f(*args)
    torch.testing.assert_close(out, eager(*args))
    assert rec.ran[-1] == expected_entry


def test_a_remembered_failure_does_not_admit_a_call_another_root_rejects():
    rec = Recorder()
    f = torchferro.compile(two_args, backend=rec, dynamic=False)
    a4, a5, b3, b6 = (torch.randn(n) for n in (4, 5, 3, 6))
    _call(f, rec, (a4, b3), 0, two_args)
    _call(f, rec, (a5, b3), 1, two_args)  # entry 0 fails on `a`
    _call(
        f, rec, (a4, b6), 2, two_args
    )  # entry 1 fails on `a`; entry 0 passes `a`, fails `b`
    # Entry 0 now tries `b` first: (a5, b3) passes `b` there and must still fail on `a`.
    for _ in range(3):
        _call(f, rec, (a5, b3), 1, two_args)
        _call(f, rec, (a4, b3), 0, two_args)
        _call(f, rec, (a4, b6), 2, two_args)
    assert rec.graphs == 3
    # Each entry fails this call on a different argument: a fourth graph.
    _call(f, rec, (a5, b6), 3, two_args)
    _call(f, rec, (a5, b3), 1, two_args)
    assert rec.graphs == 4


def test_nested_values_keep_their_verdicts_in_any_order():
    rec = Recorder()
    f = torchferro.compile(nested, backend=rec, dynamic=False)
    x2, x7, y3, y8 = (torch.randn(n) for n in (2, 7, 3, 8))
    _call(f, rec, ({"x": x2, "y": y3},), 0, nested)
    _call(f, rec, ({"x": x2, "y": y8},), 1, nested)  # entry 0 fails on d['y']
    _call(
        f, rec, ({"x": x7, "y": y3},), 2, nested
    )  # entry 0 tries d['y'] first, fails d['x']
    for _ in range(3):
        _call(f, rec, ({"x": x2, "y": y8},), 1, nested)
        _call(f, rec, ({"x": x7, "y": y3},), 2, nested)
        _call(f, rec, ({"x": x2, "y": y3},), 0, nested)
    assert rec.graphs == 3
    _call(f, rec, ({"x": x7, "y": y8},), 3, nested)
    assert rec.graphs == 4
