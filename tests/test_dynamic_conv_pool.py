"""Convolutions, pooling and cuts over symbolic sizes (issue 18; docs/dynamic-shapes.md,
"Session 17: windows and cuts").

fx's shape rules write a convolution's or pool's output size as a floor division of the input
size (``(H + 2p - d(k-1) - 1) // s + 1``) and ``narrow``/``split``/``chunk`` along a symbolic
dimension as sums and floor divisions, guarding the decisions torch's meta functions guard
(a pool's ``div_rtn`` remainder, ``ceil_mode``'s last window, ``split``'s piece count, a piece
of length 1). So each program compiles to torch.compile's graph count under ``dynamic=True``
over many sizes (it made a graph per size before), and the inductor lowers those graphs once
from their symbolic sizes: convolutions as extern calls sized per assignment, ``max_pool2d``
as a lowering whose window reads are masked against the symbolic bounds.
"""

from __future__ import annotations

import logging
import tempfile

import pytest
import torch
import torch._dynamo
import torch.nn.functional as F
import torchferro
import torchferro.compiler
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from programs.counting import Count
from programs.dynamic import inductor_log, same_values
from torch import nn
from torchferro import _C

R = torch.randn
SIZES = [5, 6, 7, 8, 9, 12, 13, 16, 21, 30]

_g = torch.Generator().manual_seed(0)
W2 = torch.randn(4, 3, 3, 3, generator=_g)
W1 = torch.randn(4, 3, 3, generator=_g)
W3 = torch.randn(4, 3, 3, 3, 3, generator=_g)
WT = torch.randn(3, 4, 3, 3, generator=_g)


def _x(n):
    """``[2, 3, n, n + 3]``: every dimension dynamic under ``dynamic=True``, none equal."""
    return (R(2, 3, n, n + 3),)


# name: (fn, graphs torch.compile makes over SIZES, and the reason)
PROGRAMS = {
    # Convolutions divide with `//`: one graph.
    "conv2d_stride2": (lambda x: F.conv2d(x, W2, padding=1, stride=2).relu(), 1),
    "conv1d": (lambda x: F.conv1d(x[:, :, 0], W1, padding=1) * 2, 1),
    "conv3d": (lambda x: F.conv3d(x.unsqueeze(2).expand(-1, -1, 3, -1, -1), W3), 1),
    "conv_transpose2d": (
        lambda x: F.conv_transpose2d(x, WT, stride=2, padding=1) + 1,
        1,
    ),
    # A pool of stride 2 guards its numerator's parity (torch's div_rtn): odd and even sizes.
    "max_pool2d": (lambda x: F.max_pool2d(x, 2) * 2 + 1, 2),
    "max_pool2d_stride1": (lambda x: F.max_pool2d(x, 2, 1) - 1, 1),
    "max_pool2d_ceil": (lambda x: F.max_pool2d(x, 3, 2, ceil_mode=True), 2),
    "avg_pool2d_padded": (lambda x: F.avg_pool2d(x, 3, 2, padding=1), 2),
    "avg_pool2d_ceil": (lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True), 2),
    "avg_pool1d": (lambda x: F.avg_pool1d(x[:, :, 0], 3, 2), 2),
    "adaptive_avg_pool2d": (lambda x: F.adaptive_avg_pool2d(x, (2, 3)) + 1, 1),
    "adaptive_avg_pool2d_2x2": (lambda x: F.adaptive_avg_pool2d(x.relu(), 2) * 2, 1),
    "adaptive_max_pool2d_2x2": (lambda x: F.adaptive_max_pool2d(x, 2) - 1, 1),
    "avg_pool2d_exclude_pad": (
        lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
        2,
    ),
    # Cuts: a constant piece, halves, sections summing to the size.
    "narrow": (lambda x: x.narrow(2, 1, 2) + 1, 1),
    "narrow_to_the_end": (lambda x: x.narrow(2, 2, x.size(2) - 2) * 3, 1),
    "chunk2": (lambda x: [t * 2 for t in x.chunk(2, dim=2)], 1),
    "split_sections": (lambda x: [t + 1 for t in x.split([2, x.size(2) - 2], 2)], 1),
}


def _compile_both(fn, sizes):
    """``fn`` through torch.compile and torchferro with counting backends, ``dynamic=True``,
    at every size; values checked against eager. Returns both graph counts."""
    torch._dynamo.reset()
    torchferro.compiler.reset()
    tc, fc = Count(), Count()
    t = torch.compile(fn, backend=tc, dynamic=True)
    f = torchferro.compile(fn, backend=fc, dynamic=True)
    for n in sizes:
        args = _x(n)
        want = fn(*args)
        same_values(t(*args), want)
        same_values(f(*args), want)
    return tc.n, fc.n


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_graph_count_is_torch_compiles(name):
    fn, graphs = PROGRAMS[name]
    torch_graphs, ours = _compile_both(fn, SIZES)
    assert (ours, torch_graphs) == (graphs, graphs)


def test_split_guards_its_piece_count_as_torch():
    """``split(3)`` then ``+ 1`` over lengths 9, 8 (three pieces: one graph), 7 (three pieces,
    the last of length 1: the add's broadcast asks whether it is 1, as torch's ``infer_size``,
    and the length specializes: a second graph), 12 (four pieces: a third), 11 (four, the
    last 2: the third graph again)."""
    fn = lambda x: [t + 1 for t in x.split(3, dim=2)]
    assert _compile_both(fn, [9, 8, 7, 12, 11]) == (3, 3)


def test_chunk_with_a_piece_of_one_specializes_as_torch():
    """``chunk(3)`` then ``* 2`` over 6..13: every length makes three pieces, the last of
    length 1 only at 7 (pieces 3, 3, 1), which the broadcast specializes: two graphs."""
    fn = lambda x: [t * 2 for t in x.chunk(3, dim=2)]
    assert _compile_both(fn, [6, 7, 8, 9, 10, 12, 13]) == (2, 2)


def test_a_slice_reaching_length_1_recompiles_under_broadcast_as_torch():
    """``x[:, :, 6:] + 1`` over 9, 8 (one graph: ``s - 6 != 1`` guarded) and 7 (the sliced
    length is 1: a second graph), as torch.compile."""
    fn = lambda x: x[:, :, 6:] + 1
    assert _compile_both(fn, [9, 8, 7]) == (2, 2)


def test_max_pool1d_specializes_as_torch():
    """torch.compile makes a graph per length of ``max_pool1d`` (it has no symbolic rule
    there either); ours does the same."""
    fn = lambda x: F.max_pool1d(x[:, :, :, 0], 3, 2)
    assert _compile_both(fn, [7, 8, 9, 10]) == (4, 4)


# --- the inductor ---------------------------------------------------------------------------


def _c_compiles():
    return _C.precompile_counters()[1]


@pytest.fixture
def fresh_cache(monkeypatch):
    monkeypatch.setenv("TORCHFERRO_CACHE_DIR", tempfile.mkdtemp(prefix="tf-convpool-"))


INDUCTOR = {
    "conv2d_stride2": PROGRAMS["conv2d_stride2"],
    "conv1d": PROGRAMS["conv1d"],
    "max_pool2d": PROGRAMS["max_pool2d"],
    "max_pool2d_stride1": PROGRAMS["max_pool2d_stride1"],
    "adaptive_avg_pool2d_1": (lambda x: F.adaptive_avg_pool2d(x, 1) * 2, 1),
    # Lowered since session 18 (they ran on the eager runner before: a fallback op in a graph
    # of symbolic sizes declines the whole graph).
    "max_pool2d_ceil": PROGRAMS["max_pool2d_ceil"],
    "avg_pool2d_padded": PROGRAMS["avg_pool2d_padded"],
    "avg_pool2d_ceil": PROGRAMS["avg_pool2d_ceil"],
    "avg_pool2d_exclude_pad": PROGRAMS["avg_pool2d_exclude_pad"],
    "avg_pool1d": PROGRAMS["avg_pool1d"],
    "adaptive_avg_pool2d": PROGRAMS["adaptive_avg_pool2d"],
    "adaptive_avg_pool2d_2x2": PROGRAMS["adaptive_avg_pool2d_2x2"],
    "adaptive_max_pool2d_2x2": PROGRAMS["adaptive_max_pool2d_2x2"],
    "narrow_to_the_end": PROGRAMS["narrow_to_the_end"],
    "chunk2": PROGRAMS["chunk2"],
    "split_sections": PROGRAMS["split_sections"],
}


@pytest.mark.parametrize("name", list(INDUCTOR))
def test_the_inductor_lowers_each_graph_once(name, fresh_cache, caplog):
    """Each graph is lowered symbolically, and one C compile serves every size: a pool's two
    parity graphs print the same C (their guards differ, not their kernels), so the second
    takes the first's library from the kernel cache."""
    fn, graphs = INDUCTOR[name]
    torch._dynamo.reset()
    torchferro.compiler.reset()
    f = torchferro.compile(fn, dynamic=True)
    before = _c_compiles()
    with caplog.at_level(logging.INFO, logger="torchferro.inductor"), torch.no_grad():
        for n in SIZES:
            args = _x(n)
            same_values(f(*args), fn(*args))
    log = inductor_log(caplog.records)
    text = "\n".join(log)
    assert "declined" not in text and "eager runner" not in text, text
    assert len([m for m in log if "lowered symbolically" in m]) == graphs, text
    entries = torchferro.compiler.cache_entries(f)
    assert len(entries) == graphs
    assert all(e["runner"] == "inductor" for e in entries)
    assert _c_compiles() - before == 1


class SmallCNN(nn.Module):
    """conv-relu-pool-conv-relu-pool, global average pool, linear: every size but the
    channels symbolic up to the pooling, the head static."""

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 3, padding=1)
        self.c2 = nn.Conv2d(8, 16, 3, padding=1)
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.c1(x)), 2)
        x = F.max_pool2d(F.relu(self.c2(x)), 2)
        return self.fc(F.adaptive_avg_pool2d(x, 1).flatten(1))


def test_a_small_cnn_over_image_sizes(fresh_cache, caplog):
    """The CNN over square images 16..64 of even side (the pools' parity guard holds for all:
    one graph, as torch.compile) is lowered once: one C compile, eager's values."""
    torch.manual_seed(0)
    m = SmallCNN().eval()
    sizes = list(range(16, 65, 4))
    torch._dynamo.reset()
    torchferro.compiler.reset()
    tc = Count()
    t = torch.compile(m, backend=tc, dynamic=True)
    f = torchferro.compile(m, dynamic=True)
    before = _c_compiles()
    with caplog.at_level(logging.INFO, logger="torchferro.inductor"), torch.no_grad():
        for n in sizes:
            x = R(2, 3, n, n)
            want = m(x)
            same_values(t(x), want)
            same_values(f(x), want)
    text = "\n".join(inductor_log(caplog.records))
    assert "declined" not in text, text
    assert len(torchferro.compiler.cache_entries(f)) == tc.n == 1
    assert _c_compiles() - before == 1


# --- interior and borders (session 21) ------------------------------------------------------

# Pools whose output store is split into the windows proved inside and the borders around
# them; every one accepts any length >= 1 (padding 1).
SPLIT_POOLS = {
    "avg_3_2_1": lambda x: F.avg_pool2d(F.relu(x), 3, 2, 1),
    "avg_3_2_1_ceil_exclude": lambda x: F.avg_pool2d(
        x, 3, 2, 1, ceil_mode=True, count_include_pad=False
    ),
    "avg_3x2_1_1": lambda x: F.avg_pool2d(x, (3, 2), 1, 1, count_include_pad=False) * 2,
    "max_3_2_1": lambda x: F.max_pool2d(F.relu(x), 3, 2, 1),
    "max_3_1_1_ceil": lambda x: F.max_pool2d(x, 3, 1, 1, ceil_mode=True) - 1,
    "avg1d_3_2_1": lambda x: F.avg_pool1d(x[:, :, 0], 3, 2, 1),
}
_split_compiled = {}


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    name=st.sampled_from(sorted(SPLIT_POOLS)),
    sizes=st.lists(
        st.tuples(st.integers(1, 19), st.integers(1, 19)), min_size=1, max_size=4
    ),
)
def test_split_pools_match_eager_at_any_size(name, sizes):
    """One ``dynamic=True`` function per pool over drawn sizes (1, 2, 3: an empty interior;
    odd and even: a right border or none): eager's values, every graph on the inductor."""
    fn = SPLIT_POOLS[name]
    if name not in _split_compiled:
        _split_compiled[name] = torchferro.compile(fn, dynamic=True)
    f = _split_compiled[name]
    with torch.no_grad():
        for h, w in sizes:
            x = R(2, 3, h, w)
            same_values(f(x), fn(x))
    assert all(e["runner"] == "inductor" for e in torchferro.compiler.cache_entries(f))
