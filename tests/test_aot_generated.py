"""Issue 17: hypothesis-generated training steps through the compiled backward.

Each example draws a small module (a stack of linear or conv layers, layer/batch norms,
activations, residual blocks, dropout (of transposed views too), in-place activations on intermediates, in-place
writes over intermediates (``WRITES``: whole, through views, without grad), an EMA buffer and
a step counter written in place), a loss (``LOSSES``: cross entropy with weights, smoothing or
probabilities, MSE, L1, smooth L1, Huber, BCE with logits, KL divergence) and an optimizer
(SGD, SGD with momentum, AdamW), then runs ``STEPS`` training steps eagerly and through torchferro from the
same initial state and the same dropout seeds: the losses, every gradient, parameter and buffer
must agree (float64, so the tolerance is tight), ``_aot.counters`` must show every graph
compiled forward and backward (no fallback), and the graph count must be
``torch.compile(backend=<counting>)``'s on a fresh copy.

Examples per run: ``TORCHFERRO_AOT_GEN_EXAMPLES`` (default 6, a few seconds); the halves run on
the eager runner (``aot_eager``: the joint graph and partition are what is tested) unless
``TORCHFERRO_AOT_GEN_BACKEND=inductor``."""

from __future__ import annotations

import copy
import os

import hypothesis.strategies as st
import pytest
import torch
import torch.nn.functional as F
from hypothesis import HealthCheck, given, note, settings
from torch import nn

import torchferro
from aot_oracle import torch_compile_graphs
from torchferro import _aot

EXAMPLES = int(os.environ.get("TORCHFERRO_AOT_GEN_EXAMPLES", "6"))
BACKEND = os.environ.get("TORCHFERRO_AOT_GEN_BACKEND", "aot_eager")
STEPS = 2
WIDTH = 6
ACTS = {
    "relu": F.relu,
    "gelu": F.gelu,
    "tanh": torch.tanh,
    "silu": F.silu,
    "sigmoid": torch.sigmoid,
    "hardswish": F.hardswish,
    # Session 35: elementary functions with a rule of their own (`autodiff/rules/elementary.rs`).
    "sin": torch.sin,
    "atan": torch.atan,
    "erf": torch.erf,
}
DENSE_LAYERS = [
    "linear",
    "layer_norm",
    "act",
    "residual",
    "dropout",
    "dropout_t",
    "batch_norm",
    "relu_",
    "write",
]
CONV_LAYERS = [
    "conv",
    "batch_norm",
    "act",
    "residual",
    "dropout",
    "dropout_t",
    "avg_pool",
    "relu_",
    "write",
]


def _no_grad(write, *args):
    with torch.no_grad():
        write(*args)


def _setitem_all(h, v):
    h[:] = v


def _setitem_slice(h, v):
    h[:, 1:2] = v


#: The ``write`` layer: an in-place op over an intermediate that requires grad (a fresh
#: ``h * 1.0``), then the stack goes on from the written tensor. Whole overwrites (eager keeps
#: the history with a zero gradient: every earlier parameter gets zeros, not ``None``; session
#: 33), writes through views (whole and in part), writes autograd does not see (``no_grad``, a
#: detached alias) and piecewise-constant ops.
WRITES = {
    "zero_": lambda h: h.zero_(),
    "fill_": lambda h: h.fill_(0.25),
    "copy_const": lambda h: h.copy_(torch.full((), 0.5, dtype=h.dtype)),
    "copy_detached": lambda h: h.copy_(h.detach().flip(0)),
    "setitem_all": lambda h: _setitem_all(h, 0.5),
    "first_row_zero_": lambda h: h[0].zero_(),
    "channel_fill_": lambda h: h[:, 1:].fill_(-0.5),
    "masked_fill_": lambda h: h.masked_fill_(h.detach() > 0.5, 0.0),
    "no_grad_fill_": lambda h: _no_grad(h.fill_, 0.75),
    "no_grad_mul_": lambda h: _no_grad(h.mul_, 0.5),
    "detached_zero_": lambda h: h.detach()[0].zero_(),
    "floor_": lambda h: h.floor_(),
    "add_": lambda h: h.add_(1.0),
    # Session 34: these ran through torch's autograd (no rule for `index_fill_`; the
    # initializers write under `no_grad` themselves, so the history is kept; the method form
    # of the item store was traced as an effect).
    "index_fill_": lambda h: h.index_fill_(1, torch.tensor([1, 3, 1]), 0.5),
    "init_zeros_": lambda h: torch.nn.init.zeros_(h),
    "init_constant_view": lambda h: torch.nn.init.constant_(h[:, 2:], -0.25),
    "setitem_method": lambda h: h.__setitem__((slice(None), 0), 0.25),
    # Session 35: writes whose value requires grad (of `h` itself, read before the write:
    # neither `sum` nor a product with a number saves `h`). The functional graph's
    # `on_clone(Tensor.name_, ...)` of an op with an out-of-place twin takes the twin's rule
    # (`masked_fill_`, `scatter_`, `scatter_add_`, `index_copy_`, `index_add_`,
    # `masked_scatter_` ran through torch's autograd).
    "masked_fill_grad_value": lambda h: h.masked_fill_(
        h.detach() > 0.5, h.sum() * 0.01
    ),
    "index_fill_grad_value": lambda h: h.index_fill_(
        1, torch.tensor([0, 2, 0]), h.sum() * 0.01
    ),
    "scatter_grad_src": lambda h: h.scatter_(
        1, torch.ones_like(h[:, :1], dtype=torch.long), h[:, 2:3] * 0.5
    ),
    "scatter_add_grad_src": lambda h: h.scatter_add_(
        1, torch.full_like(h[:, :2], 3, dtype=torch.long), h[:, :2] * 0.5
    ),
    "index_copy_grad_src": lambda h: h.index_copy_(
        1, torch.tensor([0, 3]), h[:, 1:3] * 0.5
    ),
    "index_add_grad_src": lambda h: h.index_add_(
        1, torch.tensor([2, 2]), h[:, :2] * 0.5, alpha=0.5
    ),
    "masked_scatter_grad_src": lambda h: h.masked_scatter_(h.detach() > 0, h * 0.5),
    "setitem_grad_value": lambda h: _setitem_slice(h, h[:, 2:3] * 0.5),
}


class Generated(nn.Module):
    """The drawn layers in order; ``spec`` entries are ``(kind, arg)``."""

    def __init__(
        self, conv: bool, spec: list[tuple[str, str]], classes: int, ema: bool
    ):
        super().__init__()
        self.conv, self.spec, self.ema_on = conv, spec, ema
        self.layers = nn.ModuleList()
        size = 4  # spatial size of the conv stack (pooling adapts back to it)
        for kind, _ in spec:
            if kind in ("linear", "residual") and not conv:
                self.layers.append(nn.Linear(WIDTH, WIDTH))
            elif kind in ("conv", "residual") and conv:
                self.layers.append(nn.Conv2d(WIDTH, WIDTH, 3, padding=1))
            elif kind == "layer_norm":
                self.layers.append(nn.LayerNorm(WIDTH))
            elif kind == "batch_norm":
                self.layers.append(
                    nn.BatchNorm2d(WIDTH) if conv else nn.BatchNorm1d(WIDTH)
                )
            elif kind in ("dropout", "dropout_t"):
                self.layers.append(nn.Dropout(0.3))
            else:
                self.layers.append(nn.Identity())
        self.stem = nn.Conv2d(2, WIDTH, 3, padding=1) if conv else nn.Linear(3, WIDTH)
        self.head = nn.Linear(WIDTH * (size * size if conv else 1), classes)
        self.register_buffer("ema", torch.zeros(WIDTH, dtype=torch.float64))
        self.register_buffer("steps", torch.zeros((), dtype=torch.long))

    def forward(self, x):
        h = self.stem(x)
        for (kind, arg), layer in zip(self.spec, self.layers):
            if kind == "act":
                h = ACTS[arg](h)
            elif kind == "relu_":
                h = h * 1.0
                h.relu_()
            elif kind == "write":
                h = h * 1.0
                WRITES[arg](h)
            elif kind == "residual":
                h = h + torch.tanh(layer(h))
            elif kind == "dropout_t":
                # Dropout of a transposed view: eager draws its noise in the input's memory
                # order (session 26: the rewrite drew it contiguous, other noise).
                h = layer(h.transpose(0, -1)).transpose(0, -1)
            elif kind == "avg_pool":
                h = F.avg_pool2d(h, 2, 1, 1 if arg == "pad" else 0)
                h = F.adaptive_avg_pool2d(h, 4)
            else:
                h = layer(h)
        if self.ema_on:
            dims = (0, 2, 3) if self.conv else (0,)
            self.ema.mul_(0.9).add_(h.detach().mean(dims) * 0.1)
            self.steps.add_(1)
        return self.head(h.flatten(1))


@st.composite
def programs(draw):
    conv = draw(st.booleans())
    kinds = CONV_LAYERS if conv else DENSE_LAYERS
    spec = []
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(kinds))
        arg = ""
        if kind == "act":
            arg = draw(st.sampled_from(sorted(ACTS)))
        elif kind == "avg_pool":
            arg = draw(st.sampled_from(["pad", "nopad"]))
        elif kind == "write":
            arg = draw(st.sampled_from(sorted(WRITES)))
        spec.append((kind, arg))
    return {
        "conv": conv,
        "spec": spec,
        "ema": draw(st.booleans()),
        "loss": draw(st.sampled_from(sorted(LOSSES))),
        "opt": draw(st.sampled_from(["sgd", "momentum", "adamw"])),
        "seed": draw(st.integers(0, 2**16)),
    }


def _optimizer(kind, params, eps=1e-8):
    """``eps``: AdamW's; a larger one keeps a gradient that is rounding noise (a bias before
    batch norm) from being normalized into a full-size step."""
    if kind == "sgd":
        return torch.optim.SGD(params, lr=0.05)
    if kind == "momentum":
        return torch.optim.SGD(params, lr=0.05, momentum=0.9)
    return torch.optim.AdamW(params, lr=1e-2, eps=eps)


def _batch(p, step):
    g = torch.Generator().manual_seed(p["seed"] + step)
    shape = (4, 2, 4, 4) if p["conv"] else (5, 3)
    x = torch.randn(*shape, dtype=torch.float64, generator=g)
    classes = 3
    if p["loss"] in CLASS_TARGETS:
        y = torch.randint(0, classes, (shape[0],), generator=g)
    else:
        y = torch.randn(shape[0], classes, dtype=torch.float64, generator=g)
    return x, y


_W3 = torch.tensor([0.5, 1.0, 2.0], dtype=torch.float64)

#: The losses drawn (session 25 added all but the first two): of the head's (N, 3) output and
#: the batch's target (class indices for those in ``CLASS_TARGETS``, reals otherwise).
LOSSES = {
    "cross_entropy": F.cross_entropy,
    "mse": F.mse_loss,
    "ce_weight_smoothing": lambda o, y: F.cross_entropy(
        o, y, weight=_W3, label_smoothing=0.1
    ),
    "ce_probabilities": lambda o, y: F.cross_entropy(o, y.softmax(-1)),
    "l1": F.l1_loss,
    "smooth_l1": lambda o, y: F.smooth_l1_loss(o, y, beta=0.5),
    "huber": lambda o, y: F.huber_loss(o, y, delta=0.5),
    "bce_logits_pos_weight": lambda o, y: F.binary_cross_entropy_with_logits(
        o, y.sigmoid(), pos_weight=_W3
    ),
    "kl_div": lambda o, y: F.kl_div(
        F.log_softmax(o, -1), y.softmax(-1), reduction="batchmean"
    ),
}
CLASS_TARGETS = ("cross_entropy", "ce_weight_smoothing")


def _loss(p):
    def loss(model, x, y):
        return LOSSES[p["loss"]](model(x), y)

    return loss


def _train(p, model, step_fn, batch=_batch, steps=STEPS, eps=1e-8, before=None):
    """``steps`` training steps of ``step_fn`` on ``batch(p, step)``: per step the loss, the
    gradients and the state dict after the optimizer's step. ``before(step)``, if given, runs
    before each step."""
    model.train()
    opt = _optimizer(p["opt"], model.parameters(), eps)
    trace = []
    for step in range(steps):
        if before is not None:
            before(step)
        torch.manual_seed(p["seed"] * 7 + step)  # dropout: the same draws in both runs
        loss = step_fn(*batch(p, step))
        loss.backward()
        grads = {
            k: v.grad.clone() for k, v in model.named_parameters() if v.grad is not None
        }
        opt.step()
        opt.zero_grad(set_to_none=True)
        state = {k: v.detach().clone() for k, v in model.state_dict().items()}
        trace.append((loss.detach(), grads, state))
    return trace


def _both(p, backend, seed):
    """The program ``p`` (initialized under ``seed``) trained eagerly and through torchferro
    (``backend``) from the same state: the initial model, the loss and both runs' traces."""
    torch.manual_seed(seed)
    base = Generated(p["conv"], p["spec"], 3, p["ema"]).double()
    loss_fn = _loss(p)
    eager_model, comp_model = copy.deepcopy(base), copy.deepcopy(base)
    torchferro.compiler.reset()
    _aot.reset()
    eager = _train(p, eager_model, lambda *b: loss_fn(eager_model, *b))
    compiled = _train(
        p,
        comp_model,
        torchferro.compile(lambda *b: loss_fn(comp_model, *b), backend=backend),
    )
    return base, loss_fn, eager, compiled


def _assert_same(eager, compiled):
    """Equal losses, gradients and states at every step (float64: tight tolerances)."""
    for step, ((le, ge, se), (lc, gc, sc)) in enumerate(zip(eager, compiled)):
        torch.testing.assert_close(lc, le, rtol=1e-9, atol=1e-10, msg=f"loss {step}")
        assert gc.keys() == ge.keys()
        for k in ge:
            torch.testing.assert_close(
                gc[k],
                ge[k],
                rtol=1e-7,
                atol=1e-9,
                msg=lambda m, k=k: f"grad {step} {k}: {m}",
            )
        for k in se:
            torch.testing.assert_close(
                sc[k],
                se[k],
                rtol=1e-7,
                atol=1e-9,
                msg=lambda m, k=k: f"state {step} {k}: {m}",
            )


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(p=programs())
def test_generated_training_steps_match_eager(p):
    note(repr(p))
    base, loss_fn, eager, compiled = _both(p, BACKEND, p["seed"])
    _assert_same(eager, compiled)
    assert _aot.counters["fallback"] == 0, _aot.fallback_reasons
    oracle_model = copy.deepcopy(base).train()
    torch.manual_seed(0)
    oracle = torch_compile_graphs(lambda *b: loss_fn(oracle_model, *b), *_batch(p, 0))
    assert _aot.counters["compiled"] == oracle
    assert _aot.counters["backward"] == oracle * STEPS


def _trains_compiled(p, backend):
    """Trains the program ``p`` eagerly and through torchferro (``backend``): the same runs, no
    fallback, one graph compiled forward and backward."""
    _assert_same(*_both(p, backend, 0)[2:])
    assert _aot.counters["fallback"] == 0, _aot.fallback_reasons
    assert _aot.counters["compiled"] == 1
    assert _aot.counters["backward"] == STEPS


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_generated_program_shapes_are_reachable(backend):
    """One fixed program with every layer kind, on both backends (the inductor compiles the
    halves): the generator's vocabulary all trains compiled."""
    for conv, kinds in ((False, DENSE_LAYERS), (True, CONV_LAYERS)):
        arg = {"act": "gelu", "avg_pool": "pad", "write": "first_row_zero_"}
        spec = [(k, arg.get(k, "")) for k in kinds]
        p = {
            "conv": conv,
            "spec": spec,
            "ema": True,
            "loss": "cross_entropy",
            "opt": "adamw",
            "seed": 5,
        }
        _trains_compiled(p, backend)


@pytest.mark.parametrize("conv", [False, True], ids=["dense", "conv"])
@pytest.mark.parametrize("write", sorted(WRITES))
def test_generated_writes_are_reachable(write, conv):
    """Every ``write`` of the vocabulary between two layers trains compiled (the draws reach
    each only now and then)."""
    first = "conv" if conv else "linear"
    p = {
        "conv": conv,
        "spec": [(first, ""), ("write", write), ("act", "tanh")],
        "ema": False,
        "loss": "cross_entropy",
        "opt": "momentum",
        "seed": 3,
    }
    _trains_compiled(p, BACKEND)
