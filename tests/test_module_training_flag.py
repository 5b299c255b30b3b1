"""The `training` flag of a torch.nn layer is guarded only where the traced code reads it.

A layer lowered by the tracer (`interp/calls/modules.rs::call_module_body`) reads it only for
dropout; an inlined forward (BatchNorm, a user module) reads `self.training` itself, and that
read is guarded. Until session 20 every lowered layer guarded its flag, so a freshly made
(training) `Linear` swapped into an eval model recompiled where torch.compile does not.
Graph counts are torch.compile's (`backend` counting graphs), values eager's.

Session 25 (hunt25): the generator also patches a layer's `forward` on the instance between
calls (and removes the patch again) and stacks a layer whose class overrides `__call__`: both
were ignored by the tracer (a wrong answer; `tests/test_module_call_dispatch.py`)."""

import copy
import os
import types

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
import torch
from torch import nn

import torchferro
from programs.counting import compiled_counting


@pytest.fixture(autouse=True)
def _reset():
    torchferro.compiler.reset()
    torch._dynamo.reset()
    yield
    torchferro.compiler.reset()
    torch._dynamo.reset()


class Stack(nn.Module):
    def __init__(self, extra=()):
        super().__init__()
        self.layers = nn.ModuleList(
            [nn.Linear(6, 6), nn.ReLU(), nn.Linear(6, 6), *extra]
        )

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def _swap_fresh_linear(m):
    m.layers[0] = nn.Linear(6, 6)  # made in training mode


def _train(m):
    m.train()


def _eval(m):
    m.eval()


def _flip_last_layer(m):
    m.layers[3].train()


# (name, extra layers, the change between the two calls)
CASES = [
    ("fresh_linear_in_eval_model", (), _swap_fresh_linear),
    ("fresh_linear_beside_dropout", (nn.Dropout(0.5),), _swap_fresh_linear),
    ("whole_model_to_train_with_dropout", (nn.Dropout(0.5),), _train),
    ("whole_model_to_train_no_reader", (), _train),
    ("dropout_alone_to_train", (nn.Dropout(0.5),), _flip_last_layer),
    ("batchnorm_alone_to_train", (nn.BatchNorm1d(6),), _flip_last_layer),
    ("whole_model_to_train_with_batchnorm", (nn.BatchNorm1d(6),), _train),
]


def _run(compile_fn, extra, change):
    torch.manual_seed(0)
    m = Stack(tuple(copy.deepcopy(extra))).eval()
    compiled, graphs = compiled_counting(compile_fn, m)
    x = torch.randn(4, 6)
    outs = []
    torch.manual_seed(1)
    outs.append(compiled(x))
    torch.manual_seed(2)
    change(m)
    torch.manual_seed(3)
    outs.append(compiled(x))
    return outs, graphs.n, m


@pytest.mark.parametrize("name,extra,change", CASES, ids=[c[0] for c in CASES])
def test_training_flag_recompiles_as_torch_compile(name, extra, change):
    theirs, tc_graphs, _ = _run(
        lambda m, backend: torch.compile(m, backend=backend), extra, change
    )
    ours, tf_graphs, m = _run(torchferro.compile, extra, change)
    eager, _, m_eager = _run(lambda m, backend: m, extra, change)
    for a, b in zip(ours, eager):
        torch.testing.assert_close(a, b)
    for a, b in zip(theirs, eager):
        torch.testing.assert_close(a, b)
    # BatchNorm's running statistics after the training call are eager's.
    for (ka, a), (kb, b) in zip(m.state_dict().items(), m_eager.state_dict().items()):
        assert ka == kb
        torch.testing.assert_close(a, b, msg=ka)
    assert tf_graphs == tc_graphs, (
        f"torchferro {tf_graphs} graphs, torch.compile {tc_graphs}"
    )


def test_fresh_linear_in_eval_model_is_one_graph():
    """The case that recompiled before session 20, with its count written out."""
    _, graphs, _ = _run(torchferro.compile, (), _swap_fresh_linear)
    assert graphs == 1


class ReadsFlag(nn.Module):
    """A user layer whose forward branches on its own flag (an inlined, guarded read)."""

    def forward(self, x):
        return x * 2 if self.training else x - 1


class CallOverride(nn.Module):
    """A layer whose class wraps `Module.__call__` (its output halved, plus one)."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(6, 6)

    def __call__(self, x):
        return super().__call__(x) * 0.5 + 1

    def forward(self, x):
        return self.lin(x)


def _patched_forward(self, x):
    """Set on an instance as its `forward` (what `Module.__call__` then runs)."""
    return type(self).forward(self, x) * -2 + 0.25


# Layers the generator stacks: flag readers (dropout, batch norm, a user layer) and layers
# whose lowering does not read the flag.
LAYERS = {
    "linear": lambda: nn.Linear(6, 6),
    "relu": nn.ReLU,
    "gelu": nn.GELU,
    "layernorm": lambda: nn.LayerNorm(6),
    "dropout": lambda: nn.Dropout(0.5),
    "batchnorm": lambda: nn.BatchNorm1d(6),
    "reads_flag": ReadsFlag,
    "call_override": CallOverride,
}


def _apply(m, change):
    kind, i = change
    i %= len(m.layers)
    if kind == "train":
        m.train()
    elif kind == "eval":
        m.eval()
    elif kind == "flip":
        m.layers[i].train(not m.layers[i].training)
    elif kind == "fresh":
        # A new layer of the same kind, made in training mode, keeping the old weights.
        old = m.layers[i]
        new = copy.deepcopy(old)
        new.train()
        m.layers[i] = new
    elif kind == "patch":
        # A forward set on the instance shadows the class's; patching again removes it.
        layer = m.layers[i]
        if "forward" in vars(layer):
            del layer.forward
        else:
            layer.forward = types.MethodType(_patched_forward, layer)


def _run_generated(compile_fn, names, start_eval, changes):
    torch.manual_seed(0)
    m = Stack()
    m.layers = nn.ModuleList([LAYERS[n]() for n in names])
    if start_eval:
        m.eval()
    compiled, graphs = compiled_counting(compile_fn, m)
    x = torch.randn(4, 6)
    outs = []
    for k, change in enumerate([None, *changes]):
        if change is not None:
            _apply(m, change)
        torch.manual_seed(10 + k)
        outs.append(compiled(x))
    return outs, graphs.n, m


# CI runs 25 fixed examples; TF_EXAMPLES=N explores N random ones.
@settings(
    max_examples=int(os.environ.get("TF_EXAMPLES", "25")),
    deadline=None,
    derandomize=os.environ.get("TF_EXAMPLES") is None,
)
@given(
    names=st.lists(st.sampled_from(sorted(LAYERS)), min_size=1, max_size=5),
    start_eval=st.booleans(),
    changes=st.lists(
        st.tuples(
            st.sampled_from(["train", "eval", "flip", "fresh", "patch"]),
            st.integers(0, 4),
        ),
        min_size=1,
        max_size=3,
    ),
)
def test_generated_training_flag_changes_match_torch_compile(
    names, start_eval, changes
):
    """Random stacks, flags flipped and layers replaced between calls: values, BatchNorm
    statistics and the graph count equal torch.compile's (eager backend)."""
    torchferro.compiler.reset()
    torch._dynamo.reset()
    theirs, tc_graphs, _ = _run_generated(
        lambda m, backend: torch.compile(m, backend=backend), names, start_eval, changes
    )
    ours, tf_graphs, m = _run_generated(torchferro.compile, names, start_eval, changes)
    eager, _, m_eager = _run_generated(lambda m, backend: m, names, start_eval, changes)
    for a, b in zip(ours, eager):
        torch.testing.assert_close(a, b)
    for (ka, a), (kb, b) in zip(m.state_dict().items(), m_eager.state_dict().items()):
        assert ka == kb
        torch.testing.assert_close(a, b, msg=ka)
    assert tf_graphs == tc_graphs, (
        f"torchferro {tf_graphs} graphs, torch.compile {tc_graphs}"
    )
