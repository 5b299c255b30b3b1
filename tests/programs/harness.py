"""The harness of the program corpus: a registry of programs, their inputs, and one check that
runs a program eagerly and compiled on two input sets and compares everything a user can see.

A program is a function (or a factory of an ``nn.Module``, compiled as ``torchferro.compile(m)``)
plus a function that builds its inputs from an ``Inputs`` helper. ``check`` runs it eagerly and
then compiled (one compiled callable for both input sets, so the second call exercises the cache
and its guards) and asserts:

- results equal eager (values, container types, dict key order; ``assert_same`` for tensors);
- inputs after the call equal eager's (tensor mutations, list/dict/object mutations), and an
  output that is an input, or shares an input's storage, does so in both runs;
- Python side effects equal eager's: the named module globals (``state=``), the module's state
  (parameters, buffers, plain attributes, ``training``), stdout, and raised exceptions;
- the exact counts, over both input sets, of graphs the backend received (``graphs``), of
  compiled entries that end in a graph break (``breaks``: "Graph break in function ..." records
  of ``torchferro.graph_breaks``, resume functions included) and of frames that run eagerly
  (``eager``: "Graph break: running function ... eagerly" records);
- under ``fullgraph=True``, that the frame really has a compiled entry;
- the global RNG state after the call (the RNG is seeded before each call, so random ops must
  draw eager's stream and consume as much of it), the grad / inference / autocast modes and the
  default dtype after the call (an error must not leave a mode switched), the aliasing relation
  among inputs and outputs (``alias_graph``: which tensors are the same object, share a storage,
  or are views), and the sign of float zeros (``assert_close`` does not see ``-0.0``).

The counts are what torchferro does today. Where torch.compile (torch 2.11, same programs, a
counting backend) gets a different number of graphs, a ``# torch.compile: N graphs`` comment
above the program records it. A program torchferro gets wrong is marked ``xfail(strict=True)``
with one of the ``BUG_*`` reasons below.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import functools
import io
import logging
import math
import sys
import types
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pytest
import torch
import torchferro
from conftest import CountingBackend, assert_same
from torch import nn

# ---------------------------------------------------------------------------------------------
# Known torchferro bugs: a program that gets a wrong answer (or crashes) is marked
# ``xfail(strict=True)`` with a reason naming the bug; the test starts failing when the bug is
# fixed, so the mark can go. (None is open in this corpus now.)


class Inputs:
    """Seeded input builders: seed 0 and seed 1 give tensors of the same metadata and new values,
    and eager and compiled runs get equal but distinct objects."""

    def __init__(self, seed: int):
        self.seed = seed
        self.g = torch.Generator().manual_seed(seed)
        torch.manual_seed(1000 + seed)  # modules built as inputs

    def randn(self, *shape, dtype=torch.float32, requires_grad=False):
        t = torch.randn(*shape, generator=self.g, dtype=dtype)
        return t.requires_grad_(requires_grad)

    def randint(self, low, high, *shape):
        return torch.randint(low, high, shape, generator=self.g, dtype=torch.int64)

    def bool(self, *shape):
        return torch.rand(*shape, generator=self.g) > 0.5

    def pick(self, first, second):
        """``first`` for input set 0, ``second`` for input set 1."""
        return first if self.seed == 0 else second


class Call:
    """Positional and keyword arguments, for programs called with keywords."""

    def __init__(self, *args, **kwargs):
        self.args = args
        self.kwargs = kwargs


@dataclass
class Program:
    name: str
    fn: Callable  # the function, or a zero-argument module factory when module=True
    inputs: Callable  # Inputs -> tuple of args, or Call
    graphs: int  # backend calls over both input sets
    breaks: int = 0  # "Graph break in function" records over both input sets
    eager: int = 0  # frames that ran fully eagerly
    fullgraph: bool = False
    module: bool = False
    state: tuple = ()  # names of module globals the program mutates
    prepare: Callable | None = None  # (target, seed) -> None, before each call
    xfail: str | None = None
    topic: str = ""
    # Whether eager raises on some input set (otherwise an eager error is a bug of the program).
    raises: bool = False
    # (graphs, breaks, eager) under CPython 3.12 where its bytecode makes them differ (torch.compile
    # counts differently there too: a `return` inside a loop is laid out after the back edge).
    py312: tuple | None = None

    def counts(self) -> tuple:
        """The pinned (graphs, breaks, eager frames) for this interpreter."""
        if self.py312 is not None and sys.version_info >= (3, 12):
            return self.py312
        return (self.graphs, self.breaks, self.eager)

    def make(self, seed: int):
        r = self.inputs(Inputs(seed))
        if isinstance(r, Call):
            return list(r.args), dict(r.kwargs)
        return list(r), {}

    def target(self):
        if not self.module:
            return self.fn
        torch.manual_seed(0)
        return self.fn()

    @property
    def globals(self) -> dict:
        fn = self.fn
        while isinstance(fn, type) or not hasattr(fn, "__globals__"):
            if isinstance(fn, functools.partial):
                fn = fn.func
            else:
                fn = fn.forward if isinstance(fn, type) else fn.__call__
        return fn.__globals__


PROGRAMS: list[Program] = []
_INITIAL_STATE: dict[str, object] = {}


def program(inputs, graphs, breaks=0, *, name=None, **options):
    """Registers a function as a program. ``fullgraph=True`` asserts that it compiles to one
    graph per guard set with no break. ``options``: ``Program``'s ``eager``, ``fullgraph``,
    ``state``, ``prepare``, ``xfail``, ``raises``."""

    def deco(fn):
        _add(
            name or fn.__name__,
            fn,
            fn.__module__,
            inputs,
            graphs,
            breaks,
            False,
            **options,
        )
        return fn

    return deco


def module_program(name, factory, inputs, graphs, breaks=0, **options):
    """Registers an ``nn.Module`` program: ``factory()`` builds the module (seeded); the module
    itself is compiled, as ``torch.compile(model)``. ``options`` as for ``program``."""
    module = getattr(factory, "__module__", "") or ""
    _add(name, factory, module, inputs, graphs, breaks, True, **options)


def _add(name, fn, module_name, inputs, graphs, breaks, module, *, state=(), **options):
    """One program, its topic the last part of the module that defines it."""
    _register(
        Program(
            name,
            fn,
            inputs,
            graphs,
            breaks,
            module=module,
            state=tuple(state),
            topic=module_name.rsplit(".", 1)[-1],
            **options,
        )
    )


def _register(p: Program) -> None:
    assert all(q.name != p.name for q in PROGRAMS), f"duplicate program {p.name}"
    if p.fullgraph:
        assert p.breaks == 0 and p.eager == 0, p.name
    g = p.globals
    for n in p.state:
        _INITIAL_STATE[(p.name, n)] = _snapshot(g[n])
    PROGRAMS.append(p)


def params(programs):
    return [
        pytest.param(
            p,
            id=p.name,
            marks=[pytest.mark.xfail(strict=True, reason=p.xfail)] if p.xfail else [],
        )
        for p in programs
    ]


# ---------------------------------------------------------------------------------------------
# Observing a run


class BreakCounter(logging.Handler):
    """Counts the graph-break and eager-fallback records of ``torchferro.graph_breaks``."""

    def __init__(self):
        super().__init__(logging.INFO)
        self.breaks: list[str] = []
        self.eager: list[str] = []

    def emit(self, record):
        msg = record.getMessage()
        if msg.startswith("Graph break: running function"):
            self.eager.append(msg)
        elif msg.startswith("Graph break in function"):
            self.breaks.append(msg)


@contextlib.contextmanager
def count_breaks():
    logger = logging.getLogger("torchferro.graph_breaks")
    counter = BreakCounter()
    level = logger.level
    logger.setLevel(logging.INFO)
    logger.addHandler(counter)
    try:
        yield counter
    finally:
        logger.removeHandler(counter)
        logger.setLevel(level)


def _snapshot(v):
    if isinstance(v, torch.Tensor):
        return v.detach().clone()
    try:
        return copy.deepcopy(v)
    except Exception:  # noqa: BLE001  (not copyable: compare the object itself)
        return v


def _reset_state(p: Program) -> None:
    g = p.globals
    for n in p.state:
        v = _INITIAL_STATE[(p.name, n)]
        cur = g[n]
        if isinstance(cur, torch.Tensor):
            with torch.no_grad():
                cur.copy_(v)
        elif isinstance(cur, list):
            cur[:] = copy.deepcopy(v)
        elif isinstance(cur, dict):
            cur.clear()
            cur.update(copy.deepcopy(v))
        elif hasattr(cur, "__dict__") and not isinstance(cur, type):
            cur.__dict__.clear()
            cur.__dict__.update(copy.deepcopy(v.__dict__))
        else:
            g[n] = copy.deepcopy(v)


@dataclass
class Run:
    out: object = None
    exc: tuple | None = None
    args: list = field(default_factory=list)
    kwargs: dict = field(default_factory=dict)
    stdout: str = ""
    state: dict = field(default_factory=dict)
    aliases: list = field(default_factory=list)
    alias_graph: tuple = ()
    rng: torch.Tensor | None = None
    modes: tuple = ()


def _storages(v, acc, _inside=None):
    if isinstance(v, torch.Tensor):
        acc.append(v)
        return acc
    # A container holding itself (`l.append(l)`) is walked once.
    inside = set() if _inside is None else _inside
    if id(v) in inside:
        return acc
    if isinstance(v, (list, tuple)):
        inside.add(id(v))
        for x in v:
            _storages(x, acc, inside)
        inside.discard(id(v))
    elif isinstance(v, dict):
        inside.add(id(v))
        for x in v.values():
            _storages(x, acc, inside)
        inside.discard(id(v))
    return acc


def _data_ptr(t):
    """The storage address of a strided tensor; None for meta and non-strided layouts (sparse
    tensors have no single storage)."""
    if t.layout != torch.strided or t.device.type == "meta":
        return None
    return t.untyped_storage().data_ptr()


def _alias_map(out, args, kwargs):
    """For each output tensor, the inputs it is (``is``) and the inputs whose storage it shares."""
    ins = _storages([args, kwargs], [])
    res = []
    for t in _storages(out, []):
        same = [i for i, a in enumerate(ins) if a is t]
        ptr = _data_ptr(t)
        shared = [
            i
            for i, a in enumerate(ins)
            if ptr and _data_ptr(a) == ptr and t.numel() and a.numel()
        ]
        res.append((same, shared))
    return res


def alias_graph(inputs, outputs) -> tuple:
    """The aliasing relation among the tensors of ``inputs`` then ``outputs`` (numbered in
    that order, depth first): for each pair, whether they are the same object and whether they
    share a storage (``untyped_storage().data_ptr()``, non-empty tensors only); for each tensor,
    whether it is a view (``_base``) and, if its base is one of the numbered tensors, which."""
    ts = _storages([inputs, outputs], [])
    n_in = len(_storages(inputs, []))

    ptrs = [_data_ptr(t) if t.numel() else None for t in ts]
    pairs = []
    for i in range(len(ts)):
        for j in range(i + 1, len(ts)):
            if ts[i] is ts[j]:
                pairs.append(("is", i, j))
            elif ptrs[i] is not None and ptrs[i] == ptrs[j]:
                pairs.append(("storage", i, j))
    views = []
    for i, t in enumerate(ts):
        base = t._base
        if base is None:
            continue
        where = [j for j, u in enumerate(ts) if u is base]
        # A view of a graph-internal base: only "a view" is visible, not of what.
        views.append(("view", i, where[0] if where else None))
    return n_in, tuple(pairs), tuple(views)


# The RNG is seeded with this (plus the input set) right before each call.
CALL_SEED = 4242


def modes() -> tuple:
    """The global modes a compiled call must leave as eager does."""
    return (
        torch.is_grad_enabled(),
        torch.is_inference_mode_enabled(),
        torch.is_autocast_enabled("cpu"),
        torch.get_autocast_dtype("cpu"),
        torch.get_default_dtype(),
    )


def _call(p: Program, target, fn, seed: int) -> Run:
    args, kwargs = p.make(seed)
    if p.prepare is not None:
        p.prepare(target, seed)
    run = Run(args=args, kwargs=kwargs)
    buf = io.StringIO()
    torch.manual_seed(CALL_SEED + seed)
    with contextlib.redirect_stdout(buf):
        try:
            run.out = fn(*args, **kwargs)
        except Exception as e:  # noqa: BLE001  (compared with eager's exception)
            run.exc = (type(e), str(e))
    run.rng = torch.get_rng_state()
    run.modes = modes()
    run.alias_graph = alias_graph([args, kwargs], run.out)
    run.stdout = buf.getvalue()
    g = p.globals
    run.state = {n: _snapshot(g[n]) for n in p.state}
    if p.module:
        run.state["<module>"] = module_state(target)
    run.aliases = _alias_map(run.out, args, kwargs)
    return run


def module_state(m: nn.Module) -> dict:
    """What a user can observe of a module: parameters and buffers, plain attributes and the
    training flag, recursively."""
    plain = {
        k: _snapshot(v)
        for k, v in vars(m).items()
        if not k.startswith("_") and k != "training"
    }
    return {
        "type": type(m).__name__,
        "training": m.training,
        "tensors": {
            k: v.detach().clone() for k, v in m.state_dict(keep_vars=True).items()
        },
        "plain": plain,
        # Gradients are state a user reads after a step (``p.grad``), and not in state_dict.
        "grads": {
            k: None if p.grad is None else p.grad.detach().clone()
            for k, p in m.named_parameters(recurse=False)
        },
        "children": {k: module_state(c) for k, c in m.named_children()},
    }


def run_both(p: Program, fullgraph: bool | None = None):
    """Runs ``p`` eagerly and compiled on input sets 0 and 1; returns the runs and counters."""
    fullgraph = p.fullgraph if fullgraph is None else fullgraph
    _reset_state(p)
    target = p.target()
    eager = [_call(p, target, target, s) for s in (0, 1)]
    _reset_state(p)
    target = p.target()
    backend = CountingBackend()
    compiled = torchferro.compile(target, backend=backend, fullgraph=fullgraph)
    # The compiled module must outlive the checks of its cache entries: entries go with the
    # model they were compiled for.
    backend.keep_alive = target
    with count_breaks() as breaks:
        actual = [_call(p, target, compiled, s) for s in (0, 1)]
    _reset_state(p)
    return eager, actual, backend, breaks


def check(p: Program) -> None:
    torchferro.compiler.reset()
    eager, actual, backend, breaks = run_both(p)
    check_results(p, eager, actual)
    if p.fullgraph:
        assert_compiled(p)
    graphs = [backend.describe(i) for i in range(backend.count)]
    observed = (backend.count, len(breaks.breaks), len(breaks.eager))
    assert observed == p.counts(), (
        f"(graphs, breaks, eager frames) = {observed}, expected "
        f"{p.counts()}\nbreaks: {breaks.breaks}\neager: {breaks.eager}\n"
        + "\n".join(graphs)
    )


def assert_compiled(p: Program) -> None:
    """A fullgraph program must have been compiled (a cache entry for its code), not run
    eagerly behind the user's back."""
    fn = p.fn.forward if p.module and isinstance(p.fn, type) else p.fn
    if p.module and not isinstance(p.fn, type):
        fn = type(p.target()).forward
    state, entries = torchferro._C.cache_entries(fn.__code__)
    # ("entry only": a torch.nn forward, traced as the compiled module itself.)
    assert state in ("normal", "entry only") and entries, (
        f"no compiled entry: {state}, {entries}"
    )


def check_results(p: Program, eager: list[Run], actual: list[Run]) -> None:
    """Compiled runs against eager runs: results, inputs after the call, stdout, state,
    exceptions and output aliasing."""
    if not p.raises:
        errors = [e.exc for e in eager if e.exc is not None]
        assert not errors, f"the program raises eagerly: {errors}"
    for seed, (e, a) in enumerate(zip(eager, actual)):
        where = f"input set {seed}"
        if e.exc is not None or a.exc is not None:
            assert a.exc == e.exc, f"{where}: exception {a.exc} != eager {e.exc}"
        assert_equiv(e.out, a.out, f"{where}: out")
        assert_equiv(e.args, a.args, f"{where}: args after the call")
        assert_equiv(e.kwargs, a.kwargs, f"{where}: kwargs after the call")
        assert a.stdout == e.stdout, f"{where}: stdout {a.stdout!r} != {e.stdout!r}"
        assert_equiv(e.state, a.state, f"{where}: state")
        assert a.aliases == e.aliases, (
            f"{where}: output aliasing {a.aliases} != {e.aliases}"
        )
        assert a.alias_graph == e.alias_graph, (
            f"{where}: aliasing among inputs and outputs {a.alias_graph} != eager "
            f"{e.alias_graph}"
        )
        assert a.modes == e.modes, (
            f"{where}: modes after the call {a.modes} != {e.modes}"
        )
        if e.rng is not None:
            assert torch.equal(a.rng, e.rng), (
                f"{where}: RNG state after the call differs"
            )


# ---------------------------------------------------------------------------------------------
# Comparing values

# Objects of these modules (functions, classes, partials, torch internals) compare by ``==``;
# other objects with a ``__dict__`` (user classes) compare by type and attributes.
_OPAQUE = ("builtins", "functools", "torch", "types", "abc")


def assert_signed_zeros(expected, actual, path: str) -> None:
    """Float zeros carry a sign that ``assert_close`` ignores; eager's must be kept."""
    if not expected.is_floating_point() or expected.layout != torch.strided:
        return
    e, a = expected.detach(), actual.detach()
    zeros = (e == 0) & (a == 0)
    if zeros.any():
        bad = zeros & (torch.signbit(e) != torch.signbit(a))
        assert not bad.any(), (
            f"{path}: sign of zero differs at {bad.nonzero().tolist()[:5]}"
        )


def assert_equiv(expected, actual, path: str = "out") -> None:
    """``assert_same`` extended to what Python programs return and mutate: sets, named tuples,
    dataclasses, user objects (by type and attributes), modules (by state) and StringIO."""
    if isinstance(expected, torch.Tensor):
        assert_same(expected, actual, path)
        assert_signed_zeros(expected, actual, path)
        return
    if isinstance(expected, (np.ndarray, np.generic)):
        # numpy arrays and scalars: the same type (an array is not a numpy scalar), dtype and
        # shape, and close values, compared as tensors.
        assert type(actual) is type(expected), (
            f"{path}: type {type(actual).__name__} != {type(expected).__name__}"
        )
        assert actual.dtype == expected.dtype, (
            f"{path}: dtype {actual.dtype} != {expected.dtype}"
        )
        e = torch.from_numpy(np.array(expected, ndmin=0, copy=True))
        a = torch.from_numpy(np.array(actual, ndmin=0, copy=True))
        assert_same(e, a, path)
        assert_signed_zeros(e, a, path)
        return
    assert type(actual) is type(expected), (
        f"{path}: type {type(actual).__name__} != {type(expected).__name__}"
    )
    # A value that holds itself (a dict holding an object whose attribute is the dict, a
    # recursive closure's cell): reached again on the way down, it must be the very object
    # the actual run has at that place, and is not walked twice.
    key = id(expected)
    if key in _OPEN:
        assert _OPEN[key] is actual, (
            f"{path}: refers back to another object than eager's"
        )
        return
    _OPEN[key] = actual
    try:
        _assert_equiv_inside(expected, actual, path)
    finally:
        del _OPEN[key]


# The values `assert_equiv` is inside of, by the id of eager's: (eager's id) -> the actual one.
_OPEN: dict[int, object] = {}


def _assert_equiv_inside(expected, actual, path: str) -> None:
    if isinstance(expected, (tuple, list)):
        assert len(actual) == len(expected), (
            f"{path}: length {len(actual)} != {len(expected)}"
        )
        for i, (e, a) in enumerate(zip(expected, actual)):
            assert_equiv(e, a, f"{path}[{i}]")
    elif isinstance(expected, dict):
        assert list(actual.keys()) == list(expected.keys()), (
            f"{path}: keys {list(actual)} != {list(expected)}"
        )
        for k in expected:
            assert_equiv(expected[k], actual[k], f"{path}[{k!r}]")
    if isinstance(expected, (tuple, list, dict)):
        # A user subclass of a container keeps instance attributes beside its items.
        if hasattr(expected, "__dict__") and type(expected).__module__ not in _OPAQUE:
            assert_equiv(vars(expected), vars(actual), f"{path}.__dict__")
        return
    elif isinstance(expected, nn.Module):
        assert_equiv(module_state(expected), module_state(actual), f"{path}<module>")
    elif isinstance(expected, types.FunctionType):
        # Closures made per call: the same code, and cells holding equal values.
        assert actual.__code__ is expected.__code__, f"{path}: a different function"
        cells = [c.cell_contents for c in expected.__closure__ or ()]
        assert_equiv(
            cells, [c.cell_contents for c in actual.__closure__ or ()], f"{path}.cells"
        )
    elif isinstance(expected, functools.partial):
        assert_equiv(
            (expected.func, expected.args, expected.keywords),
            (actual.func, actual.args, actual.keywords),
            f"{path}<partial>",
        )
    elif isinstance(expected, torch.Generator):
        assert torch.equal(actual.get_state(), expected.get_state()), (
            f"{path}: generator state differs"
        )
    elif isinstance(expected, io.StringIO):
        assert actual.getvalue() == expected.getvalue(), f"{path}: StringIO differs"
    elif dataclasses.is_dataclass(expected) and not isinstance(expected, type):
        for f in dataclasses.fields(expected):
            assert_equiv(
                getattr(expected, f.name), getattr(actual, f.name), f"{path}.{f.name}"
            )
    elif isinstance(expected, float) and math.isnan(expected):
        assert math.isnan(actual), f"{path}: {actual!r} != nan"
    elif hasattr(expected, "__dict__") and type(expected).__module__ not in _OPAQUE:
        assert_equiv(vars(expected), vars(actual), f"{path}.__dict__")
    else:
        assert actual == expected, f"{path}: {actual!r} != {expected!r}"
