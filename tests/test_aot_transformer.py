"""Session 26 (vit26): attention layers trained through the compiled backward.

``nn.MultiheadAttention`` calls ``F.multi_head_attention_forward``, which the tracer used to
record as one opaque call with no derivative rule: every graph holding it (torchvision's ViT,
``nn.TransformerEncoder``/``DecoderLayer``) fell back to torch's autograd. The tracer now inlines
it (``tracer/src/interp/calls/nn_functional.rs``), so the joint graph sees ``linear``, views,
``baddbmm``/``bmm``, ``softmax``, ``dropout`` and ``scaled_dot_product_attention``.

Each case: 5 optimizer steps (SGD with momentum, AdamW) of the module and a loss compiled with
torchferro (inductor) against eager: every loss and parameter within float32 tolerance, no
graph fell back (``_aot.counters``), and no more graphs than torch.compile makes of the same
call. Then the eval / ``no_grad`` forward of the same module (``nn.MultiheadAttention``'s and
``TransformerEncoderLayer``'s inference fast paths): values equal eager's, graphs <= torch.compile's.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
import torchferro
from aot_oracle import assert_trains_as_eager, torch_compile_graphs
from torch import nn
from torchferro import _aot

STEPS = 5
E, H, L, S, B = 16, 2, 5, 6, 3


def _gen(step):
    return torch.Generator().manual_seed(100 + step)


def _bool_mask(g, b=B, s=S):
    """A key-padding mask with at least one kept key per row (an all-masked row is NaN in eager)."""
    m = torch.rand(b, s, generator=g) < 0.3
    m[:, 0] = False
    return m


class MHA(nn.Module):
    """A bare ``nn.MultiheadAttention`` and a head, with the mask kind and ``need_weights`` of the
    case."""

    def __init__(self, mask, need_weights, batch_first, kdim=None, dropout=0.0):
        super().__init__()
        self.mask, self.need_weights, self.batch_first = mask, need_weights, batch_first
        self.cross = kdim is not None
        self.attn = nn.MultiheadAttention(
            E, H, dropout=dropout, batch_first=batch_first, kdim=kdim, vdim=kdim
        )
        self.head = nn.Linear(E, 3)

    def forward(self, x, mem, kpm, am):
        kv = mem if self.cross else x
        kw = {}
        if self.mask in ("kpm_bool", "kpm_float", "both"):
            kw["key_padding_mask"] = kpm
        if self.mask in ("attn_bool", "attn_float", "causal", "both"):
            kw["attn_mask"] = am
        if self.mask == "causal":
            kw["is_causal"] = True
        out, w = self.attn(x, kv, kv, need_weights=self.need_weights, **kw)
        loss = self.head(out).square().mean()
        if w is not None:
            loss = loss + w.square().sum()
        return loss


def _mha_batch(mask, batch_first, cross):
    def batch(step):
        g = _gen(step)
        x = torch.randn(B, L, E, generator=g)
        mem = torch.randn(B, S if cross else L, 8 if cross else E, generator=g)
        if not batch_first:
            x, mem = x.transpose(0, 1), mem.transpose(0, 1)
        s = S if cross else L
        kpm = _bool_mask(g, B, s)
        if mask == "kpm_float":
            kpm = torch.zeros(B, s).masked_fill(kpm, -1e4)
        am = torch.rand(L, s, generator=g) < 0.3
        am[:, 0] = False
        if mask == "attn_float":
            am = torch.randn(L, s, generator=g)
        if mask == "causal":
            am = nn.Transformer.generate_square_subsequent_mask(L)
        if mask == "both":
            am = torch.zeros(L, s).masked_fill(am, float("-inf"))
        return x, mem, kpm, am

    return batch


def _mha_case(mask, need_weights, batch_first=True, cross=False):
    def make():
        return MHA(mask, need_weights, batch_first, kdim=8 if cross else None)

    def loss(model, *b):
        return model(*b)

    return make, loss, _mha_batch(mask, batch_first, cross)


def _encoder(batch_first, norm_first=False):
    def make():
        layer = nn.TransformerEncoderLayer(
            E,
            H,
            dim_feedforward=32,
            dropout=0.1,
            batch_first=batch_first,
            norm_first=norm_first,
        )
        return nn.ModuleList(
            [
                nn.TransformerEncoder(layer, 2, enable_nested_tensor=False),
                nn.Linear(E, 3),
            ]
        )

    def loss(model, x, kpm):
        h = model[0](x, src_key_padding_mask=kpm)
        return model[1](h).square().mean()

    def batch(step):
        g = _gen(step)
        x = torch.randn(B, L, E, generator=g)
        if not batch_first:
            x = x.transpose(0, 1)
        return x, _bool_mask(g, B, L)

    return make, loss, batch


def _decoder():
    def make():
        return nn.ModuleList(
            [
                nn.TransformerDecoderLayer(E, H, 32, dropout=0.1, batch_first=True),
                nn.Linear(E, 3),
            ]
        )

    def loss(model, tgt, mem, kpm):
        mask = nn.Transformer.generate_square_subsequent_mask(tgt.shape[1])
        h = model[0](
            tgt, mem, tgt_mask=mask, tgt_is_causal=True, memory_key_padding_mask=kpm
        )
        return model[1](h).square().mean()

    def batch(step):
        g = _gen(step)
        return (
            torch.randn(B, L, E, generator=g),
            torch.randn(B, S, E, generator=g),
            _bool_mask(g, B, S),
        )

    return make, loss, batch


def _vit():
    torchvision = pytest.importorskip("torchvision")

    def make():
        return torchvision.models.VisionTransformer(
            image_size=32,
            patch_size=8,
            num_layers=2,
            num_heads=2,
            hidden_dim=64,
            mlp_dim=128,
            num_classes=10,
            dropout=0.1,
            attention_dropout=0.1,
        )

    def loss(model, x, y):
        return F.cross_entropy(model(x), y)

    def batch(step):
        g = _gen(step)
        return torch.randn(2, 3, 32, 32, generator=g), torch.randint(
            0, 10, (2,), generator=g
        )

    return make, loss, batch


MASKS = ["none", "kpm_bool", "kpm_float", "attn_bool", "attn_float", "causal", "both"]

MODELS = {
    **{
        f"mha_{m}_w{int(w)}": (lambda m=m, w=w: _mha_case(m, w))
        for m in MASKS
        for w in (True, False)
    },
    "mha_seq_first_kpm": lambda: _mha_case("kpm_bool", True, batch_first=False),
    "mha_cross_kdim": lambda: _mha_case("kpm_bool", False, cross=True),
    "encoder_batch_first": lambda: _encoder(True),
    "encoder_seq_first": lambda: _encoder(False),
    "encoder_norm_first": lambda: _encoder(True, norm_first=True),
    "decoder_layer": _decoder,
    "vit": _vit,
}


def _optimizer(kind, params):
    if kind == "sgd":
        return torch.optim.SGD(params, lr=0.05, momentum=0.9)
    # The key projection's bias has a zero gradient in exact arithmetic (softmax over the keys
    # does not see a constant added to every key's logit): eager's and ours are float32
    # rounding noise (~1e-9), which AdamW's g / (sqrt(v) + eps) with the default eps = 1e-8
    # turns into steps of the size of lr, of either sign. eps = 1e-6 keeps the noise noise.
    return torch.optim.AdamW(params, lr=1e-2, eps=1e-6)


CASES = [(n, "sgd") for n in MODELS] + [
    (n, "adamw") for n in ("mha_both_w1", "mha_causal_w0", "encoder_batch_first", "vit")
]


@pytest.mark.parametrize("name,opt_kind", CASES)
def test_training_matches_eager(name, opt_kind):
    make, loss_fn, batch = MODELS[name]()
    torch.manual_seed(0)
    oracle = assert_trains_as_eager(
        make(), loss_fn, batch, lambda p: _optimizer(opt_kind, p), STEPS
    )
    graphs = _aot.counters["compiled"]
    assert 1 <= graphs <= oracle
    assert _aot.counters["backward"] == graphs * STEPS


# Eval-mode forwards: `nn.MultiheadAttention`'s and `nn.TransformerEncoderLayer`'s inference
# fast paths (`torch._native_multi_head_attention`, `torch._transformer_encoder_layer_fwd`) are
# taken under `no_grad` (batch_first, self-attention, even heads); with grad enabled the layers
# run the inlined Python. torch.compile's Dynamo keeps `multi_head_attention_forward` whole
# (its fast-path check fails under Dynamo) and records `_transformer_encoder_layer_fwd`; both
# make one graph of each call here.


def _eval_cases():
    torch.manual_seed(0)
    x = torch.randn(B, L, E)
    g = _gen(0)
    kpm = _bool_mask(g, B, L)
    mem = torch.randn(B, S, E, generator=g)
    mha = nn.MultiheadAttention(E, H, batch_first=True)
    mha_sf = nn.MultiheadAttention(E, H)
    enc_layer = nn.TransformerEncoderLayer(E, H, 32, batch_first=True)
    enc = nn.TransformerEncoder(
        nn.TransformerEncoderLayer(E, H, 32, batch_first=True), 2
    )
    enc_sf = nn.TransformerEncoder(
        nn.TransformerEncoderLayer(E, H, 32), 2, enable_nested_tensor=False
    )
    dec = nn.TransformerDecoderLayer(E, H, 32, batch_first=True)
    causal = nn.Transformer.generate_square_subsequent_mask(L)
    cases = {
        "mha_weights": (mha, lambda x: mha(x, x, x), (x,)),
        "mha_kpm": (
            mha,
            lambda x, k: mha(x, x, x, need_weights=False, key_padding_mask=k)[0],
            (x, kpm),
        ),
        "mha_seq_first": (
            mha_sf,
            lambda x, k: mha_sf(x, x, x, key_padding_mask=k)[0],
            (x.transpose(0, 1), kpm),
        ),
        "encoder_layer": (enc_layer, lambda x: enc_layer(x), (x,)),
        "encoder_layer_kpm": (
            enc_layer,
            lambda x, k: enc_layer(x, src_key_padding_mask=k),
            (x, kpm),
        ),
        "encoder_kpm": (enc, lambda x, k: enc(x, src_key_padding_mask=k), (x, kpm)),
        "encoder_seq_first": (
            enc_sf,
            lambda x, k: enc_sf(x, src_key_padding_mask=k),
            (x.transpose(0, 1), kpm),
        ),
        "decoder_layer": (
            dec,
            lambda t, m: dec(t, m, tgt_mask=causal, tgt_is_causal=True),
            (x, mem),
        ),
    }
    make, _, batch = _vit()
    vit = make()
    nn.init.normal_(vit.heads.head.weight)
    cases["vit"] = (vit, lambda im: vit(im), (batch(0)[0],))
    return cases


EVAL_CASES = [(n, m) for n in _eval_cases() for m in ("no_grad", "grad")]


@pytest.mark.parametrize("name,mode", EVAL_CASES)
def test_eval_forward_matches_eager(name, mode):
    module, fn, args = _eval_cases()[name]
    module.eval()
    ctx = torch.no_grad if mode == "no_grad" else torch.enable_grad
    with ctx():
        expected = fn(*args)
        oracle = torch_compile_graphs(fn, *args)
        torchferro.compiler.reset()
        explained = torchferro.explain(fn)(*args)
        torchferro.compiler.reset()
        compiled = torchferro.compile(fn)
        for _ in range(2):
            got = compiled(*args)
            torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-5)
    assert explained.graph_break_count == 0, explained.break_reasons
    assert explained.graph_count == 1 <= oracle
