"""Session 32's hunt: user-style programs over varying sizes, torchferro against torch.compile.

Run: cd scripts/hunt32 && PYTHONPATH=../../python:../../tests python probe.py [names...]
Each program is called over its size sequence (fresh seeded inputs per call) under both
compilers with counting backends, for dynamic=None, dynamic=True and `mark_dynamic` on dim 0 of
every tensor input; values are checked against eager at every call. One row per (program,
policy): torch.compile's graphs, ours, MORE where ours is above, WRONG where a value differs.
"""

from __future__ import annotations

import sys
import traceback

import torch
import torch._dynamo
import torch.nn.functional as F
import torchferro
import torchferro.compiler
from programs.compare import same
from programs.counting import Count
from torch import nn

SIZES = [4, 7, 1, 9, 4, 3, 2, 16]
P = {}


def r(*shape, gen):
    return torch.randn(*shape, generator=gen)


def prog(make, sizes=SIZES):
    def deco(f):
        P[f.__name__] = (f, make, sizes)
        return f

    return deco


@prog(lambda n, g: [r(3, 2 * n, gen=g)])
def half_slice(x):
    return x[:, : x.size(1) // 2] * 2


@prog(lambda n, g: [r(n, 4, gen=g)])
def arange_index(x):
    n = x.size(0)
    return x[torch.arange(n)] + torch.arange(n).unsqueeze(1)


@prog(lambda n, g: [r(n, 6, gen=g)])
def view_minus_one(x):
    n = x.size(0)
    return x.view(-1, n).sum(0)


@prog(lambda n, g: [r(1, 3, n + 2, n + 2, gen=g)])
def interpolate_size(x):
    return F.interpolate(x, size=(x.size(2) * 2, x.size(3) + 1), mode="bilinear")


@prog(lambda n, g: [r(2, n, 5, gen=g)])
def pad_to_multiple(x):
    n = x.size(1)
    return F.pad(x, (0, 0, 0, (8 - n % 8) % 8))


@prog(lambda n, g: [r(n, 3, gen=g)])
def repeat_size(x):
    return x.repeat(x.size(0), 1) + 1


@prog(lambda n, g: [r(1, 3, gen=g), r(n, 3, gen=g)])
def expand_sizes(x, y):
    return x.expand(*y.shape) + y


@prog(lambda n, g: [r(n, 3, gen=g)], sizes=[2, 3, 4, 5, 3, 2])
def loop_rows(x):
    acc = torch.zeros(3)
    for i in range(x.size(0)):
        acc = acc + x[i] * i
    return acc


@prog(lambda n, g: [r(n + 2, 3, gen=g)])
def split_list(x):
    n = x.size(0)
    a, b = torch.split(x, [2, n - 2])
    return a.sum(0) + b.sum(0)


@prog(lambda n, g: [r(n, 3, gen=g)])
def cat_var_list(x):
    parts = [x, x * 2, x[:1]]
    return torch.cat(parts, 0)


@prog(lambda n, g: [r(n, 3, gen=g)])
def cat_chunks(x):
    return torch.cat([c * i for i, c in enumerate(x.split(2))])


@prog(lambda n, g: [r(2, n, 8, gen=g)])
def position_ids(h):
    b, t, _ = h.shape
    pos = torch.arange(t).unsqueeze(0).expand(b, t)
    return h + pos.unsqueeze(-1).float()


@prog(lambda n, g: [r(2, n, 8, gen=g)])
def causal_mask(h):
    t = h.size(1)
    m = torch.full((t, t), float("-inf")).triu(1)
    s = h @ h.transpose(1, 2) + m
    return s.softmax(-1) @ h


@prog(lambda n, g: [r(2, n, 8, gen=g), (torch.rand(2, n, generator=g) > 0.3).long()])
def padding_mask(h, mask):
    m = (1.0 - mask[:, None, :].float()) * torch.finfo(h.dtype).min
    s = h @ h.transpose(1, 2) / h.size(-1) ** 0.5 + m
    return s.softmax(-1)


@prog(lambda n, g: [r(n, 5, gen=g)])
def full_float(x):
    m, n = x.shape
    return torch.full((m,), float(n)) + x.sum(1)


@prog(lambda n, g: [r(n, 5, gen=g)])
def full_float_rows(x):
    m = x.size(0)
    return torch.full((3,), float(m)) * x[:3].sum(0)[:3]


@prog(lambda n, g: [r(n, 5, gen=g)])
def mean_by_size(x):
    return x.sum(0) / float(x.size(0))


@prog(lambda n, g: [r(n, 5, gen=g)])
def scale_by_sqrt(x):
    return x * (x.size(0) ** 0.5)


@prog(lambda n, g: [r(n, 5, gen=g)])
def div_by_size(x):
    return x / x.size(0)


@prog(lambda n, g: [r(n, 5, gen=g)])
def true_div_sizes(x):
    return x * (x.size(1) / x.size(0))


def _cnn():
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1),
        nn.BatchNorm2d(8),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, stride=2, padding=1),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(16, 10),
    ).eval()


CNN = _cnn()


@prog(lambda n, g: [r(n, 3, 16, 16, gen=g)])
def cnn_batch(x):
    return CNN(x)


@prog(lambda n, g: [r(2, 3, 8 + 2 * n, 8 + 2 * n, gen=g)])
def cnn_image(x):
    return CNN(x)


# kind: (config class, model class, config fields): two small layers each.
MODELS = {
    "gpt2": (
        "GPT2Config",
        "GPT2LMHeadModel",
        {"n_layer": 2, "n_head": 2, "n_embd": 32},
    ),
    "bert": (
        "BertConfig",
        "BertModel",
        {"num_hidden_layers": 2, "num_attention_heads": 2, "hidden_size": 32},
    ),
    "llama": (
        "LlamaConfig",
        "LlamaForCausalLM",
        {
            "num_hidden_layers": 2,
            "num_attention_heads": 2,
            "num_key_value_heads": 1,
            "hidden_size": 32,
        },
    ),
    "t5": (
        "T5Config",
        "T5ForConditionalGeneration",
        {"num_layers": 2, "num_heads": 2, "d_model": 32, "d_kv": 16, "d_ff": 64},
    ),
}


def _hf(kind):
    import transformers

    config, model, fields = MODELS[kind]
    torch.manual_seed(0)
    if kind in ("bert", "llama"):
        fields = {**fields, "intermediate_size": 64}
    cfg = getattr(transformers, config)(vocab_size=100, **fields)
    return getattr(transformers, model)(cfg).eval()


HF = {}


def hf(kind):
    if kind not in HF:
        HF[kind] = _hf(kind)
    return HF[kind]


HF_SIZES = [(1, 8), (2, 9), (4, 17), (1, 33), (8, 2), (3, 64), (2, 5)]


def _ids(n, g):
    b, t = HF_SIZES[n]
    return [torch.randint(0, 100, (b, t), generator=g)]


def _ids_mask(n, g):
    b, t = HF_SIZES[n]
    ids = torch.randint(0, 100, (b, t), generator=g)
    mask = torch.ones(b, t, dtype=torch.long)
    mask[0, : t // 3] = 0
    return [ids, mask]


IDX = list(range(len(HF_SIZES)))


@prog(_ids, IDX)
def gpt2_forward(ids):
    with torch.no_grad():
        return hf("gpt2")(ids, use_cache=False).logits


@prog(_ids_mask, IDX)
def gpt2_padded(ids, mask):
    with torch.no_grad():
        return hf("gpt2")(ids, attention_mask=mask, use_cache=False).logits


@prog(_ids_mask, IDX)
def bert_padded(ids, mask):
    with torch.no_grad():
        return hf("bert")(ids, attention_mask=mask).last_hidden_state


@prog(_ids_mask, IDX)
def llama_padded(ids, mask):
    with torch.no_grad():
        return hf("llama")(ids, attention_mask=mask, use_cache=False).logits


@prog(_ids, IDX)
def llama_position_ids(ids):
    pos = torch.arange(ids.size(1)).unsqueeze(0)
    with torch.no_grad():
        return hf("llama")(ids, position_ids=pos, use_cache=False).logits


@prog(_ids, IDX)
def t5_forward(ids):
    with torch.no_grad():
        return hf("t5")(input_ids=ids, decoder_input_ids=ids[:, :3]).logits


def run(name, policy):
    f, make, sizes = P[name]
    # Models are built eagerly, outside the compiled region.
    for kind in ("gpt2", "bert", "llama", "t5"):
        if kind in name:
            hf(kind)

    def calls(compiled):
        for s in sizes:
            a = make(s, torch.Generator().manual_seed(s))
            b = make(s, torch.Generator().manual_seed(s))
            if policy == "mark":
                for t in a:
                    if isinstance(t, torch.Tensor):
                        torch._dynamo.mark_dynamic(t, 0)
            same(compiled(*a), f(*b))

    dyn = {"auto": None, "true": True, "mark": None}[policy]
    torch._dynamo.reset()
    torchferro.compiler.reset()
    tc, fc = Count(), Count()
    try:
        calls(torch.compile(f, backend=tc, dynamic=dyn))
    except Exception as e:  # noqa: BLE001
        tc.n = f"err {type(e).__name__}"
    try:
        calls(torchferro.compile(f, backend=fc, dynamic=dyn))
    except AssertionError as e:
        fc.n = f"WRONG {str(e)[:200]}"
    except Exception as e:  # noqa: BLE001
        traceback.print_exc()
        fc.n = f"err {type(e).__name__}: {str(e)[:200]}"
    torch._dynamo.reset()
    torchferro.compiler.reset()
    return tc.n, fc.n


if __name__ == "__main__":
    names = sys.argv[1:] or list(P)
    for name in names:
        for policy in ("auto", "true", "mark"):
            tc, fc = run(name, policy)
            more = isinstance(fc, int) and isinstance(tc, int) and fc > tc
            flag = "MORE" if more or isinstance(fc, str) else ""
            print(
                f"{name:22s} {policy:5s} tc={tc!s:4s} tf={fc!s:4s} {flag}", flush=True
            )
