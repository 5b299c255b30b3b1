"""Compiled objects are freed with their owners (issue 13, "Memory").

A cache entry must not keep a user's model alive: identity guards hold their objects weakly,
and an entry whose object died is dropped. Memory kept between calls (the inductor's workspace
of intermediates, packed weights) goes when the compiled function or module that made it is
freed, and ``torchferro.compiler.reset()`` frees everything. Models of one class with different
weights, compiled one after another, must not exhaust the recompile limit.

Resident memory is measured in a child process (a fresh heap, trimmed before each reading) with a
generous bound, never timings."""

from __future__ import annotations

import gc
import weakref

import pytest
import torch

import torchferro
from rss_probe import run_child


class Net(torch.nn.Module):
    def __init__(self, n=16):
        super().__init__()
        self.a = torch.nn.Linear(n, n)
        self.b = torch.nn.Linear(n, n)

    def forward(self, x):
        return self.b(self.a(x).relu()).sigmoid()


class Runs:
    """A Python backend counting compiles (`n`) and calls of compiled graphs (`runs`)."""

    def __init__(self):
        self.n = 0
        self.runs = 0

    def __call__(self, gm, example_inputs):
        self.n += 1

        def run(*args):
            self.runs += 1
            return gm.forward(*args)

        return run


@pytest.fixture(autouse=True)
def _fresh():
    torchferro.compiler.reset()
    limit = torchferro.config.recompile_limit
    yield
    torchferro.config.recompile_limit = limit
    torchferro.compiler.reset()


@pytest.mark.parametrize("backend", ["inductor", "eager", "python"])
def test_deleted_compiled_model_is_collected(backend):
    if backend == "python":
        backend = Runs()
    m = Net()
    ref = weakref.ref(m)
    cm = torchferro.compile(m, backend=backend)
    x = torch.randn(4, 16)
    torch.testing.assert_close(cm(x), m(x))
    del m, cm
    gc.collect()
    assert ref() is None
    # Its entry stays (as torch.compile's, per class) and serves another instance.
    m2 = Net()
    cm2 = torchferro.compile(m2, backend=backend)
    torch.testing.assert_close(cm2(x), m2(x))
    assert len(torchferro.compiler.cache_entries(Net.forward)) == 1


def test_entry_guarded_on_a_dead_object_is_dropped():
    class Holder:
        pass

    obj = Holder()
    ref = weakref.ref(obj)

    def f(o, x):
        return x + 1 if o is obj else x - 1

    backend = Runs()
    cf = torchferro.compile(f, backend=backend)
    x = torch.randn(2)
    torch.testing.assert_close(cf(obj, x), x + 1)
    assert len(torchferro.compiler.cache_entries(f)) == 1
    del obj
    gc.collect()
    assert ref() is None
    assert torchferro.compiler.cache_entries(f) == []


def test_model_captured_by_a_compiled_closure_is_collected_with_it():
    def make():
        model = Net()

        def f(x):
            return model(x) * 2

        return f, weakref.ref(model)

    f, ref = make()
    cf = torchferro.compile(f)
    x = torch.randn(3, 16)
    torch.testing.assert_close(cf(x), f(x))
    del f, cf
    gc.collect()
    assert ref() is None


def test_models_of_one_class_compiled_in_sequence_all_run_compiled_and_are_collected():
    backend = Runs()
    x = torch.randn(5, 16)
    refs, kept = [], []
    for i in range(12):
        torch.manual_seed(i)
        m = Net()
        refs.append(weakref.ref(m))
        cm = torchferro.compile(m, backend=backend)
        torch.testing.assert_close(cm(x), m(x))
        if i >= 10:
            kept.append(cm)
        del m, cm
        gc.collect()
    # Every call ran a compiled graph: none fell back to eager at the recompile limit. As with
    # torch.compile, one graph serves them all (modules are guarded by type, parameters are
    # graph inputs).
    assert backend.runs == 12
    assert backend.n == 1
    state, entries = torchferro._C.cache_entries(Net.forward.__code__)
    assert state == "normal"
    assert len(entries) == 1
    # Only the models still referenced are alive.
    assert [r() is not None for r in refs] == [False] * 10 + [True, True]
    for cm in kept:
        torch.testing.assert_close(cm(x), cm._orig_mod(x))
    assert backend.runs == 14 and backend.n == 1


def test_models_of_one_class_alive_together_share_one_entry():
    backend = Runs()
    x = torch.randn(5, 16)
    models = []
    for i in range(12):
        torch.manual_seed(i)
        models.append(Net())
    compiled = [torchferro.compile(m, backend=backend) for m in models]
    for _ in range(2):
        for m, cm in zip(models, compiled):
            torch.testing.assert_close(cm(x), m(x))
    assert backend.n == 1 and backend.runs == 24
    # A weight changed in place is read by the next call.
    with torch.no_grad():
        models[3].a.weight.mul_(-1)
    torch.testing.assert_close(compiled[3](x), models[3](x))


def test_reset_frees_entries_of_live_models():
    m = Net()
    cm = torchferro.compile(m)
    cm(torch.randn(2, 16))
    assert len(torchferro.compiler.cache_entries(Net.forward)) == 1
    torchferro.compiler.reset()
    assert torchferro.compiler.cache_entries(Net.forward) == []


_RSS_CHILD = r"""
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(1024, 1024)
        self.b = torch.nn.Linear(1024, 1024)

    def forward(self, x):
        y = self.a(x).relu()
        return self.b(y.softmax(-1) * y.sigmoid()).tanh().sum(-1)


def g(x, w):
    y = (x @ w).relu()
    return (y.softmax(-1) @ w).sum()


torch.manual_seed(0)
x = torch.randn(4096, 1024)
w = torch.randn(1024, 1024)
big = torch.randn(4096, 2048)
wb = torch.randn(2048, 2048)
# Warm-up: code paths and libraries loaded before the baseline.
warm = Net()
torchferro.compile(warm)(x[:8])
torchferro.compile(g)(x[:8], w)
del warm
torchferro.compiler.reset()
base = rss()
out = {}
cg = torchferro.compile(g)
for _ in range(3):
    cg(big, wb)
out["function_alive"] = rss() - base
del cg
out["function_deleted"] = rss() - base
models = []
for i in range(8):
    m = Net()
    cm = torchferro.compile(m)
    cm(x)
    models.append(cm)
out["models_alive"] = rss() - base
del m, cm, models
out["models_deleted"] = rss() - base
keep = torchferro.compile(Net())
keep(x)
cg = torchferro.compile(g)
cg(big, wb)
out["kept_alive"] = rss() - base
torchferro.compiler.reset()
out["after_reset"] = rss() - base
print(json.dumps(out))
"""


def test_resident_memory_returns_near_baseline():
    mib = run_child(_RSS_CHILD)
    # The measurement means something: what is held while alive is well above the bound.
    assert mib["function_alive"] > 60, mib
    assert mib["models_alive"] > 60, mib
    assert mib["function_deleted"] < 50, mib
    assert mib["models_deleted"] < 50, mib
    assert mib["after_reset"] < 50, mib


class MaybeBias(torch.nn.Module):
    def __init__(self, bias, eps):
        super().__init__()
        self.fc = torch.nn.Linear(8, 8, bias=bias)
        self.norm = torch.nn.LayerNorm(8, eps=eps)
        self.drop = torch.nn.Dropout(0.5)
        self.seq = torch.nn.Sequential(torch.nn.ReLU(), torch.nn.Tanh())

    def forward(self, x):
        return self.seq(self.drop(self.norm(self.fc(x))))


def test_instances_of_one_class_that_differ_in_structure_or_constants_do_not_share_results():
    # Guarded by type, the instances must still differ where their submodules do: a missing
    # bias, a layer constant, a Sequential's children, hooks on a submodule.
    backend = Runs()
    x = torch.randn(3, 8)
    a = MaybeBias(True, 1e-5).eval()
    b = MaybeBias(False, 1e-5).eval()
    c = MaybeBias(True, 0.5).eval()
    d = MaybeBias(True, 1e-5).eval()
    d.seq = torch.nn.Sequential(torch.nn.Sigmoid())
    e = MaybeBias(True, 1e-5).eval()
    e.fc.register_forward_hook(lambda mod, args, out: out * 10)
    f = MaybeBias(True, 1e-5)  # training: dropout is on
    for m in (b, a, c, d, e):
        torch.testing.assert_close(torchferro.compile(m, backend=backend)(x), m(x))
    torch.manual_seed(0)
    want = f(x)
    torch.manual_seed(0)
    got = torchferro.compile(f, backend="eager")(x)
    torch.testing.assert_close(got, want)
    assert backend.runs >= 5
