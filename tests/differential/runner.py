"""Modes, the registry of differential cases, and running a case in a child process (see the
package docstring)."""

from __future__ import annotations

import contextlib
import functools
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest
import torch
import torchferro
from conftest import CountingBackend
from programs.harness import Program, _call, _reset_state, check_results
from torchferro import _events

MODES = ("torch.compile", "torchferro", "torchferro-inductor")

# Known torchferro bugs, one per issue-13 item. A case marked with one of these is
# ``xfail(strict=True)``; the fixer's branch turns it into an XPASS failure.
BUG_TRAIN_STEP = (
    "issue 13 item 1: the optimizer step of a compiled training step runs once"
)
BUG_RNG = "issue 13 item 2: RNG state changes / random ops differ from eager's stream"
BUG_LOCALS = (
    "issue 13 item 3: locals()/vars()/frame introspection show internals or crash"
)
BUG_DICT_VIEWS = "issue 13 item 4: dict views taken before a mutation are not live"
BUG_STORAGE_SIZE = "issue 13 item 5: branch on x.untyped_storage().size()"
BUG_DATA_MUTATION = (
    "issue 13 item 6: a .data write of a weight is not seen by the inductor"
)
BUG_KERNEL = "issue 13 item 7: inductor kernel differs from eager"
BUG_INPLACE = "issue 13 item 7: clone-then-mutate / in-place temporaries corrupt memory"
BUG_CLONE = (
    "issue 13 item 7: a copy (clone, contiguous of a transposed input) is elided: the result "
    "shares the input's storage"
)
BUG_ALIASING = "issue 13 item 8 (aliasing): outputs/inputs alias differently from eager"
BUG_UNGUARDED = "issue 13 item 8 (unguarded state): global state read but not guarded"
BUG_RNG_COMPILE = "issue 13 item 8: random ops consume the global RNG while compiling"
BUG_MODES = "issue 13 item 8 (mode state): modes after an error / inference_mode"
BUG_LAYOUT = (
    "issue 13 item 8 (layouts and dtypes): non-strided layout or -0.0/NaN/rounding"
)
BUG_RAISES = "issue 13 item 9: a compiled call raises where eager does not"
TC_DIFFERS = "torch.compile (torch 2.11) itself differs from eager here"
BREADTH = "breadth issue: torchferro makes more graphs than torch.compile"


def strict_breadth(module_name: str) -> bool:
    """Whether the cases of ``module_name`` follow issue 14's rule: more graphs than
    torch.compile is a failure, unless the case names the gap with ``breadth=`` (a strict xfail).
    A cases module opts in with a module-level ``STRICT_BREADTH = True`` written above its cases;
    issue 13's files keep the non-strict breadth xfail."""
    mod = sys.modules.get(module_name)
    return bool(getattr(mod, "STRICT_BREADTH", False))


@dataclass
class Case:
    program: Program
    xfail: dict[str, str] = field(default_factory=dict)  # mode -> reason
    child: bool = (
        False  # run in a child process (the program may crash the interpreter)
    )
    # seed -> context manager around the call (a mode, a monkeypatch), in every mode
    around: Callable | None = None
    # Issue 14's rule holds for this case (see ``strict_breadth``).
    strict_breadth: bool = False
    # A known breadth gap of a strict case, named precisely: both torchferro modes are a strict
    # xfail while they make more graphs than torch.compile.
    breadth: str | None = None

    @property
    def name(self) -> str:
        return self.program.name


CASES: list[Case] = []


def _xfails(xfail, xfail_ferro, xfail_inductor, xfail_tc) -> dict[str, str]:
    out = {}
    if xfail:
        out.update({"torchferro": xfail, "torchferro-inductor": xfail})
    if xfail_ferro:
        out["torchferro"] = xfail_ferro
    if xfail_inductor:
        out["torchferro-inductor"] = xfail_inductor
    if xfail_tc:
        out["torch.compile"] = xfail_tc
    return out


def case(inputs, *, name=None, **options):
    """Registers a differential case: a function (or, with ``module=True``, a zero-argument
    module factory; use ``register`` for a lambda). ``options`` are ``register``'s: ``xfail``
    applies to both torchferro modes, ``xfail_ferro`` / ``xfail_inductor`` to one, ``xfail_tc``
    to torch.compile itself; ``breadth`` names why torchferro makes more graphs than
    torch.compile (strict files only)."""

    def deco(fn):
        register(name or fn.__name__, fn, inputs, **options)
        return fn

    return deco


def register(
    name,
    fn,
    inputs,
    *,
    module=False,
    state=(),
    prepare=None,
    raises=False,
    child=False,
    around=None,
    xfail=None,
    xfail_ferro=None,
    xfail_inductor=None,
    xfail_tc=None,
    breadth=None,
):
    assert all(c.name != name for c in CASES), f"duplicate case {name}"
    defined = fn
    while isinstance(
        defined, functools.partial
    ):  # a partial's own __module__ is functools
        defined = defined.func
    module_name = getattr(defined, "__module__", "") or ""
    topic = module_name.rsplit(".", 1)[-1]
    strict = strict_breadth(module_name)
    assert breadth is None or strict, f"{name}: breadth= is for STRICT_BREADTH files"
    p = Program(
        name,
        fn,
        inputs,
        graphs=-1,
        module=module,
        state=tuple(state),
        prepare=prepare,
        topic=topic,
        raises=raises,
    )
    from programs.harness import _INITIAL_STATE, _snapshot

    g = p.globals
    for n in p.state:
        _INITIAL_STATE[(p.name, n)] = _snapshot(g[n])
    CASES.append(
        Case(
            p,
            _xfails(xfail, xfail_ferro, xfail_inductor, xfail_tc),
            child,
            around,
            strict,
            breadth,
        )
    )


class EagerFrames:
    """Counts the frames torchferro ran eagerly because it could not trace them ("eager"
    events): 0 graphs from such a frame is no capture."""

    def __init__(self):
        self.count = 0

    def __call__(self, event):
        if event.get("kind") == "eager":
            self.count += 1


class InductorCounting:
    """Counts the graphs torchferro's built-in inductor backend (driven from Rust, not a Python
    callable) compiles: "compile" events with ops, as ``torchferro.explain`` counts them."""

    def __init__(self):
        self.count = 0

    def __call__(self, event):
        if event.get("kind") == "compile" and event.get("ops"):
            self.count += 1


def _restore_globals() -> None:
    """Undo what a buggy run may have left switched, so that one failure does not leak."""
    torch.set_grad_enabled(True)
    torch.set_default_dtype(torch.float32)
    torch.set_autocast_enabled("cpu", False)


def _wrapped(fn, around, seed):
    if around is None:
        return fn

    def call(*args, **kwargs):
        with around(seed):
            return fn(*args, **kwargs)

    return call


# Frames the last ``run_mode`` call's compiler ran eagerly because it could not trace them:
# torchferro's "eager" events; torch.compile's frames it gave up on (``counters["frames"]``:
# attempted minus converted, a frame skipped for a graph break inside a loop, say). 0 in eager
# mode.
LAST_EAGER_FRAMES = [0]


def run_mode(c: Case, mode: str):
    """Runs case ``c`` on input sets 0 and 1 in ``mode`` ("eager" or one of ``MODES``) with
    fresh state; returns the two runs and the number of graphs compiled (the frames torchferro
    ran eagerly are left in ``LAST_EAGER_FRAMES``)."""
    p = c.program
    torch._dynamo.reset()
    torchferro.compiler.reset()
    _reset_state(p)
    target = p.target()
    if mode == "eager":
        fn, backend = target, None
    elif mode == "torch.compile":
        backend = CountingBackend()
        fn = torch.compile(target, backend=backend)
    elif mode == "torchferro":
        backend = CountingBackend()
        fn = torchferro.compile(target, backend=backend)
    elif mode == "torchferro-inductor":
        backend = InductorCounting()
        fn = torchferro.compile(target, backend="inductor")
        _events.subscribe(backend)
    else:
        raise ValueError(mode)
    eager_frames = EagerFrames()
    if mode.startswith("torchferro"):
        _events.subscribe(eager_frames)
    frames = torch._dynamo.utils.counters["frames"]
    tc_skipped = frames["total"] - frames["ok"]
    try:
        runs = [_call(p, target, _wrapped(fn, c.around, s), s) for s in (0, 1)]
    finally:
        if isinstance(backend, InductorCounting):
            _events.unsubscribe(backend)
        if mode.startswith("torchferro"):
            _events.unsubscribe(eager_frames)
        LAST_EAGER_FRAMES[0] = eager_frames.count
        if mode == "torch.compile":
            LAST_EAGER_FRAMES[0] = frames["total"] - frames["ok"] - tc_skipped
        _reset_state(p)
        _restore_globals()
    count = backend.count if backend is not None else 0
    del fn, target
    torch._dynamo.reset()
    torchferro.compiler.reset()
    return runs, count


# torch.compile's graph count and frames it ran eagerly per case, filled by its own test (which
# runs first).
TC_GRAPHS: dict[str, tuple[int, int]] = {}

# What each (case, mode) run gave, for the terminal summary (``conftest.py``): the number of
# graphs, whether the values matched eager's, and the frames the compiler ran eagerly. Child
# runs are not recorded.
RESULTS: dict[tuple[str, str], tuple[int, bool, int]] = {}


def captured(tc: int, count: int, eager_frames: int, tc_eager_frames: int = 0) -> bool:
    """Whether torchferro's run captures what torch.compile's does: no more graphs, and where
    torch.compile made a graph, no more frames run eagerly than torch.compile ran (0 graphs from
    a frame torchferro could not trace is no capture; a frame torch.compile gives up on too, a
    3.11 comprehension whose loop breaks, is no loss). Where torch.compile made none, there is
    nothing to bound."""
    return tc == 0 or (count <= tc and eager_frames <= tc_eager_frames)


def differential(c: Case, mode: str) -> None:
    """The check of one case in one mode (see the package docstring)."""
    eager, _ = run_mode(c, "eager")
    actual, count = run_mode(c, mode)
    eager_frames = LAST_EAGER_FRAMES[0]
    if mode == "torch.compile":
        TC_GRAPHS[c.name] = (count, eager_frames)
    RESULTS[(c.name, mode)] = (count, False, eager_frames)
    check_results(c.program, eager, actual)
    RESULTS[(c.name, mode)] = (count, True, eager_frames)
    if mode != "torch.compile":
        if c.name not in TC_GRAPHS:
            TC_GRAPHS[c.name] = (run_mode(c, "torch.compile")[1], LAST_EAGER_FRAMES[0])
        tc, tc_eager = TC_GRAPHS[c.name]
        # torch.compile's count bounds ours only where its run matches eager: where it differs
        # (a `try` whose handler it skips), its fewer graphs are no reference.
        if "torch.compile" in c.xfail:
            return
        if c.strict_breadth:
            if captured(tc, count, eager_frames, tc_eager):
                return
            # Issue 14's rule: a failure, unless the case names the gap (a strict xfail).
            raise AssertionError(
                f"{BREADTH}: {count} graphs and {eager_frames} frames run eagerly, "
                f"torch.compile {tc} graphs and {tc_eager}"
                + (f" ({c.breadth})" if c.breadth else " (no breadth= reason)")
            )
        if count > tc:
            pytest.xfail(f"{BREADTH}: {count} graphs, torch.compile {tc}")


def summary_rows() -> list[tuple[str, int, int, int, int, int]]:
    """Per topic, then ``total``: (topic, programs run; programs torch.compile captures with
    eager's values in N >= 1 graphs, and those of them torchferro captures with eager's values
    in <= N graphs without running more frames eagerly than torch.compile (``captured``);
    programs torch.compile runs with eager's values in 0 graphs, and those of them torchferro
    runs with eager's values).
    Only cases whose torch.compile and torchferro runs were both recorded count."""
    rows: dict[str, list[int]] = {}
    for c in CASES:
        tc = RESULTS.get((c.name, "torch.compile"))
        tf = RESULTS.get((c.name, "torchferro"))
        if tc is None or tf is None:
            continue
        row = rows.setdefault(c.program.topic, [0, 0, 0, 0, 0])
        row[0] += 1
        if not tc[1] or "torch.compile" in c.xfail:
            continue
        if tc[0] > 0:
            row[1] += 1
            row[2] += tf[1] and captured(tc[0], tf[0], tf[2], tc[2])
        else:
            row[3] += 1
            row[4] += tf[1]
    out = [(t, *r) for t, r in sorted(rows.items())]
    if out:
        out.append(("total", *[sum(r[i] for r in out) for i in range(1, 6)]))
    return out


def short_programs() -> dict[str, list[tuple[str, int, int, int, int, bool]]]:
    """Per topic, the programs counted in ``summary_rows``'s "tc N>=1" column that torchferro
    does not capture: (name, torch.compile's graphs, torchferro's graphs, frames torchferro ran
    eagerly, frames torch.compile ran eagerly, whether torchferro's values matched eager's), so
    a run names the breadth gaps."""
    out: dict[str, list[tuple[str, int, int, int, int, bool]]] = {}
    for c in CASES:
        tc = RESULTS.get((c.name, "torch.compile"))
        tf = RESULTS.get((c.name, "torchferro"))
        if tc is None or tf is None or not tc[1] or "torch.compile" in c.xfail:
            continue
        if tc[0] > 0 and not (tf[1] and captured(tc[0], tf[0], tf[2], tc[2])):
            out.setdefault(c.program.topic, []).append(
                (c.name, tc[0], tf[0], tf[2], tc[2], tf[1])
            )
    return out


# ---------------------------------------------------------------------------------------------
# Child processes

TESTS_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Exit status of a child whose check ended in ``pytest.xfail`` (the breadth case).
XFAIL_EXIT = 3


def child_env() -> dict:
    env = dict(os.environ)
    path = [TESTS_DIR] + [p for p in sys.path if p]
    env["PYTHONPATH"] = os.pathsep.join(path)
    env.setdefault("PYTHONFAULTHANDLER", "1")
    return env


def run_child(args: list[str], timeout: float = 120, stdin: str | None = None):
    """Runs ``python args...`` in a fresh interpreter with the test directory on the path."""
    return subprocess.run(
        [sys.executable, *args],
        input=stdin,
        check=False,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=child_env(),
        cwd=TESTS_DIR,
    )


def differential_in_child(c: Case, mode: str) -> None:
    r = run_child(["-m", "differential.child", c.name, mode], timeout=240)
    if r.returncode == XFAIL_EXIT:
        pytest.xfail(r.stdout.strip().splitlines()[-1])
    assert r.returncode == 0, (
        f"child exited with {r.returncode}\n--- stdout\n{r.stdout[-4000:]}\n"
        f"--- stderr\n{r.stderr[-4000:]}"
    )


@contextlib.contextmanager
def nothing(seed):
    yield
