"""Greedy ``model.generate(max_new_tokens=16)`` with ``model.forward`` compiled, as
torch.compile users write it, for the decoders of ``tests/test_models.py`` (models, inputs and
the counting backend come from there): the tokens must equal eager's, and torchferro makes no
more graphs than torch.compile on the same ``generate``."""

from __future__ import annotations

import logging
import warnings
from dataclasses import dataclass

import pytest
import torch
import torchferro
from test_models import _BREAK, DECODERS, CountingBackend, _Records, build, inputs

# ---------------------------------------------------------------------------------------------
# `model.generate(max_new_tokens=16)` (greedy) with `model.forward` compiled, as torch.compile
# users write it. Every decoding step grows the sequence and the cache by one: torch.compile
# and torchferro mark the sizes dynamic after a recompile (3 graphs). The tokens must equal
# eager's.

GENERATE = ("gpt2_lm_head",) + DECODERS
MAX_NEW_TOKENS = 16


@dataclass(frozen=True)
class Generated:
    equal: bool
    graphs: int
    recompiles: int
    limit_hits: int
    breaks: int


# torchferro's counts today (counting backend), with automatic dynamic shapes (the default):
# the prefill, the first decoding step (its new lengths become dynamic) and the second (the
# cache length too): 3 graphs, 2 recompiles, as torch.compile. Mistral's cache keeps an int
# `cumulative_length` that changes every step: automatic dynamic makes it a symbolic int graph
# input at the first recompile (torch's `specialize_int=False`), so Mistral makes 3 as well.
GENERATE_OBSERVED = {
    name: Generated(equal=True, graphs=3, recompiles=2, limit_hits=0, breaks=0)
    for name in GENERATE
}


def _generate(model, ids):
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return model.generate(ids, max_new_tokens=MAX_NEW_TOKENS, do_sample=False)


def _generation_model(name):
    model = build(name)
    model.generation_config.pad_token_id = 0
    return model


_GENERATED: dict[str, Generated] = {}


def generated(name: str) -> Generated:
    """torchferro's greedy `generate` of `name` against eager's, made once per test session."""
    if name not in _GENERATED:
        model = _generation_model(name)
        ids = inputs(name, 0)[0]
        want = _generate(model, ids)
        torchferro.compiler.reset()
        counting = CountingBackend()
        model.forward = torchferro.compile(model.forward, backend=counting)
        handler = _Records()
        logger = logging.getLogger("torchferro")
        old_level, old_propagate = logger.level, logger.propagate
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
        logger.propagate = False
        try:
            got = _generate(model, ids)
        finally:
            logger.removeHandler(handler)
            logger.setLevel(old_level)
            logger.propagate = old_propagate
            torchferro.compiler.reset()
        msgs = [r.getMessage() for r in handler.records]
        _GENERATED[name] = Generated(
            equal=torch.equal(want, got),
            graphs=len(counting.graphs),
            recompiles=sum(m.startswith("Recompiling function") for m in msgs),
            limit_hits=sum("hit the recompile limit" in m for m in msgs),
            breaks=sum(bool(_BREAK.match(m)) for m in msgs),
        )
    return _GENERATED[name]


def generated_by_torch_compile(name: str) -> int:
    """The graphs torch.compile (counting backend) makes for the same `generate`."""
    import torch._dynamo

    model = _generation_model(name)
    torch._dynamo.reset()
    counting = CountingBackend()
    model.forward = torch.compile(model.forward, backend=counting)
    try:
        _generate(model, inputs(name, 0)[0])
    finally:
        torch._dynamo.reset()
    return len(counting.graphs)


@pytest.mark.parametrize("name", GENERATE)
def test_generate_with_compiled_forward_gives_eager_tokens(name):
    assert generated(name).equal, generated(name)


@pytest.mark.parametrize("name", GENERATE)
def test_generate_current_behaviour(name):
    assert generated(name) == GENERATE_OBSERVED[name]


@pytest.mark.parametrize("name", GENERATE)
def test_generate_no_more_graphs_than_torch_compile(name):
    ours, theirs = generated(name).graphs, generated_by_torch_compile(name)
    assert ours <= theirs, f"torchferro {ours} graphs, torch.compile {theirs}"


@pytest.mark.parametrize("name", ["llama", "qwen2"])
def test_generate_under_dynamic_true_compiles_twice(name):
    """Issue 18's `generate(max_new_tokens=32)` in at most 2 compiles: with `dynamic=True` the
    prompt and cache lengths are symbolic from the prefill, so only the first decoding step
    (its input length 1 specializes, as torch's 0/1 rule) compiles again, for all 32 tokens.
    torch.compile makes the same 2; tokens equal eager's. (The zoo's GPT-2 has 32 positions:
    8 + 32 tokens overrun them in eager too.)"""
    import torch._dynamo

    counts = {}
    for who in ("torchferro", "torch.compile"):
        model = _generation_model(name)
        ids = inputs(name, 0)[0]
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = model.generate(ids, max_new_tokens=32, do_sample=False)
        counting = CountingBackend()
        reset = (
            torchferro.compiler.reset if who == "torchferro" else torch._dynamo.reset
        )
        compile_ = torchferro.compile if who == "torchferro" else torch.compile
        reset()
        model.forward = compile_(model.forward, backend=counting, dynamic=True)
        try:
            with torch.no_grad(), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                got = model.generate(ids, max_new_tokens=32, do_sample=False)
        finally:
            reset()
        assert torch.equal(got, want), who
        counts[who] = len(counting.graphs)
    assert counts == {"torchferro": 2, "torch.compile": 2}, counts


@pytest.mark.parametrize("name", ["llama", "qwen2"])
def test_generate_32_tokens_compile_counts(name):
    """Issue 18's `generate(max_new_tokens=32)` under the default `dynamic=None`: the prefill,
    the first decoding step (lengths become dynamic) and the second (the cache length too),
    then 30 steps on the third graph: 3 graphs for torchferro, exactly as torch.compile on the
    same `generate` (counted live), with eager's tokens."""
    import torch._dynamo

    counts = {}
    for who in ("torchferro", "torch.compile"):
        model = _generation_model(name)
        ids = inputs(name, 0)[0]
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = model.generate(ids, max_new_tokens=32, do_sample=False)
        counting = CountingBackend()
        reset = (
            torchferro.compiler.reset if who == "torchferro" else torch._dynamo.reset
        )
        compile_ = torchferro.compile if who == "torchferro" else torch.compile
        reset()
        model.forward = compile_(model.forward, backend=counting)
        try:
            with torch.no_grad(), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                got = model.generate(ids, max_new_tokens=32, do_sample=False)
        finally:
            reset()
        assert torch.equal(got, want), who
        counts[who] = len(counting.graphs)
    assert counts == {"torchferro": 3, "torch.compile": 3}, counts


def test_generate_on_the_inductor_matches_eager_per_step():
    """The bench's `llama_generate` on torchferro's default backend (the Rust inductor's
    kernels, symbolic lengths from the second decoding step): every step's logits equal
    eager's within float32 tolerance, the tokens are eager's, and 32 new tokens take 3 cache
    entries of the compiled forward (prefill, first step, the dynamic decode step), the
    counting backend's count above and torch.compile's."""
    model = _generation_model("llama")
    ids = inputs("llama", 0)[0]
    kw = {
        "max_new_tokens": 32,
        "do_sample": False,
        "output_logits": True,
        "return_dict_in_generate": True,
    }
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = model.generate(ids, **kw)
        torchferro.compiler.reset()
        model.forward = torchferro.compile(model.forward)
        try:
            got = model.generate(ids, **kw)
            # A second `generate` hits the same three entries: no compile, same tokens.
            again = model.generate(ids, **kw)
            entries = torchferro.compiler.cache_entries(model.forward)
        finally:
            torchferro.compiler.reset()
    assert torch.equal(got.sequences, want.sequences)
    assert torch.equal(again.sequences, want.sequences)
    assert len(got.logits) == len(want.logits) == 32
    for step, (g, w) in enumerate(zip(got.logits, want.logits)):
        torch.testing.assert_close(g, w, rtol=1e-4, atol=1e-5, msg=f"step {step}")
    assert len(entries) == 3, [e["compile_id"] for e in entries]
