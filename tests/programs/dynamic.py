"""Programs shared by the dynamic-shape tests and ``bench/dynamic_kernels.py`` (issue 18)."""

from __future__ import annotations

import random

import torch
import torch.nn.functional as F
from torch import nn


class Block(nn.Module):
    """A GPT-2 block: pre-norm causal self-attention and an MLP; the sequence length is the
    dimension that varies."""

    def __init__(self, d=32, h=4):
        super().__init__()
        self.h = h
        self.ln1 = nn.LayerNorm(d)
        self.attn = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc = nn.Linear(d, 4 * d)
        self.out = nn.Linear(4 * d, d)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.attn(self.ln1(x)).split(C, dim=2)
        q = q.view(B, T, self.h, C // self.h).transpose(1, 2)
        k = k.view(B, T, self.h, C // self.h).transpose(1, 2)
        v = v.view(B, T, self.h, C // self.h).transpose(1, 2)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).contiguous().view(B, T, C))
        return x + self.out(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


def inductor_log(records) -> list[str]:
    """The messages of ``torchferro.inductor`` log records (what ``caplog`` captured)."""
    return [r.getMessage() for r in records if r.name == "torchferro.inductor"]


def same_values(a, b):
    """A compiled result (a tensor or a sequence of them) against eager's: shapes and dtypes
    exact, values within float32 rounding."""
    flat = lambda v: v if isinstance(v, (tuple, list)) else (v,)  # noqa: E731
    for x, y in zip(flat(a), flat(b), strict=True):
        assert x.shape == y.shape and x.dtype == y.dtype, (x.shape, y.shape)
        torch.testing.assert_close(x, y, rtol=1e-5, atol=1e-5)


def grid_orders(batches, lengths):
    """The (batch, length) grid in three orders a recompile policy must not depend on:
    batch-major, length-major and shuffled (seeded), keyed by those names."""
    grid = [(b, t) for b in batches for t in lengths]
    shuffled = list(grid)
    random.Random(0).shuffle(shuffled)
    return {
        "batch_major": grid,
        "length_major": [(b, t) for t in lengths for b in batches],
        "random": shuffled,
    }
