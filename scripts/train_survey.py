"""Which ops users' training code hits that have no derivative rule (session 25, rules25).

Runs compiled training steps (CPU, small configs, 2 steps) of the models and losses users train
with and prints, per case, the graphs compiled, the fallbacks and their reasons
(``torchferro._aot.fallback_reasons``), and the largest difference from eager's losses.

    PYTHONPATH=python:tests python scripts/train_survey.py [name-substring ...]
"""

from __future__ import annotations

import copy
import sys
import time

import torch
import torch.nn.functional as F
import torchferro
from torch import nn
from torchferro import _aot

STEPS = 2


def _vision(name, **kw):
    import torchvision

    def make():
        return getattr(torchvision.models, name)(weights=None, num_classes=10, **kw)

    return make


def _vit():
    import torchvision

    return torchvision.models.VisionTransformer(
        image_size=32,
        patch_size=8,
        num_layers=2,
        num_heads=4,
        hidden_dim=64,
        mlp_dim=128,
        num_classes=10,
    )


def _swin():
    import torchvision
    from torchvision.models.swin_transformer import SwinTransformer

    del torchvision
    return SwinTransformer(
        patch_size=[4, 4],
        embed_dim=32,
        depths=[2, 2],
        num_heads=[2, 4],
        window_size=[4, 4],
        num_classes=10,
    )


def _transformer(kind):
    """torch.nn's transformer layers (session 26): a 2-layer ``TransformerEncoder`` with a key
    padding mask, or a ``TransformerDecoderLayer`` with a causal mask, then a linear head."""

    def make():
        if kind == "encoder":
            layer = nn.TransformerEncoderLayer(16, 2, 32, batch_first=True)
            body = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        else:
            body = nn.TransformerDecoderLayer(16, 2, 32, batch_first=True)
        return nn.ModuleList([body, nn.Linear(16, 4)])

    def loss(model, x, mem, pad):
        if kind == "encoder":
            h = model[0](x, src_key_padding_mask=pad)
        else:
            causal = nn.Transformer.generate_square_subsequent_mask(x.shape[1])
            h = model[0](x, mem, tgt_mask=causal, memory_key_padding_mask=pad)
        return model[1](h).square().mean()

    def batch(step):
        g = torch.Generator().manual_seed(100 + step)
        pad = torch.rand(2, 6, generator=g) < 0.3
        pad[:, 0] = False
        return (
            torch.randn(2, 6, 16, generator=g),
            torch.randn(2, 6, 16, generator=g),
            pad,
        )

    return make, loss, batch


def _image(step, size=32):
    g = torch.Generator().manual_seed(100 + step)
    return torch.randn(2, 3, size, size, generator=g), torch.randint(
        0, 10, (2,), generator=g
    )


def vision_case(make, size=32):
    def loss(model, x, y):
        return F.cross_entropy(model(x), y)

    return make, loss, lambda s: _image(s, size)


def lm_case(make, seq2seq=False):
    def batch(step):
        g = torch.Generator().manual_seed(100 + step)
        return (torch.randint(0, 100, (2, 8), generator=g),)

    def loss(model, ids):
        if seq2seq:
            return model(input_ids=ids, labels=ids).loss
        return model(input_ids=ids, labels=ids).loss

    return make, loss, batch


def _tf(kind):
    import transformers
    import zoo

    if kind == "gpt2":
        return lambda: transformers.GPT2LMHeadModel(zoo.gpt2_config())
    if kind == "bert":
        return lambda: transformers.BertForMaskedLM(zoo.bert_config())
    if kind == "llama":
        return lambda: transformers.LlamaForCausalLM(
            zoo.decoder_config(transformers.LlamaConfig, vocab_size=100)
        )
    if kind == "t5":
        return lambda: transformers.T5ForConditionalGeneration(
            transformers.T5Config(
                vocab_size=100,
                d_model=64,
                d_kv=16,
                d_ff=128,
                num_layers=2,
                num_decoder_layers=2,
                num_heads=4,
                decoder_start_token_id=0,
            )
        )
    raise KeyError(kind)


class Head(nn.Module):
    """A small MLP whose output feeds the loss under survey."""

    def __init__(self, out=4):
        super().__init__()
        self.a = nn.Linear(6, 16)
        self.b = nn.Linear(16, out)

    def forward(self, x):
        return self.b(torch.tanh(self.a(x)))


def loss_case(fn, out=4, pair=False):
    """A loss of the head's output (two heads' outputs for the pairwise losses)."""

    def make():
        return nn.ModuleList([Head(out), Head(out)]) if pair else Head(out)

    def loss(model, x, t):
        if pair:
            return fn(model[0](x), model[1](x.flip(0)), t)
        return fn(model(x), t)

    def batch(step):
        g = torch.Generator().manual_seed(100 + step)
        x = torch.randn(8, 6, generator=g)
        return x, _targets[fn](g)

    return make, loss, batch


W = torch.tensor([1.0, 2.0, 0.5, 1.5])
PW = torch.tensor([0.5, 2.0, 1.0, 3.0])


def _ce_ls(o, t):
    return F.cross_entropy(o, t, label_smoothing=0.1)


def _ce_ii(o, t):
    return F.cross_entropy(o, t, ignore_index=2)


def _ce_w(o, t):
    return F.cross_entropy(o, t, weight=W)


def _ce_all(o, t):
    return F.cross_entropy(o, t, weight=W, label_smoothing=0.2, ignore_index=1)


def _nll(o, t):
    return F.nll_loss(F.log_softmax(o, -1), t)


def _bce(o, t):
    return F.binary_cross_entropy(torch.sigmoid(o), t)


def _bcel(o, t):
    return F.binary_cross_entropy_with_logits(o, t)


def _bcel_pw(o, t):
    return F.binary_cross_entropy_with_logits(o, t, pos_weight=PW)


def _kl(o, t):
    return F.kl_div(F.log_softmax(o, -1), t, reduction="batchmean")


def _huber(o, t):
    return F.huber_loss(o, t, delta=0.5)


def _sl1(o, t):
    return F.smooth_l1_loss(o, t, beta=0.5)


def _cos(a, b, t):
    return F.cosine_embedding_loss(a, b, t, margin=0.1)


def _margin(a, b, t):
    return F.margin_ranking_loss(a.sum(-1), b.sum(-1), t, margin=0.2)


def _triplet(a, b, t):
    return F.triplet_margin_loss(a, b, t)


def _clip(o, t):
    return F.mse_loss(o, t)


def _cls(g):
    return torch.randint(0, 4, (8,), generator=g)


def _real(g):
    return torch.randn(8, 4, generator=g)


def _prob(g):
    return torch.rand(8, 4, generator=g)


def _sign(g):
    return torch.randint(0, 2, (8,), generator=g).float() * 2 - 1


def _dist(g):
    return torch.softmax(torch.randn(8, 4, generator=g), -1)


_targets = {
    F.cross_entropy: _cls,
    _ce_ls: _cls,
    _ce_ii: _cls,
    _ce_w: _cls,
    _ce_all: _cls,
    _nll: _cls,
    F.mse_loss: _real,
    F.l1_loss: _real,
    F.smooth_l1_loss: _real,
    _sl1: _real,
    F.huber_loss: _real,
    _huber: _real,
    _bce: _prob,
    _bcel: _prob,
    _bcel_pw: _prob,
    _kl: _dist,
    _cos: _sign,
    _margin: _sign,
    _triplet: lambda g: torch.randn(8, 4, generator=g),
}

CASES = {
    "resnet18": lambda: vision_case(_vision("resnet18")),
    "mobilenet_v3_small": lambda: vision_case(_vision("mobilenet_v3_small")),
    "efficientnet_b0": lambda: vision_case(_vision("efficientnet_b0")),
    "convnext_tiny": lambda: vision_case(_vision("convnext_tiny")),
    "swin_t(small cfg)": lambda: vision_case(_swin),
    "vit(small cfg)": lambda: vision_case(_vit),
    "nn.TransformerEncoder": lambda: _transformer("encoder"),
    "nn.TransformerDecoderLayer": lambda: _transformer("decoder"),
    "gpt2": lambda: lm_case(_tf("gpt2")),
    "bert": lambda: lm_case(_tf("bert")),
    "llama": lambda: lm_case(_tf("llama")),
    "t5": lambda: lm_case(_tf("t5"), seq2seq=True),
    "cross_entropy": lambda: loss_case(F.cross_entropy),
    "cross_entropy(label_smoothing)": lambda: loss_case(_ce_ls),
    "cross_entropy(ignore_index)": lambda: loss_case(_ce_ii),
    "cross_entropy(weight)": lambda: loss_case(_ce_w),
    "cross_entropy(weight,ls,ii)": lambda: loss_case(_ce_all),
    "nll_loss": lambda: loss_case(_nll),
    "mse_loss": lambda: loss_case(F.mse_loss),
    "l1_loss": lambda: loss_case(F.l1_loss),
    "smooth_l1_loss": lambda: loss_case(F.smooth_l1_loss),
    "smooth_l1_loss(beta)": lambda: loss_case(_sl1),
    "huber_loss": lambda: loss_case(F.huber_loss),
    "huber_loss(delta)": lambda: loss_case(_huber),
    "binary_cross_entropy": lambda: loss_case(_bce),
    "bce_with_logits": lambda: loss_case(_bcel),
    "bce_with_logits(pos_weight)": lambda: loss_case(_bcel_pw),
    "kl_div": lambda: loss_case(_kl),
    "cosine_embedding_loss": lambda: loss_case(_cos, pair=True),
    "margin_ranking_loss": lambda: loss_case(_margin, pair=True),
    "triplet_margin_loss": lambda: loss_case(_triplet, pair=True),
}


def _train(model, loss_fn, batch, opt_kind, compile_fn, clip=False):
    model.train()
    params = list(model.parameters())
    opt = (
        torch.optim.SGD(params, lr=0.01, momentum=0.9)
        if opt_kind == "sgd"
        else torch.optim.AdamW(params, lr=1e-3)
    )
    step_fn = compile_fn(lambda *b: loss_fn(model, *b))
    losses = []
    for step in range(STEPS):
        torch.manual_seed(step)
        loss = step_fn(*batch(step))
        loss.backward()
        if clip:
            torch.nn.utils.clip_grad_norm_(params, 0.5)
        opt.step()
        opt.zero_grad(set_to_none=True)
        losses.append(loss.detach())
    return losses


def run(name, opt_kind, clip=False):
    make, loss_fn, batch = CASES[name]()
    torch.manual_seed(0)
    base = make()
    torchferro.compiler.reset()
    _aot.reset()
    t = time.time()
    le = _train(copy.deepcopy(base), loss_fn, batch, opt_kind, lambda f: f, clip)
    try:
        lc = _train(
            copy.deepcopy(base), loss_fn, batch, opt_kind, torchferro.compile, clip
        )
        diff = max(float((a - b).abs()) for a, b in zip(lc, le))
        err = ""
    except Exception as e:  # noqa: BLE001 - the survey reports every failure
        diff, err = float("nan"), f"{type(e).__name__}: {str(e)[:200]}"
    reasons = sorted(set(_aot.fallback_reasons))
    print(
        f"{name:32s} {opt_kind:5s}{' clip' if clip else ''}"
        f" graphs={_aot.counters['compiled']} fallback={_aot.counters['fallback']}"
        f" dloss={diff:.2e} {time.time() - t:.1f}s {err}"
    )
    for r in reasons:
        print(f"    reason: {r[:300]}")
    sys.stdout.flush()


if __name__ == "__main__":
    want = sys.argv[1:]
    for name in CASES:
        if want and not any(w in name for w in want):
            continue
        for opt_kind in ("sgd", "adamw"):
            run(name, opt_kind, clip=(opt_kind == "adamw"))
