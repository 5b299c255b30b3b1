"""Issue 14, model code as users write it: attention with ``einsum`` and causal masks from
``triu``, grouped-query heads with ``repeat_interleave``, recurrent layers and hand-written
recurrences, custom ``torch.autograd.Function``, activation checkpointing, ``enum.Enum`` and
``typing`` configs, ``yield from``, ``copy.copy`` of a config, ``GroupNorm`` / ``ConvTranspose`` /
pooling / ``PixelShuffle`` / ``Upsample`` blocks."""

from __future__ import annotations

import copy
import dataclasses
import enum
import functools
import math
from typing import NamedTuple, Optional

import torch
import torch.nn.functional as F
from torch import nn

from .runner import case, register

# Issue 14: more graphs than torch.compile fails unless the case names the gap (breadth=).
STRICT_BREADTH = True


def x_seq(r):
    return (r.randn(2, 5, 8),)


def x_img(r):
    return (r.randn(2, 4, 8, 8),)


# ---------------------------------------------------------------------------------------------
# Attention


@case(x_seq)
def einsum_attention_with_triu_mask(x):
    q, k, v = x, x * 0.5, x + 1
    scores = torch.einsum("bqd,bkd->bqk", q, k) / math.sqrt(x.shape[-1])
    mask = torch.triu(torch.ones(x.shape[1], x.shape[1], dtype=torch.bool), diagonal=1)
    scores = scores.masked_fill(mask, float("-inf"))
    return torch.einsum("bqk,bkd->bqd", scores.softmax(-1), v)


class GQA(nn.Module):
    """Grouped-query attention: 4 query heads share 2 key/value heads."""

    def __init__(self, d=8, heads=4, kv_heads=2):
        super().__init__()
        self.heads, self.kv_heads, self.hd = heads, kv_heads, d // heads
        self.q = nn.Linear(d, d, bias=False)
        self.kv = nn.Linear(d, 2 * kv_heads * self.hd, bias=False)
        self.o = nn.Linear(d, d, bias=False)

    def forward(self, x):
        b, t, _ = x.shape
        q = self.q(x).view(b, t, self.heads, self.hd).transpose(1, 2)
        k, v = self.kv(x).view(b, t, 2, self.kv_heads, self.hd).unbind(2)
        k = k.transpose(1, 2).repeat_interleave(self.heads // self.kv_heads, dim=1)
        v = v.transpose(1, 2).repeat_interleave(self.heads // self.kv_heads, dim=1)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.o(y.transpose(1, 2).reshape(b, t, -1))


register("gqa_repeat_interleave_sdpa", GQA, x_seq, module=True)


@case(x_seq)
def alibi_bias_from_arange(x):
    t = x.shape[1]
    pos = torch.arange(t)
    bias = (pos[None, :] - pos[:, None]).abs().neg().float()
    slopes = torch.tensor([2.0 ** (-i) for i in range(1, 3)])
    return (x @ x.transpose(1, 2))[:, None] + slopes[:, None, None] * bias


# ---------------------------------------------------------------------------------------------
# Recurrences


class RNNCellLoop(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(8, 6)
        self.out = nn.Linear(6, 2)

    def forward(self, x):
        h = torch.zeros(x.shape[0], 6)
        outs = []
        for t in range(x.shape[1]):
            h = self.cell(x[:, t], h)
            outs.append(self.out(h))
        return torch.stack(outs, 1), h


register("gru_cell_unrolled", RNNCellLoop, x_seq, module=True)


class LSTMModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(8, 6, batch_first=True)
        self.head = nn.Linear(6, 1)

    def forward(self, x):
        out, (h, c) = self.lstm(x)
        return self.head(out[:, -1]), h.shape, c.sum()


register("lstm_batch_first", LSTMModel, x_seq, module=True)


@case(x_seq)
def hand_written_ema_recurrence(x):
    state = x[:, 0]
    outs = [state]
    for t in range(1, x.shape[1]):
        state = 0.9 * state + 0.1 * x[:, t]
        outs.append(state)
    return torch.stack(outs, dim=1)


# ---------------------------------------------------------------------------------------------
# autograd.Function and checkpointing


class _ScaleGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.scale = scale
        return x.clone()

    @staticmethod
    def backward(ctx, g):
        return g * ctx.scale, None


class _ClampSTE(torch.autograd.Function):
    """A straight-through estimator: clamp forward, identity backward."""

    @staticmethod
    def forward(ctx, x):
        return x.clamp(-1, 1)

    @staticmethod
    def backward(ctx, g):
        return g


def xg(r):
    return (r.randn(3, 4, requires_grad=True),)


@case(xg)
def autograd_function_scale_grad(x):
    return _ScaleGrad.apply(x, 0.5) * 2


@case(xg)
def autograd_function_straight_through(x):
    return _ClampSTE.apply(x * 3).sum(0)


@case(lambda r: (r.randn(3, 4),))
def autograd_function_no_grad_input(x):
    return _ClampSTE.apply(x * 3) + 1


class Checkpointed(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 8)
        self.b = nn.Linear(8, 8)

    def block(self, x):
        return torch.relu(self.b(torch.relu(self.a(x))))

    def forward(self, x):
        return torch.utils.checkpoint.checkpoint(self.block, x, use_reentrant=False) + x


register("checkpoint_non_reentrant", Checkpointed, x_seq, module=True)


class CheckpointedTraining(Checkpointed):
    """Checkpointed blocks in a training step: the gradients must be eager's."""

    def forward(self, x):
        h = x
        for _ in range(2):
            h = torch.utils.checkpoint.checkpoint(self.block, h, use_reentrant=False)
        loss = h.pow(2).mean()
        loss.backward()
        grads = [p.grad.clone() for p in self.parameters()]
        for p in self.parameters():
            p.grad = None
        return loss.detach(), grads


register("checkpoint_in_a_training_step", CheckpointedTraining, x_seq, module=True)


# ---------------------------------------------------------------------------------------------
# Configs: enum, NamedTuple, dataclasses, copy


class Act(enum.Enum):
    RELU = "relu"
    GELU = "gelu"
    SILU = "silu"


class Norm(enum.IntEnum):
    NONE = 0
    LAYER = 1


@dataclasses.dataclass
class BlockConfig:
    act: Act = Act.GELU
    norm: Norm = Norm.LAYER
    dropout: float = 0.0
    width: Optional[int] = None


_ACTS = {Act.RELU: F.relu, Act.GELU: F.gelu, Act.SILU: F.silu}


class ConfiguredBlock(nn.Module):
    def __init__(self, cfg=None):
        super().__init__()
        self.cfg = cfg or BlockConfig()
        self.fc = nn.Linear(8, self.cfg.width or 8)
        self.ln = nn.LayerNorm(8) if self.cfg.norm is Norm.LAYER else nn.Identity()

    def forward(self, x):
        h = _ACTS[self.cfg.act](self.fc(x))
        if self.cfg.norm == Norm.LAYER and self.cfg.act in (Act.GELU, Act.SILU):
            h = self.ln(h)
        return h, self.cfg.act.value, int(self.cfg.norm)


register("enum_configured_block", ConfiguredBlock, x_seq, module=True)


@case(x_seq)
def enum_members_iterated(x):
    out = []
    for a in Act:
        out.append(_ACTS[a](x).sum())
    return out, [a.name for a in Act], Act("silu") is Act.SILU


class Pair(NamedTuple):
    mean: torch.Tensor
    std: torch.Tensor


@case(x_seq)
def namedtuple_result_of_a_helper(x):
    def stats(t) -> Pair:
        return Pair(t.mean(-1), t.std(-1))

    p = stats(x)
    return p.mean + p.std, p._replace(std=p.std * 2).std


@case(x_seq)
def copy_of_a_config_changed(x):
    cfg = BlockConfig(act=Act.RELU)
    other = copy.copy(cfg)
    other.dropout = 0.5
    return F.dropout(x, cfg.dropout) + x, other.dropout, cfg.dropout


@case(x_seq)
def dataclass_replace_and_fields(x):
    cfg = dataclasses.replace(BlockConfig(), width=4)
    names = [f.name for f in dataclasses.fields(cfg)]
    return x[..., : cfg.width] * len(names), dataclasses.asdict(cfg)["width"]


# ---------------------------------------------------------------------------------------------
# yield from


def _flatten(items):
    for it in items:
        if isinstance(it, (list, tuple)):
            yield from _flatten(it)
        else:
            yield it


@case(lambda r: ([r.randn(2), (r.randn(2), [r.randn(2)])],))
def yield_from_flatten(xs):
    return sum(_flatten(xs))


def _both(x):
    yield from (x, x + 1)
    yield x * 2


@case(lambda r: (r.randn(3),))
def yield_from_in_a_for_loop(x):
    out = []
    for t in _both(x):
        out.append(t.sum())
    return out


# ---------------------------------------------------------------------------------------------
# Conv blocks


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.GroupNorm(2, 4)
        self.up = nn.ConvTranspose2d(4, 4, 2, stride=2)
        self.pool = nn.MaxPool2d(2)
        self.shuffle = nn.PixelShuffle(2)
        self.upsample = nn.Upsample(scale_factor=2, mode="nearest")

    def forward(self, x):
        h = F.silu(self.norm(x))
        h = self.pool(self.up(h))
        return self.shuffle(h), self.upsample(h).mean()


register("groupnorm_convtranspose_pool_shuffle", Decoder, x_img, module=True)


@case(x_img)
def interpolate_bilinear_and_avg_pool(x):
    y = F.interpolate(x, scale_factor=0.5, mode="bilinear", align_corners=False)
    return F.adaptive_avg_pool2d(y, 1).flatten(1), F.avg_pool2d(x, 2).shape


# A Function applied in traced code is one graph node; autograd later calls its backward inside
# `backward()` from the resumed frame. torch.compile traced that backward with the forward, so
# the user's backward is no frame of its own: 2 graphs (torchferro's node runs it with the hook
# off, python/torchferro/_autograd.py).
@case(xg)
def autograd_function_custom_backward_used(x):
    # The custom backward halves the gradient: x.grad is 0.5 * 2 everywhere, not 2.
    (_ScaleGrad.apply(x, 0.5) * 2).sum().backward()
    g = x.grad.clone()
    x.grad = None
    return g


def _halve(g):
    return g * 0.5


class _HalveGradVjp(torch.autograd.Function):
    """The backward spelled ``vjp`` (autograd calls whichever the class defines), calling a
    helper."""

    @staticmethod
    def forward(ctx, x):
        return x * 1.0

    @staticmethod
    def vjp(ctx, g):
        return _halve(g)


@case(xg)
def autograd_function_vjp_calling_a_helper_used(x):
    # Neither the vjp nor the helper it calls is a frame of its own: 2 graphs, as torch.compile.
    (_HalveGradVjp.apply(x) * 3).sum().backward()
    g = x.grad.clone()
    x.grad = None
    return g


@torch.compiler.disable
def _scale_grad_eagerly(x):
    return _ScaleGrad.apply(x, 0.5)


@case(xg)
def autograd_function_applied_eagerly_backward_used(x):
    # Applied outside any graph, the Function keeps the user's class: autograd calls the user's
    # backward as a frame both compilers compile (a graph of its own under torch.compile too).
    (_scale_grad_eagerly(x) * 2).sum().backward()
    g = x.grad.clone()
    x.grad = None
    return g


class STEQuantizer(nn.Module):
    """Quantization-aware training: a straight-through rounding inside a model."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        w = _ClampSTE.apply(self.fc.weight * 4) / 4
        return F.linear(x, w, self.fc.bias)


register("autograd_function_in_a_module", STEQuantizer, x_seq, module=True)


# ---------------------------------------------------------------------------------------------
# Library idioms


class NamedLayers(nn.Module):
    """Layers reached by name (`getattr(self, f"layer{i}")`) and a ModuleDict walked by items."""

    def __init__(self):
        super().__init__()
        for i in range(3):
            setattr(self, f"layer{i}", nn.Linear(8, 8))
        self.heads = nn.ModuleDict({"a": nn.Linear(8, 2), "b": nn.Linear(8, 3)})

    def forward(self, x):
        for i in range(3):
            x = torch.tanh(getattr(self, f"layer{i}")(x))
        return {k: h(x).sum(-1) for k, h in self.heads.items()}


register("layers_by_name_and_module_dict_items", NamedLayers, x_seq, module=True)


class ScriptingBranches(nn.Module):
    """torchvision's checks: `torch.jit.is_scripting()` / `is_tracing()` branches."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        if not torch.jit.is_scripting() and not torch.jit.is_tracing():
            x = x * 2
        if torch.compiler.is_compiling():
            x = x + 0
        return self.fc(x)


register("jit_is_scripting_branches", ScriptingBranches, x_seq, module=True)


@case(x_seq)
def numel_from_math_prod_and_reduce(x):
    import functools
    import operator

    n = math.prod(x.shape[1:])
    m = functools.reduce(operator.mul, x.shape, 1)
    return x.reshape(x.shape[0], n) / m, x.new_zeros(n).shape, x.new_full((2,), 3.0)


@case(lambda r: (r.randint(0, 5, 6), r.randn(6, 5)))
def one_hot_and_bucketize(idx, logits):
    oh = F.one_hot(idx, num_classes=5).float()
    b = torch.bucketize(logits, torch.tensor([-1.0, 0.0, 1.0]))
    return (oh * logits).sum(-1), b, torch.cdist(logits, logits).shape


@case(x_seq)
def rearrange_heads_by_hand(x):
    b, t, d = x.shape
    h = 2
    y = x.view(b, t, h, d // h).permute(0, 2, 1, 3).contiguous()
    return y.flatten(0, 1).transpose(-1, -2).reshape(b * h, -1).shape, y.sum((1, 3))


class DepthwiseSeparable(nn.Module):
    def __init__(self):
        super().__init__()
        self.dw = nn.Conv2d(4, 4, 3, padding=1, groups=4)
        self.pw = nn.Conv2d(4, 8, 1)
        self.bn = nn.BatchNorm2d(8)

    def forward(self, x):
        return F.hardswish(self.bn(self.pw(F.relu6(self.dw(x)))))


register("depthwise_separable_conv_train_mode", DepthwiseSeparable, x_img, module=True)


class SqueezeExcite(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Conv2d(4, 2, 1)
        self.fc2 = nn.Conv2d(2, 4, 1)

    def forward(self, x):
        s = F.adaptive_avg_pool2d(x, 1)
        s = torch.sigmoid(self.fc2(F.silu(self.fc1(s))))
        return x * s


register("squeeze_excite_block", SqueezeExcite, x_img, module=True)


@case(x_seq)
def kv_cache_list_appended_in_a_loop(x):
    cache = []
    out = []
    for t in range(x.shape[1]):
        cache.append(x[:, t : t + 1])
        keys = torch.cat(cache, dim=1)
        out.append((keys * x[:, t : t + 1]).sum(1))
    return torch.stack(out, 1), len(cache)


@case(x_seq)
def top_k_top_p_sampling_filter(x):
    logits = x[:, -1]
    v, _ = torch.topk(logits, 3)
    logits = logits.masked_fill(logits < v[:, [-1]], float("-inf"))
    sorted_logits, idx = torch.sort(logits, descending=True)
    probs = sorted_logits.softmax(-1).cumsum(-1)
    remove = probs > 0.9
    remove[..., 1:] = remove[..., :-1].clone()
    remove[..., 0] = False
    return sorted_logits.masked_fill(remove, float("-inf")), idx


# ---------------------------------------------------------------------------------------------
# The training flag between calls: a layer swapped in fresh (training) into an eval model, the
# model or one layer flipped. Only the layers that read the flag (dropout, batch norm) may make
# a call recompile; a fresh Linear in an eval model recompiled until session 20.


class Head(nn.Module):
    def __init__(self, last):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(6, 6), nn.GELU(), nn.Linear(6, 6), last])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def head_in(r):
    return (r.randn(4, 6),)


def _fresh_linear(m, seed):
    if seed == 1:
        torch.manual_seed(7)
        m.layers[0] = nn.Linear(6, 6)


def _model_train(m, seed):
    m.train(seed == 1)


def _last_train(m, seed):
    m.layers[3].train(seed == 1)


for _last_name, _last in {
    "identity": nn.Identity,
    "dropout": lambda: nn.Dropout(0.5),
    "batchnorm": lambda: nn.BatchNorm1d(6),
}.items():
    for _name, _prep in {
        "fresh_linear": _fresh_linear,
        "model_train": _model_train,
        "last_layer_train": _last_train,
    }.items():
        register(
            f"training_flag_{_name}_{_last_name}",
            functools.partial(lambda last: Head(last()).eval(), _last),
            head_in,
            module=True,
            prepare=_prep,
        )
