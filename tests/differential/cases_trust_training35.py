"""Session 35 (train35): training steps as users write them, hunted against eager and
torch.compile; writes whose value requires grad.

Each call is one optimizer step inside the compiled forward (parameters, buffers, gradients and
optimizer state compared after each, ``module_state``): a second ``.backward()`` through a
retained graph, two losses through one backward and through two, ``torch.autograd.grad`` with
a hand-written SGD update, a gradient penalty (``create_graph=True``: the graph before the
break runs on torch's autograd, as torch.compile's gives up the double backward), tensor hooks
on intermediates and parameters, ``.data`` writes, ``detach_`` of a clone, weight tying, a
frozen layer toggled between calls (``prepare``) and inside the call, ``no_grad``/``eval``
evaluation inside the step with dropout and batch norm, a GAN's two optimizers, an
adversarial input gradient, LoRA over a frozen base, CPU bfloat16 autocast through ``gelu``/
``tanh``/``softmax`` (their backward of a bfloat16 tensor is computed in float32 and rounded
once, as eager's kernels: the weights were a unit in the last place off), and the writes of
issue 17's session-35 item 1 (``masked_fill_``/``scatter_``/``index_copy_``/``index_add_``/
``masked_scatter_`` of an intermediate with a value that requires grad, now compiled)."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from .cases_trust_training30 import _Step, xy
from .cases_trust_training33 import _Decayed
from .runner import register

STRICT_BREADTH = True


def _train(name, cls, inputs, **options):
    register(f"trust_train35_{name}", cls, inputs, module=True, **options)


class RetainedTwice(_Decayed):
    """``backward(retain_graph=True)`` then a second backward through the same graph."""

    def forward(self, x, y):
        self._opt.zero_grad()
        loss = F.mse_loss(self.out(F.gelu(self.fc(x))), y)
        loss.backward(retain_graph=True)
        (loss * 0.5).backward()
        self._opt.step()
        return loss.detach()


_train("retain_graph_second_backward", RetainedTwice, xy)


class TwoLossesTwoBackwards(_Decayed):
    """Two losses of one activation, each with its own ``.backward()`` (the first retains)."""

    def forward(self, x, y):
        self._opt.zero_grad()
        h = self.out(torch.tanh(self.fc(x)))
        l1 = F.mse_loss(h, y)
        l2 = h.abs().mean() * 0.1 + self.aux(x).pow(2).mean()
        l1.backward(retain_graph=True)
        l2.backward()
        self._opt.step()
        return l1.detach(), l2.detach()


_train("two_losses_two_backwards", TwoLossesTwoBackwards, xy)


class ManualSgd(nn.Module):
    """``torch.autograd.grad`` of the loss, then ``p.sub_(lr * g)`` under ``no_grad``."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 8)
        self.fc2 = nn.Linear(8, 4)

    def forward(self, x, y):
        params = list(self.parameters())
        loss = F.mse_loss(self.fc2(F.silu(self.fc1(x))), y)
        grads = torch.autograd.grad(loss, params)
        with torch.no_grad():
            for p, g in zip(params, grads):
                p.sub_(0.1 * g)
        return loss.detach(), grads[0]


_train(
    "autograd_grad_manual_sgd",
    ManualSgd,
    xy,
    xfail_inductor="the inductor's backward returns the linear weight's gradient as a fresh "
    "tensor; eager's is a transposed view (`_base` set; equal values)",
)


class GradientPenalty(_Step):
    """A WGAN-GP-style penalty on the input gradient (``create_graph=True``)."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 8)
        self.fc2 = nn.Linear(8, 1)
        self.make_opt()

    def forward(self, x, y):
        x = x.clone().requires_grad_(True)
        self._opt.zero_grad()
        o = self.fc2(torch.tanh(self.fc1(x)))
        (gx,) = torch.autograd.grad(o.sum(), x, create_graph=True)
        pen = ((gx.norm(2, dim=1) - 1) ** 2).mean()
        loss = (o.squeeze(1) - y[:, 0]).pow(2).mean() + 0.1 * pen
        loss.backward()
        self._opt.step()
        return loss.detach(), pen.detach()


_train("gradient_penalty_create_graph", GradientPenalty, xy)


class HookedIntermediateAndParameter(_Decayed):
    """A hook halving an activation's gradient, one clamping a parameter's (registered on
    each call: the hooks accumulate on the parameter as eager's)."""

    def loss(self, x, y):
        h = self.fc(x)
        h.register_hook(lambda g: g * 0.5)
        return F.mse_loss(self.out(F.relu(h) + self.aux(x)), y)


_train("hooks_on_activation", HookedIntermediateAndParameter, xy)


class DataDecay(_Decayed):
    """Decoupled weight decay by hand through ``p.data`` between backward and step."""

    def forward(self, x, y):
        self._opt.zero_grad()
        loss = F.mse_loss(self.out(torch.tanh(self.fc(x))), y)
        loss.backward()
        for p in self.parameters():
            p.data.mul_(0.99)
        self._opt.step()
        return loss.detach()


_train("data_write_weight_decay", DataDecay, xy)


class DetachedClone(_Decayed):
    """``t = h.clone(); t.detach_()``: a constant copy beside the activation."""

    def loss(self, x, y):
        h = self.fc(x)
        t = h.clone()
        t.detach_()
        return F.mse_loss(self.out(h + t * 0.5), y)


_train("detach_in_place_of_a_clone", DetachedClone, xy)


class TiedBlocks(_Step):
    """One linear layer's weight shared by two positions, the second transposed."""

    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(8, 6)
        self.dec_bias = nn.Parameter(torch.zeros(8))
        self.head = nn.Linear(8, 4)
        self.make_opt()

    def loss(self, x, y):
        z = torch.tanh(self.enc(x))
        rec = F.linear(z, self.enc.weight.t(), self.dec_bias)
        return F.mse_loss(self.head(rec), y) + F.mse_loss(rec, x) * 0.1


_train("tied_encoder_decoder", TiedBlocks, xy)


class Decayed(_Decayed):
    def loss(self, x, y):
        return F.mse_loss(self.out(torch.tanh(self.fc(x)) + self.aux(x)), y)


def _toggle_fc(m, seed):
    m.fc.requires_grad_(seed == 1)


_train("frozen_layer_toggled_between_calls", Decayed, xy, prepare=_toggle_fc)


class FreezeInside(Decayed):
    """``requires_grad_`` toggled inside the step by an input flag."""

    def forward(self, x, y):
        self.fc.requires_grad_(bool(y.sum() > 0))
        return super().forward(x, y)


# torch.compile does not guard a parameter's `requires_grad` (its graph after the break is
# reused: under its AOT backends the frozen layer keeps training, wrong values); ours guards
# it and compiles that graph again.
_train(
    "frozen_layer_toggled_inside",
    FreezeInside,
    xy,
    breadth="a parameter's requires_grad is guarded (torch.compile reuses the graph after the "
    "toggle: under its AOT backends the frozen layer keeps training)",
)


class FreezeWeightByFlag(Decayed):
    """``fc.weight.requires_grad_(not self.freeze)`` inside the step, the flag set between
    calls. (Over four calls, unfrozen, frozen, frozen, unfrozen, torch.compile's counting
    backend gives other weights than eager's on the fourth: docs/training.md, session 35.)"""

    freeze = False

    def forward(self, x, y):
        self.fc.weight.requires_grad_(not self.freeze)
        return super().forward(x, y)


def _set_freeze(m, seed):
    m.freeze = seed == 1


_train(
    "weight_requires_grad_set_inside_by_flag",
    FreezeWeightByFlag,
    xy,
    prepare=_set_freeze,
    breadth="a parameter's requires_grad is guarded (torch.compile reuses its graph after "
    "the toggle and over four calls gives other weights than eager's)",
)


class TrainEvalInside(_Step):
    """Dropout and batch norm: a train step, then an ``eval()`` evaluation under
    ``no_grad``, then back to ``train()``."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.bn = nn.BatchNorm1d(16)
        self.drop = nn.Dropout(0.3)
        self.fc2 = nn.Linear(16, 4)
        self.make_opt()

    def net(self, x):
        return self.fc2(self.drop(F.gelu(self.bn(self.fc1(x)))))

    def forward(self, x, y):
        self.train()
        self._opt.zero_grad()
        loss = F.mse_loss(self.net(x), y)
        loss.backward()
        self._opt.step()
        self.eval()
        with torch.no_grad():
            ev = F.mse_loss(self.net(x), y)
        self.train()
        return loss.detach(), ev


_train("train_then_eval_under_no_grad", TrainEvalInside, xy)


class Gan(nn.Module):
    """A discriminator step on detached fakes, then a generator step: two optimizers."""

    def __init__(self):
        super().__init__()
        self.g = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 8))
        self.d = nn.Sequential(nn.Linear(8, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1))
        self._og = torch.optim.Adam(self.g.parameters(), lr=0.01, betas=(0.5, 0.9))
        self._od = torch.optim.Adam(self.d.parameters(), lr=0.01, betas=(0.5, 0.9))

    def forward(self, real, z):
        fake = self.g(z[:, :4])
        self._od.zero_grad()
        ld = F.softplus(-self.d(real)).mean() + F.softplus(self.d(fake.detach())).mean()
        ld.backward()
        self._od.step()
        self._og.zero_grad()
        lg = F.softplus(-self.d(fake)).mean()
        lg.backward()
        self._og.step()
        return ld.detach(), lg.detach()


_train("gan_two_optimizers", Gan, lambda r: (r.randn(6, 8), r.randn(6, 8)))


class Adversarial(_Decayed):
    """FGSM: the input's gradient, a signed step, then training on the perturbed input."""

    def forward(self, x, y):
        x = x.clone().requires_grad_(True)
        loss = F.mse_loss(self.out(torch.tanh(self.fc(x))), y)
        (gx,) = torch.autograd.grad(loss, x)
        xa = (x + 0.1 * gx.sign()).detach()
        self._opt.zero_grad()
        l2 = F.mse_loss(self.out(torch.tanh(self.fc(xa))), y)
        l2.backward()
        self._opt.step()
        return loss.detach(), l2.detach()


_train("adversarial_input_gradient", Adversarial, xy)


class Lora(_Step):
    """A frozen base layer plus a trained low-rank update (AdamW over the adapters only)."""

    def __init__(self):
        super().__init__()
        self.base = nn.Linear(8, 4)
        self.base.requires_grad_(False)
        self.a = nn.Parameter(torch.randn(2, 8) * 0.1)
        self.b = nn.Parameter(torch.zeros(4, 2))
        self._opt = torch.optim.AdamW([self.a, self.b], lr=0.01)

    def loss(self, x, y):
        return F.mse_loss(self.base(x) + F.linear(F.linear(x, self.a), self.b) * 2.0, y)


_train("lora_over_frozen_base", Lora, xy)


class AutocastActivations(_Decayed):
    """CPU bfloat16 autocast through ``gelu``, ``tanh`` and ``softmax``: their backward of a
    bfloat16 tensor rounds once, as eager's kernels."""

    def loss(self, x, y):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            h = F.gelu(self.fc(x))
            a = torch.softmax(self.aux(x), -1)
            o = self.out(torch.tanh(h) * a)
        return F.mse_loss(o.float(), y)


_train("bf16_autocast_activations", AutocastActivations, xy)


class AutocastElementary(_Decayed):
    """CPU bfloat16 autocast through ``sin`` and ``atan`` (no rule before this session; the
    rules run eager's composite formulas op for op, so the bfloat16 gradients round as
    eager's: torch.compile's ``aot_eager`` does not match eager's weights here)."""

    def loss(self, x, y):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            h = torch.sin(self.fc(x) * 3) + torch.atan(self.aux(x))
            o = self.out(h)
        return F.mse_loss(o.float(), y)


_train("bf16_autocast_sin_atan", AutocastElementary, xy)


class GradValueWrites(_Decayed):
    """Writes of an activation whose value requires grad: a learned fill value by
    ``masked_fill_``, another branch scattered and index-copied in, a masked scatter."""

    def __init__(self):
        super().__init__()
        self.fill = nn.Parameter(torch.tensor(0.25))
        self._opt = torch.optim.SGD(
            self.parameters(), lr=0.1, momentum=0.9, weight_decay=0.01
        )

    def loss(self, x, y):
        h = self.fc(x)
        a = self.aux(x)
        h.masked_fill_(x.detach() > 1.0, self.fill * 2)
        h.scatter_(1, torch.tensor([[1], [3], [5], [7], [0], [2]]), a[:, :1])
        h.index_copy_(1, torch.tensor([6, 4]), torch.tanh(a[:, 2:4]))
        h.index_add_(1, torch.tensor([0, 0]), a[:, 4:6], alpha=0.5)
        h.masked_scatter_(h.detach() < -0.5, a * 0.5)
        return F.mse_loss(self.out(torch.sin(h)), y)


_train("activation_written_with_grad_values", GradValueWrites, xy)


class ClampedByTensors(_Decayed):
    """An activation clamped between learned bounds (``clamp`` with tensor bounds) and mixed
    by ``lerp`` with a learned weight."""

    def __init__(self):
        super().__init__()
        self.lo = nn.Parameter(torch.full((8,), -0.5))
        self.hi = nn.Parameter(torch.full((8,), 0.5))
        self.mix = nn.Parameter(torch.tensor(0.3))
        self._opt = torch.optim.SGD(self.parameters(), lr=0.1, momentum=0.9)

    def loss(self, x, y):
        h = torch.clamp(self.fc(x), self.lo, self.hi)
        h = torch.lerp(h, torch.atan(self.aux(x)), torch.sigmoid(self.mix))
        return F.mse_loss(self.out(h), y)


_train("clamp_between_learned_bounds", ClampedByTensors, xy)
