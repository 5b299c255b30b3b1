"""Dynamic shapes through the inductor (issue 18, phase 2): the acceptance tests.

Each program is compiled once with ``dynamic=True`` and called over sizes 2..64 (odd and prime
ones included). Asserted today: values equal eager's, exactly one compile (one cache entry, as
many graphs as torch.compile makes with a counting backend), and no wrong answer from the
default backend.

Not yet true (issue 18 phase 2, symbolic sizes in the C kernels): that the inductor, and not the
eager runner, ran the graph. ``test_the_inductor_runs_it`` states that for every program and is
a strict xfail until the inductor takes graphs with symbols; when it starts passing, drop the
marker.
"""

from __future__ import annotations

import logging

import pytest
import torch
import torch._dynamo
import torch.nn.functional as F
import torchferro
import torchferro.compiler
from torch import nn

SIZES = [2, 3, 5, 8, 13, 17, 31, 32, 47, 64]
R = torch.randn


class Count:
    """A backend that counts graphs and runs the GraphModule it is given."""

    def __init__(self):
        self.n = 0

    def __call__(self, gm, example_inputs):
        self.n += 1
        return gm.forward


def _flat(v):
    return v if isinstance(v, (tuple, list)) else (v,)


def _same(a, b):
    for x, y in zip(_flat(a), _flat(b), strict=True):
        assert isinstance(x, torch.Tensor) and x.shape == y.shape and x.dtype == y.dtype
        torch.testing.assert_close(x, y, rtol=1e-5, atol=1e-5)


# --- programs: (fn, inputs for size n) ------------------------------------------------------------


def pointwise(x, y):
    return (x * y + 1).relu().sigmoid() - torch.tanh(x) / (y.abs() + 1)


def broadcasting(x, b):
    return (x + b) * b.exp(), x - x.mean()


def reductions(x):
    return x.sum(1), x.amax(0), x.mean(-1, keepdim=True), x.var(0), x.sum()


def rows(x, w, b):
    return (
        torch.softmax(x, -1),
        F.layer_norm(x, x.shape[-1:], w, b),
        F.log_softmax(x, 0),
    )


def views(x, y):
    B = x.size(0)
    v = x.view(B, -1, 2).transpose(1, 2).reshape(B, -1) * 2
    c = torch.cat([x, y], dim=0)
    return v, c[1:] + 1, c[: B // 2 + 1].sum(0), x[:, ::2]


def matmuls(x, w, b):
    return F.linear(x, w, b).relu() @ w, torch.bmm(x.unsqueeze(0), x.t().unsqueeze(0))


class Block(nn.Module):
    """A GPT-2 block: pre-norm causal self-attention and an MLP, sequence length symbolic."""

    def __init__(self, d=32, h=4):
        super().__init__()
        self.h = h
        self.ln1 = nn.LayerNorm(d)
        self.attn = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc = nn.Linear(d, 4 * d)
        self.out = nn.Linear(4 * d, d)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.attn(self.ln1(x)).split(C, dim=2)
        q = q.view(B, T, self.h, C // self.h).transpose(1, 2)
        k = k.view(B, T, self.h, C // self.h).transpose(1, 2)
        v = v.view(B, T, self.h, C // self.h).transpose(1, 2)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).contiguous().view(B, T, C))
        return x + self.out(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


torch.manual_seed(0)
_W32, _B32 = R(32, 32), R(32)
_BLOCK = Block().eval()

PROGRAMS = {
    "pointwise": (pointwise, lambda n: (R(n, 7), R(n, 7))),
    "broadcasting": (broadcasting, lambda n: (R(n, 6), R(6))),
    "reductions": (reductions, lambda n: (R(n, 9),)),
    "rows": (rows, lambda n: (R(4, n), R(n), R(n))),
    "views": (views, lambda n: (R(n, 8), R(3, 8))),
    "matmuls": (matmuls, lambda n: (R(n, 32), _W32, _B32)),
    "gpt2_block": (_BLOCK, lambda n: (R(4, n, 32),)),
}


def _compile_and_run(fn, make):
    """Runs ``fn`` over SIZES eagerly, through torch.compile (counting backend) and through
    torchferro's default backend, all with ``dynamic=True``; returns the compiled function and
    torch.compile's graph count."""
    torch._dynamo.reset()
    torchferro.compiler.reset()
    tc = Count()
    t = torch.compile(fn, backend=tc, dynamic=True)
    f = torchferro.compile(fn, dynamic=True)
    with torch.no_grad():
        for n in SIZES:
            args = make(n)
            want = fn(*args)
            _same(t(*args), want)
            _same(f(*args), want)
    return f, tc.n


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_values_and_one_compile(name):
    fn, make = PROGRAMS[name]
    f, torch_graphs = _compile_and_run(fn, make)
    assert torch_graphs == 1
    assert len(torchferro.compiler.cache_entries(f)) == 1


@pytest.mark.xfail(
    strict=True,
    reason="issue 18 phase 2: the inductor's C kernels take static sizes only; a graph with "
    "symbols runs on the eager runner",
)
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_the_inductor_runs_it(name, caplog):
    fn, make = PROGRAMS[name]
    with caplog.at_level(logging.INFO, logger="torchferro.inductor"):
        f, _ = _compile_and_run(fn, make)
    text = "\n".join(
        r.getMessage() for r in caplog.records if r.name == "torchferro.inductor"
    )
    assert "it has symbolic sizes" not in text, text
    [entry] = torchferro.compiler.cache_entries(f)
    assert entry["runner"] == "inductor", entry["runner"]
