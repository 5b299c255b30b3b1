"""Issue 14, session 30 (breadth30): more library idioms as the libraries write them, by hand:
diffusers-style UNet blocks (sinusoidal timestep embeddings, a ResNet block with a time
embedding, AdaLayerNorm, nearest upsampling, attention processors as callable objects),
transformers helpers (extended attention masks, rotary embeddings, activations looked up by
name), timm factories, lightning-style training steps (``self.log`` into a dict), and module
classes built inside the frame (``nn.Module.__init__`` traced on a new object: submodules
registered through ``__setattr__``, ``nn.Sequential`` / ``nn.ModuleDict`` of them, ``.eval()``,
``named_children``). Each must give eager's values in no more graphs than torch.compile
(``STRICT_BREADTH``)."""

# The programs spell these idioms as the libraries write them, on purpose:
# ruff: noqa: C408

from __future__ import annotations

import collections
import dataclasses
import functools
import math

import torch
import torch.nn.functional as F
import torch.utils._pytree as pytree
from torch import nn

from .cases_library_helpers import get_timestep_embedding
from .cases_library_idioms import Scale, x_img, x_tokens
from .cases_library_patterns import LlamaRotary, rotate_half
from .runner import case, register

# Issue 14: more graphs than torch.compile fails unless the case names the gap (breadth=).
STRICT_BREADTH = True


def img_and_temb(r):
    return (r.randn(2, 4, 8, 8), r.randn(2, 16))


def steps(r):
    return (r.randint(0, 1000, 3),)


def tokens_and_mask(r):
    mask = torch.ones(2, 6, dtype=torch.int64)
    mask[1, 4:] = 0
    return (r.randn(2, 6, 8), mask)


def xy(r):
    return (r.randn(6, 4), r.randint(0, 3, 6))


# ---------------------------------------------------------------------------------------------
# diffusers-style UNet pieces


class Timesteps(nn.Module):
    def __init__(self, num_channels, flip_sin_to_cos, downscale_freq_shift, scale=1):
        super().__init__()
        self.num_channels = num_channels
        self.flip_sin_to_cos = flip_sin_to_cos
        self.downscale_freq_shift = downscale_freq_shift
        self.scale = scale

    def forward(self, timesteps):
        return get_timestep_embedding(
            timesteps,
            self.num_channels,
            flip_sin_to_cos=self.flip_sin_to_cos,
            downscale_freq_shift=self.downscale_freq_shift,
            scale=self.scale,
        )


register(
    "diffusers_timesteps_sinusoidal", lambda: Timesteps(9, True, 0), steps, module=True
)


@case(steps)
def diffusers_timesteps_module_built_in_forward(t):
    # A pipeline that builds its projection per call (`Timesteps(...)` in the frame).
    return Timesteps(8, flip_sin_to_cos=False, downscale_freq_shift=1)(t)


class ResnetBlock2D(nn.Module):
    def __init__(self, channels=4, temb_channels=16, groups=2, output_scale_factor=1.0):
        super().__init__()
        self.norm1 = nn.GroupNorm(groups, channels, eps=1e-6, affine=True)
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1)
        self.time_emb_proj = nn.Linear(temb_channels, channels)
        self.norm2 = nn.GroupNorm(groups, channels, eps=1e-6, affine=True)
        self.dropout = nn.Dropout(0.0)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1)
        self.nonlinearity = nn.SiLU()
        self.output_scale_factor = output_scale_factor
        self.time_embedding_norm = "default"

    def forward(self, input_tensor, temb):
        hidden_states = input_tensor
        hidden_states = self.norm1(hidden_states)
        hidden_states = self.nonlinearity(hidden_states)
        hidden_states = self.conv1(hidden_states)
        if self.time_emb_proj is not None:
            temb = self.nonlinearity(temb)
            temb = self.time_emb_proj(temb)[:, :, None, None]
        if self.time_embedding_norm == "default":
            if temb is not None:
                hidden_states = hidden_states + temb
            hidden_states = self.norm2(hidden_states)
        hidden_states = self.nonlinearity(hidden_states)
        hidden_states = self.dropout(hidden_states)
        hidden_states = self.conv2(hidden_states)
        output_tensor = (input_tensor + hidden_states) / self.output_scale_factor
        return output_tensor


register(
    "diffusers_resnet_block_with_temb",
    lambda: ResnetBlock2D(output_scale_factor=2.0).eval(),
    img_and_temb,
    module=True,
)


class Upsample2D(nn.Module):
    def __init__(self, channels=4, use_conv=True, interpolate=True):
        super().__init__()
        self.channels = channels
        self.interpolate = interpolate
        self.conv = nn.Conv2d(channels, channels, 3, padding=1) if use_conv else None

    def forward(self, hidden_states, output_size=None, scale: float = 1.0):
        assert hidden_states.shape[1] == self.channels
        dtype = hidden_states.dtype
        if dtype == torch.bfloat16:
            hidden_states = hidden_states.to(torch.float32)
        if hidden_states.shape[0] >= 64:
            hidden_states = hidden_states.contiguous()
        if self.interpolate:
            if output_size is None:
                hidden_states = F.interpolate(
                    hidden_states, scale_factor=2.0, mode="nearest"
                )
            else:
                hidden_states = F.interpolate(
                    hidden_states, size=output_size, mode="nearest"
                )
        if dtype == torch.bfloat16:
            hidden_states = hidden_states.to(dtype)
        if self.conv is not None:
            hidden_states = self.conv(hidden_states)
        return hidden_states


register("diffusers_upsample2d_nearest", lambda: Upsample2D(), x_img, module=True)


class AdaLayerNorm(nn.Module):
    def __init__(self, embedding_dim=8, num_embeddings=10):
        super().__init__()
        self.emb = nn.Embedding(num_embeddings, embedding_dim)
        self.silu = nn.SiLU()
        self.linear = nn.Linear(embedding_dim, embedding_dim * 2)
        self.norm = nn.LayerNorm(embedding_dim, elementwise_affine=False)

    def forward(self, x, timestep):
        emb = self.linear(self.silu(self.emb(timestep)))
        scale, shift = torch.chunk(emb, 2, dim=-1)
        x = self.norm(x) * (1 + scale[:, None]) + shift[:, None]
        return x


def tokens_and_step(r):
    return (r.randn(2, 6, 8), r.randint(0, 10, 2))


register("diffusers_ada_layer_norm", AdaLayerNorm, tokens_and_step, module=True)


class AttnProcessor:
    """diffusers' default processor: a plain callable object the attention module holds."""

    def __call__(self, attn, hidden_states, attention_mask=None):
        batch, seq, _ = hidden_states.shape
        query = attn.to_q(hidden_states)
        key = attn.to_k(hidden_states)
        value = attn.to_v(hidden_states)
        head_dim = query.shape[-1] // attn.heads
        query = query.view(batch, -1, attn.heads, head_dim).transpose(1, 2)
        key = key.view(batch, -1, attn.heads, head_dim).transpose(1, 2)
        value = value.view(batch, -1, attn.heads, head_dim).transpose(1, 2)
        hidden_states = F.scaled_dot_product_attention(
            query, key, value, attn_mask=attention_mask, dropout_p=0.0, is_causal=False
        )
        hidden_states = hidden_states.transpose(1, 2).reshape(batch, seq, -1)
        hidden_states = attn.to_out[0](hidden_states)
        return attn.to_out[1](hidden_states)


class Attention(nn.Module):
    def __init__(self, dim=8, heads=2, processor=None):
        super().__init__()
        self.heads = heads
        self.to_q = nn.Linear(dim, dim, bias=False)
        self.to_k = nn.Linear(dim, dim, bias=False)
        self.to_v = nn.Linear(dim, dim, bias=False)
        self.to_out = nn.ModuleList([nn.Linear(dim, dim), nn.Dropout(0.0)])
        self.set_processor(processor if processor is not None else AttnProcessor())

    def set_processor(self, processor):
        self.processor = processor

    def forward(self, hidden_states, attention_mask=None):
        return self.processor(self, hidden_states, attention_mask=attention_mask)


register(
    "diffusers_attention_with_processor_object",
    lambda: Attention().eval(),
    x_tokens,
    module=True,
)


# ---------------------------------------------------------------------------------------------
# transformers helpers


def get_extended_attention_mask(attention_mask, dtype=torch.float32):
    if attention_mask.dim() == 3:
        extended_attention_mask = attention_mask[:, None, :, :]
    elif attention_mask.dim() == 2:
        extended_attention_mask = attention_mask[:, None, None, :]
    else:
        raise ValueError("Wrong shape for attention_mask")
    extended_attention_mask = extended_attention_mask.to(dtype=dtype)
    extended_attention_mask = (1.0 - extended_attention_mask) * torch.finfo(dtype).min
    return extended_attention_mask


@case(tokens_and_mask)
def hf_extended_attention_mask(x, mask):
    scores = torch.einsum("bqd,bkd->bqk", x, x)[:, None]
    probs = (scores + get_extended_attention_mask(mask)).softmax(-1)
    return probs


def apply_rotary_pos_emb(q, k, cos, sin, position_ids=None, unsqueeze_dim=1):
    cos = cos.unsqueeze(unsqueeze_dim)
    sin = sin.unsqueeze(unsqueeze_dim)
    q_embed = (q * cos) + (rotate_half(q) * sin)
    k_embed = (k * cos) + (rotate_half(k) * sin)
    return q_embed, k_embed


class RopeAttentionInputs(nn.Module):
    def __init__(self):
        super().__init__()
        self.rotary_emb = LlamaRotary(dim=4)

    def forward(self, x):
        b, s, _ = x.shape
        q = x.view(b, s, 2, 4).transpose(1, 2)
        k = (x * 2).view(b, s, 2, 4).transpose(1, 2)
        position_ids = torch.arange(s, device=x.device).unsqueeze(0).expand(b, -1)
        cos, sin = self.rotary_emb(q, position_ids)
        return apply_rotary_pos_emb(q, k, cos, sin)


register("hf_rotary_apply_pos_emb", RopeAttentionInputs, x_tokens, module=True)


class GELUActivation(nn.Module):
    def __init__(self, use_gelu_python: bool = False):
        super().__init__()
        self.act = self._gelu_python if use_gelu_python else nn.functional.gelu

    def _gelu_python(self, x):
        return x * 0.5 * (1.0 + torch.erf(x / math.sqrt(2.0)))

    def forward(self, x):
        return self.act(x)


ACT2CLS = {
    "gelu": GELUActivation,
    "gelu_python": (GELUActivation, {"use_gelu_python": True}),
    "relu": nn.ReLU,
}


def get_activation(name):
    content = ACT2CLS[name]
    cls, kwargs = content if isinstance(content, tuple) else (content, {})
    return cls(**kwargs)


@case(x_tokens)
def hf_get_activation_by_name_in_forward(x):
    # Activations built per call from a name (a module holding a bound method of itself).
    return get_activation("gelu_python")(x) - get_activation("gelu")(x), get_activation(
        "relu"
    )(x)


# ---------------------------------------------------------------------------------------------
# timm factories and module classes built in the frame


class Swish(nn.Module):
    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def forward(self, x):
        return x.mul_(x.sigmoid()) if self.inplace else x.mul(x.sigmoid())


_ACT_LAYERS = dict(
    swish=Swish, relu=nn.ReLU, gelu_tanh=functools.partial(nn.GELU, approximate="tanh")
)


def create_act_layer(name, inplace=False, **kwargs):
    act_layer = _ACT_LAYERS[name]
    if name == "swish":
        return act_layer(inplace=inplace, **kwargs)
    return act_layer(**kwargs)


@case(x_tokens)
def timm_create_act_layer_in_forward(x):
    return create_act_layer("swish")(x) + create_act_layer("gelu_tanh")(x)


@case(x_tokens)
def sequential_of_modules_built_in_frame(x):
    block = nn.Sequential(Swish(), Scale(2.0), nn.Identity())
    return block(x), len(block)


@case(x_tokens)
def module_dict_of_modules_built_in_frame(x):
    acts = nn.ModuleDict({"swish": Swish(), "scale": Scale(0.5)})
    return [acts[k](x) for k in ("scale", "swish")], list(acts.keys())


class Wrapper(nn.Module):
    """A module built in the frame holding two more: registered through `__setattr__`."""

    def __init__(self, s):
        super().__init__()
        self.first = Scale(s)
        self.second = Swish()
        self.name = "wrapper"

    def forward(self, x):
        return self.second(self.first(x))


@case(x_tokens)
def nested_module_built_in_frame_named_children(x):
    m = Wrapper(3.0)
    names = [n for n, _ in m.named_children()]
    return m(x), names, m.name, "first" in m._modules


@case(x_tokens)
def module_tree_walk_of_a_module_built_in_frame(x):
    m = nn.Sequential(Wrapper(2.0), Swish(), nn.ReLU())
    names = [n for n, _ in m.named_modules()]
    kinds = [type(c).__name__ for c in m.modules()]
    return m(x), names, kinds, len(list(m.children()))


@case(x_tokens)
def module_built_in_frame_live_at_a_graph_break(x):
    m = Wrapper(0.5)
    y = m(x)
    print("between", m.name)
    return m(y), type(m).__name__, [n for n, _ in m.named_children()]


# Found by test_generated_modules: after the break the modules are the resume function's
# arguments (rebuilt objects, new per call); an `nn.Sequential` over them built at trace time
# held the first call's objects (an identity guard: 4 graphs over two calls to tc's 2).
@case(x_tokens)
def sequential_over_modules_from_before_a_graph_break(x):
    m0 = Wrapper(2.0)
    m1 = Swish()
    y = m0(x)
    print("break")
    y = nn.Sequential(m1, m0)(y)
    return y, m0.name


def x_and_linear(r):
    return (r.randn(2, 3), nn.Linear(3, 3))


@case(x_and_linear)
def module_list_over_a_module_argument_built_in_frame(x, lin):
    # The container holds the argument module (read through its source on every call) beside
    # a module built in the frame; built at trace time it would hold the first call's object.
    ml = nn.ModuleList([Swish(), lin])
    for m in ml:
        x = m(x)
    return x, len(ml)


@case(x_and_linear)
def sequential_sharing_a_module_argument(x, lin):
    seq = nn.Sequential(lin, nn.ReLU(), lin)
    return seq(x), seq[0].weight.sum(), len(list(seq.children()))


class WithBuffer(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.register_buffer("scale", torch.ones(n) * 2, persistent=False)

    def forward(self, x):
        return x * self.scale


@case(x_tokens)
def module_with_buffer_built_in_frame_walked(x):
    m = WithBuffer(8)
    frozen = m.requires_grad_(False)
    names = [n for n, _ in m.named_buffers()]
    return m(x), names, frozen is m, len(list(m.parameters())), m.scale.sum()


@case(x_tokens)
def module_built_in_frame_returned(x):
    m = Wrapper(1.5)
    return m(x), m


class DropIfTraining(nn.Module):
    def forward(self, x):
        return x * 0.0 if self.training else x + 1


@case(x_tokens)
def module_built_in_frame_switched_to_eval(x):
    m = DropIfTraining()
    a = m(x)
    m.eval()
    return a, m(x), m.training


@dataclasses.dataclass
class BlockConfig:
    hidden: int = 8
    scale: float = 0.25
    act: str = "swish"


class ConfiguredBlock(nn.Module):
    def __init__(self, config: BlockConfig):
        super().__init__()
        self.config = config
        self.act = create_act_layer(config.act)
        self.scale = Scale(config.scale)

    def forward(self, x):
        return self.scale(self.act(x))[..., : self.config.hidden]


@case(x_tokens)
def module_with_dataclass_config_built_in_frame(x):
    return ConfiguredBlock(BlockConfig(hidden=4))(x)


@case(x_tokens)
def module_built_in_frame_attribute_deleted(x):
    m = Scale(2.0)
    m.extra = 3
    del m.extra
    return m(x), hasattr(m, "extra")


# ---------------------------------------------------------------------------------------------
# lightning-style training steps


class LitClassifier(nn.Module):
    """A LightningModule's shape: `training_step` logs into a dict the trainer reads."""

    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 3)
        self.logged = {}

    def log(self, name, value, prog_bar=False, on_step=True):
        self.logged[name] = value.detach() if isinstance(value, torch.Tensor) else value

    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self.layer(x)
        loss = F.cross_entropy(logits, y)
        acc = (logits.argmax(-1) == y).float().mean()
        self.log("train_loss", loss, prog_bar=True)
        self.log("train_acc", acc)
        return {"loss": loss, "log": {"batch_idx": batch_idx}}

    def forward(self, x, y):
        out = self.training_step((x, y), 0)
        return out["loss"], self.logged["train_acc"]


register("lightning_training_step_logs", LitClassifier, xy, module=True)


# ---------------------------------------------------------------------------------------------
# torch.utils._pytree over batches (structures computed on a skeleton of the traced containers)

Batch = collections.namedtuple("Batch", ["inputs", "targets"])


@case(x_tokens)
def pytree_tree_map_over_a_batch_dict(x):
    batch = {"pixels": x, "aux": [x * 2, (x + 1, None)], "step": 3}
    moved = pytree.tree_map(
        lambda t: t.float() * 0.5 if isinstance(t, torch.Tensor) else t, batch
    )
    return moved["aux"][1][0], moved["pixels"], moved["step"], moved["aux"][1][1]


@case(x_tokens)
def pytree_flatten_unflatten_namedtuple(x):
    batch = Batch(inputs=[x, x.sum(-1)], targets={"y": x.mean()})
    leaves, spec = pytree.tree_flatten(batch)
    out = pytree.tree_unflatten([leaf * 3 for leaf in leaves], spec)
    return out.inputs[1], out.targets["y"], len(leaves), type(out).__name__


@case(x_tokens)
def pytree_tree_leaves_sum(x):
    nested = ((x, [x.exp()]), {"b": x.cos(), "a": x.sin()})
    return sum(t.sum() for t in pytree.tree_leaves(nested))
