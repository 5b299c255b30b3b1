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


@pytest.fixture(autouse=True)
def _reset_torchferro():
    torchferro.compiler.reset()
    yield
    torchferro.compiler.reset()


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
