"""Effects that must happen on every call, never once at trace time: optimizer steps inside a
compiled training step, RNG seeding and state changes, random ops (their stream and the global
RNG state after the call equal eager's), functions marked ``torch.compiler.disable``, and
storage queries. Programs that draw random numbers seed the global generator before each call
(``prepare``), so eager and compiled runs start from the same state."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from .harness import module_program, program


def _seed(target, seed):
    torch.manual_seed(100 + seed)


def x34(r):
    return (r.randn(3, 4),)


def x8y(r):
    return (r.randn(6, 8), r.randn(6, 1))


# ---------------------------------------------------------------------------------------------
# Training steps: the optimizer owned by the module (a private attribute, so the harness compares
# the parameters after each call: the second call must see the first call's update).


# `opt.step()` is traced into its own graph, as torch.compile traces it (its counts, noted per
# program below, are one more each: not re-checked this session); `zero_grad` and `backward`
# break. SGD with momentum makes its buffers on the first call: the update recompiles once (new
# state keys).
class _Step(nn.Module):
    def __init__(self, net, make_opt):
        super().__init__()
        self.net = net
        self._opt = make_opt(self.net.parameters())

    def forward(self, x, y):
        self._opt.zero_grad()
        loss = ((self.net(x) - y) ** 2).mean()
        loss.backward()
        self._opt.step()
        return loss.detach()


def _linear():
    return nn.Linear(8, 1)


# torch.compile: 3 graphs
module_program(
    "train_step_sgd",
    lambda: _Step(_linear(), lambda p: torch.optim.SGD(p, lr=0.1)),
    x8y,
    2,
    2,
)
# torch.compile: 4 graphs
module_program(
    "train_step_sgd_momentum",
    lambda: _Step(_linear(), lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9)),
    x8y,
    3,
    2,
)
# torch.compile: 3 graphs
module_program(
    "train_step_adam",
    lambda: _Step(_linear(), lambda p: torch.optim.Adam(p, lr=0.01)),
    x8y,
    2,
    2,
)
# torch.compile: 3 graphs
module_program(
    "train_step_adamw",
    lambda: _Step(_linear(), lambda p: torch.optim.AdamW(p, lr=0.01)),
    x8y,
    2,
    2,
)


class _Conv(nn.Module):
    """A small residual conv net standing in for resnet18."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1)
        self.fc = nn.Linear(8, 1)

    def forward(self, x):
        h = F.relu(self.bn(self.conv1(x)))
        h = F.relu(h + self.conv2(h))
        return self.fc(h.mean((2, 3)))


# torch.compile: 4 graphs
module_program(
    "train_step_conv_net_sgd_momentum",
    lambda: _Step(
        _Conv(), lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9, weight_decay=1e-4)
    ),
    lambda r: (r.randn(2, 3, 8, 8), r.randn(2, 1)),
    3,
    2,
)


class _Backward(nn.Module):
    """The loss and its backward compiled; the optimizer step left to eager code (prepare)."""

    def __init__(self):
        super().__init__()
        self.net = _linear()

    def forward(self, x, y):
        loss = ((self.net(x) - y) ** 2).mean()
        loss.backward()
        return loss.detach()


def _eager_step(target, seed):
    # The step of the previous call runs eagerly, outside the compiled forward.
    if seed == 1:
        with torch.no_grad():
            for p in target.parameters():
                p -= 0.1 * p.grad
                p.grad = None


# torch.compile: 2 graphs
module_program(
    "backward_compiled_step_eager", _Backward, x8y, 2, 1, prepare=_eager_step
)


class _NoGradUpdate(nn.Module):
    """An optimizer-like update written out under no_grad: traced, not run at trace time."""

    def __init__(self):
        super().__init__()
        self.net = _linear()

    def forward(self, x, y):
        loss = ((self.net(x) - y) ** 2).mean()
        loss.backward()
        with torch.no_grad():
            for p in self.net.parameters():
                p.sub_(0.1 * p.grad)
                p.grad = None
        return loss.detach()


# torch.compile: 2 graphs. As ours: the forward up to `loss.backward()`, and the update, where
# each `p.grad` is a graph input (`<parameter>.grad`, guarded), `p.sub_` is traced under no_grad
# and `p.grad = None` is written after the graph.
module_program("manual_update_under_no_grad", _NoGradUpdate, x8y, 2, 1)


# ---------------------------------------------------------------------------------------------
# RNG: seeding and state changes run on every call; random ops draw eager's stream.


# torch.compile: 1 graphs
@program(x34, 1, 1, prepare=_seed)
def manual_seed_inside(x):
    torch.manual_seed(0)
    return x + torch.rand(3, 4)


# torch.compile: 1 graphs
@program(x34, 1, fullgraph=True, prepare=_seed)
def rand_and_randn(x):
    return x + torch.rand(3, 4), torch.randn(2) * 2


# torch.compile: 1 graphs
@program(x34, 1, fullgraph=True, prepare=_seed)
def randperm_index(x):
    return x[torch.randperm(3)]


# torch.compile: 1 graphs
@program(x34, 1, fullgraph=True, prepare=_seed)
def dropout_in_training_mode(x):
    return F.dropout(x, 0.5, training=True) + 1


# torch.compile: 1 graphs
@program(x34, 1, fullgraph=True, prepare=_seed)
def bernoulli_in_place_on_a_copy(x):
    y = torch.zeros_like(x)
    y.bernoulli_(0.5)
    return x * y


# torch.compile: 1 graphs
@program(x34, 1, fullgraph=True, prepare=_seed)
def multinomial_draws(x):
    return torch.multinomial(x.abs() + 0.1, 2)


# torch.compile: 2 graphs
@program(x34, 2, 2, prepare=_seed)
def rng_state_saved_and_restored(x):
    state = torch.get_rng_state()
    a = torch.rand(3, 4)
    torch.set_rng_state(state)
    b = torch.rand(3, 4)
    return x + a - b


# torch.compile: 0 graphs
@program(x34, 0, 1, eager=1, prepare=_seed)
def fork_rng_region(x):
    with torch.random.fork_rng():
        torch.manual_seed(7)
        a = torch.rand(3, 4)
    return x + a + torch.rand(3, 4)


# torch.compile: 1 graphs
@program(x34, 1, fullgraph=True, prepare=_seed)
def seeded_dropout_module_in_training(x):
    return nn.functional.dropout(x * 2, p=0.3) - torch.rand_like(x)


# ---------------------------------------------------------------------------------------------
# Functions that must run eagerly, and storage queries.


@torch.compiler.disable
def _disabled_helper(t):
    return t * 2 + 1


@torch._dynamo.disable
def _dynamo_disabled_helper(t):
    return t - 1


# torch.compile: 2 graphs
@program(x34, 2, 1)
def calls_a_compiler_disabled_function(x):
    y = x.sin()
    z = _disabled_helper(y)
    return z.cos()


# torch.compile: 2 graphs
@program(x34, 2, 1)
def calls_a_dynamo_disabled_function(x):
    y = x.sin()
    z = _dynamo_disabled_helper(y)
    return z.cos()


# torch.compile: 1 graphs (the storage size folds, guarded: `interp/storage.rs`)
@program(x34, 1, fullgraph=True)
def branch_on_untyped_storage_size(x):
    # As torch.distributed.fsdp's flat-parameter helpers do.
    if x.untyped_storage().size() == x.numel() * x.element_size():
        return x + 1
    return x - 1


# torch.compile: 1 graphs
@program(x34, 1, fullgraph=True)
def untyped_storage_size_value(x):
    return x * 2, x.untyped_storage().size()
