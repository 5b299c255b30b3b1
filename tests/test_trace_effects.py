"""Effects that must happen on every call, never once while tracing (issue 13, items 1, 2, 5, 8):
compiled training steps against eager step by step (losses, parameters, gradients, optimizer
state), RNG streams and the global RNG state after each call through every backend, the state a
trace reads without a source of its own (torch functions replaced by the program, the default
dtype, deterministic-algorithms mode), and functions marked ``torch.compiler.disable``."""

from __future__ import annotations

import copy
import functools
import logging

import pytest
import torch
import torch.nn.functional as F
import torchferro
from conftest import CountingBackend
from torch import nn


@pytest.fixture(autouse=True)
def _fresh():
    torchferro.compiler.reset()
    dtype = torch.get_default_dtype()
    det = torch.are_deterministic_algorithms_enabled()
    yield
    torch.set_default_dtype(dtype)
    torch.use_deterministic_algorithms(det)
    torchferro.compiler.reset()


def _python_backend(gm, example_inputs):
    return gm.forward


BACKENDS = ["inductor", "eager", _python_backend]
BACKEND_IDS = ["inductor", "eager", "python"]


# ---------------------------------------------------------------------------------------------
# Training steps


class ConvNet(nn.Module):
    """A small residual conv net with batch norm, standing in for resnet18."""

    def __init__(self):
        super().__init__()
        # No bias before the batch norm (as resnet18): its true gradient is 0, and Adam scales
        # the rounding noise a compiled backward sums differently to a full lr step.
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1)
        self.fc = nn.Linear(8, 2)

    def forward(self, x):
        h = F.relu(self.bn(self.conv1(x)))
        h = F.relu(h + self.conv2(h))
        return self.fc(h.mean((2, 3)))


OPTIMIZERS = {
    "sgd": lambda p: torch.optim.SGD(p, lr=0.1),
    "sgd_momentum": lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True),
    "adam": lambda p: torch.optim.Adam(p, lr=0.01),
    "adamw": lambda p: torch.optim.AdamW(p, lr=0.01, weight_decay=0.1),
}

MODELS = {
    "linear": (
        lambda: nn.Linear(4, 1),
        lambda g: (torch.randn(8, 4, generator=g), torch.randn(8, 1, generator=g)),
    ),
    "conv": (
        ConvNet,
        lambda g: (
            torch.randn(2, 3, 8, 8, generator=g),
            torch.randn(2, 2, generator=g),
        ),
    ),
}


def _state_tensors(opt):
    """Every tensor of the optimizer's state, in parameter order."""
    out = []
    for group in opt.param_groups:
        for p in group["params"]:
            for k, v in sorted(opt.state[p].items()):
                out.append((k, v))
    return out


def _assert_same_training_state(em, eo, cm, co, step, tol):
    for (name, e), c in zip(em.named_parameters(), cm.parameters()):
        torch.testing.assert_close(c, e, **tol, msg=f"step {step}: {name}")
        if e.grad is None:
            assert c.grad is None, f"step {step}: {name}.grad"
        else:
            torch.testing.assert_close(c.grad, e.grad, **tol)
    for (name, e), c in zip(em.named_buffers(), cm.buffers()):
        torch.testing.assert_close(c, e, **tol, msg=f"step {step}: {name}")
    es, cs = _state_tensors(eo), _state_tensors(co)
    assert [k for k, _ in cs] == [k for k, _ in es], (
        f"step {step}: optimizer state keys"
    )
    stateful = any(g.get("momentum") for g in eo.param_groups) or "betas" in eo.defaults
    assert bool(es) == stateful, f"step {step}: optimizer state {es}"
    for (k, e), (_, c) in zip(es, cs):
        if isinstance(e, torch.Tensor):
            torch.testing.assert_close(c, e, **tol, msg=f"step {step}: {k}")
        else:
            assert c == e, f"step {step}: {k}"


def _make_step(model, opt):
    def step(x, y):
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        return loss

    return step


@pytest.mark.parametrize("backend", ["eager", "inductor"])
@pytest.mark.parametrize("model_name", list(MODELS))
@pytest.mark.parametrize("opt_name", list(OPTIMIZERS))
def test_compiled_training_step_matches_eager_every_step(model_name, opt_name, backend):
    make_model, make_x = MODELS[model_name]
    torch.manual_seed(0)
    em = make_model()
    cm = copy.deepcopy(em)
    eo, co = (
        OPTIMIZERS[opt_name](em.parameters()),
        OPTIMIZERS[opt_name](cm.parameters()),
    )
    eager_step = _make_step(em, eo)
    compiled_step = torchferro.compile(_make_step(cm, co), backend=backend)
    # The eager runner replays torch's own kernels: bit for bit. The inductor compiles forward
    # and backward (issue 17), summing in its own order: float32 tolerance, as the issue asks
    # (the conv net's gradients are as far from a float64 run as eager's, ~2e-8). An optimizer
    # step run twice or not at all moves parameters by ~lr * grad, far outside either bound.
    # Adam's traced step takes torch's compile branch (step counters stay float32 tensors, so
    # the bias corrections are float32 tensor math where eager's are Python floats):
    # torch.compile(backend="eager") differs from eager by ~7e-8 after one step too.
    exact = backend == "eager" and not opt_name.startswith("adam")
    tol = {"rtol": 0, "atol": 0} if exact else {"rtol": 1.3e-6, "atol": 1e-5}
    g = torch.Generator().manual_seed(1)
    for step in range(5):
        x, y = make_x(g)
        e = eager_step(x, y)
        c = compiled_step(x, y)
        torch.testing.assert_close(c, e, **tol, msg=f"step {step}: loss")
        _assert_same_training_state(em, eo, cm, co, step, tol)


def test_training_step_breaks_around_the_optimizer_with_precise_reasons(caplog):
    m = nn.Linear(4, 1)
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    backend = CountingBackend()
    step = torchferro.compile(_make_step(m, opt), backend=backend)
    with caplog.at_level(logging.INFO, logger="torchferro.graph_breaks"):
        for _ in range(3):
            step(torch.randn(8, 4), torch.randn(8, 1))
    reasons = [
        r.getMessage().split(": ", 1)[1].split(" (at ")[0]
        for r in caplog.records
        if r.getMessage().startswith("Graph break in function")
    ]
    # `opt.step()` is traced (torch.compile's 2 graphs); `zero_grad` is torch._disable_dynamo.
    assert reasons == [
        "call to torch.optim.optimizer.Optimizer.zero_grad",
        "Tensor.backward() (its result depends on tensor data)",
    ]
    # The forward and loss, and the update: two graphs, each compiled once and reused.
    assert backend.count == 2


def test_backward_compiled_and_step_eager():
    torch.manual_seed(0)
    em = nn.Linear(4, 1)
    cm = copy.deepcopy(em)
    eo = torch.optim.Adam(em.parameters(), lr=0.01)
    co = torch.optim.Adam(cm.parameters(), lr=0.01)

    def loss_and_backward(m, x, y):
        loss = ((m(x) - y) ** 2).mean()
        loss.backward()
        return loss

    compiled = torchferro.compile(loss_and_backward, backend="eager")
    g = torch.Generator().manual_seed(2)
    for step in range(4):
        x, y = torch.randn(8, 4, generator=g), torch.randn(8, 1, generator=g)
        eo.zero_grad()
        co.zero_grad()
        e = loss_and_backward(em, x, y)
        c = compiled(cm, x, y)
        eo.step()
        co.step()
        torch.testing.assert_close(c, e, rtol=0, atol=0)
        _assert_same_training_state(em, eo, cm, co, step, {"rtol": 0, "atol": 0})


def test_clip_grad_norm_over_a_generator_runs_every_call():
    torch.manual_seed(0)
    em = nn.Linear(4, 1)
    cm = copy.deepcopy(em)

    def step(m, x):
        m.zero_grad()
        (m(x) * 100).sum().backward()
        return torch.nn.utils.clip_grad_norm_(m.parameters(), 0.5)

    compiled = torchferro.compile(step, backend="eager")
    for _ in range(3):
        x = torch.randn(8, 4)
        torch.testing.assert_close(compiled(cm, x), step(em, x))
        for e, c in zip(em.parameters(), cm.parameters()):
            torch.testing.assert_close(c.grad, e.grad, rtol=0, atol=0)


# ---------------------------------------------------------------------------------------------
# RNG: eager's stream and eager's global RNG state after every call.


def _seeded_rand(x):
    torch.manual_seed(0)
    return x + torch.rand(3)


def _rand_randn(x):
    return x + torch.rand(3), torch.randn(2, 3)


def _randperm(x):
    return x[torch.randperm(3)]


def _dropout(x):
    return F.dropout(x * 2, 0.5, training=True)


def _bernoulli(x):
    y = torch.zeros_like(x)
    y.bernoulli_(0.5)
    return y + x


def _multinomial(x):
    return torch.multinomial(x.abs() + 0.1, 2)


def _state_roundtrip(x):
    s = torch.get_rng_state()
    a = torch.rand(3)
    torch.set_rng_state(s)
    return x + a - torch.rand(3)


def _fork(x):
    with torch.random.fork_rng():
        torch.manual_seed(3)
        a = torch.rand(3)
    return x + a + torch.rand(3)


def _seed_then_randperm(x):
    torch.manual_seed(5)
    return x[torch.randperm(3)] + torch.randn(3)


RNG_PROGRAMS = [
    _seeded_rand,
    _rand_randn,
    _randperm,
    _dropout,
    _bernoulli,
    _multinomial,
    _state_roundtrip,
    _fork,
    _seed_then_randperm,
]


def _flat(v):
    return list(v) if isinstance(v, tuple) else [v]


@pytest.mark.parametrize("backend", BACKENDS, ids=BACKEND_IDS)
@pytest.mark.parametrize("fn", RNG_PROGRAMS, ids=lambda f: f.__name__.strip("_"))
def test_random_programs_give_eagers_stream_and_state(fn, backend):
    compiled = torchferro.compile(fn, backend=backend)
    for call in range(3):
        x = torch.arange(3.0) + call
        torch.manual_seed(100 + call)
        expected = fn(x.clone())
        expected_state = torch.get_rng_state()
        torch.manual_seed(100 + call)
        actual = compiled(x.clone())
        actual_state = torch.get_rng_state()
        for e, a in zip(_flat(expected), _flat(actual)):
            torch.testing.assert_close(a, e, rtol=0, atol=0, msg=f"call {call}")
        assert torch.equal(actual_state, expected_state), f"call {call}: RNG state"


@pytest.mark.parametrize("backend", BACKENDS, ids=BACKEND_IDS)
def test_a_generator_argument_gives_eagers_stream(backend):
    def f(x, g):
        return x + torch.rand(3, generator=g), torch.randn(2, generator=g)

    compiled = torchferro.compile(f, backend=backend)
    for call in range(3):
        ge = torch.Generator().manual_seed(7 + call)
        gc = torch.Generator().manual_seed(7 + call)
        before = torch.get_rng_state()
        e = f(torch.ones(3), ge)
        a = compiled(torch.ones(3), gc)
        for x, y in zip(e, a):
            torch.testing.assert_close(y, x, rtol=0, atol=0)
        assert torch.equal(gc.get_state(), ge.get_state())
        # The global generator is not touched.
        assert torch.equal(torch.get_rng_state(), before)


def test_compiling_does_not_draw_from_the_global_generator():
    traced = []

    def backend(gm, example_inputs):
        traced.append(torch.get_rng_state())
        return gm.forward

    def f(x):
        return x[torch.randperm(4)] * torch.rand(4)

    torch.manual_seed(0)
    start = torch.get_rng_state()
    torchferro.compile(f, backend=backend)(torch.arange(4.0))
    assert len(traced) == 1
    assert torch.equal(traced[0], start), "the trace drew random numbers"


# ---------------------------------------------------------------------------------------------
# State read by the trace: replaced torch functions, the default dtype, global flags.


def test_a_replaced_torch_function_is_honoured():
    original = torch.sigmoid

    def f(x):
        return torch.sigmoid(x) + 1

    backend = CountingBackend()
    compiled = torchferro.compile(f, backend=backend)
    x = torch.randn(4)
    torch.testing.assert_close(compiled(x), f(x))
    try:
        torch.sigmoid = lambda t: t * 10
        torch.testing.assert_close(compiled(x), x * 10 + 1)
    finally:
        torch.sigmoid = original
    torch.testing.assert_close(compiled(x), f(x))
    assert backend.count == 2


def test_an_unrelated_change_to_torch_does_not_recompile():
    def f(x):
        return torch.relu(x) * 2

    backend = CountingBackend()
    compiled = torchferro.compile(f, backend=backend)
    compiled(torch.randn(4))
    torch._torchferro_test_attr = 1
    try:
        compiled(torch.randn(4))
        compiled(torch.randn(4))
    finally:
        del torch._torchferro_test_attr
    compiled(torch.randn(4))
    assert backend.count == 1


def test_replaced_torch_function_recompile_reason(caplog):
    original = torch.tanh

    def f(x):
        return torch.tanh(x)

    compiled = torchferro.compile(f, backend="eager")
    compiled(torch.randn(3))
    try:
        torch.tanh = torch.sigmoid
        with caplog.at_level(logging.INFO, logger="torchferro.recompiles"):
            torch.testing.assert_close(compiled(torch.zeros(3)), torch.full((3,), 0.5))
    finally:
        torch.tanh = original
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert "torch.tanh is not the same object" in text, text


@pytest.mark.parametrize("backend", ["inductor", "eager"])
def test_default_dtype_changes_between_calls(backend):
    def f(x):
        return torch.zeros(3) + torch.tensor([1.5, 2.5, 3.5]), x / 2

    compiled = torchferro.compile(f, backend=backend)
    x = torch.arange(3)
    for dtype in (torch.float32, torch.float64, torch.float32):
        torch.set_default_dtype(dtype)
        e, a = f(x), compiled(x)
        for p, q in zip(e, a):
            assert q.dtype == p.dtype == dtype
            torch.testing.assert_close(q, p, rtol=0, atol=0)


def test_get_default_dtype_inside_is_guarded():
    def f(x):
        return x.to(torch.get_default_dtype())

    compiled = torchferro.compile(f, backend="eager")
    x = torch.arange(3)
    assert compiled(x).dtype == torch.float32
    torch.set_default_dtype(torch.float64)
    assert compiled(x).dtype == torch.float64


def test_deterministic_algorithms_flag_is_guarded():
    def f(x):
        if torch.are_deterministic_algorithms_enabled():
            return x + 1
        return x - 1

    compiled = torchferro.compile(f, backend="eager")
    x = torch.zeros(2)
    assert compiled(x).tolist() == [-1.0, -1.0]
    torch.use_deterministic_algorithms(True)
    assert compiled(x).tolist() == [1.0, 1.0]


def test_cpu_autocast_query_answers_for_the_traced_region():
    def f(x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            inside = torch.is_autocast_enabled("cpu")
            dtype = torch.get_autocast_dtype("cpu")
        return x + 1, inside, dtype, torch.is_autocast_enabled("cpu")

    compiled = torchferro.compile(f, backend="eager")
    x = torch.zeros(2)
    assert compiled(x)[1:] == f(x)[1:] == (True, torch.bfloat16, False)


def test_grad_mode_switch_through_torch_C_is_not_run_at_trace_time():
    def f(x):
        torch._C._set_grad_enabled(False)
        y = x * 2
        torch._C._set_grad_enabled(True)
        return y

    compiled = torchferro.compile(f, backend="eager")
    x = torch.ones(2, requires_grad=True)
    for _ in range(2):
        assert not compiled(x).requires_grad
        assert torch.is_grad_enabled()


# ---------------------------------------------------------------------------------------------
# torch.compiler.disable


def _inner(t):
    return t * 3


@torch.compiler.disable
def _disabled(t):
    return _inner(t) + 1


def test_a_disabled_function_and_what_it_calls_run_eagerly():
    def f(x):
        return _disabled(x.sin()).cos()

    backend = CountingBackend()
    compiled = torchferro.compile(f, backend=backend)
    for _ in range(2):
        x = torch.randn(3)
        torch.testing.assert_close(compiled(x), f(x))
    assert backend.count == 2
    for code in (_disabled.__wrapped__.__code__, _inner.__code__):
        state, entries = torchferro._C.cache_entries(code)
        assert entries == [], (code.co_name, state, entries)


def test_seeding_a_generator_argument_inside_runs_every_call():
    def f(x, g):
        g.manual_seed(3)
        return x + torch.rand(3, generator=g)

    compiled = torchferro.compile(f, backend="eager")
    g = torch.Generator()
    expected = f(torch.ones(3), torch.Generator())
    for _ in range(3):
        g.manual_seed(99)
        torch.testing.assert_close(compiled(torch.ones(3), g), expected, rtol=0, atol=0)


def test_set_default_dtype_inside_runs_every_call():
    def f(x):
        torch.set_default_dtype(torch.float64)
        y = torch.ones(2)
        torch.set_default_dtype(torch.float32)
        return x + 1, y

    compiled = torchferro.compile(f, backend="eager")
    for _ in range(2):
        assert compiled(torch.ones(3))[1].dtype == torch.float64
        assert torch.get_default_dtype() == torch.float32


# ---------------------------------------------------------------------------------------------
# Objects new on every call that a resume function gets on its stack or in its locals (issue 13
# leftovers): guarded by type and by what the trace reads, not by identity, so the resume
# functions do not recompile on every call.


class _Compiles:
    """Counts torchferro's compiles (every frame, resume functions included)."""

    def __init__(self):
        self.count = 0

    def __call__(self, event):
        if event.get("kind") == "compile":
            self.count += 1

    def __enter__(self):
        from torchferro import _events

        _events.subscribe(self)
        return self

    def __exit__(self, *exc):
        from torchferro import _events

        _events.unsubscribe(self)


def _per_call_generator(i):
    g = torch.Generator().manual_seed(i)
    x = torch.randn(3, generator=g)
    print(end="")
    y = torch.randn(3, generator=g)
    return x + y


def _storage_across_a_break(a):
    s = a.untyped_storage()
    print(end="")
    return a + s.size()


def _generator_argument(x, g):
    return torch.randn(3, generator=g) + x


def _storage_argument(x, s):
    return x + s.size()


def _finfo_across_a_break(x):
    info = torch.finfo(x.dtype)
    print(end="")
    return x.clamp(min=info.min, max=info.max) * info.eps


PER_CALL_OBJECTS = {
    # name: (function, arguments of call i, compiles of the first call)
    "generator": (_per_call_generator, lambda i: (i,), 6),
    # `a.untyped_storage()` is traced (a storage of the input, rebuilt for the resume
    # function); the print and the live storage's `size()` break: 3 frames.
    "storage": (_storage_across_a_break, lambda i: (torch.randn(4),), 3),
    "generator_argument": (
        _generator_argument,
        lambda i: (torch.randn(3), torch.Generator().manual_seed(i)),
        2,
    ),
    "storage_argument": (
        _storage_argument,
        lambda i: (torch.randn(3), torch.randn(5).untyped_storage()),
        2,
    ),
    "finfo": (_finfo_across_a_break, lambda i: (torch.randn(3),), 2),
}


@pytest.mark.parametrize("name", list(PER_CALL_OBJECTS))
def test_an_object_new_on_every_call_does_not_recompile(name, capsys):
    fn, make_args, first = PER_CALL_OBJECTS[name]
    compiled = torchferro.compile(fn, backend="eager")
    counts = []
    with _Compiles() as compiles:
        for i in range(6):
            torch.manual_seed(i)
            args = make_args(i)
            torch.manual_seed(i)
            expected = fn(*make_args(i))
            torch.testing.assert_close(compiled(*args), expected, rtol=0, atol=0)
            counts.append(compiles.count)
    # Every frame and resume function compiles on the first call, and never again.
    assert counts == [first] * 6
    # torch.compile compiles no fewer frames after the first call (it specializes `i` once).
    torch._dynamo.reset()
    torch._dynamo.utils.counters.clear()
    tc = torch.compile(fn, backend="eager")
    tc_counts = []
    for i in range(6):
        tc(*make_args(i))
        tc_counts.append(torch._dynamo.utils.counters["frames"]["ok"])
    torch._dynamo.reset()
    assert counts[-1] - counts[0] <= tc_counts[-1] - tc_counts[0]


def test_identity_of_a_per_call_object_is_guarded_where_compared():
    def f(x, g, h):
        return x + (1 if g is h else 2)

    compiled = torchferro.compile(f, backend="eager")
    x = torch.zeros(2)
    for _ in range(3):
        a, b = torch.Generator(), torch.Generator()
        assert compiled(x, a, a).tolist() == [1.0, 1.0]
        assert compiled(x, a, b).tolist() == [2.0, 2.0]


def test_a_method_of_a_per_call_object_runs_on_the_object_of_each_call():
    def f(x, g):
        return x + g.initial_seed()

    compiled = torchferro.compile(f, backend="eager")
    x = torch.zeros(2)
    with _Compiles() as compiles:
        for i in range(4):
            g = torch.Generator().manual_seed(10 + i)
            assert compiled(x, g).tolist() == [10.0 + i] * 2
    # `f` breaks at the call and its resume function takes an int that changes each call: the
    # second value makes it automatic dynamic (a symbolic int input), so 3 frames are compiled,
    # torch.compile's count.
    assert compiles.count == 3


# ---------------------------------------------------------------------------------------------
# Replaced methods of torch.Tensor and functions of torch.nn.functional reached through layers:
# compiled code follows the replacement as eager does, checked through the dicts' version tags.


def _compiles_of(compiled, calls):
    with _Compiles() as compiles:
        for call in calls:
            call(compiled)
    return compiles.count


@pytest.mark.parametrize("backend", BACKENDS, ids=BACKEND_IDS)
def test_a_replaced_tensor_method_is_honoured(backend):
    def f(x):
        return x.relu() + x.sigmoid()

    compiled = torchferro.compile(f, backend=backend)
    x = torch.randn(5)
    original = torch.Tensor.relu

    def check():
        torch.testing.assert_close(compiled(x), f(x), rtol=0, atol=0)

    with _Compiles() as compiles:
        check()
        try:
            torch.Tensor.relu = lambda self: self * 100
            check()
            check()
            torch.Tensor.relu = functools.wraps(original)(
                lambda self: original(self) - 5
            )
            check()
            torch.Tensor.relu = torch.Tensor.tanh
            check()
        finally:
            del torch.Tensor.relu
        check()
        assert torch.Tensor.relu is original
    # The original and the lambda: one entry each. The wrapper calls the C method it kept, which
    # runs natively (a graph would run a method node by name, reaching the wrapper): `f` breaks
    # at `x.relu()`, and the wrapper and `f`'s resume function compile (4). That entry runs the
    # call natively, so `tanh` in its place reuses it; the original restored reuses the first.
    assert compiles.count == 6


def test_an_unrelated_change_to_torch_Tensor_does_not_recompile():
    def f(x):
        return x.relu() * 2

    backend = CountingBackend()
    compiled = torchferro.compile(f, backend=backend)
    compiled(torch.randn(4))
    torch.Tensor._torchferro_test_attr = 1
    try:
        compiled(torch.randn(4))
    finally:
        del torch.Tensor._torchferro_test_attr
    compiled(torch.randn(4))
    assert backend.count == 1


@pytest.mark.parametrize("backend", BACKENDS, ids=BACKEND_IDS)
def test_a_replaced_functional_is_honoured_through_a_layer(backend):
    # nn.Linear's forward calls `F.linear`, nn.Sigmoid's `torch.sigmoid`: eager follows a
    # replacement made between calls, so must the compiled model.
    model = nn.Sequential(nn.Linear(3, 4), nn.Sigmoid(), nn.Linear(4, 2))
    compiled = torchferro.compile(model, backend=backend)
    x = torch.randn(5, 3)
    linear, sigmoid = F.linear, torch.sigmoid

    def check():
        with torch.no_grad():
            torch.testing.assert_close(compiled(x), model(x), rtol=1e-6, atol=1e-6)

    with _Compiles() as compiles:
        check()
        try:
            F.linear = lambda i, w, b=None: linear(i, w, b) * 0 + 7
            check()
            torch.sigmoid = lambda t: t * 0 - 1
            check()
        finally:
            F.linear, torch.sigmoid = linear, sigmoid
        check()
    assert compiles.count == 3


def test_replaced_tensor_method_recompile_reason(caplog):
    def f(x):
        return x.tanh()

    compiled = torchferro.compile(f, backend="eager")
    compiled(torch.randn(3))
    try:
        torch.Tensor.tanh = torch.Tensor.sigmoid
        with caplog.at_level(logging.INFO, logger="torchferro.recompiles"):
            torch.testing.assert_close(compiled(torch.zeros(3)), torch.full((3,), 0.5))
    finally:
        del torch.Tensor.tanh
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert (
        "Tensor.tanh is not the same object. expected missing, actual <method 'sigmoid'"
        in (text)
    ), text
