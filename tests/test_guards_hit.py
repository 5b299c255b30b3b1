"""A guard hit on a module tree compares its parameters' tensor checks in one batched call and
passes a `_modules`/`_parameters` dict seen before in the same state without comparing its keys
(`tracer/src/guards/fast.rs`). Neither may hide a change: each test warms an entry (so later
calls take the batched path and the dicts are remembered), changes one thing in the tree
between calls, and checks that the next call recompiles with the right reason, that its value
is eager's, and that the graph count is torch.compile's (backend="eager" semantics)."""

import logging

import pytest
import torch
from torch import nn

import torchferro


class Counter:
    def __init__(self):
        self.n = 0

    def __call__(self, gm, example_inputs):
        self.n += 1
        return gm.forward


class Leaf(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(4, 4))
        self.scale = 2

    def forward(self, x):
        return (x @ self.w) * self.scale


class Tree(nn.Module):
    """3 blocks of 2 leaves: every parameter sits 4 dict steps below the root."""

    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList(nn.Sequential(Leaf(), Leaf()) for _ in range(3))

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return x.tanh()


class FirstParam(nn.Module):
    """The dtype idiom: which parameter comes first is read from the `_parameters` dicts."""

    def __init__(self):
        super().__init__()
        self.inner = nn.Sequential(nn.Linear(4, 4), nn.Linear(4, 4))

    def forward(self, x):
        p = next(self.parameters())
        return self.inner(x).to(p.dtype) * 2


@pytest.fixture(autouse=True)
def _reset():
    torchferro.compiler.reset()
    torch._dynamo.reset()
    yield
    torchferro.compiler.reset()
    torch._dynamo.reset()


def _reasons(caplog):
    return [
        r.getMessage().split("\n    - ", 1)[1].split(": ", 1)[1]
        for r in caplog.records
        if r.name == "torchferro.recompiles"
    ]


def _run(make, change, caplog, grad=False):
    """Warms torchferro and torch.compile on two copies of one model, applies `change` to each,
    and calls again: returns the recompile reasons torchferro logged and both graph counts."""
    torch.manual_seed(0)
    model = make()
    twin = make()
    twin.load_state_dict(model.state_dict())
    for a, b in zip(model.modules(), twin.modules()):
        b.__dict__.update(
            {k: v for k, v in a.__dict__.items() if isinstance(v, (int, float))}
        )
    tf_count, tc_count = Counter(), Counter()
    tf = torchferro.compile(model, backend=tf_count, dynamic=False)
    tc = torch.compile(twin, backend=tc_count, dynamic=False)
    x = torch.randn(2, 4)
    caplog.set_level(logging.INFO, logger="torchferro")
    with torch.set_grad_enabled(grad):
        for _ in range(4):
            torch.testing.assert_close(tf(x), model(x))
            tc(x)
        assert (tf_count.n, tc_count.n) == (1, 1)
        assert _reasons(caplog) == []
        change(model)
        change(twin)
        out = tf(x)
        torch.testing.assert_close(out, model(x))
        torch.testing.assert_close(tc(x), twin(x))
        # The changed tree hits its new entry from now on.
        for _ in range(3):
            torch.testing.assert_close(tf(x), model(x))
    return _reasons(caplog), tf_count.n, tc_count.n


def _requires_grad_off(m):
    m.blocks[2][1].w.requires_grad_(False)


def _data_of_another_shape(m):
    with torch.no_grad():
        m.blocks[1][0].w.data = torch.randn(4, 4).t()  # same sizes, strides (1, 4)


def _scale(m):
    m.blocks[2][0].scale = 3


def test_requires_grad_changed_in_place_recompiles(caplog):
    reasons, tf_n, tc_n = _run(Tree, _requires_grad_off, caplog, grad=True)
    assert reasons == [
        "tensor 'L['self']._modules['blocks']._modules['2']._modules['1']._parameters['w']' "
        "requires_grad mismatch. expected requires_grad=True, actual requires_grad=False"
    ]
    # torch.compile (2.11) keeps its one graph (its dict-tag match skips the parameter's tensor
    # check, see the next test); what our entry's graph computes for autograd depends on it.
    assert (tf_n, tc_n) == (2, 1)


def test_parameter_data_swapped_for_other_strides_recompiles(caplog):
    reasons, tf_n, tc_n = _run(Tree, _data_of_another_shape, caplog)
    assert reasons == [
        "tensor 'L['self']._modules['blocks']._modules['1']._modules['0']._parameters['w']' "
        "stride mismatch at index 0. expected 4, actual 1"
    ]
    # torch.compile (2.11) keeps its entry here (1 graph): its recursive dict-tag match skips
    # a module subtree whose dicts did not change, tensors included, and `.data =` changes
    # none. A torchferro entry's kernels may be specialised to the strides, so the tensor
    # checks are never skipped (the eager values agree either way, checked in `_run`).
    assert (tf_n, tc_n) == (2, 1)


def test_config_attribute_changed_recompiles(caplog):
    reasons, tf_n, tc_n = _run(Tree, _scale, caplog)
    assert reasons == [
        "L['self']._modules['blocks']._modules['2']._modules['0'].scale == 2 failed. actual 3"
    ]
    assert (tf_n, tc_n) == (2, 2)


def test_submodule_replaced_by_one_of_the_same_kind_runs_its_weights(caplog):
    def replace(m):
        m.blocks[0][1] = Leaf()

    reasons, tf_n, tc_n = _run(Tree, replace, caplog)
    # New weights of the same metadata: the entry still holds and reads the new ones (the
    # values are compared with eager's inside `_run`).
    assert reasons == []
    assert (tf_n, tc_n) == (1, 1)


def test_submodule_replaced_by_another_kind_recompiles(caplog):
    def replace(m):
        m.blocks[1][1] = nn.Identity()

    reasons, tf_n, tc_n = _run(Tree, replace, caplog)
    assert reasons == [
        "type(L['self']._modules['blocks']._modules['1']._modules['1']) mismatch. "
        "expected Leaf, actual Identity"
    ]
    assert (tf_n, tc_n) == (2, 2)


def test_forward_hook_added_recompiles(caplog):
    def hook(m):
        m.blocks[2][0].register_forward_hook(lambda mod, args, out: out + 1)

    reasons, tf_n, tc_n = _run(Tree, hook, caplog)
    assert reasons == [
        "len(L['self']._modules['blocks']._modules['2']._modules['0']._forward_hooks) "
        "mismatch. expected 0, actual 1"
    ]
    # torch.compile (2.11) makes no new graph here (its value is eager's all the same); our
    # entry's graph has no hook in it, so the length check must run.
    assert (tf_n, tc_n) == (2, 1)


def test_parameter_added_to_a_remembered_dict_recompiles(caplog):
    def register(m):
        # A float64 parameter first in the root's (empty) `_parameters`: `next(parameters())`
        # now yields it, and the result's dtype follows.
        m.register_parameter("first", nn.Parameter(torch.zeros(1, dtype=torch.float64)))

    reasons, tf_n, tc_n = _run(FirstParam, register, caplog)
    assert reasons == [
        "L['self']._parameters keys mismatch. expected [], actual ['first']"
    ]
    assert (tf_n, tc_n) == (2, 2)


def test_dict_changed_and_restored_still_hits(caplog):
    def round_trip(m):
        layer = m.inner._modules.pop("1")
        m.inner._modules["1"] = layer

    reasons, tf_n, tc_n = _run(FirstParam, round_trip, caplog)
    assert reasons == []
    assert (tf_n, tc_n) == (1, 1)


def test_two_entries_alternate_then_a_parameter_changes(caplog):
    """Entries told apart by the input's size: the one that misses keeps its tensor checks
    inline (fail-first), the one that hits batches them; a parameter change then fails both."""
    counter = Counter()
    model = Tree()
    f = torchferro.compile(model, backend=counter, dynamic=False)
    a, b = torch.randn(2, 4), torch.randn(3, 4)
    with torch.no_grad():
        for _ in range(4):
            for x in (a, b):
                torch.testing.assert_close(f(x), model(x))
        assert counter.n == 2
        model.blocks[0][0].w.data = torch.randn(4, 4, dtype=torch.float64)
        for x in (a, b):
            with pytest.raises(RuntimeError):
                model(x)
        model.blocks[0][0].w.data = torch.randn(4, 4).t()
        for _ in range(2):
            for x in (a, b):
                torch.testing.assert_close(f(x), model(x))
        assert counter.n == 4


def test_entries_that_alternate_keep_hitting(caplog):
    """Two entries told apart by the input's size, called in turn and then one of them
    repeatedly: each check of an entry fails on the input or passes, and a pass must not be
    turned into a miss by the input's tensor check being made inline on the remembered path
    (no third graph, no recompile, eager's values throughout)."""
    counter = Counter()
    model = Tree()
    f = torchferro.compile(model, backend=counter, dynamic=False)
    a, b = torch.randn(2, 4), torch.randn(3, 4)
    caplog.set_level(logging.INFO, logger="torchferro")
    with torch.no_grad():
        for x in [a, b] * 6 + [a] * 6 + [b] * 6 + [a, b] * 3:
            torch.testing.assert_close(f(x), model(x))
    assert counter.n == 2
    assert len(_reasons(caplog)) == 1


def test_weights_tied_after_warm_hits_recompile(caplog):
    """The `distinct` group passes a walk whose addresses are the last passing walk's; tying
    two weights changes the addresses (one object twice), so the group is compared again."""

    def tie(m):
        m.inner[1].weight = m.inner[0].weight

    reasons, tf_n, tc_n = _run(FirstParam, tie, caplog)
    assert len(reasons) == 1
    assert reasons[0].endswith("are distinct objects mismatch: two are one object")
    # torch.compile (2.11) keeps its graph: it has no distinctness guard, and this forward's
    # graph does not change; ours is the `distinct` group of `tests/test_module_tree_aliasing.py`
    # (a walk over tied weights yields fewer parameters).
    assert (tf_n, tc_n) == (2, 1)
