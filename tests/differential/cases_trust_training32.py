"""Session 32 (train32) hunt, training steps as users write them, in areas sessions 30 and 31
did not reach: the optimizer step with an LR scheduler stepped inside the compiled step
(``StepLR``, ``LambdaLR`` over two parameter groups, ``CosineAnnealingLR``), ``clip_grad_norm_``
with ``foreach`` on and off before Adam or SGD; parameters updated by hand (``p -= lr * p.grad``
under ``no_grad``, ``p.add_(p.grad, alpha=)``, ``p.data.copy_``, ``p.data = ...``, a WGAN's
``p.data.clamp_``), EMA teachers (``mul_().add_()``, ``torch._foreach_mul_/_foreach_add_``,
``lerp_``, a ``state_dict`` copy), Lookahead's slow weights, SWA's ``AveragedModel``; buffers
written in forward (a step counter, a ``persistent=False`` mean, running averages by hand, a
``lerp_`` of an activation), attribute caches (a KV cache, a memoized mask and a call count);
``checkpoint(use_reentrant=False)`` around dropout, a ``mark_dirty`` ``autograd.Function``,
``retain_graph`` with two backward calls, gradient penalties by
``autograd.grad(create_graph=True)`` (WGAN-GP, a gradient-norm penalty), ``backward(inputs=)``,
SAM's two passes, FGSM adversarial training by ``autograd.grad`` of the input, a GAN step with
two optimizers (``fake.detach()`` for the discriminator, then the generator through ``fake``),
DP-SGD's clipping and noise on ``.grad``, optimizer steps in
``register_post_accumulate_grad_hook``, and writes to a buffer a product saved (eager raises).
Each call is one training step inside the compiled forward; parameters, buffers, gradients and
plain attributes (optimizer state copied into ``state``) are compared after each."""

from __future__ import annotations

import copy

import torch
import torch.utils.checkpoint as cp
from torch import nn
from torch.nn import functional as F

from .cases_trust_training30 import _Step, xy
from .cases_trust_training31 import _opt_state
from .runner import TC_DIFFERS, register

STRICT_BREADTH = True


def _train(name, cls, inputs, **options):
    register(f"trust_train32_{name}", cls, inputs, module=True, **options)


def _net():
    return nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 4))


class _Net(nn.Module):
    """``net`` (8 to 16 to 4) and ``self.step(x, y)`` per call; ``self.state`` holds what a
    subclass records."""

    def __init__(self):
        super().__init__()
        self.net = _net()

    def loss(self, x, y):
        return F.mse_loss(self.net(x), y)


class _NetStep(_Net):
    """One step of ``self._opt`` (SGD without ``make_opt``) per call, then ``after()``."""

    def __init__(self, make_opt=None):
        super().__init__()
        p = self.net.parameters()
        self._opt = make_opt(p) if make_opt else torch.optim.SGD(p, lr=0.1)

    def forward(self, x, y):
        self._opt.zero_grad()
        loss = self.loss(x, y)
        loss.backward()
        self._opt.step()
        self.after()
        return loss.detach()

    def after(self):
        pass


class Scheduled(_NetStep):
    def __init__(self, make_opt, make_sched):
        super().__init__(make_opt)
        self._sched = make_sched(self._opt)

    def after(self):
        self._sched.step()
        self.lr = [g["lr"] for g in self._opt.param_groups]
        self.state = _opt_state(self._opt)


_train(
    "sgd_momentum_steplr",
    lambda: Scheduled(
        lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9),
        lambda o: torch.optim.lr_scheduler.StepLR(o, 1, gamma=0.5),
    ),
    xy,
)
_train(
    "adam_foreach_cosine",
    lambda: Scheduled(
        lambda p: torch.optim.Adam(p, lr=0.01, foreach=True),
        lambda o: torch.optim.lr_scheduler.CosineAnnealingLR(o, T_max=4),
    ),
    xy,
)
_train(
    "adamw_loop_steplr",
    lambda: Scheduled(
        lambda p: torch.optim.AdamW(p, lr=0.01, foreach=False, fused=False),
        lambda o: torch.optim.lr_scheduler.StepLR(o, 1, gamma=0.5),
    ),
    xy,
)


class TwoGroups(Scheduled):
    def __init__(self):
        nn.Module.__init__(self)
        self.net = _net()
        self._opt = torch.optim.SGD(
            [
                {"params": self.net[0].parameters(), "lr": 0.1},
                {"params": self.net[2].parameters(), "lr": 0.01, "momentum": 0.5},
            ],
            lr=0.05,
            momentum=0.9,
        )
        self._sched = torch.optim.lr_scheduler.LambdaLR(
            self._opt, lambda e: 1.0 / (e + 1)
        )


_train("two_param_groups_lambdalr", TwoGroups, xy)


class Clipped(_Net):
    def __init__(self, adam, foreach):
        super().__init__()
        self.foreach = foreach
        p = self.net.parameters()
        self._opt = (
            torch.optim.AdamW(p, lr=0.01, weight_decay=0.1, foreach=True)
            if adam
            else torch.optim.SGD(p, lr=0.1, momentum=0.9)
        )

    def forward(self, x, y):
        loss = self.loss(x, y)
        loss.backward()
        norm = nn.utils.clip_grad_norm_(
            self.net.parameters(), 0.5, foreach=self.foreach
        )
        self._opt.step()
        self._opt.zero_grad(set_to_none=True)
        self.state = _opt_state(self._opt)
        return loss.detach(), norm


_train("clip_grad_norm_foreach_adamw", lambda: Clipped(True, True), xy)
_train("clip_grad_norm_loop_sgd", lambda: Clipped(False, False), xy)


class ManualUpdate(_Net):
    """``kind``: how the parameters are updated by hand after ``loss.backward()``."""

    def __init__(self, kind):
        super().__init__()
        self.kind = kind

    def forward(self, x, y):
        loss = self.loss(x, y)
        loss.backward()
        ps = list(self.net.parameters())
        if self.kind == "isub":
            with torch.no_grad():
                for p in ps:
                    p -= 0.1 * p.grad
                    p.grad.zero_()
        elif self.kind == "add_alpha":
            with torch.no_grad():
                for p in ps:
                    p.add_(p.grad, alpha=-0.1)
                    p.grad = None
        elif self.kind == "data_copy":
            for p in ps:
                p.data.copy_(p.data - 0.1 * p.grad)
                p.grad = None
        elif self.kind == "data_assign":
            for p in ps:
                p.data = p.data - 0.1 * p.grad
                p.grad = None
        elif self.kind == "wgan_clamp":
            for p in ps:
                p.data.add_(p.grad, alpha=-0.5)
                p.data.clamp_(-0.05, 0.05)
                p.grad = None
        return loss.detach()


for _kind in ("add_alpha", "data_copy", "data_assign", "wgan_clamp"):
    _train(f"manual_update_{_kind}", lambda k=_kind: ManualUpdate(k), xy)
_train(
    "manual_update_isub",
    lambda: ManualUpdate("isub"),
    xy,
    breadth="torch.compile gives up the frame resumed after loss.backward() (1 graph, 1 frame "
    "run eagerly); torchferro compiles the update as a second graph",
)


class Ema(_Net):
    """A teacher updated after each SGD-by-hand step: ``kind`` names how."""

    def __init__(self, kind):
        super().__init__()
        self.kind = kind
        self.ema = copy.deepcopy(self.net).requires_grad_(False)

    def forward(self, x, y):
        loss = self.loss(x, y)
        loss.backward()
        ps = list(self.net.parameters())
        es = list(self.ema.parameters())
        with torch.no_grad():
            for p in ps:
                p.sub_(p.grad, alpha=0.1)
            if self.kind == "mul_add":
                for e, p in zip(es, ps):
                    e.mul_(0.9).add_(p.detach(), alpha=0.1)
            elif self.kind == "foreach":
                torch._foreach_mul_(es, 0.9)
                torch._foreach_add_(es, ps, alpha=0.1)
            elif self.kind == "lerp":
                torch._foreach_lerp_(es, ps, 0.3)
                for e, p in zip(es, ps):
                    e.lerp_(p, 0.8)
            elif self.kind == "state_dict":
                sd = self.net.state_dict()
                for k, v in self.ema.state_dict().items():
                    v.copy_(v * 0.5 + sd[k] * 0.5)
        for p in ps:
            p.grad = None
        return loss.detach(), self.ema(x)


for _kind in ("mul_add", "foreach", "lerp", "state_dict"):
    _train(f"ema_teacher_{_kind}", lambda k=_kind: Ema(k), xy)


class Lookahead(_Net):
    def __init__(self):
        super().__init__()
        self._opt = torch.optim.SGD(self.net.parameters(), lr=0.1)
        self.slow = [p.detach().clone() for p in self.net.parameters()]
        self.calls = 0

    def forward(self, x, y):
        self._opt.zero_grad()
        loss = self.loss(x, y)
        loss.backward()
        self._opt.step()
        self.calls += 1
        if self.calls % 2 == 0:
            with torch.no_grad():
                for s, p in zip(self.slow, self.net.parameters()):
                    s.add_(p - s, alpha=0.5)
                    p.copy_(s)
        return loss.detach()


_train("lookahead_slow_weights", Lookahead, xy)


class Swa(_Net):
    def __init__(self):
        super().__init__()
        self.avg = torch.optim.swa_utils.AveragedModel(self.net)
        self._opt = torch.optim.SGD(self.net.parameters(), lr=0.1)

    def forward(self, x, y):
        self._opt.zero_grad()
        loss = self.loss(x, y)
        loss.backward()
        self._opt.step()
        self.avg.update_parameters(self.net)
        return loss.detach(), self.avg(x)


_train("swa_averaged_model", Swa, xy)


class BufferCounter(_Step):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)
        self.register_buffer("count", torch.zeros((), dtype=torch.long))
        self.register_buffer("mean", torch.zeros(8), persistent=False)
        self.make_opt()

    def loss(self, x, y):
        self.count += 1
        self.mean.copy_(x.mean(0))
        return F.mse_loss(self.fc(x - self.mean), y)


_train("buffer_counter_and_nonpersistent_copy", BufferCounter, xy)


class RunningByHand(_Step):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 8)
        self.fc = nn.Linear(8, 4)
        self.register_buffer("avg", torch.zeros(8))
        self.register_buffer("var", torch.ones(8))
        self.register_buffer("act", torch.zeros(8))
        self.make_opt()

    def loss(self, x, y):
        with torch.no_grad():
            self.avg.mul_(0.9).add_(x.mean(0), alpha=0.1)
            self.var = 0.9 * self.var + 0.1 * x.var(0)
        h = self.fc1((x - self.avg) / self.var.sqrt())
        self.act.lerp_(h.detach().mean(0), 0.1)
        return F.mse_loss(self.fc(h - self.act), y)


_train("running_averages_by_hand", RunningByHand, xy)


class Caches(_Step):
    """A KV cache and a memoized mask kept on ``self`` across calls, a Python call count."""

    def __init__(self):
        super().__init__()
        self.k = nn.Linear(8, 8)
        self.fc = nn.Linear(8, 4)
        self.cache = None
        self._mask = None
        self.calls = 0
        self.make_opt()

    def loss(self, x, y):
        k = self.k(x)
        ctx = k if self.cache is None else torch.cat([self.cache, k], 0)[-12:]
        self.cache = k.detach()
        if self._mask is None:
            self._mask = torch.tril(torch.ones(x.shape[0], x.shape[0]))
        self.calls += 1
        att = torch.softmax(k @ ctx.t(), -1) @ ctx
        return F.mse_loss(self.fc(self._mask @ att), y)


_train(
    "kv_cache_and_memoized_mask",
    Caches,
    xy,
    breadth="assigning a tensor to a module attribute (`self.cache = k.detach()`, `self._mask = "
    "...`) breaks the graph (nn.Module.__setattr__ runs code); torch.compile traces it (7 graphs "
    "to 5)",
)


class CheckpointDropout(_Step):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 16)
        self.b = nn.Linear(16, 4)
        self.make_opt()

    def block(self, x):
        return F.dropout(torch.relu(self.a(x)), 0.3, training=True)

    def loss(self, x, y):
        return F.mse_loss(self.b(cp.checkpoint(self.block, x, use_reentrant=False)), y)


_train("checkpoint_nonreentrant_dropout", CheckpointDropout, xy)


class _Double(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        a.mul_(2)
        ctx.mark_dirty(a)
        return a

    @staticmethod
    def backward(ctx, g):
        return g * 2


class _FcOut(_Step):
    """``fc`` (8 to 8) and ``out`` (8 to 4), SGD with momentum; ``setup`` adds more first."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.out = nn.Linear(8, 4)
        self.setup()
        self.make_opt()

    def setup(self):
        pass


class MarkDirty(_FcOut):
    def loss(self, x, y):
        return F.mse_loss(self.out(_Double.apply(self.fc(x).clone())), y)


_train("autograd_function_mark_dirty", MarkDirty, xy)


class RetainGraph(_FcOut):
    def forward(self, x, y):
        self._opt.zero_grad()
        out = self.out(torch.tanh(self.fc(x)))
        l1 = F.mse_loss(out, y)
        l1.backward(retain_graph=True)
        l2 = out.pow(2).mean()
        l2.backward(retain_graph=True)
        l1.backward()
        self._opt.step()
        return l1.detach(), l2.detach()


_train("retain_graph_three_backwards", RetainGraph, xy)


class GradientPenalty(_Step):
    """WGAN-GP: the critic's gradient at interpolates, by ``autograd.grad(create_graph=
    True)``, penalized; and a penalty on the parameters' gradient norms."""

    def __init__(self):
        super().__init__()
        self.d = nn.Sequential(nn.Linear(8, 16), nn.Softplus(), nn.Linear(16, 1))
        self.make_opt()

    def loss(self, x, y):
        fake = y.repeat(1, 2)
        a = torch.rand(x.shape[0], 1)
        inter = (a * x + (1 - a) * fake).requires_grad_(True)
        (g,) = torch.autograd.grad(self.d(inter).sum(), inter, create_graph=True)
        gp = ((g.norm(2, dim=1) - 1) ** 2).mean()
        gs = torch.autograd.grad(
            self.d(x).sum(), list(self.d.parameters()), create_graph=True
        )
        pen = sum(t.pow(2).sum() for t in gs)
        return self.d(fake).mean() - self.d(x).mean() + 10 * gp + 0.1 * pen


_train("gradient_penalties_create_graph", GradientPenalty, xy)


class BackwardInputs(_Step):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 8)
        self.b = nn.Linear(8, 4)
        self.make_opt()

    def loss(self, x, y):
        l1 = F.mse_loss(self.b(torch.relu(self.a(x))), y)
        l1.backward(inputs=list(self.b.parameters()))
        return F.mse_loss(self.b(torch.relu(self.a(x))), y) * 0.5


_train("backward_inputs_subset", BackwardInputs, xy)


class Sam(_Net):
    """Sharpness-aware minimization: ascend to ``w + e(w)``, take the gradient there, come
    back, step."""

    def __init__(self):
        super().__init__()
        self._opt = torch.optim.SGD(self.net.parameters(), lr=0.1, momentum=0.9)

    def forward(self, x, y):
        loss = self.loss(x, y)
        loss.backward()
        ps = list(self.net.parameters())
        with torch.no_grad():
            norm = torch.norm(torch.stack([p.grad.norm(2) for p in ps]), 2)
            es = []
            for p in ps:
                e = 0.05 * p.grad / (norm + 1e-12)
                p.add_(e)
                es.append(e)
        self._opt.zero_grad()
        self.loss(x, y).backward()
        with torch.no_grad():
            for p, e in zip(ps, es):
                p.sub_(e)
        self._opt.step()
        self._opt.zero_grad()
        self.state = _opt_state(self._opt)
        return loss.detach()


_train("sam_two_passes", Sam, xy)


class Fgsm(_Net):
    def __init__(self):
        super().__init__()
        self._opt = torch.optim.SGD(self.net.parameters(), lr=0.1)

    def forward(self, x, y):
        x = x.clone().requires_grad_(True)
        clean = self.loss(x, y)
        (gx,) = torch.autograd.grad(clean, x)
        loss = self.loss((x + 0.1 * gx.sign()).detach(), y) + clean.detach()
        self._opt.zero_grad()
        loss.backward()
        self._opt.step()
        return loss.detach(), gx


_train("fgsm_adversarial_input_gradient", Fgsm, xy)


class Gan(nn.Module):
    def __init__(self):
        super().__init__()
        self.g = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 8))
        self.d = nn.Sequential(nn.Linear(8, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1))
        self._og = torch.optim.Adam(self.g.parameters(), lr=1e-2, betas=(0.5, 0.999))
        self._od = torch.optim.Adam(self.d.parameters(), lr=1e-2, betas=(0.5, 0.999))

    def forward(self, x, z):
        fake = self.g(z)
        self._od.zero_grad()
        real = F.binary_cross_entropy_with_logits(self.d(x), torch.ones(6, 1))
        fk = F.binary_cross_entropy_with_logits(
            self.d(fake.detach()), torch.zeros(6, 1)
        )
        ld = real + fk
        ld.backward()
        self._od.step()
        self._og.zero_grad()
        lg = F.binary_cross_entropy_with_logits(self.d(fake), torch.ones(6, 1))
        lg.backward()
        self._og.step()
        self.state = [_opt_state(self._od), _opt_state(self._og)]
        return ld.detach(), lg.detach()


_train("gan_two_optimizers_detached_fake", Gan, xy)


class DpSgd(_Net):
    def __init__(self):
        super().__init__()
        self._opt = torch.optim.SGD(self.net.parameters(), lr=0.1)

    def forward(self, x, y):
        self._opt.zero_grad()
        loss = self.loss(x, y)
        loss.backward()
        nn.utils.clip_grad_value_(self.net.parameters(), 0.05)
        for p in self.net.parameters():
            p.grad += torch.randn_like(p.grad) * 0.01
        self._opt.step()
        return loss.detach()


_train("dp_sgd_clip_value_and_noise", DpSgd, xy)


class GradsByHand(_Net):
    """``zero_grad(set_to_none=False)``, gradients scaled and clamped in place, decoupled
    weight decay by hand, then Adam."""

    def __init__(self):
        super().__init__()
        self._opt = torch.optim.Adam(self.net.parameters(), lr=0.01)

    def forward(self, x, y):
        self._opt.zero_grad(set_to_none=False)
        loss = self.loss(x, y)
        loss.backward()
        with torch.no_grad():
            for p in self.net.parameters():
                p.grad.mul_(0.5).clamp_(-0.1, 0.1)
                p.mul_(1 - 0.1 * 0.01)
        self._opt.step()
        self.state = _opt_state(self._opt)
        return loss.detach()


_train("gradients_scaled_in_place_and_weight_decay", GradsByHand, xy)


class OptimizerInBackward(_Net):
    def __init__(self):
        super().__init__()
        self._opts = {
            p: torch.optim.SGD([p], lr=0.1, momentum=0.5) for p in self.net.parameters()
        }

        def hook(p):
            self._opts[p].step()
            self._opts[p].zero_grad()

        for p in self.net.parameters():
            p.register_post_accumulate_grad_hook(hook)

    def forward(self, x, y):
        loss = self.loss(x, y)
        loss.backward()
        return loss.detach()


_train("optimizer_step_in_post_accumulate_grad_hook", OptimizerInBackward, xy)


class SavedBufferWritten(_FcOut):
    """A buffer read by a product, then written under ``no_grad`` in the same step before
    ``.backward()``: eager's ``MulBackward0`` saved it, so eager raises."""

    def setup(self):
        self.register_buffer("scale", torch.ones(8))

    def loss(self, x, y):
        out = self.out(self.fc(x) * self.scale)
        with torch.no_grad():
            self.scale.mul_(1.1)
        return F.mse_loss(out, y)


_train(
    "buffer_saved_by_a_product_then_written",
    SavedBufferWritten,
    xy,
    raises=True,
    # After autograd's version error eager has accumulated the gradients of the nodes that ran
    # before the failing one (out.weight.grad); the compiled training graph was one node, which
    # raised before accumulating any (session 32). A backward certain to raise (the graph writes
    # the input after a keep) now runs through torch's autograd (session 33).
)


class _Mul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        return g * b, g * a


class FunctionSavedBufferWritten(SavedBufferWritten):
    """The same through a user ``autograd.Function`` that saves the buffer: eager raises;
    torch.compile trains with the written buffer."""

    def loss(self, x, y):
        out = self.out(_Mul.apply(self.fc(x), self.scale))
        with torch.no_grad():
            self.scale.mul_(1.1)
        return F.mse_loss(out, y)


_train(
    "function_saved_buffer_then_written",
    FunctionSavedBufferWritten,
    xy,
    raises=True,
    xfail_tc=TC_DIFFERS,
)


class Mixup(_NetStep):
    """Mixup: a ``Beta`` draw and a ``randperm`` per step (the random stream is compared)."""

    def loss(self, x, y):
        lam = torch.distributions.Beta(0.4, 0.4).sample()
        perm = torch.randperm(x.shape[0])
        self.lam = float(lam)
        mixed = lam * x + (1 - lam) * x[perm]
        return F.mse_loss(self.net(mixed), lam * y + (1 - lam) * y[perm])


_train("mixup_beta_and_randperm", Mixup, xy)


class ClampingHooks(_NetStep):
    """A tensor hook on every parameter clamping its gradient."""

    def __init__(self):
        super().__init__()
        for p in self.net.parameters():
            p.register_hook(lambda g: g.clamp(-0.01, 0.01))


_train("parameter_hooks_clamping_gradients", ClampingHooks, xy)


class MicroBatches(_Net):
    """Three micro-batches accumulated, the gradients averaged in place after the last (a
    ``no_sync``-like skip of the reduction before it), then an update by hand."""

    def forward(self, x, y):
        for k in range(3):
            loss = self.loss(x[2 * k : 2 * k + 2], y[2 * k : 2 * k + 2])
            loss.backward()
            if k == 2:
                for p in self.net.parameters():
                    p.grad.div_(3)
        with torch.no_grad():
            for p in self.net.parameters():
                p.add_(p.grad, alpha=-0.1)
        grads = [p.grad.clone() for p in self.net.parameters()]
        self.net.zero_grad()
        return loss.detach(), grads


_train("micro_batches_averaged_after_the_last", MicroBatches, xy)
