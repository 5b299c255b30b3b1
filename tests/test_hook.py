"""The frame hook: errors, threads, reference leaks, skipped frames, API surface."""

import ctypes
import gc
import sys
import threading

import pytest
import torch

import torchferro


@pytest.fixture(autouse=True)
def _reset():
    torchferro.compiler.reset()
    yield
    torchferro.compiler.reset()


class Counter:
    def __init__(self):
        self.n = 0

    def __call__(self, gm, example_inputs):
        self.n += 1
        return gm.forward


def test_user_exception_propagates_unchanged():
    def f(x):
        y = x + 1
        raise ValueError(f"bad value {y.shape[0]}")

    compiled = torchferro.compile(f, backend="eager")
    with pytest.raises(ValueError, match="bad value 3") as info:
        compiled(torch.randn(3))
    # The traceback runs through the user's own frame.
    assert any(tb.name == "f" for tb in info.traceback)


def test_torch_error_is_the_eager_error():
    def f(x):
        return x.view(3, 7)

    compiled = torchferro.compile(f, backend="eager", fullgraph=True)
    with pytest.raises(RuntimeError) as eager_err:
        f(torch.randn(10))
    with pytest.raises(RuntimeError) as compiled_err:
        compiled(torch.randn(10))
    assert str(compiled_err.value) == str(eager_err.value)
    # And the function still compiles for valid inputs afterwards.
    x = torch.randn(21)
    torch.testing.assert_close(compiled(x), x.view(3, 7))


def test_exception_in_compiled_function_leaves_hook_usable():
    counter = Counter()

    def f(x):
        return x.sin()

    compiled = torchferro.compile(f, backend=counter)
    with pytest.raises(TypeError):
        compiled(torch.randn(2), 1)
    x = torch.randn(2)
    torch.testing.assert_close(compiled(x), x.sin())
    assert counter.n == 1


def test_two_threads_share_a_compiled_function():
    def f(x, y):
        return (x * y).sum(dim=-1) + x.mean()

    compiled = torchferro.compile(f, backend="eager")
    errors = []

    def worker(seed):
        g = torch.Generator().manual_seed(seed)
        try:
            for _ in range(300):
                x = torch.randn(4, 8, generator=g)
                y = torch.randn(4, 8, generator=g)
                torch.testing.assert_close(compiled(x, y), f(x, y))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(s,)) for s in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_no_reference_leak_over_100k_calls():
    def f(x, w):
        return torch.relu(x @ w + 1).sum(-1)

    compiled = torchferro.compile(f, backend="eager", fullgraph=True)
    x, w = torch.randn(2, 3), torch.randn(3, 4)
    for _ in range(1000):
        compiled(x, w)
    gc.collect()
    objects_before = len(gc.get_objects())
    refs_before = (sys.getrefcount(x), sys.getrefcount(w), sys.getrefcount(f))
    for _ in range(100_000):
        compiled(x, w)
    gc.collect()
    assert (sys.getrefcount(x), sys.getrefcount(w), sys.getrefcount(f)) == refs_before
    assert len(gc.get_objects()) - objects_before < 50


def test_compiled_calls_at_every_stack_depth_release_their_frames():
    """A cache hit answers for a frame without evaluating it; on 3.12 the hook then clears and
    pops the frame itself. Called at every depth of a recursion, some frames open a new chunk
    of the thread's frame stack; raising calls take the same path."""
    counter = Counter()

    def f(x, k):
        if k < 0:
            raise ValueError("negative")
        return x * 2 + k

    compiled = torchferro.compile(f, backend=counter)
    x = torch.randn(3)

    def descend(depth, out):
        out.append(compiled(x, 1))
        try:
            compiled(x, -1)
        except ValueError as e:
            out.append(str(e))
        if depth:
            descend(depth - 1, out)

    for _ in range(3):
        descend(200, [])
    gc.collect()
    before = sys.getrefcount(x)
    out = []
    descend(400, out)
    assert len(out) == 802
    for i in range(0, len(out), 2):
        torch.testing.assert_close(out[i], x * 2 + 1)
        assert out[i + 1] == "negative"
    del out
    gc.collect()
    assert sys.getrefcount(x) == before
    assert counter.n >= 1


def _rec(n):
    return 0 if n == 0 else 1 + _rec(n - 1)


def _eager_reach() -> int:
    """How deep `_rec` recurses eagerly when called from the caller's frame, found by trying.
    Normally the recursion limit less the frames already on the stack; less on 3.12 when another
    PEP 523 evaluator is installed (every call then costs C budget): torch.compile leaves its
    own installed after an internal error (torch 2.11), for the rest of the process."""
    lo, hi = 0, sys.getrecursionlimit()
    while lo < hi:
        mid = (lo + hi + 1) // 2
        try:
            _rec(mid)
            lo = mid
        except RecursionError:
            hi = mid - 1
    return lo


def _evaluator() -> int:
    """The interpreter's PEP 523 evaluator function, as an address."""
    api = ctypes.pythonapi
    api.PyInterpreterState_Get.restype = ctypes.c_void_p
    api._PyInterpreterState_GetEvalFrameFunc.restype = ctypes.c_void_p
    api._PyInterpreterState_GetEvalFrameFunc.argtypes = [ctypes.c_void_p]
    return api._PyInterpreterState_GetEvalFrameFunc(api.PyInterpreterState_Get())


def _recursion_inside_a_compiled_call_and_after(counter):
    def f(x, n):
        return x + _rec(n)

    # As deep as eager gets from here, less a margin (the compiled call's own frames).
    n = _eager_reach() - 40
    compiled = torchferro.compile(f, backend=counter)
    x = torch.randn(3)
    torch.testing.assert_close(compiled(x, n), x + n)
    before = counter.n
    g = torchferro.compile(lambda x: x.sin() * 2, backend=counter)
    torch.testing.assert_close(g(x), x.sin() * 2)
    assert counter.n == before + 1
    return n


def test_recursion_near_the_limit_inside_a_compiled_call_and_after():
    """A recursion as deep as eager allows, inside a compiled call (3.12 charges the C budget for
    every hooked call; the hook steps aside near its end), and compiling still works after."""
    counter = Counter()
    n = _recursion_inside_a_compiled_call_and_after(counter)
    if (
        _evaluator()
        == ctypes.cast(ctypes.pythonapi._PyEval_EvalFrameDefault, ctypes.c_void_p).value
    ):
        # Nothing else hooked: eager reaches the recursion limit, and so does the compiled call.
        assert n >= sys.getrecursionlimit() - 100


def test_recursion_under_another_pep523_evaluator():
    """With another PEP 523 evaluator installed below ours (Dynamo's, here in its run-only mode;
    torch.compile also leaves it installed after an internal error), every eager call costs C
    budget on 3.12 and eager stops short of the recursion limit: a compiled call reaches as deep
    as eager does there, and that evaluator is still the one installed afterwards."""
    from torch._C._dynamo import eval_frame

    old = eval_frame.set_eval_frame(False)
    try:
        theirs = _evaluator()
        _recursion_inside_a_compiled_call_and_after(Counter())
        assert _evaluator() == theirs
    finally:
        eval_frame.set_eval_frame(old)


def test_generators_are_not_compiled():
    counter = Counter()

    def gen(x):
        yield x + 1
        yield x + 2

    compiled = torchferro.compile(gen, backend=counter)
    x = torch.zeros(2)
    outs = list(compiled(x))
    torch.testing.assert_close(outs[0], x + 1)
    torch.testing.assert_close(outs[1], x + 2)
    assert counter.n == 0


def test_recursion_runs_correctly():
    counter = Counter()

    def fact(n):
        return 1 if n <= 1 else n * fact(n - 1)

    def f(x):
        return x * fact(5)

    compiled = torchferro.compile(f, backend=counter)
    x = torch.randn(3)
    torch.testing.assert_close(compiled(x), x * 120)


def test_unsupported_python_version(monkeypatch):
    monkeypatch.setattr(torchferro.sys, "version_info", (3, 10, 4, "final", 0))
    with pytest.raises(
        RuntimeError, match=r"^torchferro is not supported on Python 3\.10$"
    ):
        torchferro.compile(lambda x: x)


def test_decorator_forms():
    @torchferro.compile
    def a(x):
        return x + 1

    @torchferro.compile(backend="eager", fullgraph=True)
    def b(x):
        return x + 2

    def c(x):
        return x + 3

    x = torch.randn(2)
    torch.testing.assert_close(a(x), x + 1)
    torch.testing.assert_close(b(x), x + 2)
    torch.testing.assert_close(torchferro.compile(c)(x), x + 3)
    assert torchferro.compile(c, disable=True) is c
    assert a.__name__ == "a"


def test_compiled_method_binds_self():
    class M:
        scale = 3.0

        @torchferro.compile(backend="eager")
        def run(self, x):
            return x * self.scale

    x = torch.randn(2)
    torch.testing.assert_close(M().run(x), x * 3.0)


def test_module_wrapper():
    torch.manual_seed(0)
    m = torch.nn.Sequential(
        torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2)
    )
    counter = Counter()
    cm = torchferro.compile(m, backend=counter, fullgraph=True)
    assert isinstance(cm, torch.nn.Module)
    assert cm._orig_mod is m
    m.tag = 7
    assert cm.tag == 7
    x = torch.randn(3, 4)
    torch.testing.assert_close(cm(x), m(x))
    torch.testing.assert_close(cm(x + 1), m(x + 1))
    assert counter.n == 1


def test_list_backends():
    assert {"eager", "aot_eager", "inductor"} <= set(
        torchferro.compiler.list_backends()
    )
    # As torch.compile: torch._dynamo.exc.InvalidBackend, a RuntimeError.
    with pytest.raises(RuntimeError, match="Invalid backend: 'nope'"):
        torchferro.compile(lambda x: x, backend="nope")


def test_python_backend_gets_graph_module_and_real_inputs():
    seen = {}

    def backend(gm, example_inputs):
        seen["gm"] = gm
        seen["inputs"] = example_inputs
        return gm.forward

    def f(x, y):
        return torch.sin(x) + y.cos()

    x, y = torch.randn(3), torch.randn(3)
    out = torchferro.compile(f, backend=backend, fullgraph=True)(x, y)
    torch.testing.assert_close(out, f(x, y))
    assert isinstance(seen["gm"], torch.fx.GraphModule)
    assert [n.op for n in seen["gm"].graph.nodes] == [
        "placeholder",
        "placeholder",
        "call_function",
        "call_method",
        "call_function",
        "output",
    ]
    assert seen["inputs"][0] is x and seen["inputs"][1] is y


def test_reset_recompiles():
    counter = Counter()

    def f(x):
        return x - 1

    compiled = torchferro.compile(f, backend=counter)
    x = torch.randn(2)
    compiled(x)
    compiled(x)
    assert counter.n == 1
    torchferro.compiler.reset()
    compiled(x)
    assert counter.n == 2


def test_disable_runs_eagerly_without_compiling():
    counter = Counter()

    def inner(x):
        return x * 2

    disabled = torchferro.compiler.disable(inner)

    def outer(x):
        return disabled(x) + 1

    compiled = torchferro.compile(outer, backend=counter)
    x = torch.randn(2)
    torch.testing.assert_close(compiled(x), x * 2 + 1)
    # outer breaks its graph at the disabled call (which runs natively) and resumes after it:
    # one graph, for `+ 1` (as torch.compile); inner is never compiled.
    assert counter.n == 1
    assert torchferro._C.cache_entries(inner.__code__)[1] == []


def test_is_compiling_is_true_while_tracing():
    def f(x):
        if torchferro.compiler.is_compiling():
            return x + 1
        return x - 1

    x = torch.zeros(2)
    torch.testing.assert_close(
        torchferro.compile(f, backend="eager", fullgraph=True)(x), x + 1
    )
    torch.testing.assert_close(f(x), x - 1)


def _grad_regions(x, w):
    y = x @ w
    with torch.no_grad():
        z = y * 2
        with torch.enable_grad():
            q = x.sin()
    torch.set_grad_enabled(False)
    r = x + 1
    torch.set_grad_enabled(True)
    return y + 1, z, q, r


@pytest.mark.parametrize("backend", ["eager", "inductor", "python"])
def test_grad_mode_regions_are_part_of_the_graph(backend):
    counter = Counter()
    compiled = torchferro.compile(
        _grad_regions,
        backend=counter if backend == "python" else backend,
        fullgraph=True,
    )
    x = torch.randn(3, 4, requires_grad=True)
    w = torch.randn(4, 2)
    for _ in range(2):
        got, want = compiled(x, w), _grad_regions(x, w)
        for a, b in zip(got, want):
            assert a.requires_grad == b.requires_grad
            torch.testing.assert_close(a, b)
        assert torch.is_grad_enabled()
    if backend == "python":
        assert counter.n == 1
    (entry,) = torchferro.compiler.cache_entries(_grad_regions)
    # enter no_grad, enter enable_grad, leave it, leave no_grad, set False, set True
    assert entry["graph"].count("torch._C._set_grad_enabled") == 6
