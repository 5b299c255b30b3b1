"""Session 34 (train34): training steps through writes that ran on torch's autograd.

``index_fill_`` of an activation (masking feature columns), ``torch.nn.init.zeros_``/
``ones_``/``constant_`` of an activation (the initializers write under ``no_grad`` themselves:
eager keeps the history, so the parameters behind it get the gradient at the new values) and
the item store spelled as a call, ``h.__setitem__(i, v)``. They gave eager's values through
torch's autograd; they now compile forward and backward (``tests/test_aot_fill_writes.py``
checks the ``aot`` counters). Each call is one optimizer step inside the compiled function;
parameters, buffers and gradients are compared after each."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from .cases_trust_training30 import xy
from .cases_trust_training33 import _Decayed
from .runner import register

STRICT_BREADTH = True


def _train(name, cls, inputs, **options):
    register(f"trust_train34_{name}", cls, inputs, module=True, **options)


class ColumnsMasked(_Decayed):
    """Feature columns of an activation masked by ``index_fill_`` (a repeated index)."""

    def loss(self, x, y):
        h = self.fc(x)
        h.index_fill_(1, torch.tensor([1, 5, 1]), 0.0)
        return F.mse_loss(self.out(torch.tanh(h) + self.aux(x)), y)


_train("activation_columns_masked_by_index_fill", ColumnsMasked, xy)


class ColumnsFilledWithParameter(_Decayed):
    """Columns filled out of place with a learned scalar: the scalar gets the filled
    positions' gradient, once per column although the index repeats one."""

    def __init__(self):
        super().__init__()
        self.fill = nn.Parameter(torch.tensor(0.5))
        self._opt = torch.optim.SGD(
            self.parameters(), lr=0.1, momentum=0.9, weight_decay=0.01
        )

    def loss(self, x, y):
        h = self.fc(x).index_fill(1, torch.tensor([0, 3, 0]), self.fill * 2)
        return F.mse_loss(self.out(torch.tanh(h)), y)


_train("activation_columns_filled_with_a_parameter", ColumnsFilledWithParameter, xy)


class InitZeroed(_Decayed):
    """A branch switched off by ``init.zeros_`` (under ``no_grad``: its layer still gets the
    gradient at the zeroed values, not zeros as for ``zero_``)."""

    def loss(self, x, y):
        a = self.aux(x)
        nn.init.zeros_(a)
        return F.mse_loss(self.out(torch.tanh(self.fc(x)) * (a + 1)), y)


_train("activation_zeroed_by_init", InitZeroed, xy)


class InitConstantSlice(_Decayed):
    """Half the features of an activation set by ``init.constant_`` through a view, and the
    loss through ``init.ones_`` of another."""

    def loss(self, x, y):
        h = self.fc(x)
        nn.init.constant_(h[:, 4:], 0.25)
        g = self.aux(x)
        nn.init.ones_(g)
        return F.mse_loss(self.out(torch.tanh(h) * g), y)


_train("activation_slice_set_by_init_constant", InitConstantSlice, xy)


class SetitemMethod(_Decayed):
    """The item store as a call: a row set to a number, a column to another branch."""

    def loss(self, x, y):
        h = self.fc(x)
        h.__setitem__(0, 0.5)
        h.__setitem__((slice(None), 2), self.aux(x)[:, 0])
        return F.mse_loss(self.out(torch.tanh(h)), y)


_train("activation_written_by_setitem_method", SetitemMethod, xy)


class ScaledUnderNoGradInBfloat16(_Decayed):
    """An activation kept in bfloat16 and rescaled in place under ``no_grad`` by a float32
    gate (computed in float32, stored back in bfloat16): eager changes the value and keeps the
    history, so ``fc`` still trains through it. The write was its float32 twin and a cast
    back, and the kept write pointed at the twin: the loss did not require grad (session 33's
    strict xfail, fixed in session 34)."""

    def loss(self, x, y):
        h = self.fc(x).to(torch.bfloat16) * 2
        with torch.no_grad():
            h.mul_(torch.sigmoid(self.aux(x)) + 0.5)
        return F.mse_loss(self.out(h.float()), y)


_train("bf16_activation_rescaled_under_no_grad", ScaledUnderNoGradInBfloat16, xy)
