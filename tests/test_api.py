"""The public API has no silent no-ops (issue 13): what torch.compile rejects, torchferro rejects
with the same exception type; settings torchferro knows but does not implement are named in a
warning, once; the compiled-module wrapper behaves as torch's ``OptimizedModule`` (hooks,
``state_dict`` keys, ``training``, ``pickle``/``torch.save``/``copy.deepcopy``); compiling a class
compiles calls of its instances; ``torch.compiler.disable`` and ``is_compiling`` are honoured.

torch.compile is the oracle: each rejection is checked against what it raises."""

from __future__ import annotations

import copy
import io
import os
import pickle
import subprocess
import sys
import warnings

import pytest
import torch
import torchferro


class Counter:
    """A Python backend that counts the graphs it compiles and runs them as they are."""

    def __init__(self):
        self.n = 0

    def __call__(self, gm, example_inputs):
        self.n += 1
        return gm.forward


def add_one(x):
    return x + 1


@pytest.fixture(autouse=True)
def _fresh():
    torchferro.compiler.reset()
    torchferro._warned.clear()
    yield
    torchferro.compiler.reset()


def _torch_error(**kwargs):
    """What torch.compile raises for these settings (type and message), or None."""
    try:
        torch.compile(add_one, **kwargs)
    except Exception as e:  # noqa: BLE001 - the oracle's exception, whatever it is
        return type(e), str(e)
    return None


def _raises_as_torch(**kwargs):
    """torchferro.compile's exception for these settings, and torch.compile's (type, message)."""
    want = _torch_error(**kwargs)
    assert want is not None, kwargs
    with pytest.raises(Exception) as got:
        torchferro.compile(add_one, **kwargs)
    return got.value, want


# --- mode ------------------------------------------------------------------------------------


def test_unknown_mode_raises_as_torch():
    err, (wtype, wmsg) = _raises_as_torch(mode="fastest")
    assert type(err) is wtype is RuntimeError
    assert str(err) == wmsg


@pytest.mark.parametrize(
    "mode", ["reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs", "lite"]
)
def test_known_mode_warns_once_naming_it(mode):
    assert _torch_error(mode=mode) is None
    with pytest.warns(UserWarning, match=f"ignores mode='{mode}'"):
        f = torchferro.compile(add_one, mode=mode)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g = torchferro.compile(add_one, mode=mode)
    x = torch.randn(3)
    torch.testing.assert_close(f(x), x + 1)
    torch.testing.assert_close(g(x), x + 1)


def test_default_mode_is_silent():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f = torchferro.compile(add_one, mode="default")
        x = torch.randn(3)
        torch.testing.assert_close(f(x), x + 1)


def test_mode_and_options_together_raise_as_torch():
    err, (wtype, wmsg) = _raises_as_torch(mode="default", options={})
    assert type(err) is wtype is RuntimeError
    assert str(err) == wmsg


def test_mode_with_another_backend_warns_that_it_is_ignored():
    # torch.compile logs "eager backend ignoring extra kwargs"; it does not raise.
    assert _torch_error(mode="fastest", backend="eager") is None
    with pytest.warns(UserWarning, match="backend 'eager' ignores mode='fastest'"):
        f = torchferro.compile(add_one, mode="fastest", backend="eager")
    x = torch.randn(3)
    torch.testing.assert_close(f(x), x + 1)


# --- options ---------------------------------------------------------------------------------


def test_unknown_option_raises_as_torch():
    err, (wtype, wmsg) = _raises_as_torch(options={"no_such_option": 1})
    assert type(err) is wtype is RuntimeError
    assert str(err) == wmsg


def test_options_not_a_dict_raise_as_torch():
    err, (wtype, _) = _raises_as_torch(options=[("max_autotune", True)])
    assert type(err) is wtype is AttributeError


def test_known_option_warns_once_naming_it():
    assert _torch_error(options={"max_autotune": True}) is None
    with pytest.warns(
        UserWarning, match="ignores the inductor option\\(s\\) max_autotune"
    ):
        f = torchferro.compile(add_one, options={"max_autotune": True})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        torchferro.compile(add_one, options={"max_autotune": True})
    x = torch.randn(3)
    torch.testing.assert_close(f(x), x + 1)


# --- dynamic ---------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["yes", 1, 0.0])
def test_dynamic_other_than_a_bool_raises_as_torch(value):
    err, (wtype, _) = _raises_as_torch(dynamic=value)
    assert type(err) is wtype is AssertionError


def test_dynamic_settings_are_accepted_without_a_warning():
    # dynamic=True is implemented (tests/test_dynamic_shapes.py): no warning any more.
    assert _torch_error(dynamic=True) is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        torchferro.compile(add_one, dynamic=True)
        torchferro.compile(add_one, dynamic=False)
        torchferro.compile(add_one, dynamic=None)


# --- backend ---------------------------------------------------------------------------------


def test_unknown_backend_raises_as_torch():
    err, (wtype, wmsg) = _raises_as_torch(backend="no_such_backend")
    assert isinstance(err, RuntimeError) and issubclass(wtype, RuntimeError)
    assert type(err).__name__ == wtype.__name__ == "InvalidBackend"
    assert str(err) == wmsg.replace(
        "torch._dynamo.list_backends()", "torchferro.list_backends()"
    )


def test_a_torch_backend_torchferro_lacks_is_refused_with_a_way_out():
    assert _torch_error(backend="cudagraphs") is None
    with pytest.raises(
        RuntimeError, match=r"torch._dynamo.lookup_backend\('cudagraphs'\)"
    ):
        torchferro.compile(add_one, backend="cudagraphs")


# --- compiled-module wrapper -----------------------------------------------------------------


class Net(torch.nn.Module):
    def __init__(self, n=4):
        super().__init__()
        self.fc = torch.nn.Linear(n, n)
        self.register_buffer("scale", torch.full((n,), 2.0))

    def forward(self, x):
        return self.fc(x).relu() * self.scale


def test_state_dict_keys_as_torch():
    m = Net()
    ours = torchferro.compile(m, backend="eager")
    theirs = torch.compile(m, backend="eager")
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert next(iter(ours.state_dict())).startswith("_orig_mod.")


def test_hooks_on_the_wrapper_run():
    m = Net()
    counter = Counter()
    cm = torchferro.compile(m, backend=counter)
    seen = []
    cm.register_forward_pre_hook(lambda mod, args: seen.append("pre"))
    h = cm.register_forward_hook(lambda mod, args, out: out + 100)
    x = torch.randn(2, 4)
    want = m(x) + 100
    torch.testing.assert_close(cm(x), want)
    assert seen == ["pre"]
    assert counter.n == 1
    h.remove()
    torch.testing.assert_close(cm(x), m(x))
    assert seen == ["pre", "pre"]


def test_training_is_the_original_modules():
    m = Net()
    cm = torchferro.compile(m, backend="eager")
    m.eval()
    assert cm.training is False
    cm.train()
    assert m.training is True
    cm.eval()
    assert m.training is False and m.fc.training is False


def test_deepcopy_gives_an_independent_compiled_module():
    m = Net()
    counter = Counter()
    cm = torchferro.compile(m, backend=counter)
    x = torch.randn(2, 4)
    cm(x)
    c2 = copy.deepcopy(cm)
    assert isinstance(c2, torchferro.OptimizedModule)
    assert c2._orig_mod is not m
    with torch.no_grad():
        c2._orig_mod.fc.weight.add_(1.0)
    torch.testing.assert_close(c2(x), c2._orig_mod(x))
    torch.testing.assert_close(cm(x), m(x))
    assert not torch.allclose(cm(x), c2(x))


def test_pickle_and_torch_save_round_trip():
    m = Net()
    cm = torchferro.compile(m, mode="default")
    x = torch.randn(2, 4)
    want = cm(x)
    for restored in (
        pickle.loads(pickle.dumps(cm)),
        _torch_save_load(cm),
    ):
        assert isinstance(restored, torchferro.OptimizedModule)
        assert list(restored.state_dict()) == list(cm.state_dict())
        torch.testing.assert_close(restored(x), want)


def _torch_save_load(obj):
    buf = io.BytesIO()
    torch.save(obj, buf)
    buf.seek(0)
    return torch.load(buf, weights_only=False)


# --- compiling a class -----------------------------------------------------------------------


def test_compiling_a_module_class_compiles_its_instances_calls():
    class Local(torch.nn.Module):
        def __init__(self, n):
            super().__init__()
            self.fc = torch.nn.Linear(n, n)

        def forward(self, x):
            return self.fc(x).sigmoid()

    counter = Counter()
    C = torchferro.compile(Local, backend=counter)
    assert C is Local  # as torch.compile(cls) returns the class
    m = C(4)
    x = torch.randn(3, 4)
    out = m(x)
    assert counter.n == 1
    torch.testing.assert_close(out, torch.sigmoid(m.fc(x)))


def test_compiling_a_class_of_non_callable_instances_is_refused():
    class Plain:
        pass

    with pytest.raises(TypeError, match="not callable"):
        torchferro.compile(Plain)


# --- disable and is_compiling ----------------------------------------------------------------


def test_is_compiling_true_while_tracing_false_outside():
    seen = []

    def f(x):
        seen.append(torch.compiler.is_compiling())
        if torch.compiler.is_compiling():
            return x + 1
        return x - 1

    counter = Counter()
    x = torch.zeros(2)
    assert torch.equal(torchferro.compile(f, backend=counter)(x), x + 1)
    assert counter.n == 1
    assert seen == [True]  # folded while tracing; the graph has no Python side effect
    assert torch.compiler.is_compiling() is False
    assert torchferro.compiler.is_compiling() is False
    # torch.compile agrees.
    seen.clear()
    assert torch.equal(torch.compile(f, backend="eager")(x), x + 1)


def test_torch_compiler_disable_on_a_library_function_runs_it_eagerly():
    ran = []

    @torch.compiler.disable
    def lib(x):
        ran.append(torch.compiler.is_compiling())
        return x * 2

    @torch._dynamo.disable
    def lib2(x):
        ran.append(torch.compiler.is_compiling())
        return x - 3

    def f(x):
        return lib(x + 1) + lib2(x)

    x = torch.randn(3)
    out = torchferro.compile(f, backend="eager")(x)
    torch.testing.assert_close(out, (x + 1) * 2 + (x - 3))
    assert ran == [False, False]


def test_torch_compiler_disable_wrapped_function_passed_to_compile_runs_eagerly():
    calls = []

    @torch.compiler.disable
    def f(x):
        calls.append(torch.compiler.is_compiling())
        return x + 1

    counter = Counter()
    cf = torchferro.compile(f, backend=counter)
    x = torch.randn(2)
    torch.testing.assert_close(cf(x), x + 1)
    assert counter.n == 0 and calls == [False]


def test_torchferro_compiler_disable_runs_eagerly():
    calls = []

    @torchferro.compiler.disable
    def lib(x):
        calls.append(torch.compiler.is_compiling())
        return x * 3

    def f(x):
        return lib(x) + 1

    counter = Counter()
    x = torch.randn(2)
    torch.testing.assert_close(torchferro.compile(f, backend=counter)(x), x * 3 + 1)
    assert calls == [False]


def _run_script(script, timeout):
    """Runs ``script`` in a fresh Python with the test environment (output captured)."""
    return subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        check=False,
        text=True,
        env=_env(),
        timeout=timeout,
    )


FRESH_DISABLE_REGION = """
import sys, torch, torchferro
assert "torch._dynamo" not in sys.modules  # the lazy region imports it on its first call
graphs = []

def backend(gm, example_inputs):
    graphs.append(sorted(str(n.target) for n in gm.graph.nodes if n.op == "call_function"))
    return gm.forward

def lib(x):
    return torch.sin(x) * 2 + 1

lib = torch._disable_dynamo(lib)  # as torch's custom-op kernels and optimizers use it

def f(x):
    y = x + 1
    z = lib(y)
    return z - 1

x = torch.randn(4)
out = torchferro.compile(f, backend=backend)(x)
torch.testing.assert_close(out, torch.sin(x + 1) * 2)
print(len(graphs), "sin" in repr(graphs))
"""


def test_a_lazy_torch_disable_region_compiles_nothing_from_its_first_call(tmp_path):
    # In a fresh process torch builds the region's `torch._dynamo.disable` wrapper on the first
    # call (importing torch._dynamo there): the hook compiled `lib` (a third graph) and every
    # function torch._dynamo's import ran (recompile-limit warnings, "failed while compiling").
    script = tmp_path / "region.py"
    script.write_text(FRESH_DISABLE_REGION)
    r = _run_script(script, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["2", "False"], r.stdout
    assert "torchferro" not in r.stderr, r.stderr


# --- recompile-limit warning, cache dir ------------------------------------------------------


def test_recompile_limit_warning_prints_once(tmp_path):
    script = tmp_path / "limit.py"
    script.write_text(
        "import torch, torchferro\n"
        "torchferro.config.recompile_limit = 2\n"
        "def f(x):\n"
        "    return x + 1\n"
        "cf = torchferro.compile(f, backend='eager', dynamic=False)\n"
        "for n in range(1, 8):\n"
        "    cf(torch.randn(n))\n"
    )
    r = _run_script(script, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stderr.count("hit the recompile limit") == 1, r.stderr


def test_empty_cache_dir_is_unset(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    home = tmp_path / "home"
    script = tmp_path / "kernel.py"
    script.write_text(
        "import torch, torchferro\n"
        "def g(x):\n"
        "    return (x * 3).sin()\n"
        "torchferro.compile(g)(torch.randn(5))\n"
        "assert torchferro.compiler.cache_entries(g)[0]['runner'] == 'inductor'\n"
    )
    env = dict(_env(), TORCHFERRO_CACHE_DIR="", HOME=str(home))
    r = subprocess.run(
        [sys.executable, str(script)],
        cwd=work,
        capture_output=True,
        check=False,
        text=True,
        env=env,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    assert list(work.iterdir()) == []
    assert any((home / ".cache" / "torchferro").iterdir())


def _env():
    env = dict(os.environ)
    pkg = os.path.dirname(os.path.dirname(torchferro.__file__))
    env["PYTHONPATH"] = pkg + os.pathsep + env.get("PYTHONPATH", "")
    return env
