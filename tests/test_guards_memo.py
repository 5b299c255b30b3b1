"""A guard walk reuses a value fetched through a dict whose version tag did not change, and skips
the identity-pure checks on it (`tracer/src/guards/memo.rs`). Neither may hide a change a user
makes between calls: every scenario below warms an entry (so the memo is filled), changes one
thing deep in a module tree, and calls again. Each call's value must be eager's, and the graph
count after each call must be exactly what it is with the memo off (`_C._guard_memo(False)`,
the walk as it was before) and the count written in the test. The hypothesis test draws
sequences of these changes between calls."""

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from torch import nn

import torchferro
from torchferro import _C

SCALE = 1.0


class Counter:
    def __init__(self):
        self.n = 0

    def __call__(self, gm, example_inputs):
        self.n += 1
        return gm.forward


class Leaf(nn.Module):
    bias_on = (
        True  # a class attribute the forward reads (`del` of the instance's falls back)
    )

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(4, 4))
        self.register_buffer("b", torch.randn(4))
        self.scale = 2
        self.cfg = {"k": 1.0}

    def forward(self, x):
        y = x @ self.w * self.scale * self.cfg["k"] * SCALE
        if self.bias_on:
            y = y + self.b
        if self.training:
            y = y * 0.5
        return y


class OtherLeaf(Leaf):
    def forward(self, x):
        return super().forward(x) - 1


class Tree(nn.Module):
    """root -> ModuleList -> 2 Sequentials -> 2 leaves each."""

    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList(nn.Sequential(Leaf(), Leaf()) for _ in range(2))

    def forward(self, x):
        for b in self.blocks:
            x = b(x).tanh()
        return x


@pytest.fixture(autouse=True)
def _reset():
    global SCALE
    torchferro.compiler.reset()
    on = _C._guard_memo()
    yield
    _C._guard_memo(on)
    torchferro.compiler.reset()
    SCALE = 1.0
    Leaf.forward = _LEAF_FORWARD
    if "scale" in Leaf.__dict__:
        del Leaf.scale


_LEAF_FORWARD = Leaf.forward


def _deep(m):
    return m.blocks[1][1]


# Each change: (name, function of the model). The leaf changed sits 5 dict steps below the root.
def _fwd_hook(m):
    _deep(m).register_forward_hook(lambda mod, args, out: out + 1)


def _pre_hook(m):
    _deep(m).register_forward_pre_hook(lambda mod, args: (args[0] * 2,))


def _hook_added_and_removed(m):
    _deep(m).register_forward_hook(lambda mod, args, out: out + 1).remove()


def _replace_same_kind(m):
    m.blocks[1][1] = Leaf().eval()  # a new Leaf is in training mode


def _replace_other_kind(m):
    m.blocks[1][1] = OtherLeaf().eval()


def _set_attr(m):
    _deep(m).scale = 3


def _del_attr(m):
    _deep(m).bias_on = False  # instance attribute over the class's
    # (the next change in a sequence may `del` it again)


def _del_instance_attr(m):
    leaf = _deep(m)
    if "bias_on" in leaf.__dict__:
        del leaf.bias_on
    else:
        leaf.bias_on = False


def _patch_forward_instance(m):
    leaf = _deep(m)
    leaf.forward = lambda x: _LEAF_FORWARD(leaf, x) + 2


def _patch_forward_class(m):
    Leaf.forward = lambda self, x: _LEAF_FORWARD(self, x) * 3


def _class_property_over_instance_attr(m):
    # A data descriptor on the class wins over the instance dict's `scale`: no instance dict
    # changes, only the class's version tag.
    Leaf.scale = property(lambda self: 5, lambda self, v: None)


def _swap_parameter(m):
    _deep(m).w = nn.Parameter(torch.randn(4, 4))


def _requires_grad_off(m):
    _deep(m).w.requires_grad_(False)


def _buffer_in_place(m):
    with torch.no_grad():
        _deep(m).b.add_(1.0)


def _train(m):
    m.train()


def _eval(m):
    m.eval()


def _global(m):
    global SCALE
    SCALE = 3.0


def _dict_in_place_same_length(m):
    _deep(m).cfg["k"] = 4.0


def _modules_dict_same_length(m):
    # Two siblings exchanged in place: `_modules` keeps its keys and length.
    seq = m.blocks[0]
    a, b = seq._modules["0"], seq._modules["1"]
    seq._modules["0"], seq._modules["1"] = b, a


def _class_reassigned(m):
    _deep(m).__class__ = OtherLeaf


def _instance_dict_replaced(m):
    leaf = _deep(m)
    d = dict(leaf.__dict__)
    d["scale"] = 7
    leaf.__dict__ = d


CHANGES = {
    "fwd_hook": _fwd_hook,
    "pre_hook": _pre_hook,
    "hook_added_and_removed": _hook_added_and_removed,
    "replace_same_kind": _replace_same_kind,
    "replace_other_kind": _replace_other_kind,
    "set_attr": _set_attr,
    "shadow_class_attr": _del_attr,
    "del_instance_attr": _del_instance_attr,
    "patch_forward_instance": _patch_forward_instance,
    "patch_forward_class": _patch_forward_class,
    "class_property": _class_property_over_instance_attr,
    "swap_parameter": _swap_parameter,
    "requires_grad_off": _requires_grad_off,
    "buffer_in_place": _buffer_in_place,
    "train": _train,
    "eval": _eval,
    "global": _global,
    "dict_in_place": _dict_in_place_same_length,
    "modules_swapped": _modules_dict_same_length,
    "class_reassigned": _class_reassigned,
    "instance_dict_replaced": _instance_dict_replaced,
}


def _counts(changes, memo: bool, grad: bool = True):
    """Runs the calls with `changes` applied one per call after a warm-up; returns the graph
    count after each call. Every call's value is checked against eager on the same model."""
    global SCALE
    torchferro.compiler.reset()
    SCALE = 1.0
    Leaf.forward = _LEAF_FORWARD
    if "scale" in Leaf.__dict__:
        del Leaf.scale
    _C._guard_memo(memo)
    torch.manual_seed(0)
    model = Tree().eval()
    counter = Counter()
    f = torchferro.compile(model, backend=counter, dynamic=False)
    x = torch.randn(3, 4)
    out = []
    with torch.set_grad_enabled(grad):
        for _ in range(3):
            torch.testing.assert_close(f(x), model(x))
        for change in changes:
            CHANGES[change](model)
            for _ in range(2):
                torch.testing.assert_close(f(x), model(x))
            out.append(counter.n)
    return out


# (change, graphs after it): a change the entry's graph depends on recompiles once; one it
# does not (new weights of the same layout, a buffer's values, a hook added then removed) keeps
# the one graph and reads the new objects.
EXPECTED = {
    "fwd_hook": 2,
    "pre_hook": 2,
    "hook_added_and_removed": 1,
    "replace_same_kind": 1,
    "replace_other_kind": 2,
    "set_attr": 2,
    "shadow_class_attr": 2,
    "del_instance_attr": 2,
    "patch_forward_instance": 2,
    "patch_forward_class": 2,
    "class_property": 2,
    "swap_parameter": 1,
    "requires_grad_off": 2,
    "buffer_in_place": 1,
    "train": 2,
    "eval": 1,
    "global": 2,
    "dict_in_place": 2,
    "modules_swapped": 1,
    "class_reassigned": 2,
    "instance_dict_replaced": 2,
}


# `forward` replaced on the class: the class dicts of the MRO up to the one defining `forward`
# are guarded where a module's forward is inlined (`interp/calls/modules.rs`); before, the entry
# kept running the old forward, with the memo and without it, as torch.compile (2.11) does.
@pytest.mark.parametrize("change", sorted(CHANGES))
def test_change_between_calls_recompiles_as_without_the_memo(change):
    before = _counts([change], memo=False)
    after = _counts([change], memo=True)
    assert after == before == [EXPECTED[change]]


def test_the_memo_skips_on_a_hit():
    """On a steady hit the walk reuses most fetches and skips the identity checks (the counts
    that `bench` reports); with the memo off it fetches everything."""
    torch.manual_seed(0)
    model = Tree().eval()
    f = torchferro.compile(model, backend="eager", dynamic=False)
    x = torch.randn(3, 4)
    seen = {}
    for memo in (False, True):
        _C._guard_memo(memo)
        for _ in range(3):
            f(x)
        _C._guard_counts()
        f(x)
        seen[memo] = _C._guard_counts()
    (ev_off, _, fetched_off, reused_off), (ev_on, skipped_on, fetched_on, reused_on) = (
        seen[False],
        seen[True],
    )
    assert reused_off == 0 and fetched_off > 0
    assert reused_on > fetched_on and skipped_on > 0 and ev_on < ev_off
    # Every value is fetched or reused either way: the same walk.
    assert fetched_on + reused_on == fetched_off
    torch.testing.assert_close(f(x), model(x))


def test_reassigned_attribute_value_is_read_again():
    """A parameter swapped through `_parameters` (the dict the memo remembers) is the one the
    graph reads: a stale reused value would give the old weights."""
    torch.manual_seed(0)
    model = Tree().eval()
    f = torchferro.compile(model, backend="eager", dynamic=False)
    x = torch.randn(3, 4)
    for _ in range(3):
        torch.testing.assert_close(f(x), model(x))
    for _ in range(3):
        _deep(model)._parameters["w"] = nn.Parameter(torch.randn(4, 4))
        torch.testing.assert_close(f(x), model(x))


@settings(
    max_examples=25,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    changes=st.lists(
        st.sampled_from(sorted(CHANGES)),
        min_size=1,
        max_size=5,
    ),
    grad=st.booleans(),
)
def test_generated_change_sequences_recompile_as_without_the_memo(changes, grad):
    assert _counts(changes, memo=True, grad=grad) == _counts(
        changes, memo=False, grad=grad
    )
