"""Issue 17: grad-mode regions and in-place writes in graphs compiled forward and backward.

Grad-mode switches inside a training graph (``with torch.no_grad():``, ``@torch.no_grad()``
helpers such as transformers 5.x's rotary embeddings, ``enable_grad`` inside them) are part of
the joint graph: what runs with grad mode off carries no gradient, exactly as in eager. Inputs
that require grad and are written in place (``x.add_(1)`` on a non-leaf) are compiled: the new
value is a differentiable output copied in with autograd recording the write. An in-place write
under ``no_grad`` to a tensor that requires grad (which keeps eager's autograd history) runs
through torch's autograd with a logged reason. Every case is checked against eager (values,
gradients, ``requires_grad``) and, where the compiled path must run, ``_aot.counters``."""

from __future__ import annotations

import copy

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import torchferro
from aot_oracle import torch_compile_graphs
from torchferro import _aot


@pytest.fixture(autouse=True)
def _aot_default(monkeypatch):
    monkeypatch.delenv("TORCHFERRO_AOT", raising=False)
    torchferro.compiler.reset()
    _aot.reset()


class Rotary(nn.Module):
    """In the style of transformers 5.17's ``LlamaRotaryEmbedding``: a ``@torch.no_grad()``
    forward that forces float32 with ``torch.autocast(enabled=False)``."""

    def __init__(self, dim):
        super().__init__()
        inv_freq = 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    @torch.no_grad()
    def forward(self, x, position_ids):
        inv = self.inv_freq[None, :, None].float().expand(position_ids.shape[0], -1, 1)
        pos = position_ids[:, None, :].float()
        with torch.autocast(device_type="cpu", enabled=False):
            freqs = (inv.float() @ pos.float()).transpose(1, 2)
            emb = torch.cat((freqs, freqs), dim=-1)
            cos = emb.cos()
            sin = emb.sin()
        return cos.to(dtype=x.dtype), sin.to(dtype=x.dtype)


def _rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


class RMSNorm(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, h):
        v = h.pow(2).mean(-1, keepdim=True)
        return self.weight * (h * torch.rsqrt(v + 1e-6))


class Layer(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads, self.hd = heads, d // heads
        self.norm1, self.norm2 = RMSNorm(d), RMSNorm(d)
        self.q = nn.Linear(d, d, bias=False)
        self.k = nn.Linear(d, d, bias=False)
        self.v = nn.Linear(d, d, bias=False)
        self.o = nn.Linear(d, d, bias=False)
        self.up = nn.Linear(d, 2 * d, bias=False)
        self.down = nn.Linear(2 * d, d, bias=False)

    def forward(self, h, cos, sin):
        b, s, _ = h.shape
        x = self.norm1(h)
        q, k, v = (
            p(x).view(b, s, self.heads, self.hd).transpose(1, 2)
            for p in (self.q, self.k, self.v)
        )
        cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
        q = q * cos + _rotate_half(q) * sin
        k = k * cos + _rotate_half(k) * sin
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        h = h + self.o(a.transpose(1, 2).reshape(b, s, -1))
        return h + self.down(F.silu(self.up(self.norm2(h))))


class TinyLlama(nn.Module):
    def __init__(self, vocab=50, d=32, heads=4, layers=2):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.rotary = Rotary(d // heads)
        self.layers = nn.ModuleList(Layer(d, heads) for _ in range(layers))
        self.norm = RMSNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, ids):
        h = self.emb(ids)
        pos = torch.arange(ids.shape[1]).unsqueeze(0).expand(ids.shape[0], -1)
        cos, sin = self.rotary(h, pos)
        for layer in self.layers:
            h = layer(h, cos, sin)
        logits = self.head(self.norm(h))
        return F.cross_entropy(
            logits[:, :-1].reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1)
        )


def test_no_grad_helper_in_a_llama_style_model_trains_compiled():
    """The failing shape of transformers 5.17's Llama (``@torch.no_grad()`` rotary helper with
    an autocast-off block): 4 AdamW steps equal eager's, one compiled graph (torch.compile's
    count), no fallback."""
    torch.manual_seed(0)
    base = TinyLlama()
    models = [copy.deepcopy(base) for _ in range(2)]
    fns = [
        lambda ids, m=models[0]: m(ids),
        torchferro.compile(lambda ids, m=models[1]: m(ids)),
    ]
    opts = [torch.optim.AdamW(m.parameters(), lr=1e-2) for m in models]
    for step in range(4):
        ids = torch.randint(
            0, 50, (2, 8), generator=torch.Generator().manual_seed(step)
        )
        losses = []
        for fn, opt in zip(fns, opts):
            loss = fn(ids)
            loss.backward()
            opt.step()
            opt.zero_grad()
            losses.append(loss.detach())
        torch.testing.assert_close(losses[1], losses[0], rtol=1e-5, atol=1e-6)
        for (k, pe), pc in zip(models[0].named_parameters(), models[1].parameters()):
            torch.testing.assert_close(pc, pe, rtol=1e-4, atol=1e-5, msg=k)
    oracle = torch_compile_graphs(lambda ids: copy.deepcopy(base)(ids), ids)
    assert _aot.counters["fallback"] == 0, _aot.fallback_reasons
    assert _aot.counters["compiled"] == oracle == 1
    assert _aot.counters["backward"] == 4


def _grads(fn, *inputs, mask=None):
    """Outputs and input gradients of ``fn`` (float inputs require grad unless ``mask`` says)."""
    mask = mask or [t.is_floating_point() for t in inputs]
    leaves = [t.detach().clone().requires_grad_(m) for t, m in zip(inputs, mask)]
    out = fn(*leaves)
    outs = out if isinstance(out, tuple) else (out,)
    diff = [o for o in outs if o.requires_grad]
    cot = [torch.ones_like(o) * (i + 1) for i, o in enumerate(diff)]
    grads = torch.autograd.grad(
        diff, [t for t, m in zip(leaves, mask) if m], cot, allow_unused=True
    )
    return outs, grads


def _same_as_eager(fn, *inputs, compiled=True):
    outs_e, grads_e = _grads(fn, *inputs)
    _aot.reset()
    outs_c, grads_c = _grads(torchferro.compile(fn), *inputs)
    assert [o.requires_grad for o in outs_c] == [o.requires_grad for o in outs_e]
    for a, b in zip(outs_e, outs_c):
        torch.testing.assert_close(b, a)
    for a, b in zip(grads_e, grads_c):
        if a is None:
            assert b is None
        else:
            torch.testing.assert_close(b, a)
    if compiled:
        assert _aot.counters["fallback"] == 0, _aot.fallback_reasons
        assert _aot.counters["backward"] == 1


def test_no_grad_block_values_are_constants_of_the_backward():
    def fn(x, w):
        with torch.no_grad():
            s = (x * w).sum()
            n = x.norm()
        return x * w * s + n, s

    _same_as_eager(fn, torch.randn(5), torch.randn(5))


def test_enable_grad_inside_no_grad():
    def fn(x, w):
        with torch.no_grad():
            c = x.exp()
            with torch.enable_grad():
                y = (x * w).tanh()
            d = y * 2
        return y * c + d

    _same_as_eager(fn, torch.randn(4), torch.randn(4))


def test_graph_ending_inside_no_grad_leaves_grad_mode_off():
    """A graph break inside ``no_grad``: the first graph ends with grad mode off, as the
    eager runner would leave it for the code after the break."""

    def fn(x, w):
        y = x * w
        with torch.no_grad():
            z = y * 2
            print("", end="")
            z = z + 1
        return y.sum() + z.sum(), torch.is_grad_enabled()

    x, w = torch.randn(3), torch.randn(3, requires_grad=True)
    out_e, mode_e = fn(x, w)
    out_c, mode_c = torchferro.compile(fn)(x, w)
    assert (
        (mode_c, out_c.requires_grad) == (mode_e, out_e.requires_grad) == (True, True)
    )
    assert torch.is_grad_enabled()
    torch.testing.assert_close(out_c, out_e)
    (ge,) = torch.autograd.grad(out_e, w)
    (gc,) = torch.autograd.grad(out_c, w)
    torch.testing.assert_close(gc, ge)
    assert _aot.counters["fallback"] == 0, _aot.fallback_reasons


@pytest.mark.parametrize("through_view", [False, True])
def test_no_grad_write_to_a_tensor_that_requires_grad_is_compiled(through_view):
    """Eager keeps the autograd history of a tensor written under ``no_grad``: the joint graph
    keeps it too (``fx/src/autodiff/writes.rs``; more in ``test_aot_no_grad_writes.py``)."""

    def fn(x, w):
        h = x * w
        with torch.no_grad():
            if through_view:
                h[1:].mul_(3)
            else:
                h.clamp_(-0.5, 0.5)
        return (h * w).sum()

    _same_as_eager(fn, torch.randn(6), torch.randn(6))
    assert _aot.counters["compiled"] == 1


def test_input_that_requires_grad_written_in_place_is_compiled():
    """``x.add_(1)`` on a non-leaf input that requires grad: values, the input's new value and
    its gradient path are eager's, on the compiled path."""

    def fn(x, w):
        a = (x + w).sum()
        x.add_(w)
        x.mul_(2)
        return a * x

    def run(f):
        w = torch.linspace(-1, 1, 5).requires_grad_()
        base = torch.linspace(0.5, 2, 5).requires_grad_()
        x = base * 1.0
        v0 = x._version
        out = f(x, w)
        (out.sum() + x.sum()).backward()
        return out, x.detach(), x._version - v0, x.requires_grad, w.grad, base.grad

    e = run(fn)
    c = run(torchferro.compile(fn))
    assert c[2] == e[2] == 2 and c[3] and e[3]
    for a, b in zip(e[:2] + e[4:], c[:2] + c[4:]):
        torch.testing.assert_close(b, a)
    assert _aot.counters["fallback"] == 0, _aot.fallback_reasons
    assert _aot.counters["backward"] == 1


def test_input_written_with_a_value_that_requires_grad_is_compiled():
    def fn(buf, x, w):
        buf.copy_(x * w)
        return (buf * 2).sum()

    def run(f):
        x, w = torch.randn(4), torch.randn(4, requires_grad=True)
        buf = torch.zeros(4)
        out = f(buf, x, w)
        (out + buf.sum()).backward()
        return out, buf.detach(), buf.requires_grad, w.grad

    torch.manual_seed(0)
    e = run(fn)
    torch.manual_seed(0)
    c = run(torchferro.compile(fn))
    assert c[2] and e[2]
    for a, b in zip(e[:2] + e[3:], c[:2] + c[3:]):
        torch.testing.assert_close(b, a)
    assert _aot.counters["fallback"] == 0, _aot.fallback_reasons


def test_leaf_that_requires_grad_written_in_place_raises_eagers_error():
    def fn(x):
        x.add_(1)
        return x * 2

    with pytest.raises(RuntimeError) as e:
        fn(torch.ones(3, requires_grad=True))
    with pytest.raises(RuntimeError) as c:
        torchferro.compile(fn)(torch.ones(3, requires_grad=True))
    assert str(c.value) == str(e.value)
