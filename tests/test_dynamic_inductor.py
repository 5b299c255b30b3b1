"""Dynamic shapes through the inductor (issue 18, phase 2): the acceptance tests.

Each program is compiled once with ``dynamic=True`` and called over sizes 2..64 (odd and prime
ones included). Asserted: values equal eager's, exactly one compile (one cache entry, as many
graphs as torch.compile makes with a counting backend), and that the inductor runs the graph
with kernels that take the sizes as arguments: one C compile (runs of the C compiler, counted
with a fresh kernel cache) for every size. The graph is lowered once with symbolic sizes
(``tests/test_dynamic_symbolic_lowering.py``); where that declines, each size is checked
against a fitted library by lowering the graph at it (``inductor::param``). Where a size's kernels differ (a tiny size whose index
simplifies), it gets a library of its own, up to ``TORCHFERRO_SIZE_VARIANTS`` libraries, past
which new sizes run on the eager runner. ``TORCHFERRO_SIZE_ARGS=0`` turns the libraries with
sizes as arguments off (one library per size, phase 2a).
"""

from __future__ import annotations

import copy
import logging
import tempfile
import types

import pytest
import torch
import torch._dynamo
import torch.nn.functional as F
import torchferro
import torchferro.compiler
from programs.dynamic import Block, inductor_log
from torchferro import _C
from programs.counting import Count

SIZES = [2, 3, 5, 8, 13, 17, 31, 32, 47, 64]
R = torch.randn


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


def _c_compiles():
    return _C.precompile_counters()[1]


@pytest.fixture
def fresh_cache(monkeypatch):
    """An empty kernel cache, so that every library the graph needs runs the C compiler."""
    monkeypatch.setenv("TORCHFERRO_CACHE_DIR", tempfile.mkdtemp(prefix="tf-dyn-"))


# C compiles over SIZES: one each. Every graph here is lowered symbolically once and built at
# every size (`Prepared::build_at`); the GPT-2 block too, since its width's symbol, which its
# layer norm's constant `normalized_shape` needs equal to 32, is replaced by 32 (a replacement
# by a constant). `views` slices `c[: B // 2 + 1]`: its bound is symbolic, so no size (2
# included) simplifies differently.
C_COMPILES = {name: 1 for name in PROGRAMS}
# Graphs the symbolic lowering declines, with the reason it logs (none now).
DECLINED: dict[str, str] = {}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_values_and_one_compile(name, fresh_cache):
    fn, make = PROGRAMS[name]
    before = _c_compiles()
    f, torch_graphs = _compile_and_run(fn, make)
    assert torch_graphs == 1
    assert len(torchferro.compiler.cache_entries(f)) == 1
    assert _c_compiles() - before == C_COMPILES[name]


def test_views_compile_once(fresh_cache):
    """At size 2 a clamp's bounds hold and a specialized index simplifies (a library of its
    own under the fitted templates); the symbolic lowering simplifies only what holds at every
    size, so one library serves 2..64."""
    fn, make = PROGRAMS["views"]
    before = _c_compiles()
    _compile_and_run(fn, make)
    assert _c_compiles() - before == 1


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_the_inductor_runs_it(name, caplog, fresh_cache):
    """Every size runs kernels that take the sizes as arguments (no eager runner, no library
    compiled per size): from the symbolic lowering, or where it declines (logged with the
    reason), from a fitted template."""
    fn, make = PROGRAMS[name]
    with caplog.at_level(logging.INFO, logger="torchferro.inductor"):
        f, _ = _compile_and_run(fn, make)
    log = inductor_log(caplog.records)
    text = "\n".join(log)
    assert "eager" not in text, text
    assert "kernels compiled for sizes" not in text, text
    symbolic = [m for m in log if "lowered symbolically: one library" in m]
    fitted = [m for m in log if "kernels take the sizes as arguments" in m]
    declined = [m for m in log if "symbolic lowering declined" in m]
    if name in DECLINED:
        assert (len(symbolic), len(fitted)) == (0, 1), text
        [m] = declined
        assert DECLINED[name] in m, m
    else:
        assert (len(symbolic), len(fitted), declined) == (1, 0, []), text
    [entry] = torchferro.compiler.cache_entries(f)
    assert entry["runner"] == "inductor", entry["runner"]
    code = entry["output_code"]
    assert "const int64_t *const tf_sym = (const int64_t *)args[" in code


def _rows_program(x, w):
    return (
        torch.softmax(x, -1) + F.layer_norm(x, x.shape[-1:]),
        (x @ w).relu(),
        x.sum(0),
    )


def _sums_both_ways(x, w):
    return x.sum(1), x.sum(0) * 2, (x @ w).relu()


def _c_compiles_over(shapes, program=_rows_program):
    torch._dynamo.reset()
    torchferro.compiler.reset()
    f = torchferro.compile(program, dynamic=True)
    before = _c_compiles()
    with torch.no_grad():
        for r, c in shapes:
            x, w = R(r, c), R(c, 4)
            _same(f(x, w), program(x, w))
    assert len(torchferro.compiler.cache_entries(f)) == 1
    return _c_compiles() - before


def test_new_assignments_of_a_built_symbolic_library_are_not_specialized(fresh_cache):
    """Once the symbolic library is built, a new assignment of the sizes runs its kernels with
    the first program's shared state (``Dynamic::symbolic_fast``): no graph specialized at the
    new sizes, no C compile; a size-oblivious symbol at 1 still gets the static graph's kernels
    at its sizes (one specialization, one compile); values are eager's at every call."""
    torch._dynamo.reset()
    torchferro.compiler.reset()
    f = torchferro.compile(_rows_program)  # automatic dynamic: sizes at 1 may share
    with torch.no_grad():
        for r, c in [(2, 3), (4, 5)]:  # static, then the dynamic graph at its hints
            x, w = R(r, c), R(c, 4)
            _same(f(x, w), _rows_program(x, w))
        spec, comp = _C._dynamic_specializations(), _c_compiles()
        for r, c in [(6, 7), (9, 33), (3, 5), (6, 7), (17, 2)]:
            x, w = R(r, c), R(c, 4)
            _same(f(x, w), _rows_program(x, w))
        assert (_C._dynamic_specializations() - spec, _c_compiles() - comp) == (0, 0)
        x, w = R(1, 5), R(5, 4)
        _same(f(x, w), _rows_program(x, w))
        assert (_C._dynamic_specializations() - spec, _c_compiles() - comp) == (1, 1)
    assert len(torchferro.compiler.cache_entries(f)) == 2


def test_one_library_over_sizes_2_to_64(fresh_cache):
    """Pointwise, a softmax and a layer norm over a symbolic row length and a symbolic number
    of rows, a matmul, a column sum: rows 2..62, row lengths 3..64, one C compile. (Rows,
    lengths and the weight's 4 columns, a third symbol, never equal here: see the next test.)"""
    shapes = [(r, c) for r in range(2, 65, 3) for c in (3, 6, 7, 16, 33, 64)]
    assert _c_compiles_over(shapes) == 1


def test_one_library_across_blocks_of_rows(fresh_cache):
    """The column sum runs 64 columns per block: its block count is printed as C's ceiling
    division of the column count (``CpuPolicy::sizes_unfolded``), not as the count, so
    column counts on both sides of 64, 128 and 192 share the library (each side of a block
    boundary was a library of its own)."""
    assert _c_compiles_over([(5, 7), (9, 65), (4, 130), (6, 200), (3, 64)]) == 1


def test_the_block_over_lengths_8_to_256_compiles_once(fresh_cache):
    """The GPT-2 block over sequence lengths 8..256 (issue 18's range): one C compile for the
    dynamic graph, values equal to eager's at every length."""
    torch._dynamo.reset()
    torchferro.compiler.reset()
    f = torchferro.compile(_BLOCK, dynamic=True)
    before = _c_compiles()
    with torch.no_grad():
        for t in (8, 9, 16, 33, 64, 100, 128, 200, 256):
            x = R(2, t, 32)
            _same(f(x), _BLOCK(x))
    assert len(torchferro.compiler.cache_entries(f)) == 1
    assert _c_compiles() - before == 1


def _torch_calls(f, x):
    """The torch operators one call of ``f(x)`` makes, with their input shapes, in order."""
    import warnings

    from torch.profiler import profile

    with warnings.catch_warnings():
        warnings.simplefilter(
            "ignore"
        )  # the profiler's note on clearing events per cycle
        with profile(record_shapes=True) as p:
            f(x)
    return [(e.name, e.input_shapes) for e in p.events() if e.cpu_parent is None]


def test_the_first_length_runs_the_dynamic_graph_with_the_static_graphs_torch_calls(
    fresh_cache,
):
    """Issue 18's T=8 column: under automatic dynamic the first length compiles a static graph
    and the second the dynamic one; a later call at the first length is served by the dynamic
    graph (the most recently used entry is checked first), on its kernels, and makes exactly
    the torch calls (matrix products, attention, allocations, with their shapes) of a static
    compile at that length: the dynamic path adds no torch call and falls back to no eager
    runner. Values equal eager's."""
    torch._dynamo.reset()
    torchferro.compiler.reset()
    f = torchferro.compile(_BLOCK)
    # A copy whose class's `forward` is another code object: a cache of its own.
    fwd = Block.forward
    own = types.FunctionType(fwd.__code__.replace(), fwd.__globals__, "forward")
    twin = copy.deepcopy(_BLOCK)
    twin.__class__ = type("StaticBlock", (Block,), {"forward": own})
    static = torchferro.compile(twin, dynamic=False)
    with torch.no_grad():
        x8, x9 = R(1, 8, 32), R(1, 9, 32)
        for x in (x8, x9, x8):
            _same(f(x), _BLOCK(x))
        _same(static(x8), _BLOCK(x8))
        ids = [e["compile_id"] for e in torchferro.compiler.cache_entries(f)]
        assert [i.split("/")[1] for i in ids] == ["1", "0"]
        dynamic_calls = _torch_calls(f, x8)
        assert dynamic_calls == _torch_calls(static, x8)
        assert any("mm" in name for name, _ in dynamic_calls)


# (batch, length) pairs of issue 18's range; both become dynamic at the second call.
MODEL_LOOP = [(2, 8), (4, 9), (3, 16), (8, 33), (5, 64), (2, 128), (7, 256), (6, 200)]


@pytest.mark.parametrize("name", ["gpt2", "llama"])
def test_transformers_forwards_over_batches_and_lengths_compile_twice(
    name, fresh_cache
):
    """GPT-2 and Llama (small configs, ``tests/zoo.py``) over batches 2..8 and lengths
    8..256 with automatic dynamic: two C compiles in all (the static first graph and one
    library with sizes as arguments for the dynamic one; 5 before block counts were printed
    unfolded), logits equal eager's at every size."""
    import warnings

    import transformers
    import zoo

    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if name == "gpt2":
            model = transformers.GPT2LMHeadModel(zoo.gpt2_config(n_positions=256))
        else:
            config = zoo.decoder_config(
                transformers.LlamaConfig,
                num_key_value_heads=2,
                max_position_embeddings=256,
            )
            model = transformers.LlamaForCausalLM(config)
    model.eval()
    torch._dynamo.reset()
    torchferro.compiler.reset()
    f = torchferro.compile(model)
    before = _c_compiles()
    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for b, t in MODEL_LOOP:
            ids = torch.randint(0, 100, (b, t), generator=gen)
            want = model(ids, use_cache=False).logits
            got = f(ids, use_cache=False).logits
            torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
    assert _c_compiles() - before == 2


SQUARE_AMONG_OTHERS = [(2, 3), (5, 7), (5, 5), (9, 7), (6, 6)]


def test_equal_sizes_under_fitted_templates_get_a_library_of_their_own(
    fresh_cache, monkeypatch
):
    """The fallback path (``TORCHFERRO_SYMBOLIC=0``: fitted templates over lowerings at
    concrete sizes): at 5 rows of length 5 the lowering fuses the row sum and the column sum
    into one kernel (their loops are equal there), so that size's kernels differ from the
    library's: it gets its own (the match check finds the difference), as does 6 by 6."""
    monkeypatch.setenv("TORCHFERRO_SYMBOLIC", "0")
    assert _c_compiles_over(SQUARE_AMONG_OTHERS, _sums_both_ways) == 3


def test_equal_sizes_of_two_symbols_share_the_library(fresh_cache):
    """Rows and row length equal at a call (5 rows of 5) are still two symbols to the
    symbolic lowering, which decided fusion on polynomials, not values: one library."""
    assert _c_compiles_over(SQUARE_AMONG_OTHERS, _sums_both_ways) == 1
    assert _c_compiles_over(SQUARE_AMONG_OTHERS) == 1


def test_kernels_with_sizes_as_arguments_off_compile_per_size(fresh_cache, monkeypatch):
    """``TORCHFERRO_SIZE_ARGS=0``: one library per size (phase 2a)."""
    monkeypatch.setenv("TORCHFERRO_SIZE_ARGS", "0")
    torch._dynamo.reset()
    torchferro.compiler.reset()
    f = torchferro.compile(pointwise, dynamic=True)
    before = _c_compiles()
    with torch.no_grad():
        for n in (3, 5, 9):
            x, y = R(n, 7), R(n, 7)
            _same(f(x, y), pointwise(x, y))
    assert _c_compiles() - before == 3


def test_sizes_past_the_variant_limit_run_on_the_eager_runner(caplog, monkeypatch):
    """With room for 3 libraries (one per size: sizes as arguments off), the 4th and 5th sizes
    run on the eager runner (said once), with eager's values; an earlier size still runs its
    kernels, compiled once."""
    monkeypatch.setenv("TORCHFERRO_SIZE_VARIANTS", "3")
    monkeypatch.setenv("TORCHFERRO_SIZE_ARGS", "0")
    torch._dynamo.reset()
    torchferro.compiler.reset()
    f = torchferro.compile(pointwise, dynamic=True)
    sizes = [4, 9, 16, 25, 36, 9, 36, 4]
    with caplog.at_level(logging.INFO, logger="torchferro.inductor"):
        for n in sizes:
            x, y = R(n, 7), R(n, 7)
            _same(f(x, y), pointwise(x, y))
    log = inductor_log(caplog.records)
    assert log == [
        "dynamic graph: kernels compiled for sizes s0=9, s1=7 (first at s0=4, s1=7)",
        "dynamic graph: kernels compiled for sizes s0=16, s1=7 (first at s0=4, s1=7)",
        (
            "dynamic graph: sizes s0=25, s1=7 and other new ones run on the eager runner "
            "(kernels exist for 3 assignments of the size symbols; TORCHFERRO_SIZE_VARIANTS)"
        ),
    ], log
    assert len(torchferro.compiler.cache_entries(f)) == 1


def reshaped_view(x):
    B = x.size(0)
    return x.view(B, -1, 2)


def test_a_returned_view_taking_a_size_is_a_view_of_the_input_at_each_size(caplog):
    """``x.view(x.size(0), -1, 2)`` returned: each size's kernels return a view of the input
    with that call's sizes (not the hints')."""
    torch._dynamo.reset()
    torchferro.compiler.reset()
    f = torchferro.compile(reshaped_view, dynamic=True)
    with caplog.at_level(logging.INFO, logger="torchferro.inductor"):
        for n in (4, 6, 10, 6):
            x = R(n, 8)
            y = f(x)
            assert y.shape == (n, 4, 2) and y.data_ptr() == x.data_ptr()
            torch.testing.assert_close(y, reshaped_view(x))
    # No kernels at any size: nothing to compile, nothing logged.
    assert inductor_log(caplog.records) == []
    [entry] = torchferro.compiler.cache_entries(f)
    assert entry["runner"] == "inductor"


def test_a_training_graph_with_symbols_compiles_per_size(caplog):
    """A graph that needs a backward is specialized per assignment of its symbols, each with
    its own joint, forward and backward (``backend/aot_dynamic.rs``; more in
    ``test_aot_dynamic.py``): eager's values and gradients, one derivation per size."""
    torch._dynamo.reset()
    torchferro.compiler.reset()
    w = R(7, 7, requires_grad=True)

    def fn(x):
        return (x @ w).relu().sum(0)

    f = torchferro.compile(fn, dynamic=True)
    with caplog.at_level(logging.INFO, logger="torchferro.aot"):
        for n in (3, 5, 9):
            x = R(n, 7)
            out = f(x)
            out.sum().backward()
            got, w.grad = w.grad, None
            want = fn(x)
            want.sum().backward()
            torch.testing.assert_close(out, want)
            torch.testing.assert_close(got, w.grad)
            w.grad = None
    text = "\n".join(
        r.getMessage() for r in caplog.records if r.name == "torchferro.aot"
    )
    assert "runs through torch's autograd" not in text, text
    assert text.count("forward 3 ops, backward") == 3, text
    [entry] = torchferro.compiler.cache_entries(f)
    assert entry["runner"] == "aot"


@pytest.mark.parametrize("name", ["pointwise", "reductions", "views", "gpt2_block"])
def test_the_kernels_at_a_size_are_the_static_graphs(name, monkeypatch):
    """With sizes as arguments off, the dynamic graph specialized to a size generates the C
    the static graph at that size does (the libraries with sizes as arguments are checked
    against exactly that C at every size: `inductor::param::Template::matches`)."""
    monkeypatch.setenv("TORCHFERRO_SIZE_ARGS", "0")
    fn, make = PROGRAMS[name]
    args = make(13)
    code = {}
    for dynamic in (True, False):
        torch._dynamo.reset()
        torchferro.compiler.reset()
        f = torchferro.compile(fn, dynamic=dynamic)
        with torch.no_grad():
            _same(f(*args), fn(*args))
        [entry] = torchferro.compiler.cache_entries(f)
        assert entry["runner"] == "inductor"
        code[dynamic] = entry["output_code"]
        assert isinstance(code[dynamic], str) and "13" in code[dynamic], code[dynamic]
    assert code[True] == code[False]


@pytest.mark.parametrize("backend", ["count", "eager"])
def test_sizes_a_check_read_never_reach_another_frames_first_call(backend):
    """The sizes a shape check read are handed to the runner of the entry it admitted, matched
    by the inputs' addresses (``shape_env::take_checked_sizes``). A runner that does not take
    them (a counting or ``"eager"`` backend) left them valid; the next compiled function's
    first call compiles with no check, and its runner took them where its input was at the
    same address: here the same tensor resized in place (in a run, a freed tensor's address
    reused: ``torch.einsum`` raised "fallback returned [2, 3, 4, 4], expected [2, 3, 3, 3]" in
    one run of eight). The result was the old sizes' ([5, 3] for a [7, 3] input)."""

    def program(x):
        return x * 2 + 1

    torchferro.compiler.reset()
    first = torchferro.compile(
        program, backend=Count() if backend == "count" else "eager", dynamic=True
    )
    second = torchferro.compile(lambda x: program(x), dynamic=True)
    try:
        x = R(5, 3)
        first(x)
        first(x)  # admitted by the shape check; this runner leaves the sizes it read
        x.resize_(7, 3).normal_()
        _same(second(x), program(x))
        x.resize_(4, 3).normal_()
        first(x)
        x.resize_(9, 3).normal_()
        _same(second(x), program(x))
    finally:
        torchferro.compiler.reset()
