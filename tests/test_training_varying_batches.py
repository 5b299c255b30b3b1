"""Training loops over batches whose sizes change (session 27, hunt27): the last batch of an
epoch smaller (100 samples in batches of 32: 32, 32, 32, 4), sequence lengths padded to each
batch's longest, images of several sizes, with batch norm's running statistics, dropout under a
seed, gradient clipping, SGD with momentum and AdamW, and `torch.no_grad` evaluation between
epochs. The model (or the whole step) is compiled with torchferro's default backend; losses,
every parameter and every buffer equal eager's after every step, evaluation outputs too, and,
where the model is compiled, the forward graph count over the loop (training and evaluation
calls) is torch.compile's (a counting backend, same calls).

AdamW runs with ``eps=1e-3``: a bias ahead of a batch norm (or a key projection's bias under a
softmax) has a gradient that is zero in exact arithmetic, and rounding noise of 1e-9 there is
turned into a full step ``lr * sign(noise)`` by AdamW's normalisation at the default eps, so
eager itself differs from eager with another summation order."""

from __future__ import annotations

import copy

import pytest
import torch
import torch._dynamo
import torch.nn.functional as F
from torch import nn

import torchferro
import torchferro.compiler
from programs.counting import Count


class _MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = nn.Linear(6, 16)
        self.bn = nn.BatchNorm1d(16)
        self.dp = nn.Dropout(0.2)
        self.l2 = nn.Linear(16, 3)

    def forward(self, x):
        return self.l2(self.dp(F.relu(self.bn(self.l1(x)))))


class _Seq(nn.Module):
    """Causal attention over padded token ids; the mean over real tokens divides by a count
    computed from the padding mask."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(20, 8, padding_idx=0)
        self.ln = nn.LayerNorm(8)
        self.qkv = nn.Linear(8, 24)
        self.dp = nn.Dropout(0.1)
        self.out = nn.Linear(8, 3)

    def forward(self, ids):
        h = self.ln(self.emb(ids))
        _, t, c = h.shape
        q, k, v = self.qkv(h).split(c, -1)
        a = (q @ k.transpose(1, 2)) / (c**0.5)
        causal = torch.triu(torch.ones(t, t, dtype=torch.bool), 1)
        a = self.dp(a.masked_fill(causal, float("-inf")).softmax(-1))
        real = (ids != 0).unsqueeze(-1).float()
        h = (a @ v) * real
        return self.out(h.sum(1) / real.sum(1).clamp(min=1))


class _Conv(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.c2 = nn.Conv2d(8, 8, 3, stride=2, padding=1)
        self.fc = nn.Linear(8, 3)

    def forward(self, x):
        h = F.max_pool2d(F.relu(self.bn(self.c1(x))), 2, ceil_mode=True)
        return self.fc(F.adaptive_avg_pool2d(F.relu(self.c2(h)), 1).flatten(1))


def _mlp_batches(g):
    x, y = torch.randn(100, 6, generator=g), torch.randint(0, 3, (100,), generator=g)
    return [(x[i : i + 32], y[i : i + 32]) for i in range(0, 100, 32)]


def _seq_batches(g):
    out = []
    for t, b in [(7, 4), (12, 4), (5, 4), (12, 4), (9, 4), (3, 2)]:
        ids = torch.randint(1, 20, (b, t), generator=g)
        for r in range(b):
            ids[r, int(torch.randint(1, t + 1, (1,), generator=g)) :] = 0
        out.append((ids, torch.randint(0, 3, (b,), generator=g)))
    return out


def _conv_batches(g):
    return [
        (torch.randn(b, 3, s, s, generator=g), torch.randint(0, 3, (b,), generator=g))
        for b, s in [(4, 16), (4, 12), (4, 20), (3, 16), (2, 9)]
    ]


MODELS = {
    "mlp_last_batch_smaller": (_MLP, _mlp_batches),
    "seq_padded_lengths": (_Seq, _seq_batches),
    "conv_multi_scale": (_Conv, _conv_batches),
}


def _optimizer(kind, model):
    if kind == "adamw":
        return torch.optim.AdamW(model.parameters(), lr=1e-2, eps=1e-3)
    return torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)


def _step(model, opt, x, y, clip):
    opt.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    if clip:
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
    opt.step()
    return loss


def _close(a, b):
    torch.testing.assert_close(a, b, rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("name", list(MODELS))
@pytest.mark.parametrize(
    "whole_step, kind, clip", [(False, "sgd", True), (True, "adamw", False)]
)
def test_training_over_varying_batches_matches_eager(name, whole_step, kind, clip):
    make, batches = MODELS[name]
    batches = batches(torch.Generator().manual_seed(0))
    torch.manual_seed(1)
    eager = make()
    ours, theirs = copy.deepcopy(eager), copy.deepcopy(eager)
    opts = [_optimizer(kind, m) for m in (eager, ours, theirs)]
    torch._dynamo.reset()
    torchferro.compiler.reset()
    count = Count()
    their_model = torch.compile(theirs, backend=count)
    if whole_step:
        compiled_step = torchferro.compile(
            lambda x, y: _step(ours, opts[1], x, y, clip)
        )
        compiled_model = ours
    else:
        compiled_model = torchferro.compile(ours)
        compiled_step = lambda x, y: _step(compiled_model, opts[1], x, y, clip)  # noqa: E731
    try:
        for _epoch in range(2):
            for m in (eager, ours, theirs):
                m.train()
            for i, (x, y) in enumerate(batches):
                torch.manual_seed(100 + i)
                want = _step(eager, opts[0], x, y, clip)
                torch.manual_seed(100 + i)
                _close(compiled_step(x, y), want)
                if not whole_step:
                    torch.manual_seed(100 + i)
                    _step(their_model, opts[2], x, y, clip)
                for (n, p), q in zip(eager.named_parameters(), ours.parameters()):
                    _close(q, p)
                for (n, b), c in zip(eager.named_buffers(), ours.buffers()):
                    _close(c, b)
            for m in (eager, ours, theirs):
                m.eval()
            with torch.no_grad():
                for x, _ in batches[:3]:
                    _close(compiled_model(x), eager(x))
                    if not whole_step:
                        their_model(x)
        if not whole_step:
            graphs = len(torchferro.compiler.cache_entries(compiled_model))
            # No more graphs than torch.compile (the default automatic dynamic, whole-tensor and
            # size-oblivious since session 27, makes fewer where batch and length both vary).
            assert graphs <= count.n, (graphs, count.n)
    finally:
        torch._dynamo.reset()
        torchferro.compiler.reset()
