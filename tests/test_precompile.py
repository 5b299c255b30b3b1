"""torchferro.compiler.precompile: capture in one process, load in a fresh one.

Every capture and every load that must prove "no trace, no C compile" runs in its own
subprocess (`_run`); the loader runs with a fresh inductor cache directory and CC pointing at
nothing, so a compile could not even succeed. Values are compared with eager in the loading
process, with weights other than the capture's."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import textwrap

import pytest
import torch
from torchferro.compiler import precompile

MODELS = '''
import torch


class MLP(torch.nn.Module):
    def __init__(self, hidden=8):
        super().__init__()
        self.fc1 = torch.nn.Linear(4, hidden)
        self.fc2 = torch.nn.Linear(hidden, 2)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


class MLP3(torch.nn.Module):
    """Another structure: one more layer."""

    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(4, 8)
        self.mid = torch.nn.Linear(8, 8)
        self.fc2 = torch.nn.Linear(8, 2)

    def forward(self, x):
        return self.fc2(torch.relu(self.mid(torch.relu(self.fc1(x)))))


def mlp_pair(model, x):
    y = model(x)
    return {"out": y, "sum": y.sum(), "shape": tuple(y.shape)}


def with_break(model, x):
    y = model(x)
    print("between the graphs")
    return y * 2 + x.sum()


class BreakInside(torch.nn.Module):
    """A graph break inside forward: forward is its own frame, called natively by the
    breaking instruction of the captured function."""

    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(4, 8)

    def forward(self, x):
        y = self.fc1(x).relu()
        print("inside forward")
        return y.sum(1)


def calls_break_inside(model, x):
    return model(x) + 1


def dynamic_break(x):
    """A break between two graphs, both traced with symbolic sizes under dynamic=True."""
    y = x.relu() * 2
    print("mid")
    return y.sum(0) + x.shape[0]


SCALE = 3.0
W = torch.randn(4, 4)  # another value in every process: read at call time, never baked in


def uses_global_weight(model, x):
    """A graph input read from this module's globals."""
    return model(x @ W) * SCALE


def loop_with_break(model, x):
    """The resume function's stack-slot parameters repeat a name. (A `return` comes before the
    loop's back edge, so the frame resumes inside the loop rather than being given up; the
    statement after the `if` keeps it so under CPython 3.12, which lays a loop body's final
    `if ...: return` out after the back edge.)"""
    y = model(x)
    for w in [1.0, 2.0]:
        y = y * w
        print("step", w)
        if w == 2.0:
            return y + x.sum()
        y = y * 0.5
    return y


def try_with_break(model, x):
    """The code after the break is not compiled (it ran eagerly): it runs natively after
    loading, with this module's globals (SCALE, torch)."""
    try:
        y = model(x)
        print("in try")
    except RuntimeError:
        y = x
    return torch.relu(y) * SCALE


def resnet18(seed):
    import torchvision

    torch.manual_seed(seed)
    return torchvision.models.resnet18().eval()


def gpt2(seed):
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(seed)
    cfg = GPT2Config(n_layer=2, n_head=2, n_embd=64, vocab_size=128, n_positions=32,
                     bos_token_id=0, eos_token_id=0)
    return GPT2LMHeadModel(cfg).eval()
'''


def _run(tmp_path, script: str, *, loader: bool = False) -> dict:
    """Runs ``script`` in a fresh interpreter with the test models importable; returns the
    JSON object it prints last. A loader gets an empty inductor cache and no C compiler."""
    (tmp_path / "pc_models.py").write_text(MODELS)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), *sys.path])
    if loader:
        env["TORCHFERRO_CACHE_DIR"] = str(tmp_path / "empty_inductor_cache")
        env["CC"] = str(tmp_path / "no-such-compiler")
    else:
        env["TORCHFERRO_CACHE_DIR"] = str(tmp_path / "inductor_cache")
    prelude = (
        "import json, torch, torchferro\nfrom torchferro.compiler import precompile\n"
    )
    # A file, not `-c`: code without a source file is never compiled by torchferro.
    n = len(list(tmp_path.glob("script_*.py")))
    path = tmp_path / f"script_{n}.py"
    path.write_text(prelude + textwrap.dedent(script))
    p = subprocess.run(
        [sys.executable, str(path)],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert p.returncode == 0, p.stderr[-4000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


def _capture(
    tmp_path, model_expr: str, fn: str, x_expr: str, *, grad: bool = False, name="m"
):
    """Captures ``fn`` on ``model_expr``/``x_expr`` in a subprocess; saves x and the capture
    model's weights; returns the capture's counters."""
    ctx = "torch.enable_grad()" if grad else "torch.no_grad()"
    return _run(
        tmp_path,
        f"""
        import pc_models
        from pc_models import *
        model = {model_expr}
        x = {x_expr}
        with {ctx}, precompile.capture({fn}, artifact_path="{name}.py",
                                          cache_path="{name}.cache") as cap:
            y = cap(model, x)
        torch.save((model.state_dict(), x), "{name}_inputs.pt")
        print(json.dumps(precompile.counters()))
        """,
    )


LOAD_AND_COMPARE = """
import pc_models
from pc_models import *
_, x = torch.load("{name}_inputs.pt")
model = {model_expr}
f = precompile.load("{name}.py", "{name}.cache")
with {ctx}:
    got = f(model, x)
    want = ({fn})(model, x)
out = dict(precompile.counters())
def flat(v):
    if isinstance(v, dict):
        return [w for k in sorted(v) for w in flat(v[k])]
    if isinstance(v, (tuple, list)):
        return [w for i in v for w in flat(i)]
    return [v]
g, w = flat(got), flat(want)
out["same_structure"] = type(got) is type(want) and len(g) == len(w)
out["close"] = all(
    torch.allclose(a, b, rtol=1e-5, atol=1e-5) if isinstance(a, torch.Tensor) else a == b
    for a, b in zip(g, w)
)
out["max_diff"] = max(
    [float((a - b).abs().max()) for a, b in zip(g, w) if isinstance(a, torch.Tensor)] or [0.0]
)
sd, _ = torch.load("{name}_inputs.pt")
out["weights_differ"] = any(not torch.equal(v, model.state_dict()[k]) for k, v in sd.items()
                            if v.is_floating_point())
print(json.dumps(out))
"""


def _load_and_compare(tmp_path, model_expr, fn, *, grad=False, name="m"):
    ctx = "torch.enable_grad()" if grad else "torch.no_grad()"
    return _run(
        tmp_path,
        LOAD_AND_COMPARE.format(name=name, model_expr=model_expr, fn=fn, ctx=ctx),
        loader=True,
    )


def _assert_loaded_like_eager(r):
    assert r["traces"] == 0 and r["c_compiles"] == 0, r
    assert r["same_structure"], r
    assert r["close"], r
    assert r["weights_differ"], r


@pytest.mark.parametrize("grad", [False, True], ids=["no_grad", "grad"])
def test_mlp_new_weights_in_fresh_process(tmp_path, grad):
    fn = "lambda model, x: model(x)"
    c = _capture(
        tmp_path, "(torch.manual_seed(0), MLP())[1]", fn, "torch.randn(3, 4)", grad=grad
    )
    assert c["traces"] == 1, c
    r = _load_and_compare(tmp_path, "(torch.manual_seed(1), MLP())[1]", fn, grad=grad)
    _assert_loaded_like_eager(r)


def test_two_shapes_two_entries(tmp_path):
    r = _run(
        tmp_path,
        """
        from pc_models import *
        torch.manual_seed(0)
        model = MLP()
        # Static (dynamic=False): two sizes are two entries, a third size fails both.
        with torch.no_grad(), precompile.capture(
            lambda model, x: model(x), artifact_path="m.py", cache_path="m.cache",
            dynamic=False,
        ) as cap:
            cap(model, torch.randn(3, 4))
            cap(model, torch.randn(5, 4))
        print(json.dumps(precompile.counters()))
        """,
    )
    assert r["traces"] == 2
    r = _run(
        tmp_path,
        """
        from pc_models import *
        f = precompile.load("m.py", "m.cache")
        model = MLP()
        with torch.no_grad():
            ok = [torch.allclose(f(model, x), model(x), atol=1e-6)
                  for x in (torch.randn(3, 4), torch.randn(5, 4))]
            try:
                f(model, torch.randn(7, 4))
                err = None
            except precompile.GuardError as e:
                err = str(e)
        print(json.dumps({"ok": ok, "err": err, **precompile.counters()}))
        """,
        loader=True,
    )
    assert r["ok"] == [True, True] and r["traces"] == 0 and r["c_compiles"] == 0
    # Both entries' failures are named.
    assert r["err"].count("TENSOR_MATCH L['x']") == 2 and "size=(7, 4)" in r["err"], r[
        "err"
    ]


def test_structured_result(tmp_path):
    _capture(
        tmp_path, "(torch.manual_seed(0), MLP())[1]", "mlp_pair", "torch.randn(3, 4)"
    )
    r = _load_and_compare(tmp_path, "(torch.manual_seed(2), MLP())[1]", "mlp_pair")
    _assert_loaded_like_eager(r)


def test_guard_failures_name_the_guard_and_input(tmp_path):
    fn = "lambda model, x: model(x)"
    _capture(tmp_path, "MLP()", fn, "torch.randn(3, 4)")
    r = _run(
        tmp_path,
        """
        from pc_models import *
        f = precompile.load("m.py", "m.cache")
        out = {}
        with torch.no_grad():
            for name, model, x in [
                ("shape", MLP(), torch.randn(5, 4)),
                ("dtype", MLP(), torch.randn(3, 4, dtype=torch.float64)),
                ("structure", MLP3(), torch.randn(3, 4)),
                ("width", MLP(hidden=16), torch.randn(3, 4)),
            ]:
                try:
                    f(model, x)
                    out[name] = None
                except precompile.GuardError as e:
                    out[name] = str(e)
        # Captured in training mode; none of MLP's layers reads the flag, so eval() is no
        # guard failure (as torch.compile, which guards `training` only where it is read).
        model, x = MLP().eval(), torch.randn(3, 4)
        try:
            with torch.no_grad():
                out["training"] = torch.equal(f(model, x), model(x))
        except precompile.GuardError as e:
            out["training"] = str(e)
        try:
            f(MLP(), torch.randn(3, 4))  # grad mode on: captured under no_grad
        except precompile.GuardError as e:
            out["grad"] = str(e)
        try:
            with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
                f(MLP(), torch.randn(3, 4))
        except precompile.GuardError as e:
            out["autocast"] = str(e)
        out.update(precompile.counters())
        print(json.dumps(out))
        """,
        loader=True,
    )
    assert r["traces"] == 0 and r["c_compiles"] == 0
    assert "TENSOR_MATCH L['x']" in r["shape"] and "size=(5, 4)" in r["shape"], r[
        "shape"
    ]
    assert "TENSOR_MATCH L['x']" in r["dtype"] and "torch.float64" in r["dtype"], r[
        "dtype"
    ]
    assert "L['model']" in r["structure"] and "MLP3" in r["structure"], r["structure"]
    assert "L['model']._modules['fc2']._parameters['weight']" in r["width"], r["width"]
    assert "size=(2, 16)" in r["width"], r["width"]
    assert r["training"] is True, r["training"]
    assert "AUTOCAST off" in r["autocast"] and "autocast is on" in r["autocast"], r
    assert "GRAD_MODE" in r["grad"] and "grad mode is True" in r["grad"], r["grad"]


def test_recompile_opt_in(tmp_path):
    _capture(tmp_path, "MLP()", "mlp_pair", "torch.randn(3, 4)")
    r = _run(
        tmp_path,
        """
        from pc_models import *
        f = precompile.load("m.py", "m.cache", recompile=mlp_pair)
        model, x = MLP(), torch.randn(5, 4)
        with torch.no_grad():
            got = f(model, x)
            want = mlp_pair(model, x)
        print(json.dumps({"close": torch.allclose(got["out"], want["out"], atol=1e-6),
                          "shape": got["shape"], **precompile.counters()}))
        """,
        loader=True,
    )
    assert r["close"] and r["shape"] == [5, 2]
    assert r["traces"] == 1  # the fallback compiled the new shape


def test_resnet18(tmp_path):
    pytest.importorskip("torchvision")
    fn = "lambda model, x: model(x)"
    c = _capture(tmp_path, "resnet18(0)", fn, "torch.randn(2, 3, 64, 64)")
    assert c["traces"] == 1
    r = _load_and_compare(tmp_path, "resnet18(1)", fn)
    _assert_loaded_like_eager(r)


def test_gpt2_small(tmp_path):
    pytest.importorskip("transformers")
    # The whole ModelOutput: rebuilt by the artifact with its class, plus the side effects
    # transformers' forward leaves on module state.
    fn = "lambda model, ids: model(ids, use_cache=False)"
    c = _capture(tmp_path, "gpt2(0)", fn, "torch.randint(0, 128, (2, 8))")
    assert c["traces"] == 1
    r = _load_and_compare(tmp_path, "gpt2(1)", fn)
    _assert_loaded_like_eager(r)


@pytest.mark.parametrize(
    "model,fn,printed",
    [
        ("MLP", "with_break", "between the graphs"),
        ("BreakInside", "calls_break_inside", "inside forward"),
        ("MLP", "loop_with_break", "step 1.0\nstep 2.0"),
        ("MLP", "try_with_break", "in try"),
    ],
    ids=["break_in_function", "break_in_forward", "break_in_loop", "break_in_try"],
)
def test_graph_break(tmp_path, model, fn, printed):
    c = _capture(
        tmp_path, f"(torch.manual_seed(0), {model}())[1]", fn, "torch.randn(3, 4)"
    )
    assert c["traces"] >= 2, c  # the function and the code after its break
    r = _run(
        tmp_path,
        f"""
        import io, contextlib
        from pc_models import *
        _, x = torch.load("m_inputs.pt")
        torch.manual_seed(1)
        model = {model}()
        f = precompile.load("m.py", "m.cache")
        with torch.no_grad():
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf):
                got = f(model, x)
            printed = buf.getvalue()
            want = {fn}(model, x)
        print(json.dumps({{"close": torch.allclose(got, want, atol=1e-6), "printed": printed,
                          **precompile.counters()}}))
        """,
        loader=True,
    )
    assert r["traces"] == 0 and r["c_compiles"] == 0, r
    assert r["close"], r
    # The breaking instruction ran natively, once per call.
    assert r["printed"] == printed + "\n", r


def test_global_of_an_importable_module_is_read_and_guarded(tmp_path):
    """The captured function's own globals, its module being importable by name, are read (and
    guarded) through that module in the loading process, like any other module's."""
    _capture(
        tmp_path,
        "(torch.manual_seed(0), MLP())[1]",
        "uses_global_weight",
        "torch.randn(3, 4)",
    )
    art = (tmp_path / "m.py").read_text()
    assert "TENSOR_MATCH G['W']" in art and "_rt.module_global(pc_models_" in art
    r = _run(
        tmp_path,
        """
        import pc_models
        from pc_models import *
        torch.manual_seed(1)
        model, x = MLP(), torch.randn(3, 4)
        f = precompile.load("m.py", "m.cache")
        with torch.no_grad():
            close = torch.allclose(f(model, x), uses_global_weight(model, x), atol=1e-6)
            pc_models.W = torch.randn(4, 5)
            try:
                f(model, x)
                err = None
            except precompile.GuardError as e:
                err = str(e)
        print(json.dumps({"close": close, "err": err, **precompile.counters()}))
        """,
        loader=True,
    )
    assert r["traces"] == 0 and r["c_compiles"] == 0, r
    assert r["close"], r
    assert "TENSOR_MATCH G['W']" in r["err"] and "size=(4, 5)" in r["err"], r


# Integrity: these load in this process, and every one must be refused before anything loads.


@pytest.fixture(scope="module")
def captured(tmp_path_factory):
    d = tmp_path_factory.mktemp("pc")
    _capture(d, "MLP()", "lambda model, x: model(x)", "torch.randn(3, 4)")
    _capture(
        d,
        "MLP(hidden=16)",
        "lambda model, x: model(x)",
        "torch.randn(3, 4)",
        name="other",
    )
    return d


@contextlib.contextmanager
def _importable(captured):
    """The capture's directory on ``sys.path`` for the block; yields its ``pc_models``."""
    sys.path.insert(0, str(captured))
    try:
        import pc_models

        yield pc_models
    finally:
        sys.path.remove(str(captured))


def _assert_mlp_matches(f, pc_models):
    """The loaded artifact ``f`` gives the MLP's eager result on a fresh input."""
    model, x = pc_models.MLP(), torch.randn(3, 4)
    with torch.no_grad():
        assert torch.allclose(f(model, x), model(x), atol=1e-6)


def _copy(captured, tmp_path, name="m"):
    import shutil

    shutil.copy(captured / f"{name}.py", tmp_path / f"{name}.py")
    shutil.copytree(captured / f"{name}.cache", tmp_path / f"{name}.cache")
    return tmp_path / f"{name}.py", tmp_path / f"{name}.cache"


def _kernel(cache):
    (so,) = list((cache / "kernels").iterdir())
    return so


def test_loads_intact_copy(captured, tmp_path):
    art, cache = _copy(captured, tmp_path)
    with _importable(captured) as pc_models:
        f = precompile.load(art, cache)
        _assert_mlp_matches(f, pc_models)


def test_load_executes_the_marshalled_artifact(captured, tmp_path, monkeypatch):
    """Compiling the artifact's source is most of a load; the capture's code object (hashed in
    the manifest) is executed instead, and its functions are the artifact's."""
    import builtins

    art, cache = _copy(captured, tmp_path)
    sources = []
    real = builtins.compile
    with _importable(captured) as pc_models:
        monkeypatch.setattr(
            builtins,
            "compile",
            lambda src, *a, **k: sources.append(a) or real(src, *a, **k),
        )
        f = precompile.load(art, cache)
        _assert_mlp_matches(f, pc_models)
    # Only the artifact's own source counts: without .pyc files (PYTHONDONTWRITEBYTECODE, as in
    # scripts/gpu_suite.sh) importing any module compiles its source.
    assert [a for a in sources if a and os.path.basename(str(a[0])) == art.name] == []
    assert f.artifact.call.__code__.co_filename.endswith("m.py")


@pytest.mark.parametrize("member", ["kernel", "graph", "artifact code"])
def test_corrupted_member_refused(captured, tmp_path, member):
    art, cache = _copy(captured, tmp_path)
    p = {
        "kernel": _kernel(cache),
        "graph": cache / "graphs" / "graph_0.json",
        "artifact code": cache / "code" / "artifact.marshal",
    }[member]
    b = bytearray(p.read_bytes())
    b[len(b) // 2] ^= 0xFF
    p.write_bytes(bytes(b))
    with pytest.raises(precompile.CacheIntegrityError, match="does not match its hash"):
        precompile.load(art, cache)


def test_truncated_member_refused(captured, tmp_path):
    art, cache = _copy(captured, tmp_path)
    so = _kernel(cache)
    so.write_bytes(so.read_bytes()[:1000])
    with pytest.raises(precompile.CacheIntegrityError, match="truncated or replaced"):
        precompile.load(art, cache)


def test_kernel_swapped_after_verification_is_not_loaded(
    captured, tmp_path, monkeypatch
):
    """What is opened is what was hashed: a kernel library replaced on disk after the hash
    check (a concurrent writer, an attacker) changes nothing; the loader opens a sealed copy of
    the verified bytes, not the file by its path."""
    from torchferro._precompile import _cache

    art, cache = _copy(captured, tmp_path)
    _, other_cache = _copy(captured, tmp_path, "other")
    so, other_so = _kernel(cache), _kernel(other_cache)
    real = _cache.verify

    def verify_then_swap(*a, **k):
        out = real(*a, **k)
        so.write_bytes(other_so.read_bytes())  # another graph's valid library
        return out

    monkeypatch.setattr(_cache, "verify", verify_then_swap)
    with _importable(captured) as pc_models:
        f = precompile.load(art, cache)
        _assert_mlp_matches(f, pc_models)
    assert so.read_bytes() == other_so.read_bytes()  # the swap did happen


def test_missing_member_and_manifest_refused(captured, tmp_path):
    art, cache = _copy(captured, tmp_path)
    _kernel(cache).unlink()
    with pytest.raises(precompile.CacheIntegrityError, match="is missing kernels/"):
        precompile.load(art, cache)
    (cache / "manifest.json").unlink()
    with pytest.raises(precompile.CacheIntegrityError, match="no readable manifest"):
        precompile.load(art, cache)


@pytest.mark.parametrize(
    "key,value,words",
    [
        ("torch", "2.10.0", "torch '2.10.0'"),
        ("torchferro", "0.0.1 graph-format-1", "torchferro '0.0.1 graph-format-1'"),
        ("python", "3.12.1", "python '3.12.1'"),
        ("cpu_isa", "0" * 64, "CPU instruction set"),
        ("machine", "aarch64", "machine 'aarch64'"),
    ],
)
def test_other_environment_refused(captured, tmp_path, key, value, words):
    art, cache = _copy(captured, tmp_path)
    m = json.loads((cache / "manifest.json").read_text())
    m["environment"][key] = value
    (cache / "manifest.json").write_text(json.dumps(m))
    with pytest.raises(precompile.CacheMismatchError, match=words):
        precompile.load(art, cache)


def test_artifact_not_matching_cache_refused(captured, tmp_path):
    art, cache = _copy(captured, tmp_path)
    other_art, _ = _copy(captured, tmp_path, "other")
    with pytest.raises(precompile.ArtifactMismatchError, match="does not match"):
        precompile.load(other_art, cache)
    art.write_text(art.read_text().replace("_rt.Fail(", "_rt.Fail( "))
    with pytest.raises(precompile.ArtifactMismatchError, match="does not match"):
        precompile.load(art, cache)


# Capture-time refusals: clear errors, nothing written.


def test_capture_refuses_unsupported(tmp_path):
    r = _run(
        tmp_path,
        """
        from pc_models import *
        import os
        out = {}
        def attempt(name, fn, *args):
            try:
                with torch.no_grad(), precompile.capture(
                    fn, artifact_path=name + ".py", cache_path=name + ".cache"
                ) as cap:
                    cap(*args)
                out[name] = None
            except precompile.CaptureError as e:
                out[name] = str(e)
            out[name + "_written"] = os.path.exists(name + ".py")
        w = torch.randn(4, 4)
        attempt("global", lambda x: x @ w, torch.randn(3, 4))
        def make(v):
            return lambda x: x @ v
        attempt("closure", make(w), torch.randn(3, 4))
        attempt("defaults", lambda model, x=None: model(x), MLP(), torch.randn(3, 4))
        attempt("module", MLP(), torch.randn(3, 4))
        LIMIT = 0.5
        def main_try_with_break(model, x):
            try:
                y = model(x)
                print("in try")
            except RuntimeError:
                y = x
            return y.clamp(max=LIMIT)
        attempt("main_global", main_try_with_break, MLP(), torch.randn(3, 4))
        with precompile.capture(lambda x: x + 1, artifact_path="a.py", cache_path="a.cache") as c:
            try:
                with precompile.capture(lambda x: x, artifact_path="b.py", cache_path="b.cache"):
                    pass
            except precompile.CaptureError as e:
                out["nested"] = str(e)
            c(torch.ones(2))
        print(json.dumps(out))
        """,
    )
    assert "closes over v" in r["closure"] and not r["closure_written"]
    assert (
        "graph input G['w'] reads a global" in r["global"] and not r["global_written"]
    )
    assert "plain positional parameters" in r["defaults"] and not r["defaults_written"]
    assert "expects a Python function" in r["module"]
    # Native code after a break reads a global of a script run as __main__.
    assert (
        "uses the global 'LIMIT' natively (LOAD_GLOBAL)" in r["main_global"]
        and "'__main__' cannot be imported by name in another process"
        in r["main_global"]
        and not r["main_global_written"]
    ), r["main_global"]
    assert "already in progress" in r["nested"]
