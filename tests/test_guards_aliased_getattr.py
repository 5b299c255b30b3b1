"""Guards on a transformers config, whose `__getattribute__` maps names through `attribute_map`:
the guard tree reads its attributes and answers its `hasattr` checks natively (tracer
`aliased_getattr`), and those guards still fail exactly when Python's answer changes: the
attribute set on the instance, on the class, added to `attribute_map` (rebound or changed in
place), or answered by a `__getattr__` added later. Each case recompiles as often as
torch.compile does, with eager's values."""

import sys
from typing import ClassVar

import pytest
import torch
import torchferro

transformers = pytest.importorskip("transformers")


class Counter:
    def __init__(self):
        self.n = 0

    def __call__(self, gm, example_inputs):
        self.n += 1
        return gm.forward


@pytest.fixture(autouse=True)
def _reset():
    torchferro.compiler.reset()
    torch._dynamo.reset()
    yield
    torchferro.compiler.reset()
    torch._dynamo.reset()


def _config_class():
    """A fresh config class per test, with its own `attribute_map`: the tests change the class
    and the map (transformers' `PreTrainedConfig.attribute_map` is one dict shared by every
    config class that does not define its own)."""

    class Cfg(transformers.LlamaConfig):
        attribute_map: ClassVar[dict] = {}

    return Cfg


def _config(cls):
    return cls(
        vocab_size=16,
        hidden_size=8,
        intermediate_size=16,
        num_hidden_layers=2,
        num_attention_heads=2,
    )


def uses_default(cfg, x):
    causal = getattr(cfg, "is_causal", None)
    if causal is None:
        return x + 1
    return x * 2 if causal else x - 1


def reads_aliased(cfg, x):
    return x * cfg.n_layers


def _run_both(fn, cfg, x, steps):
    """Runs `fn` compiled by torchferro and by torch.compile (backend eager) over `cfg` changed
    by each of `steps` in turn; returns both compile counts, checking every value against
    eager's."""
    ours, theirs = Counter(), Counter()
    tf = torchferro.compile(fn, backend=ours)
    tc = torch.compile(fn, backend=theirs)
    for step in [None, *steps]:
        if step is not None:
            step(cfg)
        expected = fn(cfg, x)
        torch.testing.assert_close(tf(cfg, x), expected)
        torch.testing.assert_close(tc(cfg, x), expected)
    return ours.n, theirs.n


def test_missing_attribute_set_on_the_instance_recompiles():
    cfg = _config(_config_class())
    counts = _run_both(uses_default, cfg, torch.randn(3), [lambda c: None])
    assert counts == (1, 1)
    cfg = _config(_config_class())
    counts = _run_both(
        uses_default, cfg, torch.randn(3), [lambda c: setattr(c, "is_causal", True)]
    )
    assert counts == (2, 2)


def test_missing_attribute_set_on_the_class_recompiles():
    cls = _config_class()
    cfg = _config(cls)
    counts = _run_both(
        uses_default, cfg, torch.randn(3), [lambda c: setattr(cls, "is_causal", False)]
    )
    assert counts == (2, 2)


def test_attribute_map_entry_added_in_place_recompiles():
    cls = _config_class()
    cfg = _config(cls)

    def alias(c):
        cls.attribute_map["is_causal"] = "use_cache"

    counts = _run_both(uses_default, cfg, torch.randn(3), [alias])
    assert counts == (2, 2)


def test_attribute_map_rebound_recompiles():
    cls = _config_class()
    cfg = _config(cls)

    def alias(c):
        cls.attribute_map = {"is_causal": "tie_word_embeddings"}

    counts = _run_both(uses_default, cfg, torch.randn(3), [alias])
    assert counts == (2, 2)


def test_getattr_added_to_the_class_recompiles():
    cls = _config_class()
    cfg = _config(cls)

    def add_getattr(c):
        cls.__getattr__ = lambda self, name: True

    counts = _run_both(uses_default, cfg, torch.randn(3), [add_getattr])
    assert counts == (2, 2)


def test_aliased_attribute_read_follows_the_target():
    cls = _config_class()
    cls.attribute_map = {"n_layers": "num_hidden_layers"}
    cfg = _config(cls)

    def more_layers(c):
        c.num_hidden_layers = 3

    def same_again(c):
        c.num_hidden_layers = 3

    counts = _run_both(reads_aliased, cfg, torch.randn(3), [more_layers, same_again])
    assert counts == (2, 2)


def test_alias_retargeted_recompiles():
    cls = _config_class()
    cls.attribute_map = {"n_layers": "num_hidden_layers"}
    cfg = _config(cls)

    def retarget(c):
        cls.attribute_map["n_layers"] = "num_attention_heads"
        c.num_attention_heads = 4

    counts = _run_both(reads_aliased, cfg, torch.randn(3), [retarget])
    assert counts == (2, 2)


def _native(obj, name, suppress):
    return torchferro._C._aliased_getattr(obj, name, suppress)


# The native read recognises transformers 5.24's second `__getattribute__` by a fingerprint of
# its CPython 3.11 code (`tracer/src/aliased_getattr.rs`); elsewhere (the GPU machine: CPython
# 3.12, transformers 5.17) config reads go through Python, correctly, and these probes of the
# native path do not apply. The tests above check the guards' answers everywhere.
native_env = pytest.mark.skipif(
    sys.version_info[:2] != (3, 11) or transformers.__version__ != "5.24.0",
    reason="the native config read is fingerprinted on CPython 3.11 with transformers 5.24",
)


@native_env
def test_native_read_applies_to_a_config_and_answers_as_python():
    """The guards' native read (the point: no Python frame of the config's `__getattribute__`,
    no `AttributeError` made for a negative `hasattr`) applies to a config and gives Python's
    answer: a plain attribute, an aliased one, a missing one."""
    cls = _config_class()
    cls.attribute_map = {"n_layers": "num_hidden_layers"}
    cfg = _config(cls)
    assert _native(cfg, "num_hidden_layers", False) == (True, 2)
    assert _native(cfg, "n_layers", False) == (True, 2)
    assert _native(cfg, "is_causal", True) == (False, None)
    with pytest.raises(AttributeError, match="is_causal"):
        _native(cfg, "is_causal", False)
    # A property defined on the class runs, as `object.__getattribute__` runs it.
    assert _native(cfg, "_attn_implementation", False) == (
        True,
        cfg._attn_implementation,
    )
    # Plain objects are left to Python.
    assert _native(torch.nn.Linear(2, 2), "weight", False) is None


@native_env
def test_native_read_declines_what_it_does_not_model():
    cls = _config_class()
    cfg = _config(cls)
    assert _native(cfg, "is_causal", True) == (False, None)
    # `super` shadowed in the function's module: the body would call something else.
    module = sys.modules[transformers.PreTrainedConfig.__module__]
    module.super = super
    try:
        assert _native(cfg, "is_causal", True) is None
    finally:
        del module.super
    assert _native(cfg, "is_causal", True) == (False, None)
    # A heterogeneous config (transformers' second `__getattribute__` then checks per-layer
    # names): left to Python.
    import types

    cfg.__dict__["_heterogeneity_spec"] = types.SimpleNamespace(per_layer_attributes=())
    assert _native(cfg, "is_causal", True) is None
    assert not hasattr(cfg, "is_causal")
    del cfg.__dict__["_heterogeneity_spec"]
    assert _native(cfg, "is_causal", True) == (False, None)
    # A `__getattr__` anywhere in the MRO answers after an AttributeError.
    cls.__getattr__ = lambda self, name: 7
    assert _native(cfg, "is_causal", True) is None
    del cls.__getattr__

    # A mixin after the config class in the MRO whose `__getattribute__` `super()` would reach.
    class Mixin:
        def __getattribute__(self, key):
            return object.__getattribute__(self, key)

    class Mixed(cls, Mixin):
        pass

    assert _native(_config(Mixed), "is_causal", True) is None
    # Another function with a different body.
    cls.__getattribute__ = lambda self, key: object.__getattribute__(self, key)
    assert _native(cfg, "is_causal", True) is None


def test_a_different_getattribute_is_read_through_python():
    """A class whose `__getattribute__` differs from transformers' (here: aliasing one name
    itself) is not recognised: its guards call it, and they fail when its answer changes."""

    class Odd:
        flip = False

        def __getattribute__(self, key):
            if key == "is_causal" and type(self).flip:
                return True
            return super().__getattribute__(key)

    ours, theirs = Counter(), Counter()
    tf = torchferro.compile(uses_default, backend=ours)
    tc = torch.compile(uses_default, backend=theirs)
    o, x = Odd(), torch.randn(3)
    for flip in (False, True):
        Odd.flip = flip
        expected = uses_default(o, x)
        torch.testing.assert_close(tf(o, x), expected)
        torch.testing.assert_close(tc(o, x), expected)
    assert ours.n == 2
    assert theirs.n == 2
