"""Issue 14, session 28 (breadth28): library idioms as the libraries write them, by hand (no
import of the library itself unless it is in the venv): timm's blocks (``DropPath``,
``LayerScale``, ``nn.Identity`` swaps, ``to_2tuple``, ``make_divisible``, activation and norm
factories built with ``functools.partial``, a ``str`` enum format), torchvision's transforms v2
functionals on plain tensors, forward-only module classes built in the frame. transformers'
generation utilities are in ``cases_generation_idioms``, hand-written helpers (einops-style
reshapes, dataclass configs, position helpers) in ``cases_library_helpers``. Each must give
eager's values in no more graphs than torch.compile (``STRICT_BREADTH``)."""

# The programs spell these idioms as the library writes them, on purpose:
# ruff: noqa: C408

from __future__ import annotations

import collections.abc
import enum
import functools
import itertools

import torch
import torch.nn.functional as F
from torch import nn

from .runner import BUG_ALIASING, case, register

# The inductor returns a fresh tensor where eager returns a view of an intermediate: eager's
# output is a view of a 3-d `F.linear` (an `_unsafe_view` of its 2-d matmul) that `mul_`
# scales in place, or three `split` pieces of one packed tensor, reshaped.
VIEW_OF_INTERMEDIATE = (
    BUG_ALIASING
    + ": an output eager returns as a view of an intermediate comes from the inductor as a "
    "tensor of its own"
)

# Issue 14: more graphs than torch.compile fails unless the case names the gap (breadth=).
STRICT_BREADTH = True


def x_tokens(r):
    return (r.randn(2, 6, 8),)


def x_img(r):
    return (r.randn(2, 4, 8, 8),)


def x_uint8_img(r):
    return (r.randint(0, 256, 3, 12, 10).to(torch.uint8),)


# ---------------------------------------------------------------------------------------------
# timm blocks


def drop_path(
    x, drop_prob: float = 0.0, training: bool = False, scale_by_keep: bool = True
):
    if drop_prob == 0.0 or not training:
        return x
    keep_prob = 1 - drop_prob
    shape = (x.shape[0],) + (1,) * (x.ndim - 1)
    random_tensor = x.new_empty(shape).bernoulli_(keep_prob)
    if keep_prob > 0.0 and scale_by_keep:
        random_tensor.div_(keep_prob)
    return x * random_tensor


class DropPath(nn.Module):
    def __init__(self, drop_prob: float = 0.0, scale_by_keep: bool = True):
        super().__init__()
        self.drop_prob = drop_prob
        self.scale_by_keep = scale_by_keep

    def forward(self, x):
        return drop_path(x, self.drop_prob, self.training, self.scale_by_keep)

    def extra_repr(self):
        return f"drop_prob={round(self.drop_prob, 3):0.3f}"


class LayerScale(nn.Module):
    def __init__(self, dim, init_values=1e-5, inplace=False):
        super().__init__()
        self.inplace = inplace
        self.gamma = nn.Parameter(init_values * torch.ones(dim))

    def forward(self, x):
        return x.mul_(self.gamma) if self.inplace else x * self.gamma


class Mlp(nn.Module):
    def __init__(
        self,
        in_features,
        hidden_features=None,
        out_features=None,
        act_layer=nn.GELU,
        norm_layer=None,
        bias=True,
        drop=0.0,
    ):
        super().__init__()
        out_features = out_features or in_features
        hidden_features = hidden_features or in_features
        bias = to_2tuple(bias)
        drop_probs = to_2tuple(drop)
        self.fc1 = nn.Linear(in_features, hidden_features, bias=bias[0])
        self.act = act_layer()
        self.drop1 = nn.Dropout(drop_probs[0])
        self.norm = (
            norm_layer(hidden_features) if norm_layer is not None else nn.Identity()
        )
        self.fc2 = nn.Linear(hidden_features, out_features, bias=bias[1])
        self.drop2 = nn.Dropout(drop_probs[1])

    def forward(self, x):
        x = self.drop1(self.act(self.fc1(x)))
        return self.drop2(self.fc2(self.norm(x)))


def _ntuple(n):
    def parse(x):
        if isinstance(x, collections.abc.Iterable) and not isinstance(x, str):
            return tuple(x)
        return tuple(itertools.repeat(x, n))

    return parse


to_2tuple = _ntuple(2)


class Attention(nn.Module):
    fused_attn: bool = True

    def __init__(
        self,
        dim,
        num_heads=2,
        qkv_bias=False,
        qk_norm=False,
        norm_layer=nn.LayerNorm,
        fused_attn=None,
    ):
        super().__init__()
        assert dim % num_heads == 0, "dim should be divisible by num_heads"
        if fused_attn is not None:
            # timm sets it per instance (`use_fused_attn()`), shadowing the class default.
            self.fused_attn = fused_attn
        self.num_heads = num_heads
        self.head_dim = dim // num_heads
        self.scale = self.head_dim**-0.5
        self.qkv = nn.Linear(dim, dim * 3, bias=qkv_bias)
        self.q_norm = norm_layer(self.head_dim) if qk_norm else nn.Identity()
        self.k_norm = norm_layer(self.head_dim) if qk_norm else nn.Identity()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        B, N, C = x.shape
        qkv = (
            self.qkv(x)
            .reshape(B, N, 3, self.num_heads, self.head_dim)
            .permute(2, 0, 3, 1, 4)
        )
        q, k, v = qkv.unbind(0)
        q, k = self.q_norm(q), self.k_norm(k)
        if self.fused_attn:
            x = F.scaled_dot_product_attention(q, k, v)
        else:
            q = q * self.scale
            attn = (q @ k.transpose(-2, -1)).softmax(dim=-1)
            x = attn @ v
        return self.proj(x.transpose(1, 2).reshape(B, N, C))


class Block(nn.Module):
    def __init__(
        self,
        dim,
        num_heads=2,
        init_values=None,
        drop_path=0.0,
        qk_norm=False,
        act_layer=nn.GELU,
        norm_layer=nn.LayerNorm,
        fused=True,
    ):
        super().__init__()
        self.norm1 = norm_layer(dim)
        self.attn = Attention(dim, num_heads, qk_norm=qk_norm, norm_layer=norm_layer)
        self.attn.fused_attn = fused
        self.ls1 = (
            LayerScale(dim, init_values=init_values) if init_values else nn.Identity()
        )
        self.drop_path1 = DropPath(drop_path) if drop_path > 0.0 else nn.Identity()
        self.norm2 = norm_layer(dim)
        self.mlp = Mlp(dim, dim * 2, act_layer=act_layer)
        self.ls2 = (
            LayerScale(dim, init_values=init_values) if init_values else nn.Identity()
        )
        self.drop_path2 = DropPath(drop_path) if drop_path > 0.0 else nn.Identity()

    def forward(self, x):
        x = x + self.drop_path1(self.ls1(self.attn(self.norm1(x))))
        return x + self.drop_path2(self.ls2(self.mlp(self.norm2(x))))


register(
    "timm_block_layerscale_droppath_eval",
    lambda: Block(
        8,
        init_values=1e-2,
        drop_path=0.1,
        qk_norm=True,
        norm_layer=functools.partial(nn.LayerNorm, eps=1e-6),
    ).eval(),
    x_tokens,
    module=True,
)
register(
    "timm_block_identity_swaps_partial_gelu_tanh",
    lambda: Block(
        8, act_layer=functools.partial(nn.GELU, approximate="tanh"), fused=False
    ),
    x_tokens,
    module=True,
)
register(
    "timm_droppath_training_zero_prob",
    lambda: nn.Sequential(DropPath(0.0), LayerScale(8, 0.5)).train(),
    x_tokens,
    module=True,
)
register(
    "timm_layerscale_inplace",
    lambda: nn.Sequential(nn.Linear(8, 8), LayerScale(8, 0.3, inplace=True)),
    x_tokens,
    module=True,
    xfail_inductor=VIEW_OF_INTERMEDIATE,
)


@case(x_tokens)
def drop_path_function_in_eval(x):
    return drop_path(x, 0.5, training=False) + drop_path(x * 2, 0.0, training=True)


def make_divisible(v, divisor=8, min_value=None, round_limit=0.9):
    min_value = min_value or divisor
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    if new_v < round_limit * v:
        new_v += divisor
    return new_v


class SqueezeExcite(nn.Module):
    def __init__(
        self,
        in_chs,
        rd_ratio=0.25,
        rd_channels=None,
        act_layer=nn.ReLU,
        gate_layer=nn.Sigmoid,
        force_act_layer=None,
        rd_round_fn=None,
    ):
        super().__init__()
        if rd_channels is None:
            rd_round_fn = rd_round_fn or round
            rd_channels = rd_round_fn(in_chs * rd_ratio)
        act_layer = force_act_layer or act_layer
        self.conv_reduce = nn.Conv2d(in_chs, rd_channels, 1, bias=True)
        self.act1 = act_layer(inplace=True)
        self.conv_expand = nn.Conv2d(rd_channels, in_chs, 1, bias=True)
        self.gate = gate_layer()

    def forward(self, x):
        x_se = x.mean((2, 3), keepdim=True)
        x_se = self.act1(self.conv_reduce(x_se))
        return x * self.gate(self.conv_expand(x_se))


register(
    "timm_squeeze_excite_make_divisible",
    lambda: SqueezeExcite(
        4, rd_round_fn=functools.partial(make_divisible, divisor=2), act_layer=nn.SiLU
    ),
    x_img,
    module=True,
)


@case(x_img)
def make_divisible_on_shapes(x):
    c = x.shape[1]
    widths = [make_divisible(c * m, 4) for m in (0.5, 1.0, 2.25)]
    return x.repeat(1, widths[-1] // c, 1, 1), widths


_ACT_LAYERS = dict(
    relu=nn.ReLU,
    silu=nn.SiLU,
    gelu=nn.GELU,
    gelu_tanh=functools.partial(nn.GELU, approximate="tanh"),
    hard_swish=nn.Hardswish,
)


def get_act_layer(name):
    if name is None:
        return None
    if not isinstance(name, str):
        return name
    if not name:
        return None
    return _ACT_LAYERS[name]


@case(x_tokens)
def act_layer_factories_made_in_forward(x):
    outs = []
    for name in ("relu", "gelu_tanh", "hard_swish", None):
        layer_cls = get_act_layer(name)
        layer = layer_cls() if layer_cls is not None else nn.Identity()
        outs.append(layer(x))
    return torch.stack(outs)


class Format(str, enum.Enum):
    NCHW = "NCHW"
    NHWC = "NHWC"
    NCL = "NCL"
    NLC = "NLC"


def nchw_to(x, fmt: Format):
    if fmt == Format.NHWC:
        x = x.permute(0, 2, 3, 1)
    elif fmt == Format.NLC:
        x = x.flatten(2).transpose(1, 2)
    elif fmt == Format.NCL:
        x = x.flatten(2)
    return x


@case(x_img)
def str_enum_output_formats(x):
    fmts = [Format(s) for s in ("NHWC", "NLC")] + [Format.NCL, "NCHW"]
    return [nchw_to(x, f).shape for f in fmts], nchw_to(x, Format.NLC).sum(1)


class LayerNorm2d(nn.LayerNorm):
    """timm's channels-first LayerNorm: a subclass of nn.LayerNorm with its own forward."""

    def __init__(self, num_channels, eps=1e-6, affine=True):
        super().__init__(num_channels, eps=eps, elementwise_affine=affine)

    def forward(self, x):
        x = x.permute(0, 2, 3, 1)
        x = F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        return x.permute(0, 3, 1, 2)


class ConvNormAct(nn.Module):
    def __init__(
        self,
        in_chs,
        out_chs,
        kernel_size=3,
        padding="",
        norm_layer=LayerNorm2d,
        act_layer="gelu_tanh",
        apply_act=True,
    ):
        super().__init__()
        padding = kernel_size // 2 if padding == "" else padding
        self.conv = nn.Conv2d(in_chs, out_chs, kernel_size, padding=padding, bias=False)
        self.bn = norm_layer(out_chs)
        act_layer = get_act_layer(act_layer)
        self.act = act_layer() if apply_act and act_layer is not None else nn.Identity()

    @property
    def in_channels(self):
        return self.conv.in_channels

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


register(
    "timm_conv_norm_act_layernorm2d",
    lambda: nn.Sequential(ConvNormAct(4, 6), ConvNormAct(6, 4, 1, apply_act=False)),
    x_img,
    module=True,
)


class StochasticDepthStages(nn.Module):
    """timm's per-block drop-path rates from ``torch.linspace(...).tolist()`` at build time, the
    stages walked with ``zip`` over ``nn.ModuleList``s and an ``nn.Identity`` downsample."""

    def __init__(self, dims=(8, 8, 8), drop_path_rate=0.2):
        super().__init__()
        dpr = [v.item() for v in torch.linspace(0, drop_path_rate, len(dims))]
        self.blocks = nn.ModuleList(
            Block(d, drop_path=p, init_values=1e-3) for d, p in zip(dims, dpr)
        )
        self.downs = nn.ModuleList(
            nn.Identity() if i == 0 else nn.Linear(dims[i - 1], d)
            for i, d in enumerate(dims)
        )

    def forward(self, x):
        feats = []
        for down, blk in zip(self.downs, self.blocks):
            x = blk(down(x))
            feats.append(x.mean(1))
        return x, feats


register(
    "timm_stochastic_depth_stages_eval",
    lambda: StochasticDepthStages().eval(),
    x_tokens,
    module=True,
)


# ---------------------------------------------------------------------------------------------
# torchvision transforms v2 functionals on plain tensors

try:
    import torchvision.transforms.v2 as T
    import torchvision.transforms.v2.functional as TF

    @case(x_uint8_img)
    def tv2_to_dtype_then_normalize(img):
        x = TF.to_dtype(img, torch.float32, scale=True)
        return TF.normalize(x, mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])

    @case(x_uint8_img)
    def tv2_center_crop_and_hflip(img):
        x = TF.center_crop(img.float(), [8, 8])
        return TF.horizontal_flip(x), TF.vertical_flip(x).sum()

    @case(x_uint8_img)
    def tv2_resize_antialias(img):
        return TF.resize(img.float() / 255, [6, 5], antialias=True)

    # The transforms are built in the graph (module classes built in the frame) and
    # `Transform.forward`'s `tree_flatten`/`tree_unflatten` are computed on a skeleton of the
    # traced values (`calls/pytree.rs`), as torch.compile inlines `torch.utils._pytree`.
    @case(x_uint8_img)
    def tv2_compose_of_deterministic_transforms(img):
        pipeline = T.Compose(
            [
                T.ToDtype(torch.float32, scale=True),
                T.CenterCrop(8),
                T.Normalize(mean=[0.5] * 3, std=[0.25] * 3),
            ]
        )
        return pipeline(img)

    @case(x_uint8_img)
    def tv2_pad_and_crop(img):
        x = TF.pad(img.float(), [1, 2], fill=0.5)
        return TF.crop(x, 1, 2, 7, 6)

except ImportError:  # torchvision is optional: the cases are left out
    pass


# ---------------------------------------------------------------------------------------------
# module classes built in the frame (transformers' `ACT2FN[name]` builds the class on each read)


class Swish(nn.Module):
    def forward(self, x):
        return x * torch.sigmoid(x)


class DoubledSoftmax(nn.Softmax):
    def forward(self, x):
        return super().forward(x * 2)


# A module class built in the frame is a tracked object made per call (`nn.Module.__init__`
# inlined on it; a trace-time instance, as torch.nn layers get, would be shared by every call:
# a forward that writes self.x would see the previous call's value); torch.compile builds it
# in its graph too.
@case(x_tokens)
def forward_only_module_classes_built_in_frame(x):
    return Swish()(x), DoubledSoftmax(dim=-1)(x), type(Swish()).__name__


class Scale(nn.Module):
    def __init__(self, s):
        super().__init__()
        self.s = s

    def forward(self, x):
        return x * self.s


@case(x_tokens)
def module_class_with_own_init_built_in_frame(x):
    return Scale(0.5)(x)


class CountingForward(nn.Module):
    """A forward that keeps state on its instance: each instance built in the frame starts at 0."""

    def forward(self, x):
        self.calls = getattr(self, "calls", 0) + 1
        return x * self.calls


# torch.compile makes no fewer graphs here than we do (so no gap): this pins the hazard a
# trace-time instance would bring (see forward_only_module_classes_built_in_frame).
@case(x_tokens)
def forward_only_module_class_writing_self_built_in_frame(x):
    m = CountingForward()
    y = m(x)
    return y, m(x), m.calls
