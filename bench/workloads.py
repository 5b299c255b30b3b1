"""The workloads of the benchmark suite.

Each workload builds, from a seed, a program and its inputs at a size chosen for the device and
for ``--quick``. ``make(compile_fn)`` returns the callable that is timed: ``compile_fn`` is the
identity for eager, ``torch.compile`` or ``torchferro.compile`` (each called with default
arguments). Forward workloads run with grad mode off (inference); training workloads with it on.

Bytes are counted as the ideal traffic of one call: every input tensor read once and every output
tensor written once (what a fully fused kernel must move), the same figure for every variant.
FLOPs are counted by ``torch.utils.flop_counter`` on the eager program (matmuls and convolutions).
"""

from __future__ import annotations

import copy
import importlib.util
import math
import os
from dataclasses import dataclass, field
from typing import Any, Callable

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class Built:
    """A workload instantiated at one size on one device."""

    # compile_fn -> the callable that is timed; called with ``*args``.
    make: Callable[[Callable], Callable]
    args: tuple
    # Inputs of a different shape, for the recompile measurement.
    alt_args: tuple
    # Ideal bytes moved per call (memory-bound workloads only).
    bytes: int | None = None
    size: str = ""


@dataclass
class Workload:
    name: str
    description: str
    build: Callable[[str, bool], Built]  # (device, quick) -> Built
    train: bool = False
    torchferro: bool = True  # False: torchferro does not apply yet (reported as n/a)
    requires: tuple[str, ...] = ()
    rtol: float = 1e-4
    atol: float = 1e-4
    memory_bound: bool = False
    compute_bound: bool = False
    # Seconds of interleaved timing to aim for (all variants together) on CPU.
    time_budget_s: float = 6.0
    in_quick: bool = True
    # Devices the workload is sized for; on others it is left out unless named in ``--only``.
    devices: tuple[str, ...] = ("cpu", "cuda")
    notes: list[str] = field(default_factory=list)

    def missing(self) -> list[str]:
        return [m for m in self.requires if importlib.util.find_spec(m) is None]


def nbytes(*tensors: torch.Tensor) -> int:
    return sum(t.numel() * t.element_size() for t in tensors)


def _forward(module_or_fn) -> Callable[[Callable], Callable]:
    return lambda compile_fn: compile_fn(module_or_fn)


def _gen(device: str) -> torch.Generator:
    return torch.Generator(device="cpu").manual_seed(0)


def _randn(*shape, device: str, gen: torch.Generator) -> torch.Tensor:
    return torch.randn(*shape, generator=gen).to(device)


def _cuda(device: str) -> bool:
    return device.startswith("cuda")


# --- tiny call -----------------------------------------------------------------------------------


def tiny_fn(x):
    return x + 1


def build_tiny(device: str, quick: bool) -> Built:
    g = _gen(device)
    x = _randn(10, device=device, gen=g)
    return Built(
        make=_forward(tiny_fn),
        args=(x,),
        alt_args=(_randn(12, device=device, gen=g),),
        size="x[10]",
    )


# --- pointwise chain -----------------------------------------------------------------------------


def pointwise_fn(x):
    y = torch.sin(x) * 2.0 + torch.cos(x)
    y = torch.relu(y) * torch.sigmoid(x)
    return y - 0.5 * x


def build_pointwise(device: str, quick: bool) -> Built:
    n = (256 << 20) if _cuda(device) else ((1 << 20) if quick else (16 << 20))
    g = _gen(device)
    x = _randn(n, device=device, gen=g)
    alt = _randn(n // 2 + 7, device=device, gen=g)
    return Built(
        make=_forward(pointwise_fn),
        args=(x,),
        alt_args=(alt,),
        bytes=2 * nbytes(x),
        size=f"x[{n}]",
    )


# --- softmax -------------------------------------------------------------------------------------


def softmax_fn(x):
    return torch.softmax(x, dim=-1)


def build_softmax(device: str, quick: bool) -> Built:
    r, c = (32768, 4096) if _cuda(device) else ((512, 2048) if quick else (2048, 2048))
    g = _gen(device)
    x = _randn(r, c, device=device, gen=g)
    alt = _randn(r // 2, c, device=device, gen=g)
    return Built(
        make=_forward(softmax_fn),
        args=(x,),
        alt_args=(alt,),
        bytes=2 * nbytes(x),
        size=f"x[{r},{c}]",
    )


# --- layer_norm ----------------------------------------------------------------------------------


def layer_norm_fn(x, w, b):
    return F.layer_norm(x, (x.shape[-1],), w, b, 1e-5)


def build_layer_norm(device: str, quick: bool) -> Built:
    r, c = (32768, 4096) if _cuda(device) else ((1024, 1024) if quick else (4096, 1024))
    g = _gen(device)
    x = _randn(r, c, device=device, gen=g)
    w = _randn(c, device=device, gen=g)
    b = _randn(c, device=device, gen=g)
    alt = _randn(r // 2, c, device=device, gen=g)
    return Built(
        make=_forward(layer_norm_fn),
        args=(x, w, b),
        alt_args=(alt, w, b),
        bytes=2 * nbytes(x) + nbytes(w, b),
        size=f"x[{r},{c}]",
    )


# --- rms_norm ------------------------------------------------------------------------------------


def rms_norm_fn(x, w):
    return F.rms_norm(x, (x.shape[-1],), w, 1e-6)


def build_rms_norm(device: str, quick: bool) -> Built:
    r, c = (32768, 4096) if _cuda(device) else ((1024, 1024) if quick else (4096, 1024))
    g = _gen(device)
    x = _randn(r, c, device=device, gen=g)
    w = _randn(c, device=device, gen=g)
    alt = _randn(r // 2, c, device=device, gen=g)
    return Built(
        make=_forward(rms_norm_fn),
        args=(x, w),
        alt_args=(alt, w),
        bytes=2 * nbytes(x) + nbytes(w),
        size=f"x[{r},{c}]",
    )


# --- device copy (the bandwidth reference) --------------------------------------------------------


def copy_fn(x):
    return x.clone()


def build_copy(device: str, quick: bool) -> Built:
    n = (256 << 20) if _cuda(device) else ((1 << 20) if quick else (16 << 20))
    g = _gen(device)
    x = _randn(n, device=device, gen=g)
    return Built(
        make=_forward(copy_fn),
        args=(x,),
        alt_args=(_randn(n // 2 + 7, device=device, gen=g),),
        bytes=2 * nbytes(x),
        size=f"x[{n}]",
    )


# --- MLP with GELU -------------------------------------------------------------------------------


def mlp(d: int, hidden: int) -> nn.Module:
    return nn.Sequential(
        nn.Linear(d, hidden),
        nn.GELU(),
        nn.Linear(hidden, d),
        nn.GELU(),
        nn.Linear(d, d),
    )


def _mlp_sizes(device: str, quick: bool) -> tuple[int, int, int]:
    if _cuda(device):
        return 8192, 4096, 16384
    return (64, 256, 1024) if quick else (512, 512, 2048)


def build_mlp(device: str, quick: bool) -> Built:
    batch, d, hidden = _mlp_sizes(device, quick)
    torch.manual_seed(0)
    model = mlp(d, hidden).to(device).eval()
    g = _gen(device)
    x = _randn(batch, d, device=device, gen=g)
    alt = _randn(batch // 2, d, device=device, gen=g)
    return Built(
        make=_forward(model),
        args=(x,),
        alt_args=(alt,),
        size=f"x[{batch},{d}], hidden {hidden}",
    )


# --- training steps ------------------------------------------------------------------------------


def _train_step(
    model: nn.Module, loss_of: Callable, optimizer: type, **opt_kw
) -> Callable[[Callable], Callable]:
    """`make` of a training workload: each variant trains its own copy of `model` (all start
    from the same weights, so one step's results are comparable): `loss_of(compiled, *args)`,
    backward, one `optimizer` step; the step returns the loss and the updated parameters."""

    def make(compile_fn):
        m = copy.deepcopy(model)
        cm = compile_fn(m)
        opt = optimizer(m.parameters(), **opt_kw)

        def step(*args):
            loss = loss_of(cm, *args)
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            return (loss.detach(), *[p.detach() for p in m.parameters()])

        return step

    return make


def build_train_mlp(device: str, quick: bool) -> Built:
    batch, d, hidden = _mlp_sizes(device, quick)
    torch.manual_seed(0)
    model = mlp(d, hidden).to(device).train()
    g = _gen(device)
    x = _randn(batch, d, device=device, gen=g)
    y = _randn(batch, d, device=device, gen=g)
    alt = (
        _randn(batch // 2, d, device=device, gen=g),
        _randn(batch // 2, d, device=device, gen=g),
    )

    return Built(
        make=_train_step(
            model, lambda cm, x, y: F.mse_loss(cm(x), y), torch.optim.SGD, lr=1e-3
        ),
        args=(x, y),
        alt_args=alt,
        size=f"x[{batch},{d}], hidden {hidden}, SGD",
    )


# --- GPT-style transformer block -----------------------------------------------------------------


class CausalSelfAttention(nn.Module):
    def __init__(self, d: int, heads: int, max_t: int):
        super().__init__()
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.heads = heads
        self.register_buffer(
            "mask", torch.tril(torch.ones(max_t, max_t)).view(1, 1, max_t, max_t)
        )

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.qkv(x).split(C, dim=2)
        q = q.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        k = k.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        v = v.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.mask[:, :, :T, :T] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.proj(y)


class Block(nn.Module):
    def __init__(self, d: int, heads: int, max_t: int):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = CausalSelfAttention(d, heads, max_t)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(
            nn.Linear(d, 4 * d), nn.GELU(approximate="tanh"), nn.Linear(4 * d, d)
        )

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        x = x + self.mlp(self.ln2(x))
        return x


def build_block(device: str, quick: bool) -> Built:
    if _cuda(device):
        b, t, d, h = 16, 2048, 2048, 16
    else:
        b, t, d, h = (2, 64, 128, 4) if quick else (2, 256, 256, 4)
    torch.manual_seed(0)
    model = Block(d, h, t).to(device).eval()
    g = _gen(device)
    x = _randn(b, t, d, device=device, gen=g)
    alt = _randn(b, t // 2, d, device=device, gen=g)
    return Built(
        make=_forward(model),
        args=(x,),
        alt_args=(alt,),
        size=f"batch {b}, seq {t}, width {d}, {h} heads",
    )


# --- torchvision resnet18 ------------------------------------------------------------------------


def build_resnet18(device: str, quick: bool) -> Built:
    import torchvision

    b, hw = (256, 224) if _cuda(device) else ((1, 64) if quick else (8, 224))
    torch.manual_seed(0)
    model = torchvision.models.resnet18(weights=None).to(device).eval()
    g = _gen(device)
    x = _randn(b, 3, hw, hw, device=device, gen=g)
    alt = _randn(
        max(b // 2, 1),
        3,
        hw // 2 if b == 1 else hw,
        hw // 2 if b == 1 else hw,
        device=device,
        gen=g,
    )
    return Built(
        make=_forward(model), args=(x,), alt_args=(alt,), size=f"batch {b}, {hw}x{hw}"
    )


def build_train_resnet18(device: str, quick: bool) -> Built:
    """One SGD step of torchvision's resnet18 in training mode (BatchNorm updates its running
    statistics), cross entropy on random labels."""
    import torchvision

    b, hw = (64, 224) if _cuda(device) else ((2, 64) if quick else (8, 224))
    torch.manual_seed(0)
    model = torchvision.models.resnet18(weights=None).to(device).train()
    g = _gen(device)
    x = _randn(b, 3, hw, hw, device=device, gen=g)
    y = torch.randint(0, 1000, (b,), generator=g).to(device)
    alt = (
        _randn(b // 2, 3, hw, hw, device=device, gen=g),
        torch.randint(0, 1000, (b // 2,), generator=g).to(device),
    )

    return Built(
        make=_train_step(
            model, lambda cm, x, y: F.cross_entropy(cm(x), y), torch.optim.SGD, lr=1e-3
        ),
        args=(x, y),
        alt_args=alt,
        size=f"batch {b}, {hw}x{hw}, SGD",
    )


# --- GPT-2 (transformers), random weights --------------------------------------------------------


def _gpt2(device: str, train: bool = False, **extra):
    """GPT2LMHeadModel without its KV cache, random weights (seed 0): 12 layers of width 768
    on CUDA, 2 of width 64 on CPU; `extra` sets more config fields. Returns the model (in
    training or eval mode), its config and its size for the report."""
    from transformers import GPT2Config, GPT2LMHeadModel

    if _cuda(device):
        cfg = GPT2Config(n_layer=12, n_embd=768, n_head=12, n_positions=1024, **extra)
    else:
        cfg = GPT2Config(n_layer=2, n_embd=64, n_head=4, **extra)
    cfg.use_cache = False
    torch.manual_seed(0)
    model = GPT2LMHeadModel(cfg).to(device).train(train)
    size = f"{cfg.n_layer} layers, width {cfg.n_embd}, {cfg.n_head} heads"
    return model, cfg, size


def _ids(
    cfg, shape: tuple[int, int], device: str, gen: torch.Generator
) -> torch.Tensor:
    """Random token ids of `shape` in `cfg`'s vocabulary."""
    return torch.randint(0, cfg.vocab_size, shape, generator=gen).to(device)


def _lm_forward(model: nn.Module, cfg, size: str, device: str, b: int, t: int) -> Built:
    """A language model's forward on `b` random sequences of `t` tokens (half as long for the
    recompile measurement); the compiled model's logits are the result."""
    g = _gen(device)
    ids = _ids(cfg, (b, t), device, g)
    alt = _ids(cfg, (b, t // 2), device, g)

    def make(compile_fn):
        cm = compile_fn(model)
        return lambda ids: cm(ids).logits

    return Built(
        make=make, args=(ids,), alt_args=(alt,), size=f"{size}, batch {b}, seq {t}"
    )


def build_gpt2(device: str, quick: bool) -> Built:
    model, cfg, size = _gpt2(device)
    if _cuda(device):
        b, t = 16, 1024
    else:
        b, t = (1, 32) if quick else (4, 128)
    return _lm_forward(model, cfg, size, device, b, t)


def build_train_gpt2(device: str, quick: bool) -> Built:
    """One AdamW step of GPT2LMHeadModel (small config, random weights, dropout off so that
    every variant's first step is comparable), loss from the model's own `labels=` path."""
    model, cfg, size = _gpt2(
        device, train=True, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0
    )
    if _cuda(device):
        b, t = 8, 1024
    else:
        b, t = (1, 32) if quick else (4, 128)
    g = _gen(device)
    ids = _ids(cfg, (b, t), device, g)
    alt = _ids(cfg, (b, t // 2), device, g)

    return Built(
        make=_train_step(
            model, lambda cm, ids: cm(ids, labels=ids).loss, torch.optim.AdamW, lr=1e-4
        ),
        args=(ids,),
        alt_args=(alt,),
        size=f"{size}, batch {b}, seq {t}, AdamW",
    )


def build_gpt2_amp(device: str, quick: bool) -> Built:
    """GPT-2 small (124M: 12 layers, width 768, 12 heads) inference under bf16 autocast, the
    issue's GPU transformer: batch 8, sequence 1024 on CUDA. The autocast region is inside the
    compiled function, so every compiler sees it."""
    from transformers import GPT2Config, GPT2LMHeadModel

    cfg = GPT2Config(n_layer=12, n_embd=768, n_head=12, n_positions=1024)
    b, t = (8, 1024) if _cuda(device) else (1, 32)
    if not _cuda(device):
        cfg = GPT2Config(n_layer=2, n_embd=64, n_head=4)
    cfg.use_cache = False
    torch.manual_seed(0)
    model = GPT2LMHeadModel(cfg).to(device).eval()
    g = _gen(device)
    ids = torch.randint(0, cfg.vocab_size, (b, t), generator=g).to(device)
    alt = torch.randint(0, cfg.vocab_size, (b, t // 2), generator=g).to(device)
    dev_type = "cuda" if _cuda(device) else "cpu"

    def forward(ids):
        with torch.autocast(dev_type, dtype=torch.bfloat16):
            return model(ids).logits

    return Built(
        make=_forward(forward),
        args=(ids,),
        alt_args=(alt,),
        size=f"{cfg.n_layer} layers, width {cfg.n_embd}, {cfg.n_head} heads, batch {b}, "
        f"seq {t}, bf16 autocast",
    )


# --- torchvision resnet50 (CUDA) -----------------------------------------------------------------


def build_resnet50(device: str, quick: bool) -> Built:
    """torchvision resnet50, eval, batch 64 at 224x224 on CUDA. cuDNN's TF32 is switched off
    for the process (every variant alike): with it, the same convolution on inputs one float32
    bit apart differs by far more than any tolerance that could still catch a wrong kernel."""
    import torchvision

    if _cuda(device):
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cuda.matmul.allow_tf32 = False
    b, hw = (64, 224) if _cuda(device) else (1, 64)
    torch.manual_seed(0)
    model = torchvision.models.resnet50(weights=None).to(device).eval()
    g = _gen(device)
    x = _randn(b, 3, hw, hw, device=device, gen=g)
    alt = _randn(max(b // 2, 1), 3, hw, hw, device=device, gen=g)
    return Built(
        make=_forward(model),
        args=(x,),
        alt_args=(alt,),
        size=f"batch {b}, {hw}x{hw}, TF32 off",
    )


# --- Llama (transformers), random weights ------------------------------------------------------


def _test_zoo():
    """``tests/zoo.py``: the model tests' small configs, which the CPU model workloads share
    (loaded by path: ``tests/`` is not on the bench's import path)."""
    path = os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "tests", "zoo.py"
    )
    spec = importlib.util.spec_from_file_location("_torchferro_test_zoo", path)
    zoo = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(zoo)
    return zoo


def _llama(device: str, quick: bool):
    """The test zoo's Llama (tests/zoo.py, as tests/test_models.py builds it: 2 layers, width
    64, 4 heads, 2 KV heads, vocabulary 128) on CPU; a 1B-class shape on CUDA."""
    from transformers import LlamaConfig, LlamaForCausalLM

    if _cuda(device):
        cfg = LlamaConfig(
            vocab_size=32000,
            hidden_size=2048,
            intermediate_size=5632,
            num_hidden_layers=16,
            num_attention_heads=32,
            num_key_value_heads=8,
        )
    else:
        cfg = _test_zoo().decoder_config(LlamaConfig, num_key_value_heads=2)
    torch.manual_seed(0)
    model = LlamaForCausalLM(cfg).to(device).eval()
    model.generation_config.pad_token_id = 0
    size = (
        f"{cfg.num_hidden_layers} layers, width {cfg.hidden_size}, "
        f"{cfg.num_attention_heads} heads ({cfg.num_key_value_heads} KV)"
    )
    return model, cfg, size


def build_llama(device: str, quick: bool) -> Built:
    model, cfg, size = _llama(device, quick)
    model.config.use_cache = False
    if _cuda(device):
        b, t = 8, 1024
    else:
        b, t = (2, 8) if quick else (4, 128)
    return _lm_forward(model, cfg, size, device, b, t)


def build_llama_generate(device: str, quick: bool) -> Built:
    """Greedy `generate` with `model.forward` compiled, as torch.compile users write it; every
    variant gets its own copy of the model (the compiled forward is an instance attribute).
    Every decoding step has a new length: both compilers mark the sequence and cache lengths
    dynamic at their first recompiles (automatic dynamic) and make 3 graphs for the prefill and
    the decoding steps (tests/test_models.py pins torchferro's count against torch.compile's)."""
    model, cfg, size = _llama(device, quick)
    new = 4 if quick else 16
    b, t = (8, 128) if _cuda(device) else (2, 8)
    g = _gen(device)
    ids = _ids(cfg, (b, t), device, g)
    alt = _ids(cfg, (b, t + 4), device, g)

    def make(compile_fn):
        m = copy.deepcopy(model)
        m.forward = compile_fn(m.forward)
        return lambda ids: m.generate(ids, max_new_tokens=new, do_sample=False)

    return Built(
        make=make,
        args=(ids,),
        alt_args=(alt,),
        size=f"{size}, batch {b}, prompt {t}, {new} new tokens",
    )


def build_dynamic_seq(device: str, quick: bool) -> Built:
    """GPT2LMHeadModel forward over a spread of sequence lengths, one compiled model for all of
    them: one timed call runs every length once. Dynamic shapes (issue 18) decide how many graphs
    that takes: torch.compile compiles the first length statically and the second with a symbolic
    length (automatic dynamic), then reuses it; the recompile measurement changes the batch size
    instead. The graph count is what this workload is about; the time per call shows what the
    symbolic graph costs against per-length static graphs."""
    model, cfg, size = _gpt2(device)
    if _cuda(device):
        b, lengths = 8, (8, 9, 17, 33, 64, 100, 128, 256, 512, 1024)
    else:
        b = 2
        lengths = (8, 9, 17, 33) if quick else (8, 9, 17, 33, 64, 100, 128, 256)
    g = _gen(device)
    batch = tuple(_ids(cfg, (b, t), device, g) for t in lengths)
    alt = tuple(_ids(cfg, (b + 1, t), device, g) for t in lengths[:2])

    def make(compile_fn):
        cm = compile_fn(model)
        return lambda seqs: [cm(ids).logits for ids in seqs]

    return Built(
        make=make,
        args=(batch,),
        alt_args=(alt,),
        size=f"{size}, batch {b}, seq {', '.join(map(str, lengths))} "
        "(one call runs them all)",
    )


WORKLOADS: list[Workload] = [
    Workload(
        "tiny",
        "x + 1 on 10 elements (per-call overhead)",
        build_tiny,
        rtol=0,
        atol=0,
        time_budget_s=4.0,
    ),
    Workload(
        "copy",
        "x.clone(): the device's copy bandwidth, the memory-bound workloads' yardstick",
        build_copy,
        memory_bound=True,
        in_quick=False,
    ),
    Workload(
        "pointwise",
        "chain of 9 pointwise ops (sin, cos, relu, sigmoid, ...)",
        build_pointwise,
        memory_bound=True,
    ),
    Workload("softmax", "row softmax", build_softmax, memory_bound=True),
    Workload(
        "layer_norm",
        "layer_norm over the last dim",
        build_layer_norm,
        memory_bound=True,
    ),
    Workload(
        "rms_norm",
        "rms_norm over the last dim",
        build_rms_norm,
        memory_bound=True,
    ),
    Workload(
        "mlp",
        "MLP, 3 Linear with GELU",
        build_mlp,
        rtol=1e-3,
        atol=1e-4,
        compute_bound=True,
    ),
    Workload(
        "transformer_block",
        "GPT-style block: LN, causal attention, LN, MLP",
        build_block,
        rtol=1e-3,
        atol=1e-4,
        compute_bound=True,
    ),
    Workload(
        "resnet18",
        "torchvision resnet18, weights=None, eval",
        build_resnet18,
        requires=("torchvision",),
        rtol=1e-3,
        atol=1e-3,
        compute_bound=True,
        time_budget_s=8.0,
    ),
    Workload(
        "gpt2",
        "transformers GPT2LMHeadModel forward, random weights",
        build_gpt2,
        requires=("transformers",),
        rtol=1e-3,
        atol=1e-3,
        compute_bound=True,
    ),
    Workload(
        "gpt2_amp",
        "transformers GPT2LMHeadModel (124M) forward under bf16 autocast, random weights",
        build_gpt2_amp,
        requires=("transformers",),
        # bf16 logits: an ulp at 4 is 0.03, and fusion changes roundings over 12 layers.
        rtol=5e-2,
        atol=1e-1,
        compute_bound=True,
        in_quick=False,
        devices=("cuda",),
    ),
    Workload(
        "resnet50",
        "torchvision resnet50, weights=None, eval",
        build_resnet50,
        requires=("torchvision",),
        rtol=1e-3,
        atol=1e-3,
        compute_bound=True,
        time_budget_s=8.0,
        in_quick=False,
        devices=("cuda",),
    ),
    Workload(
        "llama",
        "transformers LlamaForCausalLM forward (the test zoo's config), random weights",
        build_llama,
        requires=("transformers",),
        rtol=1e-3,
        atol=1e-3,
        compute_bound=True,
    ),
    Workload(
        "llama_generate",
        "LlamaForCausalLM greedy generate(max_new_tokens=16), forward compiled",
        build_llama_generate,
        requires=("transformers",),
        rtol=0,
        atol=0,
    ),
    Workload(
        "dynamic_seq",
        "GPT2LMHeadModel forward over a spread of sequence lengths (dynamic shapes)",
        build_dynamic_seq,
        requires=("transformers",),
        rtol=1e-3,
        atol=1e-3,
        compute_bound=True,
        in_quick=False,
    ),
    Workload(
        "train_mlp",
        "MLP training step: forward, MSE, backward, SGD",
        build_train_mlp,
        train=True,
        rtol=1e-3,
        atol=1e-4,
        compute_bound=True,
    ),
    Workload(
        "train_resnet18",
        "torchvision resnet18 training step: forward (BatchNorm in training mode), cross "
        "entropy, backward, SGD",
        build_train_resnet18,
        train=True,
        requires=("torchvision",),
        rtol=1e-3,
        atol=1e-3,
        compute_bound=True,
        time_budget_s=10.0,
        in_quick=False,
    ),
    Workload(
        "train_gpt2",
        "transformers GPT2LMHeadModel training step: forward with labels, backward, AdamW",
        build_train_gpt2,
        train=True,
        requires=("transformers",),
        # AdamW's first step moves a weight by about lr whatever its gradient's size: a
        # gradient that is rounding noise around 0 (the key bias) moves by +-lr.
        rtol=1e-3,
        atol=1e-3,
        compute_bound=True,
        in_quick=False,
    ),
]


def by_name(name: str) -> Workload:
    for w in WORKLOADS:
        if w.name == name:
            return w
    raise KeyError(name)


def tensors_of(out: Any) -> list[torch.Tensor]:
    """The tensors of a result (a tensor, a tuple/list/dict of them, a transformers ModelOutput)."""
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, dict):
        return [t for v in out.values() for t in tensors_of(v)]
    if isinstance(out, (tuple, list)):
        return [t for v in out for t in tensors_of(v)]
    return []
