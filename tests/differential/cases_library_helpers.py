"""Issue 14, session 28 (breadth28): helpers model libraries write by hand: einops-style
reshapes (a pattern parser over ``str`` methods, ``pack``/``unpack``), dataclass configs
(``replace``, ``asdict``, ``__post_init__``, ``field(init=False)``), diffusers' timestep
embedding, BLOOM's ALiBi slopes, Meta's complex RoPE, layers looked up by name, an lru_cache'd
``warning_once``, ``functools.partialmethod``, an autocast-or-``nullcontext`` switch, an EMA
buffer, ``enum.Flag`` options and transformers' ``can_return_tuple`` wrapper. timm blocks and
torchvision transforms are in ``cases_library_idioms``. Each must give eager's values in no more
graphs than torch.compile (``STRICT_BREADTH``)."""

from __future__ import annotations

import dataclasses
import enum
import functools
import math

import torch
import torch.nn.functional as F
from torch import nn

from .cases_library_idioms import VIEW_OF_INTERMEDIATE, get_act_layer, x_img, x_tokens
from .runner import case, register

# Issue 14: more graphs than torch.compile fails unless the case names the gap (breadth=).
STRICT_BREADTH = True

# ---------------------------------------------------------------------------------------------
# einops-style helpers written by hand


def _parse_side(side):
    """'b n (h d)' -> [['b'], ['n'], ['h', 'd']]"""
    groups, current, depth = [], None, 0
    for tok in side.replace("(", " ( ").replace(")", " ) ").split():
        if tok == "(":
            depth += 1
            current = []
        elif tok == ")":
            depth -= 1
            groups.append(current)
            current = None
        elif current is not None:
            current.append(tok)
        else:
            groups.append([tok])
    assert depth == 0, f"unbalanced pattern {side!r}"
    return groups


def rearrange(x, pattern: str, **sizes):
    left, right = (s.strip() for s in pattern.split("->"))
    lhs, rhs = _parse_side(left), _parse_side(right)
    known = dict(sizes)
    for group, dim in zip(lhs, x.shape):
        unknown = [a for a in group if a not in known]
        if len(unknown) == 1:
            known[unknown[0]] = dim // math.prod(known[a] for a in group if a in known)
    flat = [a for g in lhs for a in g]
    x = x.reshape([known[a] for a in flat])
    x = x.permute([flat.index(a) for g in rhs for a in g])
    return x.reshape([math.prod(known[a] for a in g) for g in rhs])


@case(x_tokens)
def einops_rearrange_heads_by_hand(x):
    heads = rearrange(x, "b n (h d) -> b h n d", h=2)
    back = rearrange(heads, "b h n d -> b n (h d)")
    return heads, torch.equal(back, x)


@case(x_img)
def einops_rearrange_patches_by_hand(x):
    return rearrange(x, "b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=4, p2=4)


def pack(tensors, pattern="b *"):
    assert pattern == "b *"
    shapes = [t.shape[1:] for t in tensors]
    return torch.cat([t.reshape(t.shape[0], -1) for t in tensors], dim=1), shapes


def unpack(packed, shapes):
    sizes = [math.prod(s) for s in shapes]
    return [
        p.reshape(packed.shape[0], *s)
        for p, s in zip(packed.split(sizes, dim=1), shapes)
    ]


@case(x_img, xfail_inductor=VIEW_OF_INTERMEDIATE)
def einops_pack_unpack_by_hand(x):
    cls = x[:, :, 0, 0]
    packed, shapes = pack([cls, x, x.mean(1)])
    a, b, c = unpack(packed * 2, shapes)
    return a, b, c, [tuple(s) for s in shapes]


@case(x_tokens)
def einops_repeat_and_reduce_by_hand(x):
    r = 3
    rep = x.unsqueeze(1).expand(-1, r, -1, -1)
    reduced = functools.reduce(torch.maximum, rep.unbind(1))
    return rep.reshape(-1, *x.shape[1:]), reduced


# ---------------------------------------------------------------------------------------------
# dataclass configs


@dataclasses.dataclass(frozen=True)
class BlockConfig:
    dim: int = 8
    heads: int = 2
    mlp_ratio: float = 2.0
    act: str = "gelu_tanh"
    layer_types: tuple = ("full", "sliding")
    head_dim: int = dataclasses.field(init=False)

    def __post_init__(self):
        if self.dim % self.heads:
            raise ValueError("dim must divide by heads")
        object.__setattr__(self, "head_dim", self.dim // self.heads)


CFG = BlockConfig()


@case(x_tokens)
def frozen_dataclass_config_post_init(x):
    cfg = CFG
    b, n, _ = x.shape
    q = x.view(b, n, cfg.heads, cfg.head_dim).transpose(1, 2)
    hidden = int(cfg.dim * cfg.mlp_ratio)
    act = get_act_layer(cfg.act)()
    return act(q).sum(-1), hidden, cfg.layer_types.count("full")


@case(x_tokens)
def dataclass_replace_and_asdict_in_frame(x):
    cfg = dataclasses.replace(CFG, heads=4)
    d = dataclasses.asdict(cfg)
    q = x.view(x.shape[0], x.shape[1], cfg.heads, -1)
    return q.shape, sorted(d), d["head_dim"], cfg == CFG, cfg.head_dim


@case(x_tokens)
def dataclass_config_built_in_frame_with_defaults(x):
    cfg = BlockConfig(dim=x.shape[-1], heads=4, layer_types=("full",) * 3)
    try:
        BlockConfig(dim=6, heads=4)
    except ValueError as e:
        err = e.args[0]
    return (
        x.reshape(*x.shape[:2], cfg.heads, cfg.head_dim).mean(-1),
        err,
        len(cfg.layer_types),
    )


# ---------------------------------------------------------------------------------------------
# position helpers of diffusers and BLOOM


def get_timestep_embedding(
    timesteps,
    embedding_dim,
    flip_sin_to_cos=False,
    downscale_freq_shift=1,
    scale=1,
    max_period=10000,
):
    assert len(timesteps.shape) == 1, "Timesteps should be a 1d-array"
    half_dim = embedding_dim // 2
    exponent = -math.log(max_period) * torch.arange(
        0, half_dim, dtype=torch.float32, device=timesteps.device
    )
    exponent = exponent / (half_dim - downscale_freq_shift)
    emb = torch.exp(exponent)
    emb = timesteps[:, None].float() * emb[None, :]
    emb = scale * emb
    emb = torch.cat([torch.sin(emb), torch.cos(emb)], dim=-1)
    if flip_sin_to_cos:
        emb = torch.cat([emb[:, half_dim:], emb[:, :half_dim]], dim=-1)
    if embedding_dim % 2 == 1:
        emb = torch.nn.functional.pad(emb, (0, 1, 0, 0))
    return emb


@case(lambda r: (r.randint(0, 1000, 4),))
def diffusers_timestep_embedding(t):
    return get_timestep_embedding(t, 9, flip_sin_to_cos=True), get_timestep_embedding(
        t, 8, downscale_freq_shift=0
    )


def get_alibi_slopes(n):
    def get_slopes_power_of_2(n):
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        ratio = start
        return [start * ratio**i for i in range(n)]

    if math.log2(n).is_integer():
        return get_slopes_power_of_2(n)
    closest_power_of_2 = 2 ** math.floor(math.log2(n))
    return (
        get_slopes_power_of_2(closest_power_of_2)
        + get_alibi_slopes(2 * closest_power_of_2)[0::2][: n - closest_power_of_2]
    )


@case(x_tokens)
def bloom_alibi_slopes_recursive(x):
    t = x.shape[1]
    slopes = torch.tensor(get_alibi_slopes(6))
    pos = torch.arange(t)
    return slopes[:, None, None] * (pos[None, :] - pos[:, None]).float()[None] + x.sum()


@case(x_tokens)
def meta_llama_rope_view_as_complex(x):
    _, t, d = x.shape
    freqs = 1.0 / (10000 ** (torch.arange(0, d, 2)[: (d // 2)].float() / d))
    freqs = torch.outer(torch.arange(t, dtype=torch.float32), freqs)
    freqs_cis = torch.polar(torch.ones_like(freqs), freqs)
    xc = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
    out = torch.view_as_real(xc * freqs_cis[None]).flatten(2)
    return out.type_as(x)


# ---------------------------------------------------------------------------------------------
# more library idioms: layer lookup by name, logging once, partialmethod, nullcontext switches


@case(x_tokens)
def layer_class_by_name_from_nn(x):
    outs = []
    for name, kwargs in (
        ("ReLU", {}),
        ("GELU", {"approximate": "tanh"}),
        ("Softmax", {"dim": -1}),
    ):
        outs.append(getattr(nn, name)(**kwargs)(x))
    return outs


class Tower(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(8, 8) for _ in range(3))
        self.heads = nn.ModuleDict({"cls": nn.Linear(8, 2), "reg": nn.Linear(8, 1)})

    def forward(self, x):
        for i in range(len(self.layers)):
            x = self.get_submodule(f"layers.{i}")(x).relu()
        outs = {k: head(x) for k, head in self.heads.items() if k in ("cls", "reg")}
        return outs, "cls" in self.heads, sorted(self.heads.keys())


register("get_submodule_by_dotted_name_and_moduledict", Tower, x_tokens, module=True)


@functools.lru_cache(None)
def warning_once(msg):
    # transformers' `logger.warning_once`: an lru_cache'd function; the message is left out of
    # stdout here (the harness compares stdout), its call is what matters.
    return msg


@case(x_tokens)
def lru_cached_warning_once_in_forward(x):
    if x.shape[1] > 4:
        warning_once("sequence longer than 4: truncating")
    return x[:, :4] * 2


class Scaler:
    def scale(self, x, factor):
        return x * factor

    double = functools.partialmethod(scale, factor=2.0)
    half = functools.partialmethod(scale, factor=0.5)


@case(x_tokens)
def partialmethod_on_a_helper_class(x):
    s = Scaler()
    return s.double(x) + s.half(x)


AMP = False


@case(x_tokens)
def autocast_or_nullcontext_switch(x):
    import contextlib

    ctx = (
        torch.autocast("cpu", dtype=torch.bfloat16) if AMP else contextlib.nullcontext()
    )
    with ctx:
        y = x @ x.transpose(1, 2)
    return y, y.dtype


@case(x_tokens)
def pad_to_multiple_of(x, multiple=4):
    n = x.shape[1]
    pad = (multiple - n % multiple) % multiple
    if pad:
        x = F.pad(x, (0, 0, 0, pad), value=0.0)
    mask = torch.arange(x.shape[1]) < n
    return x, mask, pad


class EMA(nn.Module):
    """An exponential moving average of the batch mean kept in a buffer, updated in place under
    ``torch.no_grad()`` (BatchNorm-free normalisers, VQ-VAE codebooks)."""

    def __init__(self, d=8, decay=0.9):
        super().__init__()
        self.decay = decay
        self.register_buffer("avg", torch.zeros(d))
        self.register_buffer("steps", torch.zeros((), dtype=torch.long))

    def forward(self, x):
        if self.training:
            with torch.no_grad():
                self.avg.mul_(self.decay).add_(x.mean((0, 1)), alpha=1 - self.decay)
                self.steps += 1
        return x - self.avg


register("ema_buffer_update_under_no_grad", EMA, x_tokens, module=True)


@case(x_tokens)
def normalize_int_or_sequence_arguments(x):
    def as_list(v, n):
        if isinstance(v, (list, tuple)):
            assert len(v) == n, f"expected {n} values"
            return list(v)
        return [v] * n

    scales = as_list(0.5, 3) + as_list((1.0, 2.0), 2)
    return [x * s for s in scales], torch.is_tensor(x), torch.iinfo(torch.int64).max


class Flags(enum.Flag):
    NONE = 0
    NORM = enum.auto()
    ACT = enum.auto()
    DROP = enum.auto()


@case(x_tokens)
def enum_flag_membership(x):
    flags = Flags.NORM | Flags.ACT
    if Flags.NORM in flags:
        x = F.layer_norm(x, x.shape[-1:])
    if Flags.ACT in flags:
        x = F.silu(x)
    if Flags.DROP in flags:
        x = x * 0
    return x, flags.value


def return_dict_wrapper(func):
    """transformers' ``can_return_tuple``: a ``return_dict`` keyword popped from kwargs, the
    output turned into a tuple when it is False."""

    @functools.wraps(func)
    def wrapper(self, *args, **kwargs):
        return_dict = kwargs.pop("return_dict", getattr(self, "return_dict", True))
        output = func(self, *args, **kwargs)
        if not return_dict and not isinstance(output, tuple):
            output = tuple(v for v in output.values() if v is not None)
        return output

    return wrapper


class WrappedHead(nn.Module):
    return_dict = False

    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 4)

    @return_dict_wrapper
    def forward(self, x, output_hidden=False):
        h = self.proj(x)
        return {"logits": h.softmax(-1), "hidden": h if output_hidden else None}


register("can_return_tuple_wrapper_on_forward", WrappedHead, x_tokens, module=True)


# ---------------------------------------------------------------------------------------------
# Session 29 (breadth29): wrappers that call the forward inside ``try``/``finally``
# (transformers' ``merge_with_config_defaults`` and ``capture_outputs``), with a break in the
# call. torch.compile gives such a frame up; so do we when nothing was traced before the call.

_COLLECTING: list = []


def config_override_wrapper(func):
    """``merge_with_config_defaults``: a config flag set for the call, restored in ``finally``."""

    @functools.wraps(func)
    def wrapper(self, *args, **kwargs):
        is_causal = kwargs.get("is_causal", getattr(self.config, "is_causal", None))
        if is_causal is not None:
            original = self.config.is_causal
            self.config.is_causal = is_causal
        try:
            output = func(self, *args, **kwargs)
        finally:
            if is_causal is not None:
                self.config.is_causal = original
        return output

    return wrapper


def collecting_wrapper(func):
    """``capture_outputs``: a collector pushed for the call and popped in ``finally``."""

    @functools.wraps(func)
    def wrapper(self, *args, **kwargs):
        collected = {"hidden": []}
        _COLLECTING.append(collected)
        try:
            outputs = func(self, *args, **kwargs)
        finally:
            _COLLECTING.pop()
        return outputs, len(collected["hidden"])

    return wrapper


@dataclasses.dataclass
class _StackConfig:
    is_causal: bool = False
    scale: float = 0.5


def _describe(config):
    # A call the tracer does not follow (printing), deep inside the wrapped forward.
    print("config:", config.is_causal, config.scale)
    return config.scale


class WrappedStack(nn.Module):
    def __init__(self):
        super().__init__()
        self.config = _StackConfig()
        self.proj = nn.Linear(8, 8)

    @config_override_wrapper
    @collecting_wrapper
    def forward(self, x, is_causal=None):
        h = self.proj(x)
        if _COLLECTING:
            _COLLECTING[-1]["hidden"].append(h)
        s = _describe(self.config)
        h = h * s
        if self.config.is_causal:
            h = h.tril()
        return h


class OuterModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.stack = WrappedStack()

    def forward(self, x):
        y = x.relu()
        return self.stack(y, is_causal=True)


register(
    "try_finally_wrappers_around_a_breaking_forward",
    OuterModel,
    lambda r: (r.randn(2, 8, 8),),
    module=True,
)


def _work_then_print(x):
    y = x * 2
    print("work done")
    return y + 1


@case(x_tokens)
def try_finally_with_ops_before_the_breaking_call(x):
    log = []
    try:
        h = x.sin()
        out = _work_then_print(h)
    finally:
        log.append("closed")
    return out, log


@case(x_tokens)
def try_finally_breaking_call_with_nothing_before(x):
    log = []
    try:
        out = _work_then_print(x)
    finally:
        log.append("closed")
    return out.cos(), log
