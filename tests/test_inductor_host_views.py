"""What the host keeps from one call of a compiled graph to the next (views of kept buffers
made once, planned buffers written again by every call) never reaches what a call returned:
a tensor handed out by call 1 keeps eager's value after call 2, and weights replaced or
written between calls are read as they are now."""

from __future__ import annotations

import pytest
import torch
import torchferro
from torch import nn

transformers = pytest.importorskip("transformers")

from zoo import decoder_config


def _llama(use_cache: bool):
    torch.manual_seed(0)
    cfg = decoder_config(transformers.LlamaConfig, num_key_value_heads=2)
    model = transformers.LlamaForCausalLM(cfg).eval()
    model.config.use_cache = use_cache
    return model


def _ids(seed: int, shape=(2, 16)):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, 128, shape, generator=g)


def _entries(fn) -> list[dict]:
    """The compiled entries of a decorated forward (transformers wraps it): the first function
    down its `__wrapped__` chain that has any."""
    f = getattr(fn, "__func__", fn)
    while f is not None:
        entries = torchferro._C.cache_entries(f.__code__)[1]
        if entries:
            return entries
        f = getattr(f, "__wrapped__", None)
    return []


def _tensors(out) -> list[torch.Tensor]:
    """The logits, then every key and value tensor of the cache when there is one."""
    ts = [out["logits"]]
    # transformers 5.24 (here) names it `cache`, 5.17 (the GPU machine) `past_key_values`.
    cache = out.get("cache", out.get("past_key_values"))
    if cache is not None:
        for layer in cache.layers:
            ts += [layer.keys, layer.values]
    return ts


@pytest.mark.parametrize("use_cache", [False, True], ids=["logits", "logits_and_cache"])
def test_llama_outputs_of_call_one_keep_their_values_after_call_two(use_cache):
    torchferro.compiler.reset()
    model = _llama(use_cache)
    compiled = torchferro.compile(model)
    ids1, ids2 = _ids(1), _ids(2)
    with torch.no_grad():
        want1 = [t.clone() for t in _tensors(model(ids1))]
        want2 = [t.clone() for t in _tensors(model(ids2))]
        first = _tensors(compiled(ids1))
        second = _tensors(compiled(ids2))
        third = _tensors(compiled(ids1))
    assert len(first) == len(want1) == (5 if use_cache else 1)
    for got, want in zip(first, want1):
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
    for got, want in zip(second, want2):
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
    for got, want in zip(third, want1):
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
    # No two calls share an output's storage.
    for a, b, c in zip(first, second, third):
        ptrs = {a.untyped_storage().data_ptr(), b.untyped_storage().data_ptr()}
        assert len(ptrs | {c.untyped_storage().data_ptr()}) == 3
    (entry,) = _entries(type(model).forward)
    assert entry["runner"] == "inductor"
    # The prefill with a cache: `torch.tensor([])` (DynamicCache's empty start) and
    # grouped-query SDPA (`enable_gqa`) are lowered too.
    assert entry["fallbacks"] == 0, entry["fallback_reasons"]


class TwoLinear(nn.Module):
    """Two GEMMs whose operands are views (`x.view(-1, 32)`, `w.t()`) with a kept intermediate
    between them."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(32, 32, bias=False)
        self.b = nn.Linear(32, 32, bias=False)

    def forward(self, x):
        return self.b(torch.tanh(self.a(x)))


def test_weights_replaced_or_written_between_calls_are_read_anew():
    torchferro.compiler.reset()
    torch.manual_seed(0)
    m = TwoLinear().eval()
    compiled = torchferro.compile(m)
    x = torch.randn(4, 8, 32)
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), m(x))
        torch.testing.assert_close(compiled(x), m(x))
        # A new storage behind the same parameter.
        m.a.weight.data = torch.randn(32, 32)
        torch.testing.assert_close(compiled(x), m(x))
        # The same storage written in place.
        m.b.weight.mul_(-2.0)
        torch.testing.assert_close(compiled(x), m(x))
        # A storage swapped in with `set_`.
        m.b.weight.set_(torch.randn(32, 32))
        torch.testing.assert_close(compiled(x), m(x))
    (entry,) = torchferro.compiler.cache_entries(m.forward)
    assert entry["runner"] == "inductor"
    assert entry["extern_calls"] == 2
