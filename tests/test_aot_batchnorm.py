"""Issue 17: training-mode BatchNorm written out in the joint graph (``fx/src/autodiff/
decompose.rs``): batch statistics as reductions, the normalization as pointwise ops the
partitioner recomputes in the backward, the running statistics written back by the compiled
forward. Compared with eager step by step: losses, gradients, parameters and every buffer
(running mean and variance, ``num_batches_tracked``), and version counters; in float64 against
torch.autograd. Also what the rewrite must leave alone: eval mode, ``momentum=None``,
``track_running_stats=False``, ``affine=False``, and the saved bytes it is for."""

from __future__ import annotations

import copy

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import torchferro
from torchferro import _aot


@pytest.fixture(autouse=True)
def _fresh(monkeypatch):
    monkeypatch.delenv("TORCHFERRO_AOT", raising=False)
    torchferro.compiler.reset()
    _aot.reset()


class Block(nn.Module):
    """resnet's basic block: conv, BatchNorm, ReLU, conv, BatchNorm, residual add, ReLU."""

    def __init__(self, c=4, **bn):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(c, **bn)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(c, **bn)
        self.head = nn.Linear(c, 3)

    def forward(self, x, y):
        h = F.relu(self.bn1(self.conv1(x)))
        h = self.bn2(self.conv2(h))
        h = F.relu(h + x)
        return F.cross_entropy(self.head(h.mean((2, 3))), y)


class Seq1d(nn.Module):
    """BatchNorm1d over (N, C, L) and over (N, C)."""

    def __init__(self, **bn):
        super().__init__()
        self.bn1 = nn.BatchNorm1d(3, **bn)
        self.fc = nn.Linear(5, 6)
        self.bn2 = nn.BatchNorm1d(6, **bn)

    def forward(self, x, y):
        h = torch.tanh(self.bn1(x))
        h = self.bn2(self.fc(h.sum(1)))
        return F.cross_entropy(h, y)


def _versions(m):
    return [t._version for t in m.buffers()]


def _train_compare(
    make, data, dtype, steps=4, tol=None, opt=lambda ps: torch.optim.SGD(ps, lr=0.1)
):
    torch.manual_seed(0)
    eager = make().to(dtype)
    comp = copy.deepcopy(eager)
    oe, oc = opt(eager.parameters()), opt(comp.parameters())
    cm = torchferro.compile(comp)
    tol = tol or {}
    for step in range(steps):
        x, y = data(step)
        ve, vc = _versions(eager), _versions(comp)
        le = eager(x, y)
        lc = cm(x, y)
        torch.testing.assert_close(lc, le, **tol)
        # Running statistics move no version counter (eager's kernel writes them in place
        # without one); num_batches_tracked moves once.
        assert [a - b for a, b in zip(_versions(comp), vc)] == [
            a - b for a, b in zip(_versions(eager), ve)
        ], step
        oe.zero_grad()
        oc.zero_grad()
        le.backward()
        lc.backward()
        for (name, pe), pc in zip(eager.named_parameters(), comp.parameters()):
            torch.testing.assert_close(
                pc.grad, pe.grad, msg=f"grad {name} at step {step}", **tol
            )
        oe.step()
        oc.step()
        for (name, be), bc in zip(eager.named_buffers(), comp.buffers()):
            torch.testing.assert_close(
                bc, be, msg=f"buffer {name} at step {step}", **tol
            )
        for (name, pe), pc in zip(eager.named_parameters(), comp.parameters()):
            torch.testing.assert_close(pc, pe, msg=f"{name} at step {step}", **tol)
    return eager, comp, cm


def _block_data(dtype):
    def data(s):
        g = torch.Generator().manual_seed(s)
        return (
            torch.randn(4, 4, 6, 6, generator=g, dtype=dtype),
            torch.randint(0, 3, (4,), generator=g),
        )

    return data


def _seq_data(dtype):
    def data(s):
        g = torch.Generator().manual_seed(100 + s)
        return (
            torch.randn(8, 3, 5, generator=g, dtype=dtype),
            torch.randint(0, 6, (8,), generator=g),
        )

    return data


CONFIGS = {
    "default": {},
    "momentum_0.3": {"momentum": 0.3},
    "affine_false": {"affine": False},
    "no_running_stats": {"track_running_stats": False},
    "eps_1e-3": {"eps": 1e-3},
}


@pytest.mark.parametrize("config", list(CONFIGS))
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_block_trains_as_eager(config, dtype):
    tol = {} if dtype == torch.float32 else {"rtol": 1e-10, "atol": 1e-12}
    _train_compare(lambda: Block(**CONFIGS[config]), _block_data(dtype), dtype, tol=tol)
    assert _aot.counters["fallback"] == 0, _aot.fallback_reasons
    assert _aot.counters["compiled"] == 1
    assert _aot.counters["backward"] == 4


@pytest.mark.parametrize("config", list(CONFIGS))
def test_batchnorm1d_trains_as_eager(config):
    _train_compare(
        lambda: Seq1d(**CONFIGS[config]),
        _seq_data(torch.float64),
        torch.float64,
        tol={"rtol": 1e-10, "atol": 1e-12},
        opt=lambda ps: torch.optim.AdamW(ps, lr=0.01, eps=1e-3),
    )
    assert _aot.counters["fallback"] == 0, _aot.fallback_reasons
    assert _aot.counters["compiled"] == 1


def test_momentum_none_cumulative_average():
    """``momentum=None``: the module's factor is ``1 / num_batches_tracked``, a new value each
    step; the running statistics are the cumulative average, as eager's, and the graphs are
    torch.compile's."""
    _train_compare(
        lambda: Block(momentum=None),
        _block_data(torch.float64),
        torch.float64,
        tol={"rtol": 1e-10, "atol": 1e-12},
    )
    # `float(self.num_batches_tracked)` breaks the graph inside each BatchNorm's forward
    # (torch.compile: "Graph break from Tensor.item()"); both make 3 graphs of Block, each
    # compiled forward and backward here.
    assert _aot.counters["fallback"] == 0, _aot.fallback_reasons
    assert _aot.counters["compiled"] == 3
    assert _aot.counters["backward"] == 12


def test_eval_mode_after_training_uses_running_stats():
    """Train two steps, then eval mode with grad on: the normalization reads the running
    statistics (not rewritten), leaves them unchanged, and gradients are eager's."""
    data = _block_data(torch.float64)
    tol = {"rtol": 1e-10, "atol": 1e-12}
    eager, comp, cm = _train_compare(
        lambda: Block(), data, torch.float64, steps=2, tol=tol
    )
    eager.eval()
    comp.eval()
    before = [b.clone() for b in comp.buffers()]
    x, y = data(7)
    le, lc = eager(x, y), cm(x, y)
    torch.testing.assert_close(lc, le, **tol)
    ge = torch.autograd.grad(le, list(eager.parameters()))
    gc = torch.autograd.grad(lc, list(comp.parameters()))
    for a, b in zip(ge, gc):
        torch.testing.assert_close(b, a, **tol)
    for a, b in zip(before, comp.buffers()):
        assert torch.equal(a, b)
    assert _aot.counters["fallback"] == 0, _aot.fallback_reasons


def _float64_grads(fn, inputs, grad_mask):
    def leaves():
        return [t.detach().clone().requires_grad_(m) for t, m in zip(inputs, grad_mask)]

    ins_e, ins_c = leaves(), leaves()
    ye = fn(*ins_e)
    yc = torchferro.compile(fn)(*ins_c)
    torch.testing.assert_close(yc, ye, rtol=1e-12, atol=1e-12)
    cot = torch.randn(
        ye.shape, dtype=torch.float64, generator=torch.Generator().manual_seed(3)
    )
    wrt_e = [t for t, m in zip(ins_e, grad_mask) if m]
    wrt_c = [t for t, m in zip(ins_c, grad_mask) if m]
    for a, c in zip(
        torch.autograd.grad(ye, wrt_e, cot), torch.autograd.grad(yc, wrt_c, cot)
    ):
        torch.testing.assert_close(c, a, rtol=1e-10, atol=1e-12)
    # Every input, written or not, ends as eager's.
    for a, c in zip(ins_e, ins_c):
        torch.testing.assert_close(c, a, rtol=1e-12, atol=1e-14)
    assert _aot.counters["fallback"] == 0, _aot.fallback_reasons
    assert _aot.counters["backward"] == 1


@pytest.mark.parametrize(
    "shape,mask",
    [
        ((4, 3, 5, 5), (True, True, True)),
        ((4, 3, 5, 5), (False, True, True)),  # only the affine parameters
        ((4, 3, 5, 5), (True, False, False)),  # only the input
        ((2, 3, 7), (True, True, True)),
        ((6, 3), (True, True, False)),
        ((2, 3, 2, 2, 3), (True, True, True)),
    ],
)
def test_float64_gradients_and_running_stats_vs_autograd(shape, mask):
    g = torch.Generator().manual_seed(sum(shape))
    c = shape[1]
    x = torch.randn(*shape, dtype=torch.float64, generator=g)
    w = torch.randn(c, dtype=torch.float64, generator=g)
    b = torch.randn(c, dtype=torch.float64, generator=g)
    rm = torch.randn(c, dtype=torch.float64, generator=g)
    rv = torch.rand(c, dtype=torch.float64, generator=g) + 0.5

    def fn(x, w, b, rm, rv):
        return torch.sigmoid(F.batch_norm(x, rm, rv, w, b, training=True, momentum=0.2))

    _float64_grads(fn, [x, w, b, rm, rv], list(mask) + [False, False])


def test_no_affine_no_stats_vs_autograd():
    x = torch.randn(3, 2, 4, 4, dtype=torch.float64)

    def fn(x):
        return F.batch_norm(x, None, None, training=True, eps=1e-3) ** 2

    _float64_grads(fn, [x], [True])


def test_saved_bytes_keep_the_conv_outputs_only():
    """conv → BatchNorm → ReLU → conv: the backward reads the first conv's output and the
    per-channel statistics; the normalized and ReLU outputs (read by BatchNorm's, ReLU's and
    the second conv's backward) are recomputed from them, not saved. As one op, BatchNorm kept
    its output too (the ReLU output the second conv's backward reads)."""

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 8, 3, padding=1, bias=False)
            self.bn = nn.BatchNorm2d(8)
            self.conv2 = nn.Conv2d(8, 8, 3, padding=1, bias=False)

        def forward(self, x):
            h = self.conv2(F.relu(self.bn(self.conv1(x))))
            return (h * h).mean()

    torch.manual_seed(0)
    net = Net()
    x = torch.randn(4, 3, 16, 16)
    ref = copy.deepcopy(net)
    loss = torchferro.compile(net)(x)
    loss.backward()
    ref(x).backward()
    for a, b in zip(ref.parameters(), net.parameters()):
        torch.testing.assert_close(b.grad, a.grad)
    act = 4 * 8 * 16 * 16 * 4
    # conv1's output, conv2's output (read by the product's backward), and two per-channel
    # values: the batch mean and variance. The reshaped weight and bias that the recomputed
    # normalization reads are views of inputs, taken again in the backward (session 13; they
    # were saved before). Session 29: the BatchNorm bias is saved as a copy (8 values): eager's
    # backward does not hold it, so a caller may write it before `.backward()`, and the
    # recomputed normalization must read its value at the call.
    assert _aot.counters["saved_bytes"] == 2 * act + 3 * 8 * 4
