"""Issue 13 item 2 and the RNG part of item 8: RNG state changes and random ops inside compiled
functions must give eager's stream for the same seed (the harness seeds the global RNG before
each call and compares the state after it)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from .runner import case, register


def x34(r):
    return (r.randn(3, 4),)


@case(x34)
def manual_seed_inside(x):
    torch.manual_seed(0)
    return x + torch.rand(3, 4)


@case(x34)
def set_rng_state_inside(x):
    s = torch.get_rng_state()
    a = torch.rand(3, 4)
    torch.set_rng_state(s)
    b = torch.rand(3, 4)
    return x + a, b


@case(x34)
def fork_rng_inside(x):
    with torch.random.fork_rng():
        torch.manual_seed(1)
        a = torch.randn(3, 4)
    return a, torch.randn(3, 4) + x


@case(lambda r: (r.randn(3, 4), torch.Generator().manual_seed(7 + r.seed)))
def generator_argument(x, g):
    return x + torch.rand(3, 4, generator=g), torch.randn(2, generator=g)


@case(x34)
def rand_and_randn(x):
    return x * torch.rand(3, 4) + torch.randn(3, 4)


@case(x34)
def dropout_training(x):
    return F.dropout(x * 2, 0.5, training=True)


@case(x34)
def bernoulli_inplace_on_temporary(x):
    t = torch.empty_like(x).bernoulli_(0.3)
    return x * t


@case(lambda r: (r.randn(2, 5).softmax(-1),))
def multinomial(p):
    return torch.multinomial(p, 3), p * 2


@case(x34)
def randperm(x):
    return x[:, torch.randperm(4)]


@case(x34)
def rand_like_after_manual_seed_twice(x):
    torch.manual_seed(3)
    a = torch.rand_like(x)
    torch.manual_seed(3)
    return a - torch.rand_like(x)


register(
    "dropout_module_training",
    lambda: nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5)),
    x34,
    module=True,
)
