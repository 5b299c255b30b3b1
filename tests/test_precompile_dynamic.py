"""torchferro.compiler.precompile with dynamic shapes and inference mode: capture in one
process, load in a fresh one (no trace, no C compile), sizes in the captured range give eager's
values, a size outside it raises GuardError naming the SHAPE_ENV guard.

A symbolic graph lowered symbolically carries its one library (the sizes as arguments) and runs
it at every size in range (``PrecompiledGraph.kind == "symbolic"``; more in
``tests/test_precompile_symbolic.py``); the graph JSON keeps the symbolic sizes."""

from __future__ import annotations

from test_precompile import _run

MLP_CAPTURE = """
from pc_models import *
torch.manual_seed(0)
model = MLP()
{setup}
with torch.no_grad(), precompile.capture(
    lambda model, x: model(x), artifact_path="m.py", cache_path="m.cache"{kw}
) as cap:
    for n in {sizes}:
        x = torch.randn(n, 4)
        {mark}
        cap(model, x)
print(json.dumps(precompile.counters()))
"""

MLP_LOAD = """
from pc_models import *
torch.manual_seed(1)
model = MLP()
f = precompile.load("m.py", "m.cache")
out = {{"close": {{}}, "errors": {{}}}}
with torch.no_grad():
    for n in {sizes}:
        x = torch.randn(n, 4)
        try:
            out["close"][n] = torch.allclose(f(model, x), model(x), atol=1e-6)
        except precompile.GuardError as e:
            out["errors"][n] = str(e)
out["graphs"] = [
    [getattr(f.artifact, f"graph_{{i}}").kind, getattr(f.artifact, f"graph_{{i}}").assignments_run]
    for i in range(len(f.artifact.GRAPHS))
]
out.update(precompile.counters())
print(json.dumps(out))
"""


def _mlp(tmp_path, *, capture_sizes, load_sizes, setup="", kw="", mark=""):
    c = _run(
        tmp_path,
        MLP_CAPTURE.format(setup=setup, kw=kw, sizes=capture_sizes, mark=mark),
    )
    r = _run(tmp_path, MLP_LOAD.format(sizes=load_sizes), loader=True)
    assert r["traces"] == 0 and r["c_compiles"] == 0, r
    return c, r, (tmp_path / "m.py").read_text()


def test_marked_dimension_stays_dynamic_within_its_range(tmp_path):
    _, r, art = _mlp(
        tmp_path,
        capture_sizes=[3],
        load_sizes=[3, 2, 9, 16, 17, 1],
        mark="torchferro.mark_dynamic(x, 0, min=2, max=16)",
    )
    assert r["close"] == {"3": True, "2": True, "9": True, "16": True}, r
    # The symbolic library ran the three sizes other than the capture's.
    assert r["graphs"] == [["symbolic", [3, 0]]], r
    guard = "SHAPE_ENV 2 <= L['x'].size(0) <= 16 failed, got"
    assert guard + " 17" in r["errors"]["17"], r
    assert guard + " 1" in r["errors"]["1"], r
    # The tensor guard leaves the dynamic size to the shape guards and pins the rest.
    assert "size=(None, 4), stride=contiguous" in art
    assert "x.dim() == 2 and x.shape[1] == 4 and _rt.dense(x)" in art


def test_dynamic_true_relations_and_duck_sizes(tmp_path):
    """dynamic=True: every input dimension is a symbol; equal sizes share one (duck sizing,
    guarded equal) and a branch on a size is a relation guard."""
    _run(
        tmp_path,
        """
        from pc_models import *
        def branchy(x, y):
            if x.shape[0] > 4:
                return (x * 2 + y).sum(0)
            return x - y
        with precompile.capture(branchy, artifact_path="b.py", cache_path="b.cache",
                                dynamic=True) as cap:
            cap(torch.randn(6, 3), torch.randn(6, 3))
        print(json.dumps(precompile.counters()))
        """,
    )
    r = _run(
        tmp_path,
        """
        f = precompile.load("b.py", "b.cache")
        def branchy(x, y):
            if x.shape[0] > 4:
                return (x * 2 + y).sum(0)
            return x - y
        out = {"close": [], "errors": []}
        for a, b in [((5, 3), (5, 3)), ((9, 7), (9, 7)), ((3, 3), (3, 3)), ((6, 3), (7, 3)),
                     ((6, 3), (6, 1))]:
            x, y = torch.randn(*a), torch.randn(*b)
            try:
                out["close"].append(torch.allclose(f(x, y), branchy(x, y)))
            except precompile.GuardError as e:
                out["errors"].append(str(e))
        out.update(precompile.counters())
        print(json.dumps(out))
        """,
        loader=True,
    )
    assert r["traces"] == 0 and r["c_compiles"] == 0, r
    assert r["close"] == [True, True], r
    e_branch, e_duck, e_one = r["errors"]
    assert (
        "SHAPE_ENV L['x'].size(0) > 4 failed, got sizes L['x'].size(0) = 3, "
        "L['x'].size(1) = 3" in e_branch
    ), e_branch
    assert "SHAPE_ENV L['y'].size(0) == L['x'].size(0) failed, got 7 vs 6" in e_duck
    # A size-1 dimension is never symbolic: broadcasting y would be another program.
    assert "SHAPE_ENV L['y'].size(1) == L['x'].size(1) failed, got 1 vs 3" in e_one


def test_automatic_dynamic_after_a_size_change(tmp_path):
    """Automatic dynamic: the second size recompiles with a symbolic size; the artifact keeps
    both entries, and a third size runs the dynamic one."""
    c, r, art = _mlp(
        tmp_path,
        capture_sizes=[3, 5],
        load_sizes=[3, 5, 11, 1],
        setup="torchferro.config.automatic_dynamic_shapes = True",
    )
    assert c["traces"] == 2, c
    assert r["close"] == {"3": True, "5": True, "11": True, "1": True}, r
    assert not r["errors"], r
    # The dynamic entry, checked first as in the live cache, runs 3 and 11 on its symbolic
    # library (captured at 5); its symbol is size-oblivious, and at 1 (which the symbolic
    # kernels, built for sizes from 2, do not serve) it runs on the eager runner rather than
    # compile.
    assert r["graphs"] == [["symbolic", [2, 1]], ["inductor", [0, 0]]], r
    # Size-oblivious automatic dynamic (session 27): the dimension may be 1 in the same entry.
    assert "SHAPE_ENV 1 <= L['x'].size(0)" in art
    assert "size=(3, 4)" in art  # the first, static entry


def test_capture_inside_inference_mode(tmp_path):
    """A capture inside torch.inference_mode(): the loaded artifact gives eager's values and
    inference tensors, inside inference mode and outside it."""
    _run(
        tmp_path,
        """
        from pc_models import *
        torch.manual_seed(0)
        model = MLP()
        with torch.inference_mode(), precompile.capture(
            lambda model, x: model(x), artifact_path="m.py", cache_path="m.cache"
        ) as cap:
            y = cap(model, torch.randn(3, 4))
        print(json.dumps({"inference": y.is_inference()}))
        """,
    )
    r = _run(
        tmp_path,
        """
        from pc_models import *
        torch.manual_seed(1)
        model = MLP()
        f = precompile.load("m.py", "m.cache")
        x = torch.randn(3, 4)
        out = {}
        with torch.inference_mode():
            got, want = f(model, x), model(x)
            out["inside"] = [torch.allclose(got, want, atol=1e-6), got.is_inference()]
        with torch.no_grad():
            got, want = f(model, x), model(x)
            out["no_grad"] = [torch.allclose(got, want, atol=1e-6), got.is_inference()]
        try:
            f(model, x)
            out["grad"] = None
        except precompile.GuardError as e:
            out["grad"] = str(e)
        out.update(precompile.counters())
        print(json.dumps(out))
        """,
        loader=True,
    )
    assert r["traces"] == 0 and r["c_compiles"] == 0, r
    assert r["inside"] == [True, True] and r["no_grad"] == [True, False], r
    # Captured with grad off (inference mode turns it off): grad mode on is another program.
    assert "GRAD_MODE torch.is_grad_enabled() == False failed" in r["grad"], r


def test_dynamic_across_a_graph_break(tmp_path):
    """The code after a break is its own entry with its own shape guards (its arguments are
    symbolic too); the loaded artifact runs both graphs for sizes other than the capture's."""
    c = _run(
        tmp_path,
        """
        from pc_models import *
        with precompile.capture(dynamic_break, artifact_path="m.py", cache_path="m.cache",
                                dynamic=True) as cap:
            cap(torch.randn(5, 3))
        print(json.dumps(precompile.counters()))
        """,
    )
    assert c["traces"] == 2, c
    r = _run(
        tmp_path,
        """
        import io, contextlib
        from pc_models import *
        f = precompile.load("m.py", "m.cache")
        out = {"close": [], "errors": []}
        for shape in [(5, 3), (7, 3), (12, 9), (1, 3)]:
            x = torch.randn(*shape)
            with contextlib.redirect_stdout(io.StringIO()):
                try:
                    out["close"].append(torch.allclose(f(x), dynamic_break(x)))
                except precompile.GuardError as e:
                    out["errors"].append(str(e))
        out["kinds"] = [f.artifact.graph_0.kind, f.artifact.graph_1.kind]
        out.update(precompile.counters())
        print(json.dumps(out))
        """,
        loader=True,
    )
    assert r["traces"] == 0 and r["c_compiles"] == 0, r
    assert r["close"] == [True, True, True], r
    # Both graphs, before and after the break, run their symbolic libraries.
    assert r["kinds"] == ["symbolic", "symbolic"], r
    # Size 1 is never symbolic: the capture's program does not cover it.
    (err,) = r["errors"]
    assert "SHAPE_ENV 2 <= L['x'].size(0) failed, got 1" in err, err
    art = (tmp_path / "m.py").read_text()
    assert "def resume_1(" in art and "SHAPE_ENV 2 <= L['y'].size(0)" in art


def _capture_then_attempt(tmp_path, program, fn, check, shapes):
    """Captures ``fn`` of ``program`` (source text) under ``dynamic=True`` at a ``(6, 3)``
    input, then in a fresh process loads it and calls it at ``shapes``: per call the guard
    error's text, or whether ``check`` (an expression of ``got`` and ``want``) holds against
    eager's. Asserts the loader neither traced nor compiled C."""
    _run(
        tmp_path,
        program
        + f"""
        with precompile.capture({fn}, artifact_path="f.py", cache_path="f.cache",
                                dynamic=True) as cap:
            cap(torch.randn(6, 3))
        print(json.dumps(precompile.counters()))
        """,
    )
    r = _run(
        tmp_path,
        program
        + f"""
        f = precompile.load("f.py", "f.cache")
        def attempt(x):
            try:
                got, want = f(x), {fn}(x)
            except precompile.GuardError as e:
                return str(e)
            return bool({check})
        results = [attempt(torch.randn(*s)) for s in {shapes!r}]
        print(json.dumps({{"results": results, **precompile.counters()}}))
        """,
        loader=True,
    )
    assert r["traces"] == 0 and r["c_compiles"] == 0, r
    return r["results"]


def test_float_expressions_of_sizes_and_their_guards(tmp_path):
    """Session 33: floats computed from sizes (`n ** -0.5`, `math.sqrt`, `a / b`) are graph
    values written in the artifact's graph, a float returned is rebuilt per call, and a branch
    on one is a float guard evaluated in the loader (Python's float arithmetic)."""
    program = """
        import math
        def scaled(x):
            if x.size(0) / 2 > 2:
                return x * x.size(0) ** -0.5 + math.sqrt(x.size(1)), x.size(1) / x.size(0)
            return x - 1, 0.0
    """
    check = "torch.allclose(got[0], want[0]) and got[1] == want[1] and type(got[1]) is float"
    shapes = [(5, 3), (9, 7), (12, 2), (4, 3)]
    *close, e_branch = _capture_then_attempt(tmp_path, program, "scaled", check, shapes)
    assert close == [True, True, True], close
    assert "SHAPE_ENV (L['x'].size(0) / 2.0) > 2.0 failed" in e_branch, e_branch


def test_roundings_of_floats_of_sizes_in_an_artifact(tmp_path):
    """Session 34: `round(n / 2)` in a slice's size (the graph's size text), a branch on it (a
    guard in Python text), a float floor division and `max` of floats (graph values) and a
    rounding returned are written in the artifact and evaluated by the loader."""
    program = """
        def rounded(x):
            r = round(x.size(0) / 2)
            if r > 1:
                return x[: r + 1] * max(x.size(0) / 2, 3) + x.size(0) / 4 // 1, r
            return x - 1, 0
    """
    check = (
        "got[0].shape == want[0].shape and torch.allclose(got[0], want[0])"
        " and got[1] == want[1] and type(got[1]) is int"
    )
    shapes = [(n, 3) for n in [5, 9, 4, 7, 2]]
    *close, e_branch = _capture_then_attempt(
        tmp_path, program, "rounded", check, shapes
    )
    assert close == [True, True, True, True], close
    assert "round(" in e_branch and "failed" in e_branch, e_branch


def test_a_stride_symbol_in_an_artifact(tmp_path):
    """Session 35: a column slice of a parent whose width moves (`randn(b, b + 4)[:, :3]`) has
    a row stride that is a symbol of its own: the artifact reads it from `stride()`, keeps it
    in its range, and checks the layout's stride rules, so parents of other widths run the
    one symbolic library while a contiguous tensor of the same sizes (another layout) misses."""
    program = """
        def scaled(x):
            return x * 2 + x.sum(0)
    """
    _run(
        tmp_path,
        program
        + """
        with precompile.capture(scaled, artifact_path="f.py", cache_path="f.cache",
                                dynamic=True) as cap:
            cap(torch.randn(6, 10)[:, :3])
        print(json.dumps(precompile.counters()))
        """,
    )
    r = _run(
        tmp_path,
        program
        + """
        f = precompile.load("f.py", "f.cache")
        def attempt(x):
            try:
                return bool(torch.allclose(f(x), scaled(x)))
            except precompile.GuardError as e:
                return str(e)
        xs = [torch.randn(n, n + 4)[:, :3] for n in (5, 9, 7)] + [torch.randn(5, 3)]
        results = [attempt(x) for x in xs]
        kinds = [getattr(f.artifact, f"graph_{i}").kind for i in range(len(f.artifact.GRAPHS))]
        print(json.dumps({"results": results, "kinds": kinds, **precompile.counters()}))
        """,
        loader=True,
    )
    assert r["traces"] == 0 and r["c_compiles"] == 0, r
    *close, e_contiguous = r["results"]
    assert close == [True, True, True], r
    assert r["kinds"] == ["symbolic"], r
    assert "TENSOR_MATCH L['x']" in e_contiguous, e_contiguous
    art = (tmp_path / "f.py").read_text()
    assert "SHAPE_ENV 2 <= L['x'].stride(0)" in art
    assert ".stride()[0]" in art and "_rt.laid_out_as(" in art
