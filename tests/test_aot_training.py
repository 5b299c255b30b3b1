"""Issue 17: training with the compiled backward. Compiled vs eager for 5 optimizer steps
(SGD and AdamW) on an MLP, a small transformer block (with dropout) and a small CNN: the loss
and every parameter equal within float32 tolerance at each step, graph counts equal to
torch.compile's, and ``_aot.counters`` showing which path ran. Also the runtime's contract:
grad-mode and requires_grad changes, outputs that need no grad, double backward refused."""

from __future__ import annotations

import copy

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import torchferro
from torchferro import _aot


@pytest.fixture(autouse=True)
def _aot_default(monkeypatch):
    """The inductor's training path is the default; ``TORCHFERRO_AOT=0`` turns it off."""
    monkeypatch.delenv("TORCHFERRO_AOT", raising=False)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 32)
        self.fc2 = nn.Linear(32, 32)
        self.fc3 = nn.Linear(32, 4)

    def forward(self, x, y):
        h = F.gelu(self.fc1(x))
        h = torch.tanh(self.fc2(h)) + h
        return F.cross_entropy(self.fc3(h), y)


class Block(nn.Module):
    """Embedding, pre-norm attention with dropout, a GELU MLP, cross entropy."""

    def __init__(self, vocab=16, d=16, drop=0.2):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.randn(6, d) * 0.02)
        self.ln1 = nn.LayerNorm(d)
        # No bias: the key bias's true gradient is 0 (softmax is shift-invariant), and AdamW
        # turns its rounding noise into full-size steps in eager and compiled alike.
        self.qkv = nn.Linear(d, 3 * d, bias=False)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.up = nn.Linear(d, 4 * d)
        self.down = nn.Linear(4 * d, d)
        self.head = nn.Linear(d, vocab)
        self.drop = nn.Dropout(drop)
        self.d = d

    def forward(self, idx, tgt):
        x = self.emb(idx) + self.pos
        q, k, v = self.qkv(self.ln1(x)).split(self.d, dim=-1)
        att = (q @ k.transpose(-2, -1)) * (self.d**-0.5)
        att = att.masked_fill(torch.ones(6, 6, dtype=torch.bool).triu(1), float("-inf"))
        att = self.drop(att.softmax(-1))
        x = x + self.proj(att @ v)
        x = x + self.drop(self.down(F.gelu(self.up(self.ln2(x)), approximate="tanh")))
        logits = self.head(x)
        return F.cross_entropy(logits.view(-1, logits.size(-1)), tgt.view(-1))


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)
        self.fc = nn.Linear(4 * 6 * 6, 5)

    def forward(self, x, y):
        h = F.relu(self.conv(x))
        return F.cross_entropy(self.fc(h.flatten(1)), y)


OPTS = {
    "sgd": lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9),
    "adamw": lambda ps: torch.optim.AdamW(ps, lr=0.01, weight_decay=0.1),
}


def _data(kind, step):
    g = torch.Generator().manual_seed(100 + step)
    if kind == "mlp":
        return torch.randn(16, 8, generator=g), torch.randint(0, 4, (16,), generator=g)
    if kind == "block":
        return (
            torch.randint(0, 16, (3, 6), generator=g),
            torch.randint(0, 16, (3, 6), generator=g),
        )
    return torch.randn(2, 3, 8, 8, generator=g), torch.randint(0, 5, (2,), generator=g)


MODELS = {"mlp": MLP, "block": Block, "cnn": CNN}


def _train(kind, opt_name, backend):
    torch.manual_seed(0)
    eager = MODELS[kind]()
    comp = copy.deepcopy(eager)
    opt_e = OPTS[opt_name](eager.parameters())
    opt_c = OPTS[opt_name](comp.parameters())
    torchferro.compiler.reset()
    _aot.reset()
    cmodel = torchferro.compile(comp, backend=backend)
    for step in range(5):
        x, y = _data(kind, step)
        for model, opt in ((eager, opt_e), (cmodel, opt_c)):
            opt.zero_grad()
            torch.manual_seed(1000 + step)  # the same dropout draws in both
            loss = model(x, y)
            loss.backward()
            opt.step()
            if model is eager:
                le = loss.detach()
            else:
                lc = loss.detach()
        torch.testing.assert_close(lc, le, rtol=1e-5, atol=1e-6)
        for (name, pe), pc in zip(eager.named_parameters(), comp.parameters()):
            torch.testing.assert_close(
                pc, pe, rtol=1e-5, atol=1e-6, msg=f"{name} at step {step}"
            )
    return dict(_aot.counters), list(_aot.fallback_reasons)


def _torch_graph_count(kind):
    from torch._dynamo.testing import CompileCounter

    torch._dynamo.reset()
    cnt = CompileCounter()
    torch.manual_seed(0)
    m = MODELS[kind]()
    c = torch.compile(m, backend=cnt)
    x, y = _data(kind, 0)
    c(x, y).backward()
    return cnt.frame_count


@pytest.mark.parametrize("backend", ["inductor", "aot_eager"])
@pytest.mark.parametrize("opt_name", sorted(OPTS))
@pytest.mark.parametrize("kind", ["mlp", "block"])
def test_training_matches_eager_compiled_path(kind, opt_name, backend):
    counters, reasons = _train(kind, opt_name, backend)
    assert reasons == []
    # One graph, as torch.compile captures; compiled forward and backward each step.
    assert counters["compiled"] == _torch_graph_count(kind) == 1
    assert counters["forward"] == 5 and counters["backward"] == 5
    assert counters["saved_bytes"] > 0


@pytest.mark.parametrize("opt_name", sorted(OPTS))
def test_cnn_training_compiled(opt_name):
    counters, reasons = _train("cnn", opt_name, "inductor")
    assert reasons == []
    assert counters["compiled"] == _torch_graph_count("cnn") == 1
    assert counters["forward"] == 5 and counters["backward"] == 5


def test_inference_under_no_grad_and_requires_grad_change():
    torch.manual_seed(0)
    m = MLP()
    x, y = _data("mlp", 0)
    torchferro.compiler.reset()
    _aot.reset()
    c = torchferro.compile(m)
    loss = c(x, y)
    assert loss.requires_grad and loss.grad_fn is not None
    with torch.no_grad():
        inf = c(x, y)
    assert not inf.requires_grad
    torch.testing.assert_close(inf, m(x, y))
    assert _aot.counters["compiled"] == 1  # the no-grad graph is an inference graph
    for p in m.parameters():
        p.requires_grad_(False)
    frozen = c(x, y)
    assert not frozen.requires_grad
    m.fc3.weight.requires_grad_(True)
    part = c(x, y)
    part.backward()
    assert m.fc3.weight.grad is not None and m.fc1.weight.grad is None
    ref = m.fc3.weight.grad.clone()
    m.fc3.weight.grad = None
    m(x, y).backward()
    torch.testing.assert_close(ref, m.fc3.weight.grad)
    assert _aot.counters["compiled"] == 2


def test_nondifferentiable_output_and_double_backward_refused():
    def fn(x, w):
        h = x @ w
        return h.tanh().sum(), h.argmax(1)

    x = torch.randn(4, 3)
    w = torch.randn(3, 5, requires_grad=True)
    torchferro.compiler.reset()
    _aot.reset()
    loss, idx = torchferro.compile(fn)(x, w)
    assert idx.dtype == torch.int64 and not idx.requires_grad
    assert torch.equal(idx, (x @ w).argmax(1))
    with pytest.raises(RuntimeError, match="double backward"):
        torch.autograd.grad(loss, w, create_graph=True)
    (g,) = torch.autograd.grad(loss, w)
    w2 = w.detach().clone().requires_grad_()
    (ge,) = torch.autograd.grad(fn(x, w2)[0], w2)
    torch.testing.assert_close(g, ge)
    assert _aot.counters["backward"] == 1


def test_two_forwards_one_backward():
    """Saved values of one call are not overwritten by the next (gradient accumulation)."""
    torch.manual_seed(0)
    m = MLP()
    ref = copy.deepcopy(m)
    x1, y1 = _data("mlp", 1)
    x2, y2 = _data("mlp", 2)
    torchferro.compiler.reset()
    c = torchferro.compile(m)
    (c(x1, y1) + 2 * c(x2, y2)).backward()
    (ref(x1, y1) + 2 * ref(x2, y2)).backward()
    for a, b in zip(m.parameters(), ref.parameters()):
        torch.testing.assert_close(a.grad, b.grad)


def test_grad_accumulates_and_retain_graph():
    torch.manual_seed(0)
    m = MLP()
    ref = copy.deepcopy(m)
    x, y = _data("mlp", 1)
    torchferro.compiler.reset()
    c = torchferro.compile(m)
    loss = c(x, y)
    loss.backward(retain_graph=True)
    loss.backward()
    le = ref(x, y)
    le.backward(retain_graph=True)
    le.backward()
    for a, b in zip(m.parameters(), ref.parameters()):
        torch.testing.assert_close(a.grad, b.grad)


def test_aot_log_reports_saved_bytes_and_backward_compile(caplog):
    import logging

    torchferro.compiler.reset()
    torch.manual_seed(0)
    m = MLP()
    x, y = _data("mlp", 0)
    with caplog.at_level(logging.INFO, logger="torchferro.aot"):
        torchferro.compile(m)(x, y).backward()
    text = caplog.text
    assert "bytes of activations saved for backward" in text
    assert "backward compiled in" in text


def test_partition_recomputes_cheap_pointwise():
    """``gelu(h)`` is recomputed in the backward from the saved ``h`` instead of being saved
    itself: only ``h`` (4 x 32 float32) is kept between forward and backward."""

    def fn(x, w1, w2):
        h = x @ w1
        return (F.gelu(h) @ w2).sum()

    x = torch.randn(4, 8)
    w1 = torch.randn(8, 32, requires_grad=True)
    w2 = torch.randn(32, 3, requires_grad=True)
    torchferro.compiler.reset()
    _aot.reset()
    torchferro.compile(fn)(x, w1, w2).backward()
    assert _aot.counters["saved_bytes"] == 4 * 32 * 4
    g1, g2 = w1.grad.clone(), w2.grad.clone()
    w1.grad = w2.grad = None
    fn(x, w1, w2).backward()
    torch.testing.assert_close(g1, w1.grad)
    torch.testing.assert_close(g2, w2.grad)


def test_partition_min_cut_recomputes_chains_from_one_saved_value():
    """Both activations are chains of cheap ops on one matmul result ``h``: the min-cut keeps
    ``h`` alone (4 x 32 float32) and recomputes both chains in the backward, where saving what
    the rules read (``tanh(2h)`` and ``sigmoid(h + 1)``) keeps twice the bytes."""

    def fn(x, w1, w2, w3):
        h = x @ w1
        y1 = torch.tanh(h * 2)
        y2 = torch.sigmoid(h + 1)
        return (y1 @ w2 + y2 @ w3).sum()

    x = torch.randn(4, 8)
    ws = [torch.randn(8, 32), torch.randn(32, 3), torch.randn(32, 3)]
    ws = [w.requires_grad_() for w in ws]
    torchferro.compiler.reset()
    _aot.reset()
    torchferro.compile(fn)(x, *ws).backward()
    assert _aot.counters["compiled"] == 1
    assert _aot.counters["saved_bytes"] == 4 * 32 * 4
    got = [w.grad.clone() for w in ws]
    for w in ws:
        w.grad = None
    fn(x, *ws).backward()
    for g, w in zip(got, ws):
        torch.testing.assert_close(g, w.grad)


def test_partition_saves_an_output_not_its_view():
    """GPT-2's pattern: the logits (a bias-free ``linear``) are a user output, and cross entropy
    reads them through ``.float()`` and ``.view(-1, V)``. The backward recomputes the views from
    the saved output, so the forward hands out one tensor, not the output plus a view of it
    (which the inductor separated with a copy of the whole logits on every call): the saved
    value shares the user output's storage, and the gradients are eager's."""
    B, T, D, V = 2, 4, 8, 16

    def fn(h, w, t):
        logits = F.linear(h, w)
        loss = F.cross_entropy(logits.float().view(-1, V), t)
        return loss, logits

    torch.manual_seed(0)
    h = torch.randn(B, T, D)
    w = torch.randn(V, D, requires_grad=True)
    t = torch.randint(0, V, (B * T,))
    torchferro.compiler.reset()
    _aot.reset()
    loss, logits = torchferro.compile(fn)(h, w, t)
    assert _aot.counters["compiled"] == 1 and _aot.counters["fallback"] == 0
    saved = loss.grad_fn.saved_tensors
    # Session 29: the output itself is saved too, read by nothing (its version is checked at
    # `.backward()`: a write to the logits before it raises instead of a gradient of the
    # written values), so the logits' storage may be held twice, never copied.
    big = [s for s in saved if s.numel() == B * T * V]
    assert big, [tuple(s.shape) for s in saved]
    storages = {s.untyped_storage().data_ptr() for s in big}
    assert storages == {logits.untyped_storage().data_ptr()}
    loss.backward()
    g = w.grad.clone()
    w.grad = None
    le, lge = fn(h, w, t)
    le.backward()
    torch.testing.assert_close(loss, le)
    torch.testing.assert_close(logits, lge)
    torch.testing.assert_close(g, w.grad)


def test_unused_output_gets_no_materialized_tangent(caplog):
    """An output nothing downstream uses (the logits beside the loss) gets no tangent: the
    backward is derived without it (no zeros the output's size filled and read per step), a
    second backward is compiled when a later call uses both outputs, and the gradients are
    eager's in both."""
    import logging

    def fn(h, w, b):
        logits = torch.tanh(h @ w + b)
        return (logits * logits).mean(), logits

    torch.manual_seed(0)
    h = torch.randn(6, 5)
    w = torch.randn(5, 7, requires_grad=True)
    b = torch.randn(7, requires_grad=True)
    torchferro.compiler.reset()
    _aot.reset()
    compiled = torchferro.compile(fn)

    def grads(f, use_logits):
        loss, logits = f(h, w, b)
        (loss + logits.sum() if use_logits else loss).backward()
        g = (w.grad.clone(), b.grad.clone())
        w.grad = b.grad = None
        return g

    with caplog.at_level(logging.INFO, logger="torchferro.aot"):
        for use_logits in (False, True, False):
            got, want = grads(compiled, use_logits), grads(fn, use_logits)
            for a, e in zip(got, want):
                torch.testing.assert_close(a, e)
    compiles = [
        r.getMessage() for r in caplog.records if "backward compiled" in r.getMessage()
    ]
    assert len(compiles) == 2, compiles
    assert "(1 absent tangents)" in compiles[0] and "(0 absent tangents)" in compiles[1]
    assert _aot.counters["compiled"] == 1 and _aot.counters["backward"] == 3


def test_conv_without_bias_backward_runs_on_the_inductor(caplog):
    """``convolution_backward`` of a convolution with no bias (resnet's) returns ``None`` for
    the bias gradient: the backward still compiles on the inductor (the call is a host
    fallback whose ``None`` item nothing reads), with eager's gradients."""
    import logging

    torch.manual_seed(0)
    conv = nn.Conv2d(3, 4, 3, padding=1, bias=False)
    ref = copy.deepcopy(conv)
    x = torch.randn(2, 3, 8, 8)
    torchferro.compiler.reset()
    with caplog.at_level(logging.INFO, logger="torchferro.aot"):
        torchferro.compile(lambda x: torch.relu(conv(x)).sum())(x).backward()
    assert "backward compiled in" in caplog.text
    assert "eager runner" not in caplog.text, caplog.text
    torch.relu(ref(x)).sum().backward()
    torch.testing.assert_close(conv.weight.grad, ref.weight.grad)


def test_switch_off_runs_training_graphs_through_torch_autograd(monkeypatch):
    """``TORCHFERRO_AOT=0`` (read at compile time): the graph runs on the eager runner with
    torch's autograd, same values and gradients, no compiled backward."""
    monkeypatch.setenv("TORCHFERRO_AOT", "0")
    torch.manual_seed(0)
    m = MLP()
    ref = copy.deepcopy(m)
    x, y = _data("mlp", 3)
    torchferro.compiler.reset()
    _aot.reset()
    loss = torchferro.compile(m)(x, y)
    loss.backward()
    assert _aot.counters["compiled"] == 0 and _aot.counters["backward"] == 0
    assert "CompiledGraph" not in type(loss.grad_fn).__name__
    le = ref(x, y)
    le.backward()
    torch.testing.assert_close(loss, le)
    for a, b in zip(m.parameters(), ref.parameters()):
        torch.testing.assert_close(a.grad, b.grad)
