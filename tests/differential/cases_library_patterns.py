"""Issue 14, session 29 (breadth29): more library idioms users write, not in the corpus before:
``torch.distributions`` (log-probabilities, entropies, KL, ``Independent``), transformers'
generation helpers (repetition penalty, no-repeat n-grams, a greedy loop with unfinished
sequences, Llama's rotary embedding, a 4-d causal mask), timm blocks (``Mlp``, fused-qkv
``Attention``, ``PatchEmbed`` with dynamic padding, squeeze-excite), torchvision v2
functionals, einops-like ``repeat`` by hand, dataclass configs with ``field(default_factory)``
and ``__post_init__``, ``typing.NamedTuple`` block outputs and an ``enum`` pooling switch. Each
must give eager's values in no more graphs than torch.compile (``STRICT_BREADTH``)."""

from __future__ import annotations

import dataclasses
import enum
from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import nn

from .cases_library_idioms import Attention, x_tokens
from .runner import case, register

# Issue 14: more graphs than torch.compile fails unless the case names the gap (breadth=).
STRICT_BREADTH = True


def x_img(r):
    return (r.randn(2, 3, 10, 10),)


def logits_and_ids(r):
    return (r.randn(2, 11), r.randint(0, 11, 2, 5))


# ---------------------------------------------------------------------------------------------
# torch.distributions (no sampling: values, not RNG streams)


@case(lambda r: (r.randn(4), r.randn(4).abs() + 0.5, r.randn(4)))
def distributions_normal_log_prob_and_entropy(loc, scale, x):
    d = torch.distributions.Normal(loc, scale)
    return d.log_prob(x), d.entropy(), d.mean, d.stddev


@case(lambda r: (r.randn(3, 5), r.randint(0, 5, 3)))
def distributions_categorical_logits(logits, target):
    d = torch.distributions.Categorical(logits=logits)
    return d.log_prob(target), d.entropy(), d.probs


@case(lambda r: (torch.sigmoid(r.randn(6)), (r.randn(6) > 0).float()))
def distributions_bernoulli_probs_no_validation(p, y):
    d = torch.distributions.Bernoulli(probs=p, validate_args=False)
    return d.log_prob(y), d.entropy()


@case(lambda r: (r.randn(2, 3), r.randn(2, 3)))
def distributions_kl_between_normals(mu, logvar):
    q = torch.distributions.Normal(mu, torch.exp(0.5 * logvar))
    p = torch.distributions.Normal(torch.zeros_like(mu), torch.ones_like(mu))
    return torch.distributions.kl_divergence(q, p).sum(-1)


@case(lambda r: (r.randn(2, 4), r.randn(2, 4)))
def distributions_independent_diag_normal(mu, x):
    d = torch.distributions.Independent(torch.distributions.Normal(mu, 1.0), 1)
    return d.log_prob(x), d.batch_shape, d.event_shape


# ---------------------------------------------------------------------------------------------
# transformers' generation helpers, as transformers writes them


def repetition_penalty(input_ids, scores, penalty=1.3):
    score = torch.gather(scores, 1, input_ids)
    score = torch.where(score < 0, score * penalty, score / penalty)
    return scores.scatter(1, input_ids, score)


@case(logits_and_ids)
def hf_repetition_penalty_gather_scatter(scores, input_ids):
    return repetition_penalty(input_ids, scores)


def _banned_ngram_tokens(ids, n):
    # Plain Python over a list of lists: the n-grams seen, then the banned next tokens.
    banned = []
    for row in ids:
        seen = {}
        for i in range(len(row) - n + 1):
            prefix = tuple(row[i : i + n - 1])
            seen.setdefault(prefix, []).append(row[i + n - 1])
        banned.append(seen.get(tuple(row[len(row) - n + 1 :]), []))
    return banned


@case(lambda r: (r.randn(2, 11), [[1, 2, 3, 1, 2], [4, 4, 4, 4, 4]]))
def hf_no_repeat_ngram_on_python_ids(scores, ids):
    banned = _banned_ngram_tokens(ids, 3)
    for i, tokens in enumerate(banned):
        scores[i, tokens] = -float("inf")
    return scores


@case(lambda r: (r.randn(2, 3, 11),))
def hf_greedy_loop_unfinished_sequences(step_logits):
    eos = 4
    ids = torch.zeros(2, 1, dtype=torch.long)
    unfinished = torch.ones(2, dtype=torch.long)
    for t in range(step_logits.shape[1]):
        nxt = step_logits[:, t].argmax(-1)
        nxt = nxt * unfinished + 0 * (1 - unfinished)
        ids = torch.cat([ids, nxt[:, None]], dim=-1)
        unfinished = unfinished & (nxt != eos).long()
    return ids, unfinished


class LlamaRotary(nn.Module):
    def __init__(self, dim=8, base=10000.0):
        super().__init__()
        inv_freq = 1.0 / (
            base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim)
        )
        self.register_buffer("inv_freq", inv_freq, persistent=False)
        self.attention_scaling = 1.0

    @torch.no_grad()
    def forward(self, x, position_ids):
        inv = self.inv_freq[None, :, None].float().expand(position_ids.shape[0], -1, 1)
        pos = position_ids[:, None, :].float()
        freqs = (inv.float() @ pos.float()).transpose(1, 2)
        emb = torch.cat((freqs, freqs), dim=-1)
        cos = emb.cos() * self.attention_scaling
        sin = emb.sin() * self.attention_scaling
        return cos.to(dtype=x.dtype), sin.to(dtype=x.dtype)


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


class RotaryApply(nn.Module):
    def __init__(self):
        super().__init__()
        self.rotary = LlamaRotary()

    def forward(self, q):
        pos = torch.arange(q.shape[1])[None].expand(q.shape[0], -1)
        cos, sin = self.rotary(q, pos)
        return q * cos + rotate_half(q) * sin


register(
    "hf_llama_rotary_embedding_and_rotate_half", RotaryApply, x_tokens, module=True
)


@case(
    lambda r: (
        r.randn(2, 5, 8),
        torch.tensor(r.pick([[1, 1, 1, 0, 0], [1] * 5], [[1] * 5] * 2)),
    )
)
def hf_4d_causal_mask_from_padding(x, attention_mask):
    b, n = attention_mask.shape
    min_value = torch.finfo(x.dtype).min
    causal = torch.full((n, n), min_value, dtype=x.dtype).triu(1)
    mask = causal[None, None].expand(b, 1, n, n).clone()
    padding = mask + attention_mask[:, None, None, :].to(x.dtype)
    mask = mask.masked_fill(padding == 0, min_value)
    inverted = 1.0 - attention_mask[:, None, None, :].to(x.dtype)
    return mask, inverted.masked_fill(inverted.bool(), min_value)


# ---------------------------------------------------------------------------------------------
# timm blocks


def to_2tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x, x)


class Mlp(nn.Module):
    def __init__(self, in_features, hidden_features=None, act_layer=nn.GELU, drop=0.0):
        super().__init__()
        hidden_features = hidden_features or in_features
        drop_probs = to_2tuple(drop)
        self.fc1 = nn.Linear(in_features, hidden_features)
        self.act = act_layer()
        self.drop1 = nn.Dropout(drop_probs[0])
        self.norm = nn.Identity()
        self.fc2 = nn.Linear(hidden_features, in_features)
        self.drop2 = nn.Dropout(drop_probs[1])

    def forward(self, x):
        x = self.drop1(self.act(self.fc1(x)))
        return self.drop2(self.fc2(self.norm(x)))


# In training mode, `Dropout(0.0)` hands back its input itself: eager's output is the `fc2`
# intermediate. Since session 31 functionalization treats a p=0 dropout as an alias of its
# input (`functionalize/state.rs::dropout_returns_input`), so the inductor's output aliases as
# eager's (this was the named inductor-only gap, VIEW_OF_INTERMEDIATE).
register(
    "timm_mlp_with_identity_norm",
    lambda: Mlp(8, int(8 * 4.0)),
    x_tokens,
    module=True,
)


register(
    "timm_attention_fused_qkv_sdpa",
    lambda: Attention(8, fused_attn=True),
    x_tokens,
    module=True,
)
register(
    "timm_attention_fused_qkv_manual",
    lambda: Attention(8, fused_attn=False),
    x_tokens,
    module=True,
)


class PatchEmbed(nn.Module):
    def __init__(self, patch_size=4, in_chans=3, embed_dim=8, dynamic_img_pad=True):
        super().__init__()
        self.patch_size = to_2tuple(patch_size)
        self.dynamic_img_pad = dynamic_img_pad
        self.proj = nn.Conv2d(
            in_chans, embed_dim, kernel_size=patch_size, stride=patch_size
        )
        self.norm = nn.LayerNorm(embed_dim)

    def forward(self, x):
        _, _, H, W = x.shape
        if self.dynamic_img_pad:
            pad_h = (self.patch_size[0] - H % self.patch_size[0]) % self.patch_size[0]
            pad_w = (self.patch_size[1] - W % self.patch_size[1]) % self.patch_size[1]
            x = F.pad(x, (0, pad_w, 0, pad_h))
        x = self.proj(x)
        x = x.flatten(2).transpose(1, 2)
        return self.norm(x)


register("timm_patch_embed_dynamic_pad", PatchEmbed, x_img, module=True)


def make_divisible(v, divisor=8, min_value=None, round_limit=0.9):
    min_value = min_value or divisor
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    if new_v < round_limit * v:
        new_v += divisor
    return new_v


class SqueezeExcite(nn.Module):
    def __init__(self, channels, rd_ratio=1 / 4, rd_divisor=2, gate=nn.Sigmoid):
        super().__init__()
        rd = make_divisible(channels * rd_ratio, rd_divisor, round_limit=0.0)
        self.fc1 = nn.Conv2d(channels, rd, 1, bias=True)
        self.act = nn.ReLU(inplace=True)
        self.fc2 = nn.Conv2d(rd, channels, 1, bias=True)
        self.gate = gate()

    def forward(self, x):
        x_se = x.mean((2, 3), keepdim=True)
        x_se = self.fc2(self.act(self.fc1(x_se)))
        return x * self.gate(x_se)


register(
    "timm_squeeze_excite_round_limit_zero", lambda: SqueezeExcite(3), x_img, module=True
)

# ---------------------------------------------------------------------------------------------
# torchvision transforms v2 functionals

try:
    import torchvision.transforms.v2.functional as TF

    @case(lambda r: (r.randint(0, 256, 2, 3, 10, 10).to(torch.uint8),))
    def tv2_to_dtype_normalize_grayscale(img):
        x = TF.to_dtype(img, torch.float32, scale=True)
        y = TF.normalize(x, mean=[0.5, 0.5, 0.5], std=[0.2, 0.2, 0.2])
        return y, TF.rgb_to_grayscale(x)

    @case(x_img)
    def tv2_adjust_brightness_contrast(img):
        x = img.sigmoid()
        return TF.adjust_contrast(TF.adjust_brightness(x, 1.2), 0.8)

except ImportError:
    pass


# ---------------------------------------------------------------------------------------------
# einops-like repeat, dataclass configs, NamedTuple outputs, enum switches


def repeat(x, pattern, **sizes):
    """'b n d -> b r n d' with r given: a new axis expanded, as einops' repeat."""
    left, right = (side.split() for side in pattern.split("->"))
    lengths = dict(zip(left, x.shape))
    shape = []
    for i, name in enumerate(right):
        if name in lengths:
            shape.append(lengths[name])
        else:
            x = x.unsqueeze(i)
            shape.append(sizes[name])
    return x.expand(*shape)


@case(x_tokens)
def einops_like_repeat_new_axis(x):
    return repeat(x, "b n d -> b r n d", r=3).sum(1), repeat(x[0], "n d -> k n d", k=2)


@dataclasses.dataclass
class AttnConfig:
    hidden: int = 8
    heads: int = 2
    layer_types: list = dataclasses.field(default_factory=list)
    head_dim: int = dataclasses.field(init=False)

    def __post_init__(self):
        self.head_dim = self.hidden // self.heads
        if not self.layer_types:
            self.layer_types = ["full"] * 2


@case(x_tokens)
def dataclass_config_default_factory_post_init(x):
    cfg = AttnConfig(heads=4)
    h = x.view(x.shape[0], x.shape[1], cfg.heads, cfg.head_dim)
    return h.transpose(1, 2), len(cfg.layer_types), dataclasses.asdict(cfg)


class BlockOut(NamedTuple):
    hidden: torch.Tensor
    attn: torch.Tensor | None = None


def _block(x, want_attn):
    a = x.softmax(-1)
    return BlockOut(x + a) if not want_attn else BlockOut(x + a, a)


@case(x_tokens)
def namedtuple_block_outputs_replace(x):
    out = _block(x, False)
    out2 = _block(out.hidden, True)._replace(hidden=out.hidden * 2)
    return out.attn is None, out2.hidden, out2.attn, out2._asdict()["hidden"].shape


class PoolType(enum.Enum):
    AVG = "avg"
    MAX = "max"
    TOKEN = "token"


def pool(x, kind: PoolType):
    if kind is PoolType.AVG:
        return x.mean(1)
    if kind == PoolType.MAX:
        return x.amax(1)
    return x[:, 0]


@case(lambda r: (r.randn(2, 6, 8), r.pick("avg", "token")))
def enum_pool_switch_from_string(x, name):
    return pool(x, PoolType(name)), pool(x, PoolType.MAX)
