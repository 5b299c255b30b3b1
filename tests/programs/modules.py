"""nn.Module programs: user modules (called through ``__call__``, with and without hooks),
attribute access, parameters and buffers, the training flag, containers of modules and
parameters, the common layers and ``torch.nn.functional``."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from .harness import Call, module_program, program


def x8(r):
    return (r.randn(4, 8),)


class MLP(nn.Module):
    def __init__(self, d=8, h=16):
        super().__init__()
        self.fc1 = nn.Linear(d, h)
        self.fc2 = nn.Linear(h, d)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


module_program("user_mlp", MLP, x8, 1, fullgraph=True)


class Nested(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = MLP()
        self.norm = nn.LayerNorm(8)
        self.scale = 0.5

    def forward(self, x):
        return self.norm(x + self.block(x) * self.scale)


module_program("nested_user_modules", Nested, x8, 1, fullgraph=True)


module_program(
    "sequential_of_layers",
    lambda: nn.Sequential(
        nn.Linear(8, 16), nn.GELU(), nn.Dropout(0.1), nn.Linear(16, 4)
    ).eval(),
    x8,
    1,
    fullgraph=True,
)


class ListStack(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(8, 8) for _ in range(3)])

    def forward(self, x):
        for layer in self.layers:
            x = torch.tanh(layer(x))
        return x


module_program("modulelist_iteration", ListStack, x8, 1, fullgraph=True)


class ListIndexing(ListStack):
    def forward(self, x):
        out = self.layers[0](x) + self.layers[-1](x)
        for i, layer in enumerate(self.layers[1:]):
            out = out + layer(x) * (i + 1)
        return out, len(self.layers)


# torch.compile: 1 graphs
module_program("modulelist_indexing_slicing_len", ListIndexing, x8, 1, fullgraph=True)


class ZipLayers(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.ModuleList([nn.Linear(8, 8), nn.Linear(8, 8)])
        self.b = nn.ModuleList([nn.ReLU(), nn.Sigmoid()])

    def forward(self, x):
        for lin, act in zip(self.a, self.b):
            x = act(lin(x))
        return x


module_program("modulelist_zip", ZipLayers, x8, 1, fullgraph=True)


class Heads(nn.Module):
    def __init__(self):
        super().__init__()
        self.heads = nn.ModuleDict({"cls": nn.Linear(8, 3), "reg": nn.Linear(8, 1)})

    def forward(self, x):
        out = {k: head(x) for k, head in self.heads.items()}
        out["both"] = self.heads["cls"](x).sum(-1) + self.heads["reg"](x).squeeze(-1)
        return out


# torch.compile: 1 graphs
module_program("moduledict_items_and_key", Heads, x8, 1, fullgraph=True)


class ModuleDictKeys(Heads):
    def forward(self, x):
        keys = list(self.heads.keys())
        return [self.heads[k](x) for k in sorted(keys)], "cls" in self.heads


module_program("moduledict_keys_contains", ModuleDictKeys, x8, 1, fullgraph=True)


class ParamList(nn.Module):
    def __init__(self):
        super().__init__()
        self.ws = nn.ParameterList(
            [nn.Parameter(torch.randn(8, 8) * 0.1) for _ in range(3)]
        )

    def forward(self, x):
        for w in self.ws:
            x = x @ w
        return x + self.ws[0].sum()


module_program("parameterlist_iteration_and_index", ParamList, x8, 1, fullgraph=True)


class ParamDict(nn.Module):
    def __init__(self):
        super().__init__()
        self.p = nn.ParameterDict(
            {
                "scale": nn.Parameter(torch.ones(8)),
                "shift": nn.Parameter(torch.zeros(8)),
            }
        )

    def forward(self, x):
        return x * self.p["scale"] + self.p["shift"]


module_program("parameterdict_index", ParamDict, x8, 1, fullgraph=True)


class WithBuffer(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("mean", torch.linspace(-1, 1, 8))
        self.register_buffer("count", torch.tensor(0))
        self.weight = nn.Parameter(torch.randn(8))

    def forward(self, x):
        return (x - self.mean) * self.weight


module_program("buffers_and_parameters", WithBuffer, x8, 1, fullgraph=True)


class BufferUpdate(WithBuffer):
    def forward(self, x):
        self.count += 1
        self.mean.mul_(0.9).add_(x.mean(0).detach() * 0.1)
        return x - self.mean


# torch.compile: 1 graphs. `self.count += 1` stores the buffer back as itself (a no-op write),
# so the step is one graph for both input sets.
module_program("buffer_updated_in_place", BufferUpdate, x8, 1, fullgraph=True)


class TrainingFlag(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        y = self.lin(x)
        if self.training:
            return y * 2
        return y - 1


def _eval_then_train(m, seed):
    m.train(seed == 1)


# The training flag is guarded: switching to train mode for the second input set recompiles.
module_program(
    "training_flag_branch",
    TrainingFlag,
    x8,
    2,
    prepare=_eval_then_train,
    fullgraph=True,
)


class PlainAttributes(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.alpha = 0.25
        self.mode = "residual"
        self.sizes = (8, 8)

    def forward(self, x):
        y = self.lin(x).view(*self.sizes[:1], -1) if x.shape[0] == 8 else self.lin(x)
        if self.mode == "residual":
            y = y + x
        return y * self.alpha


module_program("plain_attributes", PlainAttributes, x8, 1, fullgraph=True)


class Shared(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        return self.lin(self.lin(x)) + self.lin.weight.sum() + self.lin.bias


module_program("shared_submodule_and_weight_access", Shared, x8, 1, fullgraph=True)


class Base(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def features(self, x):
        return self.lin(x).relu()

    def forward(self, x):
        return self.head(self.features(x))

    def head(self, h):
        return h.sum(-1)


class Derived(Base):
    def head(self, h):
        return super().head(h) * 2 + h.mean(-1)


# torch.compile: 1 graphs
module_program("inheritance_and_super", Derived, x8, 1, fullgraph=True)


class KwForward(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x, mask=None, *, scale=1.0):
        y = self.lin(x) * scale
        if mask is not None:
            y = y.masked_fill(mask, 0.0)
        return y


module_program(
    "forward_with_keywords",
    KwForward,
    lambda r: Call(r.randn(4, 8), mask=r.bool(4, 8), scale=2.0),
    1,
    fullgraph=True,
)


class DictOut(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(8, 4)

    def forward(self, batch):
        h = self.enc(batch["x"])
        return {"hidden": h, "logits": h @ self.enc.weight, "n": batch["x"].shape[0]}


module_program(
    "dict_in_dict_out", DictOut, lambda r: ({"x": r.randn(4, 8)},), 1, fullgraph=True
)


module_program(
    "conv1d_stack",
    lambda: nn.Sequential(
        nn.Conv1d(3, 6, 3, padding=1), nn.ReLU(), nn.Conv1d(6, 4, 3, stride=2)
    ),
    lambda r: (r.randn(2, 3, 16),),
    1,
    fullgraph=True,
)


module_program(
    "conv2d_batchnorm_eval",
    lambda: nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1),
        nn.BatchNorm2d(8),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
    ).eval(),
    lambda r: (r.randn(2, 3, 8, 8),),
    1,
    fullgraph=True,
)


module_program(
    "batchnorm1d_train_updates_running_stats",
    lambda: nn.BatchNorm1d(8).train(),
    x8,
    1,
    fullgraph=True,
)


class TokenModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(20, 8)
        self.norm = nn.LayerNorm(8)
        self.out = nn.Linear(8, 20, bias=False)

    def forward(self, ids):
        return self.out(self.norm(self.emb(ids)))


module_program(
    "embedding_layernorm_linear",
    TokenModel,
    lambda r: (r.randint(0, 20, 2, 5),),
    1,
    fullgraph=True,
)


class Activations(nn.Module):
    def __init__(self):
        super().__init__()
        self.acts = nn.ModuleList(
            [
                nn.ReLU(),
                nn.GELU(),
                nn.SiLU(),
                nn.Tanh(),
                nn.Sigmoid(),
                nn.LeakyReLU(0.1),
                nn.ELU(),
                nn.Softmax(-1),
                nn.Identity(),
                nn.Hardswish(),
            ]
        )

    def forward(self, x):
        return [a(x) for a in self.acts]


module_program("activation_layers", Activations, x8, 1, fullgraph=True)


class Attention(nn.Module):
    def __init__(self, d=8, heads=2):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q, k, v = (
            z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v)
        )
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(y.transpose(1, 2).reshape(b, t, d))


module_program(
    "attention_with_sdpa", Attention, lambda r: (r.randn(2, 5, 8),), 1, fullgraph=True
)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1 = nn.LayerNorm(8)
        self.attn = Attention()
        self.ln2 = nn.LayerNorm(8)
        self.mlp = MLP()

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


module_program(
    "transformer_blocks",
    lambda: nn.Sequential(Block(), Block()),
    lambda r: (r.randn(2, 5, 8),),
    1,
    fullgraph=True,
)


module_program(
    "multihead_attention_layer",
    lambda: nn.MultiheadAttention(8, 2, batch_first=True).eval(),
    lambda r: (r.randn(2, 5, 8), r.randn(2, 5, 8), r.randn(2, 5, 8)),
    1,
    fullgraph=True,
)

_MHA = nn.MultiheadAttention(8, 2, batch_first=True).eval()


@program(lambda r: (r.randn(2, 5, 8),), 1, fullgraph=True)
def multihead_attention_self_attention_no_grad(x):
    """Self-attention in eval mode under no_grad passes every check of the inference fast path
    but the last, `_is_make_fx_tracing()`, which reads the dispatch-mode stack: traced code is a
    tracer there (as under torch.compile) and takes the composite path, in one graph."""
    with torch.no_grad():
        return _MHA(x, x, x, need_weights=False)[0]


HOOK_LOG: list = []


class HookCounter:
    def __init__(self):
        self.calls = 0

    def __call__(self, module, args, output):
        self.calls += 1
        HOOK_LOG.append(("forward", type(module).__name__, self.calls))
        return output * 2


def _pre_hook(mod, args):
    HOOK_LOG.append(("pre", type(mod).__name__))
    return (args[0] + 1,)


def _with_hooks():
    m = MLP()
    m.fc1.register_forward_pre_hook(_pre_hook)
    m.register_forward_hook(HookCounter())
    return m


# torch.compile: 4 graphs (forward with fc1's pre-hook inlined, the forward hook's own frame; each
# recompiles once on the second call).
module_program("forward_and_pre_hooks", _with_hooks, x8, 4, 0, state=("HOOK_LOG",))


@program(x8, 1, fullgraph=True)
def functional_layers(x):
    w = torch.linspace(-1, 1, 32).view(4, 8)
    y = F.linear(x, w, torch.ones(4))
    y = F.layer_norm(y, (4,))
    y = F.dropout(y, p=0.5, training=False)
    return F.softmax(y, -1) + F.silu(y) + F.pad(y, (1, 1))[:, 1:-1]


@program(lambda r: (r.randn(2, 3, 8, 8), r.randn(4, 3, 3, 3)), 1, fullgraph=True)
def functional_conv_pool(x, w):
    y = F.conv2d(x, w, padding=1)
    return (
        F.max_pool2d(y, 2),
        F.avg_pool2d(y, 2),
        F.adaptive_avg_pool2d(y, 1).flatten(1),
    )


@program(lambda r: (r.randint(0, 10, 3, 4), r.randn(10, 6)), 1, fullgraph=True)
def functional_embedding_one_hot(ids, table):
    return F.embedding(ids, table).sum(1), F.one_hot(ids[0], 10)


@program(lambda r: (r.randn(4, 5), r.randint(0, 5, 4)), 1, fullgraph=True)
def functional_losses(logits, target):
    return (
        F.cross_entropy(logits, target),
        F.mse_loss(logits, logits.flip(0)),
        F.nll_loss(F.log_softmax(logits, -1), target),
    )


@program(
    lambda r: (
        r.randn(2, 2, 5, 4),
        r.randn(2, 2, 5, 4),
        r.randn(2, 2, 5, 4),
        r.bool(5, 5),
    ),
    1,
    fullgraph=True,
)
def sdpa_with_mask(q, k, v, mask):
    return F.scaled_dot_product_attention(
        q, k, v, attn_mask=mask.tril() | torch.eye(5, dtype=torch.bool)
    )


MODEL = MLP()


@program(x8, 1, fullgraph=True)
def global_module_called_from_function(x):
    return MODEL(x) + MODEL.fc1.weight.sum()


# torch.compile: 1 graphs
@program(lambda r: (r.randn(4, 8), nn.Linear(8, 2)), 1, fullgraph=True)
def module_passed_as_argument(x, lin):
    return lin(x), lin.weight.shape, lin.in_features


class ScalarModule(nn.Module):
    def forward(self, x):
        return x * 2 + 1


# torch.compile: 1 graphs. The torch.nn layer built in the frame (ReLU) is traced
# (`calls/torch_api.rs`); the user module class (an nn.Module subclass) is a tracked object,
# `nn.Module.__init__` inlined on it (`interp/objects.rs`; it broke until session 30).
@program(x8, 1, fullgraph=True)
def module_constructed_inside(x):
    return ScalarModule()(x) + nn.ReLU()(x)


class CallsForwardDirectly(nn.Module):
    def __init__(self):
        super().__init__()
        self.mlp = MLP()

    def forward(self, x):
        return self.mlp.forward(x) - self.mlp(x)


module_program(
    "submodule_forward_called_directly", CallsForwardDirectly, x8, 1, fullgraph=True
)


class ModulesIter(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 8)
        self.b = nn.Linear(8, 8)

    def forward(self, x):
        out = x
        for m in self.children():
            out = m(out)
        n = sum(p.numel() for p in self.parameters())
        return out, n


# torch.compile: 1 graphs. The module-tree generators (`children()`, `parameters()`) are walked
# at trace time (`calls/module_tree.rs`).
module_program("children_and_parameters_iteration", ModulesIter, x8, 1, fullgraph=True)


# torch.compile: 1 graphs. The fast-path check's `self.modules()` generator is walked at trace
# time (`calls/module_tree.rs`).
module_program(
    "transformer_encoder_layer",
    lambda: nn.TransformerEncoderLayer(
        8, 2, dim_feedforward=16, dropout=0.0, batch_first=True
    ).eval(),
    lambda r: (r.randn(2, 5, 8),),
    1,
    fullgraph=True,
)


class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.scale = 0.5

    def forward(self, x):
        return self.lin(x) * self.scale


def _replace_weight(m, seed):
    if seed == 1:
        m.lin.weight = nn.Parameter(torch.ones(8, 8))


# A new Parameter object for the second input set: the guard on the tensor's identity (or the
# parameter read as a graph input) must pick up the new weight.
module_program(
    "parameter_replaced_between_calls",
    Scaled,
    x8,
    1,
    prepare=_replace_weight,
    fullgraph=True,
)


def _optimizer_like_step(m, seed):
    if seed == 1:
        with torch.no_grad():
            m.lin.weight.mul_(-2).add_(0.5)


# An in-place update of a parameter between calls (an optimizer step): same object, new values,
# no recompile.
module_program(
    "parameter_updated_in_place_between_calls",
    Scaled,
    x8,
    1,
    prepare=_optimizer_like_step,
    fullgraph=True,
)


def _change_scale(m, seed):
    m.scale = 0.5 if seed == 0 else 3.0


# A plain float attribute changes between calls: guarded, one recompile.
module_program(
    "module_float_attribute_changes",
    Scaled,
    x8,
    2,
    prepare=_change_scale,
    fullgraph=True,
)


def _add_hook_later(m, seed):
    if seed == 1:
        m.register_forward_hook(lambda mod, args, out: out + 100)


# A hook registered after the first call must run on the second.
module_program(
    "hook_added_between_calls", Scaled, x8, 2, prepare=_add_hook_later, fullgraph=True
)


def _swap_submodule(m, seed):
    if seed == 1:
        m.lin = nn.Linear(8, 8)


# torch.compile: 1 graphs
module_program(
    "submodule_replaced_between_calls",
    Scaled,
    x8,
    1,
    prepare=_swap_submodule,
    fullgraph=True,
)


class ParamDictLoop(nn.Module):
    def __init__(self):
        super().__init__()
        self.p = nn.ParameterDict(
            {
                "scale": nn.Parameter(torch.ones(8) * 2),
                "shift": nn.Parameter(torch.ones(8)),
            }
        )
        self.extra = nn.ParameterList([nn.Parameter(torch.full((8,), 0.5))])

    def forward(self, x):
        for k, v in self.p.items():
            x = x * v + len(k)
        for k in self.p:
            x = x + self.p[k]
        return x + len(self.extra) + sum(self.extra)


module_program("parameterdict_iteration", ParamDictLoop, x8, 1, fullgraph=True)


class BaseBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        return self.lin(x).relu()


class ResidualBlock(BaseBlock):
    def forward(self, x):
        return super().forward(x) + x


module_program(
    "super_forward_of_a_module_subclass", ResidualBlock, x8, 1, fullgraph=True
)
