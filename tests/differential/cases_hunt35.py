"""Session 35 (hunt35) hunt: programs written as PyTorch users write them, from outside the
project, where torchferro differed from eager or made more graphs than torch.compile:

- functorch transforms run natively (``torch.vmap``, ``torch.func.grad``, ``jacrev``) call
  the user's function with the transform's wrapper tensors: the hook compiled that function on
  its own, and the inductor's kernel read a ``BatchedTensor`` as memory (a segmentation
  fault). A frame entered under an active transform runs as it is (``hook::decide_cached``);
- torch calls eager answers with their input itself (``torch.real``/``conj`` of a real
  tensor, ``atleast_2d`` of a matrix, ``flatten`` of one dimension, ``type_as`` of the same
  type, ``as_tensor``, ``+x``, ``dropout`` that drops nothing, ``broadcast_tensors``'
  unbroadcast operands): the trace made a new tensor, so ``r is x`` was False and, on the
  inductor, a write through ``r`` did not reach ``x`` (``calls::identity``);
- a user object's Python ``__getitem__`` ran at trace time instead of traced: its side effects
  happened once, and the ``KeyError`` a registry raises for a missing key (transformers'
  ``ALL_ATTENTION_FUNCTIONS.get(...)``, a ``MutableMapping`` whose ``get`` is the mixin) could
  not reach the traced ``except``: every transformers model ran its top frame eagerly and made
  4-10 graphs where torch.compile makes 1 (``Frame::user_getitem``, ``abc_mixins::mapping_get``,
  ``Frame::subscript_raised``);
- ``hasattr`` of a ``ModelOutput`` answered True for any name (``output_capturing``'s
  ``hasattr(outputs, "vision_hidden_states")``), and the read that followed raised while
  tracing."""

from __future__ import annotations

import contextlib
from collections.abc import MutableMapping
from typing import ClassVar

import torch
from torch import nn
from torch.nn import functional as F
from transformers.modeling_outputs import BaseModelOutput

from .runner import TC_DIFFERS, case, register

STRICT_BREADTH = True


def x34(r):
    return (r.randn(3, 4),)


def x4(r):
    return (r.randn(4),)


def _mod(name, cls, inputs, **options):
    register(f"hunt35_{name}", cls, inputs, module=True, **options)


# ---- functorch transforms run natively around the user's functions


@case(x34, child=True)
def hunt35_vmap_of_lambda(x):
    return torch.vmap(lambda r: r.sin() * 2 + r.sum())(x) + 1


VMAP_BREAKS = (
    "torch.vmap/torch.func transforms run natively (a graph break: the graphs before and after "
    "them are two); torch.compile traces the transform into its one graph"
)


@case(x34, child=True, breadth=VMAP_BREAKS)
def hunt35_vmap_in_dims_and_closure(x):
    w = x.cos()
    return torch.vmap(lambda r, s: r * s + w.mean(), in_dims=(0, None))(x, x[0])


@case(x34, child=True)
def hunt35_func_grad_of_loss(x):
    def loss(r):
        return (r.sin() * r).sum()

    return torch.func.grad(loss)(x) * 2


@case(x4, child=True)
def hunt35_jacrev_and_hessian(x):
    def f(r):
        return r.cos() * r.sum()

    return torch.func.jacrev(f)(x), torch.func.hessian(lambda r: (r**3).sum())(x)


@case(x34, child=True)
def hunt35_vmap_of_grad_per_sample(x):
    w = torch.linspace(-1, 1, 4)

    def loss(wt, row):
        return ((row * wt).sum() - 1.0) ** 2

    return torch.vmap(torch.func.grad(loss), in_dims=(None, 0))(w, x)


class PerSampleGrads(nn.Module):
    """Per-sample gradients the way the functorch tutorial writes them: ``functional_call``
    under ``vmap(grad(...))`` over the module's detached parameters."""

    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 3), nn.Tanh(), nn.Linear(3, 2))

    def forward(self, x):
        params = {k: v.detach() for k, v in self.net.named_parameters()}

        def loss(p, row):
            out = torch.func.functional_call(self.net, p, (row.unsqueeze(0),))
            return out.pow(2).sum()

        grads = torch.vmap(torch.func.grad(loss), in_dims=(None, 0))(params, x)
        return grads["0.weight"], grads["2.bias"]


_mod("per_sample_grads_functional_call", PerSampleGrads, x34, child=True)


# ---- calls eager answers with their input itself


@case(x34)
def hunt35_real_and_conj_are_the_input(x):
    r = torch.real(x)
    c = torch.conj(x)
    return (
        r is x,
        c is x,
        x.conj() is x,
        torch.resolve_conj(x) is x,
        torch.conj_physical(x) is x,
        r + c,
    )


@case(x34)
def hunt35_write_through_real_reaches_input(x):
    x = x.clone()
    torch.real(x).mul_(2)
    x.conj().add_(1)
    return x


@case(x34)
def hunt35_shape_helpers_are_the_input(x):
    a = torch.atleast_1d(x)
    b = torch.atleast_2d(x)
    f = x.flatten(1, 1)
    v = x[0]
    return (
        a is x,
        b is x,
        torch.atleast_3d(x) is x,
        f is x,
        v.flatten() is v,
        x.flatten() is x,
        x.type_as(x) is x,
        x.sum_to_size(3, 4) is x,
        torch.as_tensor(x) is x,
        torch.as_tensor(x, dtype=torch.float64) is x,
        b * 2,
    )


@case(x34)
def hunt35_broadcast_operands(x):
    row = x[0].clone()
    a, b = torch.broadcast_tensors(x, row)
    p, q = torch.atleast_2d(x, row)
    return a is x, b is row, p is x, q is row, a + b


@case(
    x34, xfail_tc=TC_DIFFERS
)  # torch.compile: F.dropout(y, p, training=False) is not y
def hunt35_positive_and_dropout_no_op(x):
    y = x * 3
    return (
        +y is y,
        F.dropout(y, 0.5, training=False) is y,
        F.dropout(y, 0.0, training=True) is y,
        torch.dropout(y, 0.25, False) is y,
        y,
    )


class NoOpDropoutWrite(nn.Module):
    """An eval-mode dropout hands back its input: the in-place write after it is a write to the
    activation the residual branch reads."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.drop = nn.Dropout(0.3)

    def forward(self, x):
        h = self.fc(x)
        d = self.drop(h)
        d.relu_()
        return h + x, d is h


def _eval(m, seed):
    m.eval()


# torch.compile: `d is h` is False (the values match).
_mod(
    "eval_dropout_then_inplace",
    NoOpDropoutWrite,
    x34,
    prepare=_eval,
    xfail_tc=TC_DIFFERS,
)


# ---- registries and user __getitem__ (transformers' ALL_ATTENTION_FUNCTIONS pattern)


class _Registry(MutableMapping):
    """transformers' ``GeneralInterface``: a class-level mapping with per-instance overrides."""

    _global_mapping: ClassVar[dict] = {"double": lambda t: t * 2}

    def __init__(self):
        self._local_mapping = {}

    def __getitem__(self, key):
        if key in self._local_mapping:
            return self._local_mapping[key]
        return self._global_mapping[key]

    def __setitem__(self, key, value):
        self._local_mapping.update({key: value})

    def __delitem__(self, key):
        del self._local_mapping[key]

    def __iter__(self):
        return iter({**self._global_mapping, **self._local_mapping})

    def __len__(self):
        return len(self._global_mapping.keys() | self._local_mapping.keys())


REGISTRY = _Registry()


@contextlib.contextmanager
def _registered(seed):
    """Input set 1 runs with ``custom`` registered (locally) and ``triple`` globally: the
    misses the first call's graph relied on must not answer the second."""
    if seed == 1:
        REGISTRY["custom"] = torch.cos
        _Registry._global_mapping["triple"] = lambda t: t * 3
    try:
        yield
    finally:
        REGISTRY._local_mapping.pop("custom", None)
        _Registry._global_mapping.pop("triple", None)


@case(x34, around=_registered)
def hunt35_registry_get_missing_key(x):
    f = REGISTRY.get("custom", None)
    g = REGISTRY.get("triple")
    y = x.sin() if f is None else f(x)
    y = y if g is None else g(y)
    return REGISTRY["double"](y)


@case(x34, around=_registered)
def hunt35_registry_try_except_keyerror(x):
    try:
        f = REGISTRY["custom"]
    except KeyError:
        f = torch.tanh
    try:
        g = _Registry._global_mapping["triple"]
    except KeyError:
        g = None
    y = f(x) + 1
    return y if g is None else g(y)


LOG: list = []


class _Lookup:
    """A user ``__getitem__`` with a side effect: it must run on every call, not once while
    tracing."""

    def __init__(self, table):
        self.table = table

    def __getitem__(self, k):
        LOG.append(k)
        return self.table[k]


LOOKUP = _Lookup({"a": 2.0})


@case(x34, state=("LOG",))
def hunt35_user_getitem_runs_every_call(x):
    try:
        b = LOOKUP["b"]
    except KeyError:
        b = -1.0
    return x * LOOKUP["a"] + b, len(LOG)


@case(x34)
def hunt35_hasattr_of_model_output(x):
    out = BaseModelOutput(last_hidden_state=x.relu(), hidden_states=(x,))
    return (
        hasattr(out, "last_hidden_state"),
        hasattr(out, "attentions"),
        hasattr(out, "vision_hidden_states"),
        hasattr(out, "to_tuple"),
        out.last_hidden_state + 1,
    )


# ---- transformers models called as users call them


def _ids(r):
    g = torch.Generator().manual_seed(r.seed)
    ids = torch.randint(0, 99, (2, 7), generator=g)
    mask = torch.ones(2, 7, dtype=torch.long)
    mask[1, 5:] = 0
    return ids, mask


class HfBert(nn.Module):
    """``model(**inputs)`` of a small BERT with a padding mask and all hidden states: its
    forward goes through ``merge_with_config_defaults``/``capture_outputs`` (a registry ``get``,
    output-capturing hooks, ``hasattr`` on the output)."""

    def __init__(self):
        super().__init__()
        from transformers import BertConfig, BertModel

        cfg = BertConfig(
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=4,
            intermediate_size=64,
            vocab_size=99,
            max_position_embeddings=32,
        )
        self.bert = BertModel(cfg)

    def forward(self, ids, mask):
        out = self.bert(input_ids=ids, attention_mask=mask, output_hidden_states=True)
        return out.last_hidden_state, out.hidden_states, out.pooler_output


_mod("transformers_bert_hidden_states", HfBert, _ids, prepare=_eval)


class HfLlama(nn.Module):
    """A small Llama causal LM with labels (its loss) and a left-padding mask."""

    def __init__(self):
        super().__init__()
        from transformers import LlamaConfig, LlamaForCausalLM

        cfg = LlamaConfig(
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
            intermediate_size=64,
            vocab_size=99,
            max_position_embeddings=64,
        )
        self.lm = LlamaForCausalLM(cfg)

    def forward(self, ids, mask):
        out = self.lm(
            input_ids=ids, attention_mask=mask.flip(1), labels=ids, use_cache=False
        )
        return out.loss, out.logits


_mod("transformers_llama_loss", HfLlama, _ids, prepare=_eval)


# ---- an op that reads data refuses the trace's meta stand-ins


class PackedLstm(nn.Module):
    """Variable-length batches through ``pack_padded_sequence``: its lengths must be a CPU
    tensor, so the meta run refuses them; a graph break there (torch.compile makes no graph for
    this program), not a frame run eagerly under a "torchferro bug" warning."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(8, 6, batch_first=True)
        self.head = nn.Linear(6, 2)

    def forward(self, x):
        lengths = torch.tensor([5, 2, 4])
        p = nn.utils.rnn.pack_padded_sequence(
            x, lengths, batch_first=True, enforce_sorted=False
        )
        out, (h, _) = self.lstm(p)
        o, n = nn.utils.rnn.pad_packed_sequence(out, batch_first=True)
        return self.head(h[-1]), o.sum(1), n


def seq(r):
    return (r.randn(3, 5, 8),)


_mod(
    "packed_lstm_lengths",
    PackedLstm,
    seq,
    breadth=(
        "the graph before the pack_padded_sequence break holds only the constant lengths "
        "tensor (torch.tensor([5, 2, 4])); torch.compile runs that frame eagerly and makes "
        "one graph, after the LSTM"
    ),
)
