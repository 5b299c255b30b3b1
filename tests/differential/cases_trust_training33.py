"""Session 33 (train33): training steps whose loss runs through a value whose derivative is zero.

Eager keeps the autograd edge of an op whose derivative is zero (``zeros_like(grad)`` in
``derivatives.yaml``): an intermediate overwritten whole by ``zero_``/``fill_``/``copy_`` (a
branch switched off, a gate forced open, a buffer-like activation refilled), and
piecewise-constant ops (``round``/``floor`` quantization without a straight-through estimator,
``sign`` binarization). The parameters behind it get a zero gradient, not ``None``, so an
optimizer with weight decay or momentum still moves them; and a loss that runs only through
such a value still requires grad. The compiled training graph dropped the edge (``None``
gradients; a loss through it alone raised at ``.backward()``). Next to them, the writes that
already kept an edge or that autograd does not see: a slice written whole, a row written, a
``no_grad`` refill, a write through ``detach()``. Each call is one optimizer step inside the
compiled function; parameters, buffers and gradients are compared after each."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from .cases_trust_training30 import _Step, xy
from .runner import register

STRICT_BREADTH = True


def _train(name, cls, inputs, **options):
    register(f"trust_train33_{name}", cls, inputs, module=True, **options)


class _Decayed(_Step):
    """``fc`` (8 to 8), ``aux`` (8 to 8) and ``out`` (8 to 4); SGD with momentum and weight
    decay (a ``None`` gradient skips a parameter's decay, a zero one does not); one step of it
    per call around ``self.loss``."""

    def __init__(self, adamw=False):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.aux = nn.Linear(8, 8)
        self.out = nn.Linear(8, 4)
        p = self.parameters()
        self._opt = (
            torch.optim.AdamW(p, lr=0.01, weight_decay=0.1)
            if adamw
            else torch.optim.SGD(p, lr=0.1, momentum=0.9, weight_decay=0.01)
        )


class BranchZeroed(_Decayed):
    """An auxiliary branch switched off by zeroing its activation in place."""

    def loss(self, x, y):
        a = self.aux(x)
        a.zero_()
        return F.mse_loss(self.out(torch.tanh(self.fc(x)) + a), y)


_train("auxiliary_branch_zeroed_in_place", BranchZeroed, xy)


class GateForcedOpen(_Decayed):
    """A gate forced open by ``fill_(1)``: the gate's parameters get zeros."""

    def loss(self, x, y):
        gate = torch.tanh(self.aux(x)) * 0.5 + 0.5
        gate.fill_(1.0)
        return F.mse_loss(self.out(self.fc(x) * gate), y)


_train("gate_forced_open_by_fill", GateForcedOpen, xy)


class SavedGateForcedOpen(_Decayed):
    """The same gate as a ``sigmoid``, which saves its result: the overwrite is a version error
    at ``.backward()`` in eager."""

    def loss(self, x, y):
        gate = torch.sigmoid(self.aux(x))
        gate.fill_(1.0)
        return F.mse_loss(self.out(self.fc(x) * gate), y)


# Found here (session 33): the compiled backward read the value as of the save and trained on
# (`autodiff::watch::kept_then_overwritten` now sends such a graph through torch's autograd).
_train("saved_gate_forced_open_raises", SavedGateForcedOpen, xy, raises=True)


class RefilledByCopy(_Decayed):
    """An activation refilled by ``copy_`` from another branch: the source gets the gradient,
    the overwritten branch zeros."""

    def loss(self, x, y):
        h = self.aux(x)
        h.copy_(torch.tanh(self.fc(x)))
        return F.mse_loss(self.out(h), y)


_train("activation_refilled_by_copy", RefilledByCopy, xy)


class LossOnlyThroughOverwritten(_Decayed):
    """The whole loss runs through a tensor overwritten whole: eager's loss still requires grad
    and every parameter gets zeros (the compiled loss did not require grad: backward raised)."""

    def loss(self, x, y):
        h = self.out(torch.tanh(self.fc(x)))
        h.fill_(0.5)
        return F.mse_loss(h, y)


_train("loss_only_through_a_filled_output", LossOnlyThroughOverwritten, xy)


class RoundedWeights(_Decayed):
    """Weights quantized by ``round`` with no straight-through estimator (AdamW with weight
    decay): the quantized layer's weight gets zeros and still decays."""

    def __init__(self):
        super().__init__(adamw=True)

    def loss(self, x, y):
        wq = torch.round(self.aux.weight * 8) / 8
        h = F.linear(torch.tanh(self.fc(x)), wq, self.aux.bias)
        return F.mse_loss(self.out(h), y)


_train("weights_rounded_without_ste", RoundedWeights, xy)


class SignBinarized(_Decayed):
    """A binarized layer (``sign`` of the weight; ``fc`` unused: ``None`` in both)."""

    def loss(self, x, y):
        h = F.linear(x, torch.sign(self.aux.weight), self.aux.bias)
        return F.mse_loss(self.out(h), y)


_train("weights_binarized_by_sign", SignBinarized, xy)


class SliceWrittenWhole(_Decayed):
    def loss(self, x, y):
        a = self.aux(x)
        a[:] = 0.0
        return F.mse_loss(self.out(torch.tanh(self.fc(x)) + a), y)


_train("activation_slice_written_whole", SliceWrittenWhole, xy)


class RowWritten(_Decayed):
    def loss(self, x, y):
        a = self.aux(x)
        a[0].zero_()
        a[:, :2].fill_(0.5)
        return F.mse_loss(self.out(torch.tanh(self.fc(x)) + a), y)


_train("activation_rows_written", RowWritten, xy)


class RefilledWithoutGrad(_Decayed):
    """Refilled under ``no_grad`` and through ``detach()``: the history is kept, the values
    change (the gradient is the unwritten one at the new values)."""

    def loss(self, x, y):
        a = self.aux(x)
        with torch.no_grad():
            a.fill_(0.25)
        b = self.fc(x)
        b.detach()[1:].zero_()
        return F.mse_loss(self.out(torch.tanh(b) * a), y)


_train("activation_refilled_without_grad", RefilledWithoutGrad, xy)
