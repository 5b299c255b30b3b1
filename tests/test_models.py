"""Real model forwards under torchferro: torchvision ``resnet18`` and ``mobilenet_v3_small`` and
transformers GPT-2 (``GPT2Model``, ``GPT2LMHeadModel``) and ``BertModel``, built from small
configs with random weights (no hub access), in eval mode under ``torch.no_grad()``.

Each model is compiled with a counting backend (``fullgraph=False``) and run on two input sets
of the same shapes; the outputs must equal eager's (float32, CPU, rtol = atol = 1e-4) whatever
torchferro compiled, also when frames fall back to eager. Every run also records

- ``graphs``: the graphs the backend received (after the first call, and after both);
- ``breaks``: the graph-break records logged under ``torchferro`` at INFO, either
  ``Graph break in function f: <reason>`` (the graph stops there and a resume function goes on)
  or ``Graph break: running function f eagerly: <reason>`` (the whole frame runs eagerly);
- the frames left in state ``eager: <reason>`` or ``recompile limit`` (every live function's
  code object, asked through ``torchferro._C.cache_entries``), and the state of the model's own
  ``forward`` (``skip``: the hook never traces it);
- the time of the first (compiling) call and of later calls, compiled and eager.

``test_current_behaviour`` pins graphs, breaks and reasons as they are today (update
``OBSERVED`` when the tracer changes them); the ``target`` tests state what torch.compile does
(the model's code traced, one graph, no breaks) and are ``xfail(strict=True)`` where torchferro
does not get there yet.

``python tests/test_models.py`` prints the report (graphs, breaks with the source line of each
reason, frame states, timings) of every model.
"""

from __future__ import annotations

import gc
import linecache
import logging
import pathlib
import re
import time
import types
import warnings
from dataclasses import dataclass, field

import pytest
import torch
import torchferro

torchvision = pytest.importorskip("torchvision")
transformers = pytest.importorskip("transformers")

RTOL = 1e-4
ATOL = 1e-4
LATER_CALLS = 5  # later calls are timed as the fastest of these

# ---------------------------------------------------------------------------------------------
# The models and their inputs. Every model is built under torch.manual_seed(0); the inputs of set
# `seed` come from a generator seeded with it, so the two sets differ in values only.


def _gpt2_config():
    return transformers.GPT2Config(
        n_layer=2, n_embd=64, n_head=4, vocab_size=100, n_positions=32
    )


def _bert_config():
    return transformers.BertConfig(
        num_hidden_layers=2,
        hidden_size=64,
        num_attention_heads=4,
        intermediate_size=128,
        vocab_size=100,
    )


def _image(seed):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(2, 3, 64, 64, generator=g),)


def _tokens(seed):
    g = torch.Generator().manual_seed(seed)
    return (torch.randint(0, 100, (2, 8), generator=g),)


MODELS = {
    "resnet18": (lambda: torchvision.models.resnet18(weights=None), _image),
    "mobilenet_v3_small": (
        lambda: torchvision.models.mobilenet_v3_small(weights=None),
        _image,
    ),
    "gpt2": (lambda: transformers.GPT2Model(_gpt2_config()), _tokens),
    "gpt2_lm_head": (lambda: transformers.GPT2LMHeadModel(_gpt2_config()), _tokens),
    "bert": (lambda: transformers.BertModel(_bert_config()), _tokens),
}


def build(name):
    factory, make_inputs = MODELS[name]
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = factory()
    _calibrate_batch_norms(model, make_inputs)
    return model.eval()


def _calibrate_batch_norms(model, make_inputs):
    """Sets BatchNorm running statistics to those of random inputs. With the initial ones (mean 0,
    variance 1) activations shrink layer after layer in eval mode: mobilenet_v3_small's logits
    are ~1e-9, and any result would pass a comparison at atol=1e-4."""
    norms = [
        m
        for m in model.modules()
        if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)
    ]
    if not norms:
        return
    momenta = [m.momentum for m in norms]
    for m in norms:
        m.reset_running_stats()
        m.momentum = None  # a cumulative average over the calibration batches
    model.train()
    with torch.no_grad():
        for seed in (100, 101):
            model(*make_inputs(seed))
    for m, momentum in zip(norms, momenta):
        m.momentum = momentum


def inputs(name, seed):
    return MODELS[name][1](seed)


# ---------------------------------------------------------------------------------------------
# What today's torchferro does with each model (with the counting backend): `graphs` compiled,
# `breaks` graph-break records, and their distinct `reasons`, paths relative to site-packages:
# "break in f: <reason>" (f's graph stops before the instruction, which runs natively, and a
# resume function continues) or "eager f: <reason>" (all of f runs eagerly).


@dataclass(frozen=True)
class Observed:
    graphs: int
    breaks: int
    reasons: frozenset
    error: str | None = (
        None  # a crash of the compiled call (a bug: test_matches_eager fails)
    )


VISION = ("resnet18", "mobilenet_v3_small")
TRANSFORMERS = ("gpt2", "gpt2_lm_head", "bert")

# The vision models compile whole: one graph, no breaks, no frame left eager.
OBSERVED = {
    "resnet18": Observed(graphs=1, breaks=0, reasons=frozenset()),
    "mobilenet_v3_small": Observed(graphs=1, breaks=0, reasons=frozenset()),
}

# ---------------------------------------------------------------------------------------------
# One compiled run of a model, with everything it observed.


class CountingBackend:
    def __init__(self):
        self.graphs = []

    def __call__(self, gm, example_inputs):
        assert isinstance(gm, torch.fx.GraphModule), type(gm)
        self.graphs.append(gm)
        return gm.forward


class _Records(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record):
        self.records.append(record)


_SITE = re.compile(r"/\S*?/site-packages/")


def normalize(msg: str) -> str:
    """Paths relative to site-packages (or to this checkout), so reasons read the same anywhere."""
    return _SITE.sub("", msg).replace(str(_repo_root()) + "/", "")


def _repo_root():
    return pathlib.Path(__file__).resolve().parent.parent


# "Graph break in function f: <reason>": the graph stops before the instruction, which runs
# natively, and a resume function continues. "Graph break: running function f eagerly: <reason>":
# the whole frame runs eagerly.
_BREAK = re.compile(
    r"Graph break(?: in function (?P<resumed>\S+)|: running function (?P<eager>\S+) eagerly): "
    r"(?P<reason>.*)"
)
_AT = re.compile(r"\(at (?P<file>.+?):(?P<line>\d+)\)\s*$")


def source_line(reason: str) -> str:
    """The line of code a reason's `(at file:line)` points at, when it is a real file."""
    m = _AT.search(reason)
    if not m:
        return ""
    return linecache.getline(m["file"], int(m["line"])).strip()


@dataclass
class Run:
    name: str
    pairs: list = field(
        default_factory=list
    )  # (eager output, compiled output) per input set
    graphs_first: int = 0
    graphs: int = 0
    breaks: list = field(
        default_factory=list
    )  # "break in f: <reason>" / "eager f: <reason>"
    recompiles: int = 0
    limit_hits: list = field(default_factory=list)
    frames: dict = field(default_factory=dict)  # "qualname (file:line)" -> state
    top_state: str = ""
    timings: dict = field(default_factory=dict)
    error: str | None = None  # what the compiled call raised, when it did
    exception: BaseException | None = None

    @property
    def reasons(self) -> frozenset:
        return frozenset(normalize(r) for r in self.breaks)

    def report(self) -> str:
        head = (
            f"== {self.name}: {self.graphs} graphs ({self.graphs_first} after the first call), "
            f"{len(self.breaks)} graph breaks, {self.recompiles} recompiles, "
            f"{len(self.limit_hits)} recompile-limit hits; model forward: {self.top_state}"
        )
        out = [head]
        if self.error:
            out.append(f"  COMPILED CALL RAISED: {self.error}")
        counts: dict[str, int] = {}
        for r in self.breaks:
            counts[r] = counts.get(r, 0) + 1
        for r, n in sorted(counts.items(), key=lambda kv: -kv[1]):
            out.append(f"  break x{n}: {normalize(r)}")
            line = source_line(r)
            if line:
                out.append(f"      | {line}")
        for f, st in sorted(self.frames.items()):
            out.append(f"  frame {f}: {normalize(st)}")
        t = self.timings
        if len(t) == 4:
            out.append(
                "  time (ms): torchferro first {:.1f}, later {:.2f}; eager first {:.1f}, later {:.2f}".format(
                    t["compiled_first"] * 1e3,
                    t["compiled_later"] * 1e3,
                    t["eager_first"] * 1e3,
                    t["eager_later"] * 1e3,
                )
            )
        return "\n".join(out)


def _is_function(o) -> bool:
    # A weakref proxy whose referent died (torch.compile leaves some after a graph break)
    # raises on isinstance().
    try:
        return isinstance(o, types.FunctionType)
    except ReferenceError:
        return False


def _function_codes():
    seen = set()
    with warnings.catch_warnings():
        warnings.simplefilter(
            "ignore"
        )  # isinstance() on deprecated module-attribute proxies
        objs = [o for o in gc.get_objects() if _is_function(o)]
    for obj in objs:
        if obj.__code__ not in seen:
            seen.add(obj.__code__)
            yield obj.__code__


def _timed(fn, *args):
    t = time.perf_counter()
    r = fn(*args)
    return r, time.perf_counter() - t


def run(name: str, backend=None) -> Run:
    """Compiles model `name`, runs it compiled and eagerly on input sets 0 and 1, and records
    graphs, graph breaks, frame states and timings."""
    torchferro.compiler.reset()
    model = build(name)
    counting = CountingBackend() if backend is None else None
    compiled = torchferro.compile(
        model, backend=counting if backend is None else backend, fullgraph=False
    )
    result = Run(name)
    handler = _Records()
    logger = logging.getLogger("torchferro")
    old_level, old_propagate = logger.level, logger.propagate
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = (
        False  # the records are in the report; keep them out of pytest's log
    )
    try:
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            x0, x1 = inputs(name, 0), inputs(name, 1)
            e0, result.timings["eager_first"] = _timed(model, *x0)
            c0, result.timings["compiled_first"] = _timed(compiled, *x0)
            result.graphs_first = len(counting.graphs) if counting else 0
            e1 = model(*x1)
            c1 = compiled(*x1)
            result.pairs = [(e0, c0), (e1, c1)]
            for key, fn in (("eager_later", model), ("compiled_later", compiled)):
                result.timings[key] = min(
                    _timed(fn, *x1)[1] for _ in range(LATER_CALLS)
                )
    except Exception as e:  # noqa: BLE001 - recorded; test_matches_eager re-raises it
        result.error = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
        result.exception = e
    finally:
        logger.removeHandler(handler)
        logger.setLevel(old_level)
        logger.propagate = old_propagate
    result.graphs = len(counting.graphs) if counting else 0
    for rec in handler.records:
        msg = rec.getMessage()
        m = _BREAK.match(msg)
        if m and m["resumed"]:
            result.breaks.append(f"break in {m['resumed']}: {m['reason']}")
        elif m:
            result.breaks.append(f"eager {m['eager']}: {m['reason']}")
        elif (
            rec.name == "torchferro.graph_breaks"
        ):  # a format this file does not know yet
            result.breaks.append(f"other: {msg}")
        elif msg.startswith("Recompiling function"):
            result.recompiles += 1
        elif "hit the recompile limit" in msg:
            result.limit_hits.append(msg.split(";")[0])
    for code in _function_codes():
        state, _ = torchferro._C.cache_entries(code)
        # Frames with nothing to compile run natively by design (TorchDynamo skips them too).
        if state == "eager: no ops traced and no side effects":
            continue
        if state.startswith("eager") or state == "recompile limit":
            key = f"{code.co_qualname} ({normalize(code.co_filename)}:{code.co_firstlineno})"
            result.frames[key] = state
    result.top_state = torchferro._C.cache_entries(type(model).forward.__code__)[0]
    torchferro.compiler.reset()
    return result


_RUNS: dict[str, Run] = {}


def observed(name: str) -> Run:
    """The counting-backend run of `name`, made once per test session."""
    if name not in _RUNS:
        _RUNS[name] = run(name)
    return _RUNS[name]


# ---------------------------------------------------------------------------------------------
# Comparison with eager: same structure and types, tensors within RTOL/ATOL.


def assert_matches(expected, actual, path="out"):
    assert type(actual) is type(expected), (
        f"{path}: type {type(actual).__name__} != {type(expected).__name__}"
    )
    if isinstance(expected, torch.Tensor):
        assert actual.shape == expected.shape, (
            f"{path}: shape {actual.shape} != {expected.shape}"
        )
        assert actual.dtype == expected.dtype, (
            f"{path}: dtype {actual.dtype} != {expected.dtype}"
        )
        torch.testing.assert_close(
            actual, expected, rtol=RTOL, atol=ATOL, msg=lambda m: f"{path}: {m}"
        )
    elif isinstance(expected, dict):  # transformers' ModelOutput is an OrderedDict
        assert list(actual.keys()) == list(expected.keys()), (
            f"{path}: keys {list(actual)} != {list(expected)}"
        )
        for k in expected:
            assert_matches(expected[k], actual[k], f"{path}[{k!r}]")
    elif isinstance(expected, (tuple, list)):
        assert len(actual) == len(expected), (
            f"{path}: length {len(actual)} != {len(expected)}"
        )
        for i, (e, a) in enumerate(zip(expected, actual)):
            assert_matches(e, a, f"{path}[{i}]")
    elif isinstance(expected, transformers.cache_utils.Cache):
        assert len(actual.layers) == len(expected.layers), f"{path}: cache layers"
        for i, (e, a) in enumerate(zip(expected.layers, actual.layers)):
            assert_matches(
                (e.keys, e.values), (a.keys, a.values), f"{path}.layers[{i}]"
            )
    else:
        assert actual == expected, f"{path}: {actual!r} != {expected!r}"


# ---------------------------------------------------------------------------------------------
# Tests

NAMES = list(MODELS)


@pytest.mark.parametrize("name", NAMES)
def test_matches_eager(name):
    r = observed(name)
    print(r.report())
    if r.exception is not None:
        raise r.exception
    for i, (e, c) in enumerate(r.pairs):
        assert_matches(e, c, f"{name}, input set {i}")


@pytest.mark.parametrize("name", NAMES)
def test_matches_eager_default_backend(name):
    r = run(name, backend="inductor")
    if r.exception is not None:
        raise r.exception
    for i, (e, c) in enumerate(r.pairs):
        assert_matches(e, c, f"{name}, input set {i}")


@pytest.mark.parametrize("name", NAMES)
def test_comparison_is_meaningful(name):
    """The two input sets give outputs that differ beyond the tolerance, so a compiled result
    that ignored its input would fail test_matches_eager."""
    model = build(name)
    with torch.no_grad():
        a, b = model(*inputs(name, 0)), model(*inputs(name, 1))
    with pytest.raises(AssertionError, match="not close"):
        assert_matches(a, b)


@pytest.mark.parametrize("name", VISION)
def test_current_behaviour(name):
    r = observed(name)
    print(r.report())
    want = OBSERVED[name]
    got = Observed(r.graphs, len(r.breaks), r.reasons, r.error)
    assert got == want, r.report()


@pytest.mark.parametrize("name", NAMES)
def test_second_input_set_reuses_the_graphs(name):
    """Per-call objects (ModelOutputs, caches, kwargs dicts, slices) are guarded by type and by
    what is read from them, not by identity: the second input set compiles no new graph."""
    r = observed(name)
    assert r.exception is None, r.report()
    assert r.graphs == r.graphs_first, r.report()


@pytest.mark.parametrize("name", VISION)
def test_model_forward_is_traced(name):
    assert observed(name).top_state == "normal", observed(name).report()


# BERT's forward builds its `ModelOutput`s in the traced code (tracked and built again after the
# graph, see tracer/src/interp/model_output.rs): one graph, as the vision models.
@pytest.mark.parametrize("name", VISION + ("bert",))
def test_one_graph_no_breaks(name):
    r = observed(name)
    assert (r.error, r.graphs, len(r.breaks), r.frames) == (None, 1, 0, {}), r.report()


# The GPT-2 models run correctly (test_matches_eager) but are not one graph yet: building the
# DynamicCache iterates a `_PerLayerConfigView` (a user object the tracker cannot iterate) and
# the comprehension after that break runs natively. `python tests/test_models.py` prints the
# breakdown; these targets state what torch.compile achieves.
_TARGET = (
    "torch.compile captures the whole forward in one graph; torchferro does not yet"
)


@pytest.mark.parametrize("name", ("gpt2", "gpt2_lm_head"))
@pytest.mark.xfail(strict=True, raises=AssertionError, reason=_TARGET)
def test_target_one_graph_no_breaks(name):
    r = observed(name)
    assert (r.error, r.graphs, len(r.breaks), r.frames) == (None, 1, 0, {}), r.report()


if __name__ == "__main__":
    logging.getLogger("transformers").setLevel(logging.ERROR)
    for n in NAMES:
        print(observed(n).report())
