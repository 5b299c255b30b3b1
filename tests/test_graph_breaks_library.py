"""Library idioms of model code that broke the graph where torch.compile makes one graph
(issue 14, session 16): an ``enum.Enum`` looked up by value (``Act("relu")``),
``dataclasses.asdict`` / ``astuple`` of a config, ``list()`` / ``dict()`` as a
``default_factory``. Under ``fullgraph=True`` each must trace whole; values equal eager's."""

from __future__ import annotations

import dataclasses
import enum

import pytest
import torch
import torch.nn.functional as F

import torchferro
import torchferro.compiler


class Act(enum.Enum):
    GELU = "gelu"
    RELU = "relu"

    def fn(self):
        return {Act.GELU: F.gelu, Act.RELU: F.relu}[self]


def by_value(x, name):
    return Act(name).fn()(x), Act(name)


@dataclasses.dataclass
class Inner:
    k: int = 3
    tags: tuple = ("a", "b")


@dataclasses.dataclass
class Outer:
    scale: float = 0.5
    sizes: list = dataclasses.field(default_factory=lambda: [1, 2])
    inner: Inner = dataclasses.field(default_factory=Inner)


def as_dict(x):
    d = dataclasses.asdict(Outer())
    t = dataclasses.astuple(Outer(scale=2.0))
    return x * d["scale"] + d["inner"]["k"] + t[0], d, t


def _run(fn, *args):
    torchferro.compiler.reset()
    calls = []

    def backend(gm, example_inputs):
        calls.append(gm)
        return gm.forward

    got = torchferro.compile(fn, backend=backend, fullgraph=True)(*args)
    return got, len(calls)


def test_an_enum_looked_up_by_value_traces_whole():
    x = torch.randn(4)
    got, graphs = _run(by_value, x, "relu")
    want = by_value(x, "relu")
    torch.testing.assert_close(got[0], want[0])
    assert got[1] is Act.RELU
    assert graphs == 1


def test_an_enum_value_with_no_member_raises_as_eager():
    with pytest.raises(ValueError, match="'tanh' is not a valid Act"):
        by_value(torch.randn(2), "tanh")
    torchferro.compiler.reset()
    f = torchferro.compile(by_value, backend="eager")
    with pytest.raises(ValueError, match="'tanh' is not a valid Act"):
        f(torch.randn(2), "tanh")


def test_asdict_and_astuple_of_nested_configs_trace_whole():
    x = torch.randn(3)
    got, graphs = _run(as_dict, x)
    want = as_dict(x)
    torch.testing.assert_close(got[0], want[0])
    assert (
        got[1]
        == want[1]
        == {
            "scale": 0.5,
            "sizes": [1, 2],
            "inner": {"k": 3, "tags": ("a", "b")},
        }
    )
    assert got[2] == want[2]
    assert graphs == 1


@dataclasses.dataclass
class WithTensor:
    w: torch.Tensor


def tensor_field(x):
    return dataclasses.asdict(WithTensor(x * 2))["w"] + 1


def test_asdict_of_a_tensor_field_breaks_with_the_reason():
    # The library deep-copies the tensor; eager's value is kept by running it natively.
    x = torch.randn(3)
    torchferro.compiler.reset()
    with pytest.raises(
        torchferro.Unsupported, match="asdict of a field holding a tensor"
    ):
        torchferro.compile(tensor_field, backend="eager", fullgraph=True)(x)
    torchferro.compiler.reset()
    torch.testing.assert_close(
        torchferro.compile(tensor_field, backend="eager")(x), tensor_field(x)
    )


def origin_dispatch(x):
    import typing

    hint = typing.List[int]
    if typing.get_origin(hint) is list and typing.get_args(hint) == (int,):
        return x + 1
    return x - 1


def test_typing_get_origin_and_get_args_fold():
    x = torch.randn(3)
    got, graphs = _run(origin_dispatch, x)
    torch.testing.assert_close(got, x + 1)
    assert graphs == 1


@dataclasses.dataclass(frozen=True)
class Key:
    d: int = 4
    name: str = "q"


def keyed(x, key):
    table = {hash(Key()): 2.0}
    return x * table.get(hash(key), -1.0), hash(key) == hash(Key(4, "q"))


def test_hash_of_a_frozen_dataclass_reads_its_fields_not_its_identity():
    torchferro.compiler.reset()
    calls = []

    def backend(gm, example_inputs):
        calls.append(gm)
        return gm.forward

    f = torchferro.compile(keyed, backend=backend, fullgraph=True)
    x = torch.randn(3)
    # A new (equal) key object per call: one graph (torch.compile 2.11 makes 2).
    for key in (Key(), Key(), Key(4, "q")):
        got, want = f(x, key), keyed(x, key)
        torch.testing.assert_close(got[0], want[0])
        assert got[1] is want[1] is True
    assert len(calls) == 1
    # Another field value takes the other entry of the table: guarded by the field.
    got = f(x, Key(5))
    torch.testing.assert_close(got[0], keyed(x, Key(5))[0])
    assert got[1] is False
    assert len(calls) == 2


def frozen_keys(x):
    scales = {Key(): 2.0, Key(5): 3.0}
    members = {Key(), Key(6, "k")}
    return x * scales[Key(4, "q")], Key(6, "k") in members, Key(7) in scales


def test_frozen_dataclasses_made_in_the_frame_key_dicts_and_sets():
    x = torch.randn(3)
    got, graphs = _run(frozen_keys, x)
    want = frozen_keys(x)
    torch.testing.assert_close(got[0], want[0])
    assert got[1:] == want[1:] == (True, False)
    assert graphs == 1


@dataclasses.dataclass(frozen=True)
class PoolKey:
    size: int = 2
    mode: str = "max"


def pooled(x, key):
    return x * (2.0 if key in {PoolKey(), PoolKey(3, "avg")} else 1.0)


def test_membership_of_a_frozen_dataclass_argument_guards_its_fields_not_its_identity():
    """`key in {...}` with a frozen dataclass argument: its type and fields are guarded, not
    its identity (torch.compile hashes it by its fields: 1 graph for equal keys)."""
    torchferro.compiler.reset()
    calls = []

    def backend(gm, example_inputs):
        calls.append(gm)
        return gm.forward

    f = torchferro.compile(pooled, backend=backend, fullgraph=True)
    x = torch.randn(3)
    for key in (PoolKey(), PoolKey(), PoolKey(2, "max")):
        torch.testing.assert_close(f(x, key), pooled(x, key))
    assert len(calls) == 1
    # A field that differs fails its guard: traced again, and the other branch's value.
    for key in (PoolKey(3, "avg"), PoolKey(5), PoolKey(3, "max")):
        torch.testing.assert_close(f(x, key), pooled(x, key))
    assert len(calls) == 4
