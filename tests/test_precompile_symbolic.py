"""Precompiled dynamic graphs on the inductor (issue 18 + precompile): a graph traced with
symbolic sizes whose kernels were lowered symbolically (one library, the sizes as arguments)
is written with runner ``inductor`` and that library; a fresh process loads it and runs it at
sizes the capture never saw, larger ones included, on those kernels, with no trace and no C
compile (the loader has no C compiler and an empty inductor cache). A dynamic graph whose
symbolic lowering declined stays an eager-runner replay. The library is checked as a static
graph's: a corrupt or missing one is refused before anything loads, and one that passes the
hashes but was built from another source is never opened as this graph's kernels."""

from __future__ import annotations

import json
import shutil
import textwrap

import pytest
import torch
from programs.dynamic import inductor_log
from test_precompile import _importable, _run
from torchferro.compiler import precompile

SYM_MODELS = '''
import torch


class NormMLP(torch.nn.Module):
    """An MLP with a BatchNorm (eval): parameters and buffers are graph inputs."""

    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(4, 8)
        self.bn = torch.nn.BatchNorm1d(8)
        self.fc2 = torch.nn.Linear(8, 2)

    def forward(self, x):
        return self.fc2(torch.relu(self.bn(self.fc1(x))))


def make(seed):
    torch.manual_seed(seed)
    m = NormMLP().eval()
    with torch.no_grad():
        m.bn.running_mean.uniform_(-1, 1)
        m.bn.running_var.uniform_(0.5, 2)
    return m


def fwd(model, x):
    return model(x)


def loss_fn(model, x, y):
    return torch.nn.functional.cross_entropy(model(x), y)


def gpt2(seed):
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(seed)
    cfg = GPT2Config(n_layer=2, n_head=2, n_embd=64, vocab_size=128, n_positions=32,
                     bos_token_id=0, eos_token_id=0)
    return GPT2LMHeadModel(cfg).eval()


def logits(model, ids):
    return model(ids, use_cache=False).logits


def scaled(x, n):
    return (x * n).sum(0) + x.shape[0]


def narrowed(x, n):
    return x[:n].relu() * 2
'''


def _sym_run(tmp_path, script: str, *, loader: bool = False) -> dict:
    (tmp_path / "sym_models.py").write_text(SYM_MODELS)
    return _run(tmp_path, script, loader=loader)


MLP_CAPTURE = """
import os
{env}
from sym_models import *
model = make(0)
with torch.no_grad(), precompile.capture(fwd, artifact_path="m.py", cache_path="m.cache") as cap:
    x = torch.randn(3, 4)
    torchferro.mark_dynamic(x, 0, min=2, max=64)
    cap(model, x)
print(json.dumps(precompile.counters()))
"""


LOADED_TAIL = """
out["kind"] = f.artifact.graph_0.kind
out["assignments"] = f.artifact.graph_0.assignments_run
out.update(precompile.counters())
print(json.dumps(out))
"""


def _load(tmp_path, body: str, *, kind: str = "symbolic") -> dict:
    """Runs ``body`` (which loads the artifact as ``f`` and fills the dict ``out``) in a fresh
    loading process; asserts it traced and compiled nothing and that the loaded graph runs as
    ``kind``; returns ``out`` with ``assignments`` (sizes run on kernels, on the eager runner)."""
    r = _sym_run(tmp_path, textwrap.dedent(body) + LOADED_TAIL, loader=True)
    assert r.pop("traces") == 0 and r.pop("c_compiles") == 0, r
    assert r.pop("kind") == kind, r
    return r


def _capture_mlp(tmp_path, env: str = "") -> dict:
    return _sym_run(tmp_path, MLP_CAPTURE.format(env=env))


MLP_REPLAY = """
import os
{env}
from sym_models import *
model = make(1)
f = precompile.load("m.py", "m.cache")
with torch.no_grad():
    out = {{"close": [torch.allclose(f(model, x), model(x), atol=1e-6)
                     for x in (torch.randn(n, 4) for n in (3, 9, 64))]}}
"""


def _assert_mlp_replays(tmp_path, env: str = "", extra: str = "") -> dict:
    """The captured MLP, loaded with ``env`` run first (and ``extra`` last), replays torch's
    calls (no kernels) and gives eager's values at sizes 3, 9 and 64, with no trace and no
    compile; returns the rest of what the loader reported."""
    r = _load(tmp_path, MLP_REPLAY.format(env=env) + extra, kind="eager")
    assert r.pop("close") == [True] * 3 and r.pop("assignments") == [0, 0], r
    return r


def test_mlp_runs_the_symbolic_library_at_new_sizes(tmp_path):
    c = _capture_mlp(tmp_path)
    assert c == {"traces": 1, "c_compiles": 1}, c
    graph = json.loads((tmp_path / "m.cache" / "graphs" / "graph_0.json").read_text())
    assert graph["runner"] == "inductor" and graph["library"].startswith("kernels/")
    # The capture's size and the symbol's range, by symbol id.
    assert graph["symbolic"] == [[3], [[2, 64]]], graph["symbolic"]
    assert "# entry 0/0: inductor (symbolic sizes), " in (tmp_path / "m.py").read_text()
    r = _load(
        tmp_path,
        """
        from sym_models import *
        model = make(1)  # other weights than the capture's
        f = precompile.load("m.py", "m.cache")
        out = {"close": {}, "errors": {}}
        with torch.no_grad():
            for n in [3, 2, 7, 64, 40, 65, 1]:
                x = torch.randn(n, 4)
                try:
                    out["close"][n] = torch.allclose(f(model, x), model(x), atol=1e-6)
                except precompile.GuardError as e:
                    out["errors"][n] = str(e)
        """,
    )
    assert r["close"] == {"3": True, "2": True, "7": True, "64": True, "40": True}, r
    # Every size but the capture's ran the symbolic kernels, none the eager runner.
    assert r["assignments"] == [4, 0], r
    guard = "SHAPE_ENV 2 <= L['x'].size(0) <= 64 failed, got"
    assert guard + " 65" in r["errors"]["65"] and guard + " 1" in r["errors"]["1"], r


def test_declined_symbolic_lowering_stays_a_replay(tmp_path):
    """Kernels fitted over sizes (``TORCHFERRO_SYMBOLIC=0``, the path of a graph the symbolic
    lowering declines) exist for some sizes only: the graph is written for the eager runner,
    and the loaded artifact replays torch's calls at every size."""
    _capture_mlp(tmp_path, env='os.environ["TORCHFERRO_SYMBOLIC"] = "0"')
    graph = json.loads((tmp_path / "m.cache" / "graphs" / "graph_0.json").read_text())
    assert graph["runner"] == "eager" and graph["library"] is None, graph
    assert "symbolic" not in graph
    _assert_mlp_replays(tmp_path)


def test_attention_block_dynamic_true(tmp_path):
    """A GPT-2 block (causal attention, layer norms, MLP) captured with ``dynamic=True`` at one
    batch and sequence length, run at others, up to a sequence longer than any captured."""
    c = _sym_run(
        tmp_path,
        """
        from programs.dynamic import Block
        torch.manual_seed(0)
        block = Block().eval()
        with torch.no_grad(), precompile.capture(
            lambda block, x: block(x), artifact_path="b.py", cache_path="b.cache", dynamic=True
        ) as cap:
            cap(block, torch.randn(2, 5, 32))
        print(json.dumps(precompile.counters()))
        """,
    )
    assert c == {"traces": 1, "c_compiles": 1}, c
    r = _load(
        tmp_path,
        """
        from programs.dynamic import Block
        torch.manual_seed(1)
        block = Block().eval()
        f = precompile.load("b.py", "b.cache")
        out = {"err": [], "errors": []}
        with torch.no_grad():
            for b, t in [(2, 5), (3, 9), (2, 31), (4, 64), (2, 2)]:
                x = torch.randn(b, t, 32)
                out["err"].append((f(block, x) - block(x)).abs().max().item())
            for shape in [(2, 1, 32), (2, 5, 16)]:
                try:
                    f(block, torch.randn(*shape))
                except precompile.GuardError as e:
                    out["errors"].append(str(e))
        """,
    )
    assert max(r["err"]) < 1e-5, r
    assert r["assignments"] == [4, 0], r
    short, narrow = r["errors"]
    assert "SHAPE_ENV 2 <= L['x'].size(1) failed, got 1" in short, short
    # The width was replaced by the constant its layer norm needs.
    assert "L['x'].size(2)" in narrow and "16" in narrow, narrow


def test_gpt2_sequence_marked_dynamic(tmp_path):
    """The small GPT-2 with its sequence dimension marked dynamic (``min=2, max=24``): the
    trace keeps it symbolic (no relation pins it to the capture's length), and the loaded
    artifact runs the symbolic library at every length in range."""
    pytest.importorskip("transformers")
    c = _sym_run(
        tmp_path,
        """
        from sym_models import *
        model = gpt2(0)
        with torch.no_grad(), precompile.capture(
            logits, artifact_path="g.py", cache_path="g.cache"
        ) as cap:
            ids = torch.randint(0, 128, (2, 8))
            torchferro.mark_dynamic(ids, 1, min=2, max=24)
            cap(model, ids)
        print(json.dumps(precompile.counters()))
        """,
    )
    assert c == {"traces": 1, "c_compiles": 1}, c
    art = (tmp_path / "g.py").read_text()
    assert "SHAPE_ENV 2 <= L['ids'].size(1) <= 24" in art
    assert "size(1) == 8" not in art
    r = _load(
        tmp_path,
        """
        from sym_models import *
        model = gpt2(1)
        f = precompile.load("g.py", "g.cache")
        out = {"err": []}
        with torch.no_grad():
            for n in [8, 3, 24, 17, 2]:
                ids = torch.randint(0, 128, (2, n))
                out["err"].append((f(model, ids) - logits(model, ids)).abs().max().item())
            try:
                f(model, torch.randint(0, 128, (2, 25)))
            except precompile.GuardError as e:
                out["error"] = str(e)
        """,
    )
    assert r["assignments"] == [4, 0], r
    assert max(r["err"]) < 1e-5, r
    assert "SHAPE_ENV 2 <= L['ids'].size(1) <= 24 failed, got 25" in r["error"], r


def test_weights_are_read_per_call(tmp_path):
    """No stale answer after a load: parameters changed in place between calls, a buffer
    replaced by another tensor, ``load_state_dict`` after loading, a parameter replaced by a new
    ``Parameter``, each at a size the capture never saw and at one already run."""
    _capture_mlp(tmp_path)
    r = _load(
        tmp_path,
        """
        from sym_models import *
        model = make(1)
        f = precompile.load("m.py", "m.cache")
        out = {}
        def check(name):
            res = []
            for n in (5, 11):
                x = torch.randn(n, 4)
                res.append(torch.allclose(f(model, x), model(x), atol=1e-6))
            out[name] = res
        with torch.no_grad():
            check("loaded")
            model.fc1.weight.mul_(3)
            model.bn.running_var.add_(1)
            check("in place")
            model.bn.running_mean = torch.randn(8)
            check("buffer replaced")
            model.load_state_dict(make(2).state_dict())
            check("load_state_dict")
            model.fc2.weight = torch.nn.Parameter(torch.randn(2, 8))
            check("parameter replaced")
        out["kind"] = f.artifact.graph_0.kind
        """,
    )
    assert r["assignments"] == [2, 0], r
    for name in [
        "loaded",
        "in place",
        "buffer replaced",
        "load_state_dict",
        "parameter replaced",
    ]:
        assert r[name] == [True, True], (name, r)


def test_dynamic_training_graph_is_a_replay_with_eager_gradients(tmp_path):
    """A loss captured in grad mode with a dynamic batch: the capture records training graphs
    for the eager runner (the compiled backward is not precompiled), so the loaded graph is a
    replay through torch's autograd; its losses and gradients equal eager's at new batches."""
    _sym_run(
        tmp_path,
        """
        from sym_models import *
        model = make(0).train()
        x, y = torch.randn(6, 4), torch.randint(0, 2, (6,))
        torchferro.mark_dynamic(x, 0, min=2, max=32)
        torchferro.mark_dynamic(y, 0, min=2, max=32)
        with precompile.capture(loss_fn, artifact_path="l.py", cache_path="l.cache") as cap:
            cap(model, x, y).backward()
        print(json.dumps(precompile.counters()))
        """,
    )
    r = _load(
        tmp_path,
        """
        import copy
        from sym_models import *
        model = make(1).train()
        ref = copy.deepcopy(model)
        f = precompile.load("l.py", "l.cache")
        out = {"same": []}
        for n in (6, 9, 32):
            x, y = torch.randn(n, 4), torch.randint(0, 2, (n,))
            got, want = f(model, x, y), loss_fn(ref, x, y)
            got.backward()
            want.backward()
            same = torch.allclose(got, want, atol=1e-6) and all(
                torch.allclose(a.grad, b.grad, atol=1e-6)
                for a, b in zip(model.parameters(), ref.parameters()))
            same = same and torch.allclose(model.bn.running_mean, ref.bn.running_mean)
            out["same"].append(same)
        """,
        kind="eager",
    )
    assert r == {"same": [True] * 3, "assignments": [0, 0]}, r


# Integrity of the symbolic library: these load in this process.


@pytest.fixture(scope="module")
def symbolic_capture(tmp_path_factory):
    d = tmp_path_factory.mktemp("pc_sym")
    _capture_mlp(d)
    # A static graph's library, for a valid library of another source.
    _sym_run(
        d,
        """
        from sym_models import *
        with torch.no_grad(), precompile.capture(
            fwd, artifact_path="s.py", cache_path="s.cache"
        ) as cap:
            cap(make(0), torch.randn(3, 4))
        print(json.dumps(precompile.counters()))
        """,
    )
    return d


def _copy_capture(d, tmp_path):
    shutil.copy(d / "m.py", tmp_path / "m.py")
    shutil.copytree(d / "m.cache", tmp_path / "m.cache")
    (so,) = list((tmp_path / "m.cache" / "kernels").iterdir())
    return tmp_path / "m.py", tmp_path / "m.cache", so


def _load_in_process(captured, art, cache, sizes):
    """Loads the artifact in this process (the capture's models importable) and checks the
    MLP's eager values at ``sizes`` on other weights; returns the loaded artifact."""
    with _importable(captured):
        from sym_models import make

        f = precompile.load(art, cache)
        model = make(1)
        with torch.no_grad():
            for n in sizes:
                x = torch.randn(n, 4)
                assert torch.allclose(f(model, x), model(x), atol=1e-6)
    return f


def test_symbolic_library_corrupt_or_missing_is_refused(symbolic_capture, tmp_path):
    art, cache, so = _copy_capture(symbolic_capture, tmp_path)
    good = so.read_bytes()
    b = bytearray(good)
    b[len(b) // 2] ^= 0xFF
    so.write_bytes(bytes(b))
    with pytest.raises(precompile.CacheIntegrityError, match="does not match its hash"):
        precompile.load(art, cache)
    so.write_bytes(good[:1000])
    with pytest.raises(precompile.CacheIntegrityError, match="truncated or replaced"):
        precompile.load(art, cache)
    so.unlink()
    with pytest.raises(precompile.CacheIntegrityError, match="is missing kernels/"):
        precompile.load(art, cache)
    so.write_bytes(good)
    f = _load_in_process(symbolic_capture, art, cache, (4, 13))
    assert f.artifact.graph_0.kind == "symbolic"


def test_symbolic_library_of_another_source_is_never_opened(
    symbolic_capture, tmp_path, monkeypatch, caplog
):
    """Bytes that passed the manifest's hashes but hold another graph's valid library (a
    forged cache): the library's validation symbol is not the hash of the symbolic source the
    loader regenerated, so the graph is not rebuilt on it; it replays torch's calls (a
    symbolic graph's replay serves every size), and nothing is compiled instead."""
    import logging

    from torchferro._precompile import _cache

    art, cache, so = _copy_capture(symbolic_capture, tmp_path)
    (other,) = list((symbolic_capture / "s.cache" / "kernels").iterdir())
    real = _cache.verify
    member = f"kernels/{so.name}"

    def forged(*a, **k):
        manifest, data = real(*a, **k)
        data[member] = other.read_bytes()
        return manifest, data

    monkeypatch.setattr(_cache, "verify", forged)
    before = precompile.counters()["c_compiles"]
    with caplog.at_level(logging.INFO, logger="torchferro.inductor"):
        f = _load_in_process(symbolic_capture, art, cache, (3, 20))
    assert f.artifact.graph_0.kind == "eager"
    assert precompile.counters()["c_compiles"] == before
    log = "\n".join(inductor_log(caplog.records))
    assert "the library was not built from this graph's source" in log, log
    assert "the symbolic graph was not rebuilt on its kernels" in log, log


def test_symbolic_lowering_switched_off_in_the_loader_replays(tmp_path):
    """``TORCHFERRO_SYMBOLIC=0`` in the loading process (the live compile's switch): the
    graph cannot be rebuilt on its symbolic library there, so it replays, with eager's values
    and no compile, and the warning says why."""
    _capture_mlp(tmp_path)
    env = """
import logging
os.environ["TORCHFERRO_SYMBOLIC"] = "0"
warned = []
logging.getLogger("torchferro.inductor").addHandler(
    type("H", (logging.Handler,), {"emit": lambda self, r: warned.append(r.getMessage())})())
"""
    r = _assert_mlp_replays(tmp_path, env=env, extra='out["warned"] = warned')
    (w,) = r["warned"]
    assert "the symbolic lowering is off in this process" in w, w


def test_generated_steps_and_dynamic_programs_load_symbolic(tmp_path):
    """Differential over the dynamic inductor's programs: every step of
    ``test_dynamic_inductor_generated`` (as a function of an importable module) and the
    hand-written programs of ``test_dynamic_inductor`` are captured with ``dynamic=True`` at one
    size, loaded in a fresh process and run at sizes never captured (larger ones included):
    each runs its symbolic library (kind, sizes on kernels) and gives eager's values, with no
    trace and no C compile."""
    from test_dynamic_inductor_generated import RETURNS, STEPS

    src = ["import torch", "import torch.nn.functional as F", ""]
    for k, step in enumerate(STEPS):
        src += [f"def step_{k}(x, w):", f"    {step}", f"    {RETURNS[1]}", ""]
    (tmp_path / "sym_steps.py").write_text("\n".join(src))
    hand = ["pointwise", "broadcasting", "reductions", "rows", "views", "matmuls"]
    c = _sym_run(
        tmp_path,
        f"""
        import sym_steps, test_dynamic_inductor as tdi
        from test_dynamic_inductor import PROGRAMS
        torch.manual_seed(0)
        with torch.no_grad():
            for k in range({len(STEPS)}):
                with precompile.capture(getattr(sym_steps, f"step_{{k}}"),
                                        artifact_path=f"s{{k}}.py", cache_path=f"s{{k}}.cache",
                                        dynamic=True) as cap:
                    cap(torch.randn(6, 8), torch.randn(8))
            for name in {hand!r}:
                fn, make = PROGRAMS[name]
                with precompile.capture(fn, artifact_path=f"{{name}}.py",
                                        cache_path=f"{{name}}.cache", dynamic=True) as cap:
                    cap(*make(11))  # 11: no other input size equals it (duck sizing)
        print(json.dumps(precompile.counters()))
        """,
    )
    assert c["traces"] == len(STEPS) + len(hand), c
    r = _sym_run(
        tmp_path,
        f"""
        import sym_steps
        from test_dynamic_inductor import PROGRAMS, _same
        torch.manual_seed(1)
        out = {{}}
        def run(name, fn, inputs):
            f = precompile.load(f"{{name}}.py", f"{{name}}.cache")
            res = out[name] = {{"guard": []}}
            with torch.no_grad():
                for args in inputs:
                    try:
                        got = f(*args)
                    except precompile.GuardError as e:
                        res["guard"].append(str(e).splitlines()[-1])
                        continue
                    _same(got, fn(*args))
            g = f.artifact.graph_0
            res["kind"], res["sizes"] = g.kind, g.assignments_run
        for k in range({len(STEPS)}):
            run(f"s{{k}}", getattr(sym_steps, f"step_{{k}}"),
                [(torch.randn(n, m), torch.randn(m)) for n, m in [(6, 8), (3, 2), (17, 30), (64, 64)]])
        for name in {hand!r}:
            fn, make = PROGRAMS[name]
            run(name, fn, [make(n) for n in (11, 2, 13, 64)])
        out.update(precompile.counters())
        print(json.dumps(out))
        """,
        loader=True,
    )
    assert r.pop("traces") == 0 and r.pop("c_compiles") == 0, r
    # Every program ran its symbolic library at the three sizes it was not captured at.
    assert {n: (v["kind"], v["sizes"], v["guard"]) for n, v in r.items()} == {
        n: ("symbolic", [3, 0], []) for n in r
    }, r


def test_int_arguments_as_size_symbols(tmp_path):
    """``dynamic=True`` makes an int argument a symbol too (read from the argument, not from a
    tensor's shape): a multiplier, and a slice bound whose relation to the tensor's length the
    trace relied on; the loaded symbolic library runs other ints and lengths, and the relation
    is the guard named when it fails."""
    _sym_run(
        tmp_path,
        """
        from sym_models import *
        with torch.no_grad():
            for fn, args in [(scaled, (torch.randn(5, 3), 4)), (narrowed, (torch.randn(9, 3), 4))]:
                with precompile.capture(fn, artifact_path=f"{fn.__name__}.py",
                                        cache_path=f"{fn.__name__}.cache", dynamic=True) as cap:
                    cap(*args)
        print(json.dumps(precompile.counters()))
        """,
    )
    r = _sym_run(
        tmp_path,
        """
        from sym_models import *
        out = {}
        cases = {"scaled": [(7, 3), (5, 9), (20, 2)],
                 "narrowed": [(9, 4), (12, 7), (30, 29), (6, 2), (6, 7), (6, 1)]}
        with torch.no_grad():
            for fn in (scaled, narrowed):
                f = precompile.load(f"{fn.__name__}.py", f"{fn.__name__}.cache")
                res = out[fn.__name__] = {"close": [], "guard": []}
                for rows, n in cases[fn.__name__]:
                    x = torch.randn(rows, 3)
                    try:
                        res["close"].append(torch.allclose(f(x, n), fn(x, n)))
                    except precompile.GuardError as e:
                        res["guard"].append(str(e).splitlines()[-1])
                g = f.artifact.graph_0
                res["kind"], res["sizes"] = g.kind, g.assignments_run
        out.update(precompile.counters())
        print(json.dumps(out))
        """,
        loader=True,
    )
    assert r["traces"] == 0 and r["c_compiles"] == 0, r
    s, n = r["scaled"], r["narrowed"]
    assert s == {
        "close": [True] * 3,
        "guard": [],
        "kind": "symbolic",
        "sizes": [3, 0],
    }, s
    assert (
        n["close"] == [True] * 4 and n["kind"] == "symbolic" and n["sizes"] == [3, 0]
    ), n
    too_long, too_small = n["guard"]
    assert "SHAPE_ENV L['n'] <= L['x'].size(0) failed" in too_long, too_long
    assert "SHAPE_ENV 2 <= L['n'] failed, got 1" in too_small, too_small
