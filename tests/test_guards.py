"""Guards and recompiles: each kind of guard failure recompiles exactly once, and the log says
why in the words torch users know."""

import logging

import pytest
import torch

import torchferro

SCALE = 2


class Counter:
    def __init__(self):
        self.graphs = []

    def __call__(self, gm, example_inputs):
        self.graphs.append(gm)
        return gm.forward

    @property
    def n(self):
        return len(self.graphs)


@pytest.fixture(autouse=True)
def _reset():
    torchferro.compiler.reset()
    torchferro.config.recompile_limit = 8
    yield
    torchferro.compiler.reset()
    torchferro.config.recompile_limit = 8


def _frame_id(fn):
    state, entries = torchferro._C.cache_entries(fn.__code__)
    return entries[-1]["compile_id"].split("/")[0]


def _expected(fn, reason):
    code = fn.__code__
    return (
        f"Recompiling function {code.co_name} in {code.co_filename}:{code.co_firstlineno}\n"
        f"    triggered by the following guard failure(s):\n"
        f"    - {_frame_id(fn)}/0: {reason}"
    )


def _recompile_records(caplog):
    return [r.getMessage() for r in caplog.records if r.name == "torchferro.recompiles"]


def add_one(x):
    return x + 1


def scaled(x):
    return x * SCALE


CASES = [
    (
        "shape",
        add_one,
        lambda: torch.randn(8, 3),
        lambda: torch.randn(16, 3),
        "tensor 'x' size mismatch at index 0. expected 8, actual 16",
    ),
    (
        "dtype",
        add_one,
        lambda: torch.randn(4),
        lambda: torch.randn(4, dtype=torch.float64),
        "tensor 'x' dtype mismatch. expected torch.float32, actual torch.float64",
    ),
    (
        "device",
        add_one,
        lambda: torch.randn(4),
        lambda: torch.empty(4, device="meta"),
        "tensor 'x' device mismatch. expected cpu, actual meta",
    ),
    (
        "requires_grad",
        add_one,
        lambda: torch.randn(4),
        lambda: torch.randn(4, requires_grad=True),
        "tensor 'x' requires_grad mismatch. expected requires_grad=False, actual requires_grad=True",
    ),
    (
        "stride",
        add_one,
        lambda: torch.randn(4, 4),
        lambda: torch.randn(4, 4).t(),
        "tensor 'x' stride mismatch at index 0. expected 4, actual 1",
    ),
    (
        "rank",
        add_one,
        lambda: torch.randn(4),
        lambda: torch.randn(4, 1),
        "tensor 'x' rank mismatch. expected 1, actual 2",
    ),
]


@pytest.mark.parametrize(
    "name,fn,first,second,reason", CASES, ids=[c[0] for c in CASES]
)
def test_tensor_guard_failure_recompiles_once(caplog, name, fn, first, second, reason):
    counter = Counter()
    compiled = torchferro.compile(fn, backend=counter, fullgraph=True)
    caplog.set_level(logging.INFO, logger="torchferro")
    a, b = first(), second()
    compiled(a)
    assert counter.n == 1
    assert _recompile_records(caplog) == []
    out = compiled(b)
    assert counter.n == 2
    assert _recompile_records(caplog) == [_expected(fn, reason)]
    if b.device.type != "meta":
        torch.testing.assert_close(out, fn(b))
    # Both entries are now cached: neither input recompiles again.
    compiled(b)
    compiled(a)
    assert counter.n == 2
    assert len(_recompile_records(caplog)) == 1


def test_changed_global_recompiles_once(caplog):
    global SCALE
    counter = Counter()
    compiled = torchferro.compile(scaled, backend=counter, fullgraph=True)
    caplog.set_level(logging.INFO, logger="torchferro")
    x = torch.randn(5)
    torch.testing.assert_close(compiled(x), x * 2)
    try:
        SCALE = 3
        torch.testing.assert_close(compiled(x), x * 3)
        assert counter.n == 2
        assert _recompile_records(caplog) == [
            _expected(scaled, "G['SCALE'] == 2 failed. actual 3")
        ]
        compiled(x)
        assert counter.n == 2
    finally:
        SCALE = 2


def test_python_constant_argument_recompiles():
    counter = Counter()

    def f(x, n):
        return x * n

    compiled = torchferro.compile(f, backend=counter, fullgraph=True)
    x = torch.randn(3)
    torch.testing.assert_close(compiled(x, 2), x * 2)
    torch.testing.assert_close(compiled(x, 2), x * 2)
    assert counter.n == 1
    torch.testing.assert_close(compiled(x, 5), x * 5)
    assert counter.n == 2


def test_recompile_limit_falls_back_to_eager_with_one_warning(caplog):
    counter = Counter()
    torchferro.config.recompile_limit = 2
    # dynamic=False: with automatic dynamic (the default) the second size makes the dimension
    # dynamic and later sizes reuse that entry, as under torch.compile.
    compiled = torchferro.compile(add_one, backend=counter, dynamic=False)
    caplog.set_level(logging.INFO, logger="torchferro")
    with pytest.warns(RuntimeWarning, match=r"recompile limit \(2\)"):
        for n in range(1, 6):
            x = torch.randn(n)
            torch.testing.assert_close(compiled(x), x + 1)
    assert counter.n == 2
    warnings = [
        r
        for r in caplog.records
        if r.levelno == logging.WARNING and "recompile limit" in r.getMessage()
    ]
    assert len(warnings) == 1
    # Cached entries still run compiled.
    compiled(torch.randn(1))
    assert counter.n == 2
    state, entries = torchferro._C.cache_entries(add_one.__code__)
    assert state == "recompile limit"
    assert len(entries) == 2


def test_grad_mode_change_recompiles(caplog):
    counter = Counter()
    compiled = torchferro.compile(add_one, backend=counter, fullgraph=True)
    caplog.set_level(logging.INFO, logger="torchferro")
    x = torch.randn(3, requires_grad=True)
    assert compiled(x).requires_grad
    with torch.no_grad():
        out = compiled(x)
    assert not out.requires_grad
    assert counter.n == 2
    assert _recompile_records(caplog) == [
        _expected(
            add_one,
            "grad mode mismatch. expected torch.is_grad_enabled()=True, actual False",
        )
    ]


def test_guards_are_listed_for_each_entry():
    compiled = torchferro.compile(scaled, backend="eager", fullgraph=True)
    compiled(torch.randn(2, 3))
    state, entries = torchferro._C.cache_entries(scaled.__code__)
    assert state == "normal"
    assert len(entries) == 1
    guards = entries[0]["guards"]
    # Each guard names the user line whose use of the value needed it.
    line = f"{__file__}:{scaled.__code__.co_firstlineno + 1}"
    assert guards == [
        "GRAD_MODE torch.is_grad_enabled() == True",
        f"TENSOR_MATCH L['x']: torch.float32, cpu, size=[2, 3], stride=[3, 1], requires_grad=False  # {line}",
        f"EQUALS_MATCH G['SCALE'] == 2  # {line}",
    ]


def test_fail_on_recompile_raises_with_the_reasons():
    compiled = torchferro.compile(add_one, backend="eager", fullgraph=True)
    compiled(torch.randn(8, 3))
    with torchferro.compiler.set_stance("fail_on_recompile"):
        with pytest.raises(torchferro.RecompileError) as info:
            compiled(torch.randn(16, 3))
        # Cached inputs still run.
        compiled(torch.randn(8, 3))
    assert str(info.value) == _expected(
        add_one, "tensor 'x' size mismatch at index 0. expected 8, actual 16"
    )
    assert torchferro._C.get_stance() == "default"


def test_eager_on_recompile_and_force_eager():
    counter = Counter()
    compiled = torchferro.compile(add_one, backend=counter, fullgraph=True)
    compiled(torch.randn(2))
    with torchferro.compiler.set_stance("eager_on_recompile"):
        x = torch.randn(5)
        torch.testing.assert_close(compiled(x), x + 1)
    assert counter.n == 1
    with torchferro.compiler.set_stance("force_eager"):
        compiled(torch.randn(7))
    assert counter.n == 1
    with pytest.raises(ValueError, match="unknown stance"):
        torchferro.compiler.set_stance("sometimes")


# ---------------------------------------------------------------------------------------------
# Guards on per-call objects and on values the traced code does not read.


class Box:
    def __init__(self, t, scale, extra=None):
        self.t = t
        self.scale = scale
        if extra is not None:
            self.extra = extra


class OtherBox(Box):
    pass


def box_scaled(b):
    return b.t * b.scale


def box_extra(b):
    return b.t + getattr(b, "extra", 0.0)


def box_is(b, c):
    return b.t * 2 if b is c else b.t + 1


def unused_int(x, n):
    return x + 1


def test_new_object_of_the_same_type_reuses_the_entry(caplog):
    counter = Counter()
    compiled = torchferro.compile(box_scaled, backend=counter, fullgraph=True)
    caplog.set_level(logging.INFO, logger="torchferro")
    for i in range(3):
        b = Box(torch.randn(3), 2.0)
        torch.testing.assert_close(compiled(b), b.t * 2.0)
    assert counter.n == 1
    assert _recompile_records(caplog) == []


def test_object_of_another_type_recompiles_once(caplog):
    counter = Counter()
    compiled = torchferro.compile(box_scaled, backend=counter, fullgraph=True)
    caplog.set_level(logging.INFO, logger="torchferro")
    compiled(Box(torch.randn(3), 2.0))
    b = OtherBox(torch.randn(3), 2.0)
    torch.testing.assert_close(compiled(b), b.t * 2.0)
    assert counter.n == 2
    assert _recompile_records(caplog) == [
        _expected(
            box_scaled,
            "type(L['b']) mismatch. expected Box, actual OtherBox",
        )
    ]


def test_attribute_read_from_an_object_is_guarded(caplog):
    counter = Counter()
    compiled = torchferro.compile(box_scaled, backend=counter, fullgraph=True)
    caplog.set_level(logging.INFO, logger="torchferro")
    compiled(Box(torch.randn(3), 2.0))
    b = Box(torch.randn(3), 3.0)
    torch.testing.assert_close(compiled(b), b.t * 3.0)
    assert counter.n == 2
    assert _recompile_records(caplog) == [
        _expected(box_scaled, "L['b'].scale == 2.0 failed. actual 3.0")
    ]


def test_getattr_default_guards_the_missing_attribute(caplog):
    counter = Counter()
    compiled = torchferro.compile(box_extra, backend=counter, fullgraph=True)
    caplog.set_level(logging.INFO, logger="torchferro")
    compiled(Box(torch.randn(3), 1.0))
    b = Box(torch.randn(3), 1.0, extra=5.0)
    torch.testing.assert_close(compiled(b), b.t + 5.0)
    assert counter.n == 2
    assert _recompile_records(caplog) == [
        _expected(
            box_extra,
            "hasattr(L['b'], \"extra\") mismatch. expected False, actual True",
        )
    ]


def test_identity_is_guarded_where_the_code_compares_it(caplog):
    counter = Counter()
    compiled = torchferro.compile(box_is, backend=counter, fullgraph=True)
    caplog.set_level(logging.INFO, logger="torchferro")
    b = Box(torch.randn(3), 1.0)
    torch.testing.assert_close(compiled(b, b), b.t * 2)
    c = Box(torch.randn(3), 1.0)
    torch.testing.assert_close(compiled(c, b), c.t + 1)
    assert counter.n == 2
    (msg,) = _recompile_records(caplog)
    assert "is not the same object" in msg


def test_an_argument_that_is_never_read_gets_no_guard(caplog):
    counter = Counter()
    compiled = torchferro.compile(unused_int, backend=counter, fullgraph=True)
    caplog.set_level(logging.INFO, logger="torchferro")
    x = torch.randn(3)
    for n in range(4):
        torch.testing.assert_close(compiled(x, n), x + 1)
    assert counter.n == 1
    assert _recompile_records(caplog) == []


class Sized:
    def __init__(self, t, n):
        self.t = t
        self.n = n

    def __len__(self):
        return self.n

    def __repr__(self):
        return f"Sized({self.n})"


def sized_truth(s):
    return s.t * 2 if s else s.t + 1


def sized_text(s):
    return s.t + len(f"{s!r}")


def test_truth_of_an_object_with_len_guards_its_identity(caplog):
    # `if s:` calls `Sized.__len__`, which reads the object's state: a new object must not
    # reuse the entry compiled for another (its type alone does not decide the branch).
    counter = Counter()
    compiled = torchferro.compile(sized_truth, backend=counter, fullgraph=True)
    a, b = Sized(torch.randn(3), 1), Sized(torch.randn(3), 0)
    torch.testing.assert_close(compiled(a), a.t * 2)
    torch.testing.assert_close(compiled(b), b.t + 1)
    assert counter.n == 2


def test_formatting_an_object_guards_its_identity():
    counter = Counter()
    compiled = torchferro.compile(sized_text, backend=counter, fullgraph=True)
    a, b = Sized(torch.randn(3), 1), Sized(torch.randn(3), 100)
    torch.testing.assert_close(compiled(a), a.t + len("Sized(1)"))
    torch.testing.assert_close(compiled(b), b.t + len("Sized(100)"))
    assert counter.n == 2


def test_truth_of_a_plain_object_needs_no_identity(caplog):
    counter = Counter()
    compiled = torchferro.compile(box_truth, backend=counter, fullgraph=True)
    caplog.set_level(logging.INFO, logger="torchferro")
    for _ in range(3):
        b = Box(torch.randn(3), 1.0)
        torch.testing.assert_close(compiled(b), b.t * 2)
    assert counter.n == 1
    assert _recompile_records(caplog) == []


def box_truth(b):
    return b.t * 2 if b else b.t


# --- frames with nothing to compile ----------------------------------------------------------


class _Config:
    hidden = 4
    heads = 2


def config_lookup(cfg, key):
    return getattr(cfg, key)


def test_a_frame_without_ops_is_skipped_not_recompiled_per_key(caplog):
    """A frame that traces to no op and no side effect runs natively from then on (as
    TorchDynamo's "no ops traced" skip): new keys neither compile nor recompile it."""
    counter = Counter()
    f = torchferro.compile(config_lookup, backend=counter)
    cfg = _Config()
    with caplog.at_level(logging.DEBUG, logger="torchferro"):
        got = [f(cfg, k) for k in ("hidden", "heads", "hidden", "heads")]
    assert got == [4, 2, 4, 2]
    assert counter.n == 0
    assert _recompile_records(caplog) == []
    state, entries = torchferro._C.cache_entries(config_lookup.__code__)
    assert (state, entries) == ("eager: no ops traced and no side effects", [])
    code = config_lookup.__code__
    assert (
        f"Skipping function config_lookup ({code.co_filename}:{code.co_firstlineno}): no ops "
        "traced and no side effects; it runs natively from now on"
    ) in [r.getMessage() for r in caplog.records if r.name == "torchferro"]


def test_a_frame_without_ops_still_compiles_under_fullgraph():
    counter = Counter()
    f = torchferro.compile(config_lookup, backend=counter, fullgraph=True)
    assert f(_Config(), "hidden") == 4
    # An empty graph is not handed to the backend, but the frame has its cache entry.
    state, entries = torchferro._C.cache_entries(config_lookup.__code__)
    assert (state, len(entries), counter.n) == ("normal", 1, 0)


def test_a_frame_with_a_side_effect_is_not_skipped():
    counter = Counter()
    sink = []

    def record(x, out):
        out.append(x)
        return x

    f = torchferro.compile(record, backend=counter)
    x = torch.ones(2)
    assert f(x, sink) is x
    assert sink == [x]
    state, entries = torchferro._C.cache_entries(record.__code__)
    assert (state, len(entries)) == ("normal", 1)


def dict_membership(x, kwargs):
    if "cache" in kwargs:
        return x + 1
    return x - 1


def test_dict_membership_does_not_guard_the_values_identity(caplog):
    """`key in kwargs` reads the keys: a new per-call object under the key reuses the graph."""
    counter = Counter()
    f = torchferro.compile(dict_membership, backend=counter)
    x = torch.randn(3)
    with caplog.at_level(logging.INFO, logger="torchferro"):
        for _ in range(3):
            torch.testing.assert_close(f(x, {"cache": _Config()}), x + 1)
        torch.testing.assert_close(f(x, {"other": _Config()}), x - 1)
    assert counter.n == 2
    assert len(_recompile_records(caplog)) == 1
