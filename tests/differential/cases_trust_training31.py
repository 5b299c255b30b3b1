"""Session 31 (aot31) hunt, training steps as users write them, in areas session 30 did not
reach: ``torch.amp.GradScaler`` with float16 autocast on the CPU (scale, unscale, clip, step,
update, an overflowing step skipped), ``nn.MultiheadAttention`` (weights returned or not, a key
padding mask) and ``nn.TransformerEncoderLayer`` trained, ``F.embedding`` with ``padding_idx``
and ``max_norm`` (which renormalizes the weight in place), the ``weight_norm`` and
``spectral_norm`` parametrizations, ``torch.func.functional_call`` over a parameter dict,
``register_forward_pre_hook``/``register_full_backward_hook`` with kwargs, ``requires_grad_()``
toggled inside forward, ``retain_grad()`` on an activation, gradients of an int-indexed
``gather``/``scatter_add``, a loss made of Python float arithmetic on tensors, optimizers with
``foreach`` on and off, ``ReduceLROnPlateau``/``OneCycleLR`` stepped after each step, and more
of the same (``kdim``/``vdim`` attention, a causal encoder stack, spectral norm on a convolution,
backward hooks changing gradients, one scaler over two optimizers, ``functional_call`` with
buffers). Each
call is one optimizer step inside the compiled forward; parameters, buffers, gradients and
plain attributes (the optimizer's state copied into ``state``) are compared after each, losses
as outputs."""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F

from .cases_trust_training30 import xy
from .runner import register

STRICT_BREADTH = True


def _train(name, cls, inputs, **options):
    register(f"trust_train31_{name}", cls, inputs, module=True, **options)


def seq(r):
    """A batch of 3 sequences of 5 tokens of width 8, and a regression target."""
    return (r.randn(3, 5, 8), r.randn(3, 4))


def tokens(r):
    return (r.randint(0, 11, 2, 5), r.randn(2, 4))


def _opt_state(opt) -> list:
    """The optimizer's per-parameter state, as plain tensors and numbers (compared)."""
    return [
        {k: (v.clone() if torch.is_tensor(v) else v) for k, v in s.items()}
        for s in opt.state.values()
    ]


class _Step(nn.Module):
    """One optimizer step per call around ``self.loss``; the optimizer's state and learning
    rate are kept in ``self.state`` after each step so the harness compares them."""

    def make_opt(self, opt=None):
        self._opt = opt or torch.optim.SGD(self.parameters(), lr=0.1, momentum=0.9)

    def forward(self, *args):
        self._opt.zero_grad()
        loss = self.loss(*args)
        loss.backward()
        self._opt.step()
        self.state = _opt_state(self._opt)
        return loss.detach()


class _Two(_Step):
    """``fc1`` (8 to 8) and ``fc2`` (8 to 4); ``make`` builds the optimizer (SGD with momentum
    without it)."""

    def __init__(self, make=None):
        super().__init__()
        self.fc1 = nn.Linear(8, 8)
        self.fc2 = nn.Linear(8, 4)
        self.make_opt(make(self.parameters()) if make else None)


class GradScaled(nn.Module):
    """float16 autocast on the CPU with a ``GradScaler``: the first step's scale (2**18)
    overflows the float16 gradients, so that step is skipped and the scale halves; the next
    is taken and the scale doubles again (growth every step), and so on, alternating.
    Unscaled before clipping, as the AMP recipe writes it."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 4)
        self._opt = torch.optim.SGD(self.parameters(), lr=0.05, momentum=0.9)
        self._scaler = torch.amp.GradScaler(
            "cpu", init_scale=2.0**18, growth_interval=1
        )

    def forward(self, x, y):
        self._opt.zero_grad()
        with torch.autocast("cpu", dtype=torch.float16):
            out = self.fc2(F.relu(self.fc1(x)))
        loss = F.mse_loss(out.float(), y)
        self._scaler.scale(loss).backward()
        self._scaler.unscale_(self._opt)
        norm = nn.utils.clip_grad_norm_(self.parameters(), 1.0)
        self._scaler.step(self._opt)
        self._scaler.update()
        self.scale = self._scaler.get_scale()
        self.state = _opt_state(self._opt)
        return loss.detach(), norm


_train("grad_scaler_float16_autocast", GradScaled, xy)


class Mha(_Step):
    def __init__(self, need_weights, masked):
        super().__init__()
        self.attn = nn.MultiheadAttention(8, 2, batch_first=True)
        self.head = nn.Linear(8, 4)
        self.need_weights = need_weights
        self.masked = masked
        self.make_opt()

    def loss(self, x, y):
        mask = None
        if self.masked:
            mask = torch.tensor(
                [[False] * 5, [False] * 3 + [True] * 2, [False] * 4 + [True]]
            )
        h, w = self.attn(x, x, x, key_padding_mask=mask, need_weights=self.need_weights)
        loss = F.mse_loss(self.head(h.mean(1)), y)
        if w is not None:
            loss = loss + w.square().mean()
        return loss


_train("multihead_attention_weights", lambda: Mha(True, False), seq)
_train("multihead_attention_no_weights_padding_mask", lambda: Mha(False, True), seq)


class EncoderLayer(_Step):
    def __init__(self, norm_first):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(
            8, 2, 16, dropout=0.0, batch_first=True, norm_first=norm_first
        )
        self.head = nn.Linear(8, 4)
        # SGD, not Adam: the key part of `in_proj_bias` has a zero gradient in exact
        # arithmetic (softmax ignores a shift shared by a row), so its float gradient is
        # rounding noise (1e-9) that Adam's normalization turns into a full-size step whose
        # sign depends on the order of a sum (eager, torch.compile and ours all differ).
        self.make_opt()

    def loss(self, x, y):
        mask = torch.tensor(
            [[False] * 5, [False] * 3 + [True] * 2, [False] * 4 + [True]]
        )
        h = self.layer(x, src_key_padding_mask=mask)
        return F.mse_loss(self.head(h[:, 0]), y)


_train("transformer_encoder_layer_padding_mask", lambda: EncoderLayer(False), seq)
_train("transformer_encoder_layer_norm_first", lambda: EncoderLayer(True), seq)


class EncoderLayerDropout(_Step):
    """Dropout 0.1 in the layer: the random stream after each step is compared too."""

    def __init__(self):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.1, batch_first=True)
        self.head = nn.Linear(8, 4)
        self.make_opt()

    def loss(self, x, y):
        return F.mse_loss(self.head(self.layer(x).mean(1)), y)


_train("transformer_encoder_layer_dropout", EncoderLayerDropout, seq)


class EmbeddingOptions(_Step):
    """``padding_idx`` (its row gets no gradient) and ``max_norm`` (looked-up rows longer than
    1 are scaled down in the weight itself, in place, before the lookup)."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(11, 8, padding_idx=0)
        self.emb2 = nn.Embedding(11, 8, max_norm=1.0)
        with torch.no_grad():
            self.emb2.weight.mul_(3)
        self.head = nn.Linear(8, 4)
        self.make_opt()

    def loss(self, ids, y):
        h = self.emb(ids) + F.embedding(ids, self.emb2.weight, max_norm=1.0)
        return F.mse_loss(self.head(h.mean(1)), y)


_train("embedding_padding_idx_and_max_norm", EmbeddingOptions, tokens)


class Parametrized(_Step):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.utils.parametrizations.weight_norm(nn.Linear(8, 8))
        self.fc2 = nn.utils.parametrizations.spectral_norm(nn.Linear(8, 4))
        self.make_opt()

    def loss(self, x, y):
        return F.mse_loss(self.fc2(torch.tanh(self.fc1(x))), y)


_train("weight_norm_and_spectral_norm", Parametrized, xy)


class FunctionalCall(_Step):
    """``functional_call`` with a dict of the module's parameters, one of them replaced by a
    scaled copy (gradients flow into the original through the scaling)."""

    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 4))
        self.make_opt()

    def loss(self, x, y):
        params = dict(self.net.named_parameters())
        params["0.weight"] = params["0.weight"] * 0.5
        out = torch.func.functional_call(self.net, params, (x,))
        return F.mse_loss(out, y)


_train("functional_call_params_dict", FunctionalCall, xy)


class HooksWithKwargs(_Two):
    def __init__(self):
        super().__init__()
        self.seen = []

        def pre(m, args, kwargs):
            return (args[0] * kwargs.pop("scale"),), kwargs

        self.fc1.register_forward_pre_hook(pre, with_kwargs=True)
        self.fc2.register_full_backward_hook(
            lambda m, gi, go: self.seen.append(round(float(gi[0].abs().sum()), 4))
        )

    def loss(self, x, y):
        return F.mse_loss(self.fc2(torch.tanh(self.fc1(x, scale=2.0))), y)


_train("forward_pre_hook_kwargs_full_backward_hook", HooksWithKwargs, xy)


class ToggledRequiresGrad(_Two):
    """``fc1.weight`` trained for the first input set's step and frozen for the second,
    switched inside forward by the sign of the input's sum, and ``requires_grad_()`` called on
    the activation (which requires grad already: a no-op)."""

    def loss(self, x, y):
        self.fc1.weight.requires_grad_(bool(x.sum() > 0))
        h = self.fc1(x)
        h.requires_grad_()
        return F.mse_loss(self.fc2(F.relu(h)), y)


_train("requires_grad_toggled_inside_forward", ToggledRequiresGrad, xy)


class RetainGrad(_Two):
    def forward(self, x, y):
        self._opt.zero_grad()
        h = torch.tanh(self.fc1(x))
        h.retain_grad()
        loss = F.mse_loss(self.fc2(h), y)
        loss.backward()
        self._opt.step()
        return loss.detach(), h.grad


_train(
    "retain_grad_on_an_activation",
    RetainGrad,
    xy,
    breadth="torch.compile gives up the frame resumed after h.retain_grad() (step_unsupported) "
    "and runs the loss eagerly; torchferro compiles it as one more graph (4 to 3, the optimizer "
    "step recompiled on the second call by both)",
)


class GatherScatter(_Step):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.out = nn.Linear(4, 4)
        self.make_opt()

    def loss(self, x, y):
        h = self.fc(x)
        idx = torch.tensor([[0, 3, 3, 7], [1, 1, 2, 5], [6, 0, 0, 0]]).repeat(2, 1)
        g = h.gather(1, idx)
        s = torch.zeros(6, 4).scatter_add(1, idx % 4, h[:, :4] * g)
        return F.mse_loss(self.out(s + g), y)


_train("gather_and_scatter_add_int_index", GatherScatter, xy)


class PythonFloatLoss(_Step):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)
        self.make_opt()

    def loss(self, x, y):
        out = self.fc(x)
        a = F.mse_loss(out, y)
        b = (out - y).abs().mean()
        c = out.pow(2).mean()
        loss = 0.5 * a + b / 3.0 - 2.0**-3 * c + math.sqrt(2.0) * a * b
        return abs(loss) ** 0.5 + (1.0 - c) * 1e-2


_train("loss_of_python_float_arithmetic", PythonFloatLoss, xy)


class Foreach(_Two):
    def loss(self, x, y):
        return F.mse_loss(self.fc2(F.gelu(self.fc1(x))), y)


_train(
    "adam_foreach",
    lambda: Foreach(lambda p: torch.optim.Adam(p, lr=0.01, foreach=True)),
    xy,
)
_train(
    "adamw_for_loop_amsgrad",
    lambda: Foreach(
        lambda p: torch.optim.AdamW(p, lr=0.01, foreach=False, amsgrad=True)
    ),
    xy,
)
_train(
    "rmsprop_foreach_centered",
    lambda: Foreach(
        lambda p: torch.optim.RMSprop(p, lr=0.01, foreach=True, centered=True)
    ),
    xy,
)
_train(
    "adagrad_for_loop",
    lambda: Foreach(lambda p: torch.optim.Adagrad(p, lr=0.1, foreach=False)),
    xy,
)


class Scheduled(_Two):
    def __init__(self, kind):
        super().__init__()
        self.kind = kind
        if kind == "plateau":
            self._sched = torch.optim.lr_scheduler.ReduceLROnPlateau(
                self._opt, factor=0.5, patience=0
            )
        else:
            self._sched = torch.optim.lr_scheduler.OneCycleLR(
                self._opt, max_lr=0.2, total_steps=10
            )

    def loss(self, x, y):
        return F.mse_loss(self.fc2(torch.tanh(self.fc1(x))), y)

    def forward(self, x, y):
        loss = super().forward(x, y)
        if self.kind == "plateau":
            self._sched.step(loss)
        else:
            self._sched.step()
        self.lr = self._opt.param_groups[0]["lr"]
        return loss


_train("reduce_lr_on_plateau", lambda: Scheduled("plateau"), xy)
_train("one_cycle_lr", lambda: Scheduled("one_cycle"), xy)


class MhaFloatMaskPerHead(_Step):
    """Separate key/value widths (``kdim``/``vdim``: three projection weights), a float
    additive mask, per-head weights (``average_attn_weights=False``) in the loss."""

    def __init__(self):
        super().__init__()
        self.attn = nn.MultiheadAttention(8, 2, kdim=6, vdim=4, batch_first=True)
        self.head = nn.Linear(8, 4)
        self.make_opt()

    def loss(self, x, y):
        kv = x[..., :6]
        mask = torch.triu(torch.full((5, 5), -1e4), 1)
        h, w = self.attn(x, kv, kv[..., :4], attn_mask=mask, average_attn_weights=False)
        return F.mse_loss(self.head(h.mean(1)), y) + w[:, 1].square().mean()


_train("multihead_attention_kdim_vdim_float_mask_per_head", MhaFloatMaskPerHead, seq)


class CausalEncoder(_Step):
    """Two encoder layers and a final norm, a causal mask with ``is_causal=True``."""

    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
        self.enc = nn.TransformerEncoder(
            layer, 2, norm=nn.LayerNorm(8), enable_nested_tensor=False
        )
        self.head = nn.Linear(8, 4)
        self.make_opt()

    def loss(self, x, y):
        mask = nn.Transformer.generate_square_subsequent_mask(5)
        h = self.enc(x, mask=mask, is_causal=True)
        return F.mse_loss(self.head(h[:, -1]), y)


_train("transformer_encoder_causal_two_layers", CausalEncoder, seq)


class EmbeddingMaxNormRepeated(_Step):
    """``max_norm`` with ``norm_type=1`` over ids that repeat (each row renormalized once)."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(11, 8, max_norm=2.0, norm_type=1.0)
        self.head = nn.Linear(8, 4)
        self.make_opt()

    def loss(self, ids, y):
        ids = torch.cat([ids, ids[:, :2]], 1)
        return F.mse_loss(self.head(self.emb(ids).sum(1)), y)


_train("embedding_max_norm_repeated_ids", EmbeddingMaxNormRepeated, tokens)


def images(r):
    return (r.randn(2, 3, 6, 6), r.randn(2, 4))


class SpectralConv(_Step):
    """``spectral_norm`` on a convolution (its weight reshaped to a matrix), two power
    iterations per call."""

    def __init__(self):
        super().__init__()
        self.conv = nn.utils.parametrizations.spectral_norm(
            nn.Conv2d(3, 4, 3), n_power_iterations=2
        )
        self.head = nn.Linear(4, 4)
        self.make_opt()

    def loss(self, x, y):
        return F.mse_loss(self.head(F.relu(self.conv(x)).mean((2, 3))), y)


_train("spectral_norm_conv_two_iterations", SpectralConv, images)


class BackwardHooksChangingGrads(_Two):
    """A full backward pre-hook scaling the output gradient and a full backward hook
    replacing the input gradient."""

    def __init__(self):
        super().__init__()
        self.fc2.register_full_backward_pre_hook(lambda m, go: (go[0] * 3,))
        self.fc2.register_full_backward_hook(
            lambda m, gi, go: (gi[0].clamp(-0.01, 0.01),)
        )

    def loss(self, x, y):
        return F.mse_loss(self.fc2(torch.tanh(self.fc1(x))), y)


_train("backward_hooks_changing_gradients", BackwardHooksChangingGrads, xy)


class TwoScaledLosses(nn.Module):
    """The AMP recipe for two models and two optimizers on one scaler: both losses scaled,
    each optimizer stepped through the scaler, one update."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 4)
        self.b = nn.Linear(8, 4)
        self._opt_a = torch.optim.SGD(self.a.parameters(), lr=0.1)
        self._opt_b = torch.optim.Adam(self.b.parameters(), lr=0.01)
        self._scaler = torch.amp.GradScaler("cpu", init_scale=2.0**10)

    def forward(self, x, y):
        self._opt_a.zero_grad()
        self._opt_b.zero_grad()
        with torch.autocast("cpu", dtype=torch.float16):
            la = F.mse_loss(self.a(x).float(), y)
            lb = F.mse_loss(self.b(x).float(), y * 2)
        self._scaler.scale(la + lb).backward()
        self._scaler.step(self._opt_a)
        self._scaler.step(self._opt_b)
        self._scaler.update()
        self.scale = self._scaler.get_scale()
        self.state = _opt_state(self._opt_b)
        return la.detach(), lb.detach()


_train("grad_scaler_two_optimizers", TwoScaledLosses, xy)


class FunctionalCallBuffers(_Step):
    """``functional_call`` over parameters and buffers of a module with a BatchNorm (its
    running statistics written into the dict's tensors, not the module's), strict."""

    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 8), nn.BatchNorm1d(8), nn.Linear(8, 4))
        self.stats = {k: v.clone() for k, v in self.net.named_buffers()}
        self.make_opt()

    def loss(self, x, y):
        state = {**dict(self.net.named_parameters()), **self.stats}
        out = torch.func.functional_call(self.net, state, (x,), strict=True)
        return F.mse_loss(out, y)


_train("functional_call_with_buffers_strict", FunctionalCallBuffers, xy)
