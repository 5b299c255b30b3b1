"""Session 20 hunt, more of the compiled training step: the optimizers and schedulers users
pick (RMSprop, Adagrad, Adam with amsgrad, Nesterov SGD, Adamax, NAdam; cosine, lambda and
one-cycle schedules), ``autograd.grad`` inside, ``retain_graph`` and two backward passes,
``parameters_to_vector``/``vector_to_parameters``, a generator kept on the module across calls,
and a global ``itertools.count``."""

from __future__ import annotations

import itertools

import torch
from torch import nn
from torch.nn import functional as F

from .runner import TC_DIFFERS, case, register

# Issue 14: more graphs than torch.compile fails unless the case names the gap (breadth=).
STRICT_BREADTH = True


def xy(r):
    return (r.randn(6, 4), r.randn(6, 1))


class _Step(nn.Module):
    def __init__(self, make_opt, make_sched=None):
        super().__init__()
        self.fc = nn.Linear(4, 1)
        self._opt = make_opt(self.parameters())
        self._sched = make_sched(self._opt) if make_sched else None

    def forward(self, x, y):
        self._opt.zero_grad()
        loss = F.mse_loss(self.fc(x), y)
        loss.backward()
        self._opt.step()
        if self._sched is not None:
            self._sched.step()
        return loss.detach(), self._opt.param_groups[0]["lr"]


OPTS = {
    "rmsprop": lambda ps: torch.optim.RMSprop(ps, lr=0.01, momentum=0.5),
    "adagrad": lambda ps: torch.optim.Adagrad(ps, lr=0.1),
    "adam_amsgrad": lambda ps: torch.optim.Adam(ps, lr=0.05, amsgrad=True),
    "sgd_nesterov": lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True),
    "adamax": lambda ps: torch.optim.Adamax(ps, lr=0.05),
    "nadam": lambda ps: torch.optim.NAdam(ps, lr=0.05),
    "adamw_foreach_off": lambda ps: torch.optim.AdamW(ps, lr=0.05, foreach=False),
}

for _n, _o in OPTS.items():
    register(f"trust_step_{_n}", lambda _o=_o: _Step(_o), xy, module=True)

SCHEDS = {
    "cosine": lambda o: torch.optim.lr_scheduler.CosineAnnealingLR(o, T_max=4),
    "lambda": lambda o: torch.optim.lr_scheduler.LambdaLR(o, lambda e: 1.0 / (e + 1)),
    "exponential": lambda o: torch.optim.lr_scheduler.ExponentialLR(o, gamma=0.5),
}

for _n, _s in SCHEDS.items():
    register(
        f"trust_step_sgd_{_n}_schedule",
        lambda _s=_s: _Step(lambda ps: torch.optim.SGD(ps, lr=0.2), _s),
        xy,
        module=True,
    )


class AutogradGrad(nn.Module):
    """A gradient penalty: ``torch.autograd.grad`` with ``create_graph=True`` inside."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 1)

    def forward(self, x, y):
        x = x.requires_grad_()
        out = self.fc(torch.tanh(x))
        (g,) = torch.autograd.grad(out.sum(), x, create_graph=True)
        return out, g.pow(2).sum()


register(
    "trust_autograd_grad_penalty",
    AutogradGrad,
    xy,
    module=True,
)


class TwoBackward(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 1)

    def forward(self, x, y):
        self.zero_grad()
        loss = F.mse_loss(self.fc(x), y)
        loss.backward(retain_graph=True)
        first = self.fc.weight.grad.clone()
        (loss * 2).backward()
        return first, self.fc.weight.grad.clone()


register("trust_backward_retain_graph_twice", TwoBackward, xy, module=True)


class VectorRoundTrip(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x, y):
        with torch.no_grad():
            v = nn.utils.parameters_to_vector(self.parameters())
            nn.utils.vector_to_parameters(v * 0.5, self.parameters())
        return self.fc(x)


register("trust_vector_to_parameters", VectorRoundTrip, xy, module=True)


class VectorReadBack(nn.Module):
    """The written parameters are read later in the same frame (their new values) and by the
    next call (which writes them again)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x, y):
        with torch.no_grad():
            v = nn.utils.parameters_to_vector(self.parameters())
            nn.utils.vector_to_parameters(v.flip(0) + 1, self.parameters())
        w = self.fc.weight
        return self.fc(x), w.sum(), v.shape, self.fc.bias.clone()


register("trust_vector_to_parameters_read_back", VectorReadBack, xy, module=True)


class VectorUnderGrad(nn.Module):
    """Outside `no_grad`: `parameters_to_vector` is differentiable (a norm penalty whose
    gradient reaches the parameters) and `vector_to_parameters` writes `.data`."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x, y):
        v = nn.utils.parameters_to_vector(self.parameters())
        loss = self.fc(x).sum() + v.pow(2).sum() * 0.1
        loss.backward()
        with torch.no_grad():
            nn.utils.vector_to_parameters(v - 0.1 * v.sign(), self.parameters())
        grads = [p.grad.clone() for p in self.parameters()]
        self.fc.zero_grad()
        return loss.detach(), grads


register("trust_vector_to_parameters_under_grad", VectorUnderGrad, xy, module=True)


class VectorOfSome(nn.Module):
    """Over a generator of some parameters (the weights only)."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.b = nn.Linear(4, 2)

    def forward(self, x, y):
        with torch.no_grad():
            v = nn.utils.parameters_to_vector(
                p for p in self.parameters() if p.dim() > 1
            )
            nn.utils.vector_to_parameters(
                v.clamp(-0.2, 0.2), [self.a.weight, self.b.weight]
            )
        return self.b(self.a(x).relu()), v.numel()


register("trust_vector_to_parameters_some", VectorOfSome, xy, module=True)


# Plain tensors passed in: their `.data` is replaced, as eager's callers see after the call.
@case(lambda r: (r.randn(2, 3), r.randn(4), r.randn(10)))
def trust_vector_to_parameters_plain_tensors(w, b, vec):
    before = nn.utils.parameters_to_vector([w, b])
    nn.utils.vector_to_parameters(vec * 2, [w, b])
    return before, w + 1, b.sum()


class KeptGenerator(nn.Module):
    """A generator on the module: the second call continues the first call's stream."""

    def __init__(self):
        super().__init__()
        self.g = torch.Generator().manual_seed(123)

    def forward(self, x, y):
        noise = torch.randn(x.shape, generator=self.g)
        return x + noise, torch.rand(2, generator=self.g)


register("trust_generator_on_module_across_calls", KeptGenerator, xy, module=True)


class NoisyTrain(nn.Module):
    """Noise only in training (``self.training`` checked in Python) and ``randn_like``."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x, y):
        h = self.fc(x)
        if self.training:
            h = h + 0.1 * torch.randn_like(h)
        return h


def _eval_second(m, seed):
    m.train(seed == 0)


register(
    "trust_noise_in_training_then_eval",
    NoisyTrain,
    xy,
    module=True,
    prepare=_eval_second,
)


STEP = itertools.count()


def _fresh_count(_, seed):
    global STEP
    if seed == 0:
        STEP = itertools.count()


@case(lambda r: (r.randn(3),), prepare=_fresh_count)
def trust_global_itertools_count(x):
    n = next(STEP)
    return x * n, n


# `detach_()` is traced (its flag seen by every later read); `requires_grad_()` that sets the
# flag breaks the graph, in torch.compile too (2 graphs each).
@case(lambda r: (r.randn(3, 4, requires_grad=True),))
def trust_detach_and_requires_grad_inside(x):
    y = (x * 2).detach_()
    z = y.clone().requires_grad_()
    return y, z, z.requires_grad, (z * x).sum()


# torch.compile (2.11) answers `requires_grad` from the flag before `detach_()`.
@case(lambda r: (r.randn(3, 4, requires_grad=True),), xfail_tc=TC_DIFFERS)
def trust_detach_inplace_flag_read_later(x):
    y = x * 2
    before = y.requires_grad
    y.detach_()
    return y, before, y.requires_grad, (y + x).requires_grad, (y * 3).requires_grad


@case(lambda r: (r.randn(3, 4, requires_grad=True),), xfail_tc=TC_DIFFERS)
def trust_detach_inplace_list_item(x):
    ys = [x * 2, x * 3]
    ys[0].detach_()
    return [t.requires_grad for t in ys], ys[0] + ys[1], (ys[0] * x).sum()


def _cut(t):
    t.detach_()
    return t.requires_grad


@case(lambda r: (r.randn(3, 4, requires_grad=True),), xfail_tc=TC_DIFFERS)
def trust_detach_inplace_in_helper_seen_by_caller(x):
    y = x.sin()
    inner = _cut(y)
    loss = (y * x).sum()
    loss.backward()
    return inner, y.requires_grad, x.grad


# Only graph ops use the detached tensor: one graph in both compilers, the results' flags and the
# gradient as eager's.
@case(lambda r: (r.randn(3, 4, requires_grad=True),))
def trust_detach_inplace_then_ops(x):
    y = x * 2
    y.detach_()
    return y * 3, y + x, (y * x).sum()
