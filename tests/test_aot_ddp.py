"""Issue 17, DDP: a compiled module under ``torch.nn.parallel.DistributedDataParallel`` (gloo,
2 processes on CPU) gives eager DDP's gradients at every step and fires DDP's gradient
communication hook as often as eager DDP does, with the compiled backward running (not the
fallback through torch's autograd).

Both ways users write it are checked: ``DDP(torchferro.compile(model))`` (the compiled module
inside; DDP's hooks on the parameters fire when the compiled backward's gradients accumulate)
and ``torchferro.compile(DDP(model))`` (DDP's own forward traced; its reducer calls are torch
internals the tracer leaves to Python, and the wrapped module's forward is compiled).

Each rank is a fresh subprocess (meeting through a rendezvous file); the ranks see different data so
the all-reduce matters."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import torchferro

_CHILD = r"""
import copy, json, os, sys
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
import torchferro
from torchferro import _aot

rank = int(os.environ["RANK"])
dist.init_process_group(
    "gloo", init_method="file://" + os.environ["RENDEZVOUS"], rank=rank, world_size=2
)
torch.set_num_threads(1)
# Small buckets: several all-reduces per step, launched as the compiled backward's
# gradients arrive.
BUCKET = 0.002


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 32)
        self.fc2 = nn.Linear(32, 32)
        self.fc3 = nn.Linear(32, 4)

    def forward(self, x):
        h = F.gelu(self.fc1(x))
        return self.fc3(torch.tanh(self.fc2(h)) + h)


def hooked(ddp, calls):
    def hook(state, bucket):
        calls.append(bucket.buffer().numel())
        fut = dist.all_reduce(bucket.buffer().div_(2), async_op=True).get_future()
        return fut.then(lambda f: f.value()[0])

    ddp.register_comm_hook(None, hook)
    return ddp


def train(wrap, steps=4):
    torch.manual_seed(0)
    model = Net()
    calls = []
    ddp = wrap(model, calls)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    out = []
    for step in range(steps):
        g = torch.Generator().manual_seed(100 * step + rank)
        x = torch.randn(16, 8, generator=g)
        y = torch.randint(0, 4, (16,), generator=g)
        opt.zero_grad()
        loss = F.cross_entropy(ddp(x), y)
        loss.backward()
        out.append([loss.item()] + [p.grad.clone() for p in model.parameters()])
        opt.step()
    return out, calls


eager, eager_calls = train(lambda m, c: hooked(DDP(m, bucket_cap_mb=BUCKET), c))
_aot.reset()
inside, inside_calls = train(lambda m, c: hooked(DDP(torchferro.compile(m), bucket_cap_mb=BUCKET), c))
inside_counters = dict(_aot.counters)
torchferro.compiler.reset()
_aot.reset()
outside, outside_calls = train(lambda m, c: torchferro.compile(hooked(DDP(m, bucket_cap_mb=BUCKET), c)))
outside_counters = dict(_aot.counters)


def diff(a, b):
    worst = 0.0
    for sa, sb in zip(a, b):
        worst = max(worst, abs(sa[0] - sb[0]))
        for ga, gb in zip(sa[1:], sb[1:]):
            worst = max(worst, (ga - gb).abs().max().item())
    return worst


print(json.dumps({
    "rank": rank,
    "eager_calls": eager_calls,
    "inside_calls": inside_calls,
    "outside_calls": outside_calls,
    "inside_diff": diff(inside, eager),
    "outside_diff": diff(outside, eager),
    "inside_counters": inside_counters,
    "outside_counters": outside_counters,
    "fallbacks": list(_aot.fallback_reasons),
}))
# Torch's own teardown aborts now and then ("terminate called without an active exception",
# SIGABRT): eager DDP with a communication hook and no torchferro imported did so in 3 of 20
# runs, and in 1 of 30 after a barrier. The results are printed by then, so the ranks meet
# and leave without the process group's destructor.
dist.barrier()
sys.stdout.flush()
os._exit(0)
"""


@pytest.fixture(scope="module")
def ranks(tmp_path_factory):
    env = dict(os.environ)
    env.pop("TORCHFERRO_AOT", None)
    pkg = os.path.dirname(os.path.dirname(torchferro.__file__))
    env["PYTHONPATH"] = pkg + os.pathsep + env.get("PYTHONPATH", "")
    # A file rendezvous: a port picked free here can be taken by another test process before
    # rank 0 binds it (two errors in one CI run of fd6cafd).
    rendezvous = tmp_path_factory.mktemp("ddp") / "rendezvous"
    env.update(RENDEZVOUS=str(rendezvous), WORLD_SIZE="2")
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _CHILD],
            env={**env, "RANK": str(r)},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for r in range(2)
    ]
    results = []
    for p in procs:
        try:
            out, err = p.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            raise
        assert p.returncode == 0, (p.returncode, err[-3000:])
        results.append(json.loads(out.strip().splitlines()[-1]))
    return results


def _same_hook_calls(got, eager):
    """The communication hook ran as often as under eager DDP, over the same elements. Which
    parameters share a bucket after DDP's first-step rebuild follows the order gradients
    arrive: one compiled backward hands them all at once, in the order torch.compile's single
    graph does (``optimize_ddp=False``: [1476, 1280, 196, ...] here against eager's
    [1476, 1188, 288, ...]); torch.compile's default DDPOptimizer splits the graph at bucket
    boundaries instead, which torchferro does not do yet."""
    assert len(got) == len(eager) >= 7
    assert got[0] == eager[0] and sum(got) == sum(eager)


def test_compiled_module_inside_ddp_matches_eager_ddp(ranks):
    for r in ranks:
        assert r["inside_diff"] < 1e-5, r
        _same_hook_calls(r["inside_calls"], r["eager_calls"])
        c = r["inside_counters"]
        assert (c["compiled"], c["forward"], c["backward"], c["fallback"]) == (
            1,
            4,
            4,
            0,
        ), r


def test_compiled_ddp_matches_eager_ddp(ranks):
    for r in ranks:
        assert r["outside_diff"] < 1e-5, r
        _same_hook_calls(r["outside_calls"], r["eager_calls"])
        c = r["outside_counters"]
        assert c["backward"] == 4 and c["fallback"] == 0, r
