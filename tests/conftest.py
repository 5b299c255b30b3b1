"""Shared fixtures for the torchferro Python tests: a clean compile cache per test, a backend
that counts and records the graphs it receives, and structural comparison of results."""

from __future__ import annotations

import math

import pytest
import torch
import torchferro


class CountingBackend:
    """A torch.compile-style backend: records every ``GraphModule`` it is given, with its example
    inputs, and runs the graph as is."""

    def __init__(self):
        self.graphs: list[torch.fx.GraphModule] = []
        self.example_inputs: list[list] = []

    def __call__(self, gm, example_inputs):
        assert isinstance(gm, torch.fx.GraphModule), type(gm)
        self.graphs.append(gm)
        self.example_inputs.append(list(example_inputs))
        return gm.forward

    @property
    def count(self) -> int:
        return len(self.graphs)

    def op_nodes(self, i: int = 0) -> list:
        """The call_function / call_method nodes of the ``i``-th graph."""
        return [
            n
            for n in self.graphs[i].graph.nodes
            if n.op in ("call_function", "call_method")
        ]

    def placeholders(self, i: int = 0) -> list:
        return [n for n in self.graphs[i].graph.nodes if n.op == "placeholder"]

    def describe(self, i: int = 0) -> str:
        return self.graphs[i].code if i < len(self.graphs) else "<no graph>"


_AUTOCAST_DEVICES = ("cpu", "cuda")


def _autocast_nesting() -> int:
    level = torch.autocast_increment_nesting() - 1
    torch.autocast_decrement_nesting()
    return level


def _autocast_state():
    return [
        (d, torch.is_autocast_enabled(d), torch.get_autocast_dtype(d))
        for d in _AUTOCAST_DEVICES
    ]


@pytest.fixture(autouse=True)
def _reset_torchferro():
    torchferro.compiler.reset()
    autocast = _autocast_state()
    nesting = _autocast_nesting()
    grad = torch.is_grad_enabled()
    yield
    torchferro.compiler.reset()
    # torch.compile (the oracle) leaves CPU autocast enabled when an error is raised inside a
    # compiled `with torch.autocast(...)` (tests/differential: `error_inside_autocast`); the
    # next test would then run under it, with its region's nesting level left up (so torch's
    # cache of casted weights is never cleared). Tests that check torchferro's own restoring
    # assert it inside the test.
    while _autocast_nesting() > nesting:
        torch.autocast_decrement_nesting()
    if _autocast_nesting() == 0:
        torch.clear_autocast_cache()
    for d, enabled, dtype in autocast:
        torch.set_autocast_enabled(d, enabled)
        torch.set_autocast_dtype(d, dtype)
    torch.set_grad_enabled(grad)


@pytest.fixture
def counting_backend() -> CountingBackend:
    return CountingBackend()


@pytest.fixture
def no_direct_call():
    """Runs the test with ``torchferro.config.direct_call = False`` (the generated transformed code
    calls the graph), restoring the default afterwards."""
    torchferro.config.direct_call = False
    try:
        yield
    finally:
        torchferro.config.direct_call = True


def assert_same(expected, actual, path: str = "out") -> None:
    """Asserts that ``actual`` has the structure and values of ``expected``: the same container
    types (tuple, list, dict, torch.Size, named tuples), the same dict keys in order, equal Python
    scalars, and tensors of the same shape, dtype, device and requires_grad with close values."""
    assert type(actual) is type(expected), (
        f"{path}: type {type(actual).__name__} != {type(expected).__name__}"
    )
    if isinstance(expected, torch.Tensor):
        assert actual.shape == expected.shape, (
            f"{path}: shape {tuple(actual.shape)} != {tuple(expected.shape)}"
        )
        assert actual.dtype == expected.dtype, (
            f"{path}: dtype {actual.dtype} != {expected.dtype}"
        )
        assert actual.device == expected.device, (
            f"{path}: device {actual.device} != {expected.device}"
        )
        assert actual.requires_grad == expected.requires_grad, (
            f"{path}: requires_grad {actual.requires_grad} != {expected.requires_grad}"
        )
        torch.testing.assert_close(
            actual.detach(),
            expected.detach(),
            equal_nan=True,
            msg=lambda m: f"{path}: {m}",
        )
    elif isinstance(expected, (tuple, list)):
        assert len(actual) == len(expected), (
            f"{path}: length {len(actual)} != {len(expected)}"
        )
        for i, (e, a) in enumerate(zip(expected, actual)):
            assert_same(e, a, f"{path}[{i}]")
    elif isinstance(expected, dict):
        assert list(actual.keys()) == list(expected.keys()), (
            f"{path}: keys {list(actual)} != {list(expected)}"
        )
        for k in expected:
            assert_same(expected[k], actual[k], f"{path}[{k!r}]")
    elif isinstance(expected, float) and math.isnan(expected):
        assert math.isnan(actual), f"{path}: {actual!r} != nan"
    else:
        assert actual == expected, f"{path}: {actual!r} != {expected!r}"


def pytest_configure(config):
    # Each differential corpus file is a marker (`-k language` selects cases_language.py).
    import pathlib

    for p in sorted(
        (pathlib.Path(__file__).parent / "differential").glob("cases_*.py")
    ):
        config.addinivalue_line("markers", f"{p.stem}: cases of differential/{p.name}")


@pytest.fixture
def torch_rule():
    """Automatic dynamic as torch.compile's own rule for the test: only the changed sizes turn
    dynamic, and sizes 0 and 1 specialize (``automatic_dynamic_whole_tensor`` and
    ``automatic_dynamic_size_oblivious`` off; both on by default since session 27, where they
    compile less than torch.compile: ``tests/test_dynamic_size_oblivious.py``). Tests that pin
    torchferro's counts equal to torch.compile's, and its log lines and range guards, use it."""
    cfg = torchferro.config
    old = (cfg.automatic_dynamic_whole_tensor, cfg.automatic_dynamic_size_oblivious)
    cfg.automatic_dynamic_whole_tensor = False
    cfg.automatic_dynamic_size_oblivious = False
    try:
        yield
    finally:
        cfg.automatic_dynamic_whole_tensor, cfg.automatic_dynamic_size_oblivious = old
