"""Dynamic shapes (issue 18) on transformers models: GPT-2 and Llama forwards (small configs)
over sequence lengths 8..256 and batch sizes 1..8, with automatic dynamic (the default).

Each loop runs through torch.compile (a counting backend) and torchferro (a counting backend):
the graph counts must be torch.compile's (and are pinned), the logits eager's. A size an op
cannot express symbolically is guarded equal to its value (`size(1) == 8`), which shows here as
one more graph per length.
"""

from __future__ import annotations

import logging
import types
import warnings

import pytest
import torch
import torch._dynamo

import torchferro
import torchferro.compiler
from programs.counting import Count

transformers = pytest.importorskip("transformers")


@pytest.fixture(autouse=True)
def _automatic_dynamic():
    old = torchferro.config.automatic_dynamic_shapes
    torchferro.config.automatic_dynamic_shapes = True
    yield
    torchferro.config.automatic_dynamic_shapes = old


def _gpt2():
    return transformers.GPT2LMHeadModel(
        transformers.GPT2Config(
            n_layer=2, n_embd=64, n_head=4, vocab_size=100, n_positions=256
        )
    )


def _llama():
    return transformers.LlamaForCausalLM(
        transformers.LlamaConfig(
            num_hidden_layers=2,
            hidden_size=64,
            intermediate_size=128,
            num_attention_heads=4,
            num_key_value_heads=2,
            vocab_size=100,
            max_position_embeddings=256,
        )
    )


MODELS = {"gpt2": _gpt2, "llama": _llama}


def build(name):
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return MODELS[name]().eval()


# (batch, length): both change at the second call, so both become dynamic at the first
# recompile; every later call fits that graph.
LOOP = [(2, 8), (4, 9), (3, 16), (8, 33), (5, 64), (2, 128), (7, 256), (6, 200)]
# Batch 1 takes one more graph: transformers branches on `batch_size != position_ids.shape[0]`
# (position ids of batch 1), so the size-oblivious batch is guarded `!= 1` (torch.compile: 0/1
# specialization, the same count).
LOOP_WITH_ONE = LOOP + [(1, 17), (1, 100)]

# torchferro's counts (torch.compile's, checked live below).
GRAPHS = {("gpt2", "loop"): 2, ("llama", "loop"): 2}
GRAPHS |= {("gpt2", "with_one"): 3, ("llama", "with_one"): 3}
LOOPS = {"loop": LOOP, "with_one": LOOP_WITH_ONE}


def _ids(b, t):
    return torch.randint(
        0, 100, (b, t), generator=torch.Generator().manual_seed(b * 1000 + t)
    )


def run_loop(model, compiled, loop):
    with torch.no_grad():
        for b, t in loop:
            ids = _ids(b, t)
            want = model(ids, use_cache=False).logits
            got = compiled(ids, use_cache=False).logits
            torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)


_TORCH_COMPILE: dict[tuple[str, str], int] = {}


def torch_compile_graphs(name, loop):
    if (name, loop) not in _TORCH_COMPILE:
        model = build(name)
        torch._dynamo.reset()
        c = Count()
        try:
            run_loop(model, torch.compile(model, backend=c), LOOPS[loop])
        finally:
            torch._dynamo.reset()
        _TORCH_COMPILE[(name, loop)] = c.n
    return _TORCH_COMPILE[(name, loop)]


@pytest.mark.parametrize("loop", ["loop", "with_one"])
@pytest.mark.parametrize("name", ["gpt2", "llama"])
def test_forward_over_lengths_and_batches_compiles_as_torch_compile(name, loop):
    model = build(name)
    torchferro.compiler.reset()
    c = Count()
    try:
        run_loop(model, torchferro.compile(model, backend=c), LOOPS[loop])
    finally:
        torchferro.compiler.reset()
    assert c.n == GRAPHS[(name, loop)]
    assert c.n <= torch_compile_graphs(name, loop)


@pytest.mark.parametrize("name", ["gpt2", "llama"])
def test_dynamic_true_compiles_as_torch_compile(name):
    """`dynamic=True`: every input size symbolic from the first call (batch 1 then specializes
    once more). Module buffers stay static, as torch's `force_parameter_static_shapes`: Llama's
    rotary `inv_freq` given a symbol was pinned by its arithmetic, 4 graphs."""
    model = build(name)
    torchferro.compiler.reset()
    torch._dynamo.reset()
    ours, theirs = Count(), Count()
    try:
        run_loop(
            model, torchferro.compile(model, backend=ours, dynamic=True), LOOP_WITH_ONE
        )
        run_loop(
            model, torch.compile(model, backend=theirs, dynamic=True), LOOP_WITH_ONE
        )
    finally:
        torchferro.compiler.reset()
        torch._dynamo.reset()
    assert ours.n == theirs.n == 2


def test_gpt2_over_lengths_keeps_no_length_guard():
    """The mask path (arange, `torch.diff` of the position ids, cumsum, indexing) keeps the
    length symbolic: no `size(1) == N` guard, the length only bounded below (size-oblivious,
    session 27: by 1, with the attention's `is_causal = q_length > 1` guarding it above 1).
    The batch is symbolic too (the whole-tensor rule), guarded `!= 1` by transformers'
    `batch_size != position_ids.shape[0]` (batch 1 takes a graph of its own)."""
    model = build("gpt2")
    torchferro.compiler.reset()
    f = torchferro.compile(model, backend=Count())
    try:
        run_loop(model, f, LOOP[:2])
        # transformers wraps `forward`: the frame compiled is the wrapper's.
        wrapper = types.SimpleNamespace(__code__=type(model).forward.__code__)
        entries = torchferro.compiler.cache_entries(wrapper)
        guards = "\n".join(line for e in entries for line in e["guards"])
    finally:
        torchferro.compiler.reset()
    assert "SHAPE_ENV 1 <= L['args'][0].size(1)" in guards, guards
    assert "SHAPE_ENV L['args'][0].size(1) > 1" in guards, guards
    assert "SHAPE_ENV 1 <= L['args'][0].size(0)" in guards, guards
    assert "SHAPE_ENV L['args'][0].size(0) != 1" in guards, guards
    assert "size(1) ==" not in guards, guards


def test_gpt2_over_lengths_on_the_inductor_equals_eager():
    model = build("gpt2")
    torchferro.compiler.reset()
    try:
        run_loop(model, torchferro.compile(model), LOOP[:3])
    finally:
        torchferro.compiler.reset()


# --- torch.diff ------------------------------------------------------------------------------


def diffs(x, p):
    a = torch.diff(x, dim=-1)
    b = torch.diff(x, n=2, dim=1, prepend=p)
    c = x.diff(dim=0, append=x[:1])
    return a.sum(-1) + b.sum(-1), c, a.shape[1] + b.size(1)


def test_diff_keeps_sizes_symbolic():
    torch._dynamo.reset()
    torchferro.compiler.reset()
    tc, fc = Count(), Count()
    t = torch.compile(diffs, backend=tc)
    f = torchferro.compile(diffs, backend=fc)
    for n, m in [(3, 5), (4, 7), (6, 12), (9, 30)]:
        x, p = torch.randn(n, m), torch.randn(n, 2)
        want = diffs(x, p)
        for got in (t(x, p), f(x, p)):
            torch.testing.assert_close(got[:2], want[:2])
            assert got[2] == want[2]
    assert fc.n == tc.n == 2


def test_a_specialized_size_is_logged_with_its_op_and_line(caplog):
    """An op with no symbolic rule pins the sizes it reads; the `torchferro.dynamic` debug log
    names the size, the op and the user's line (what to give a rule)."""

    def padded(x):
        return torch.kron(x, x) * 2

    torchferro.compiler.reset()
    f = torchferro.compile(padded, backend=Count(), dynamic=True)
    with caplog.at_level(logging.DEBUG, logger="torchferro.dynamic"):
        f(torch.randn(3, 4))
    msgs = [r.getMessage() for r in caplog.records if r.name == "torchferro.dynamic"]
    line = padded.__code__.co_firstlineno + 1
    assert any(
        m.startswith("specialized L['x'].size(1) = 4: ")
        and "has no symbolic shape rule here" in m
        and m.endswith(f"test_dynamic_models.py:{line})")
        for m in msgs
    ), msgs
