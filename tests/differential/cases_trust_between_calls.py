"""Session 20 hunt, state that changes between two calls of one compiled function or model:
inputs that alias each other on one call only, a global tensor or config rebound, a module's
plain attributes, dtype, ``requires_grad`` and layer settings changed, containers that grow,
``ModuleList`` appends and ``Sequential`` slices whose length is an attribute."""

from __future__ import annotations

import contextlib

import torch
from torch import nn
from torch.nn import functional as F

from .runner import TC_DIFFERS, case, register

# Issue 14: more graphs than torch.compile fails unless the case names the gap (breadth=).
STRICT_BREADTH = True


def _same_on_second(r):
    a = r.randn(3, 4)
    return (a, r.pick(r.randn(3, 4), a))


@case(_same_on_second)
def trust_inputs_alias_on_second_call(a, b):
    a.add_(1)
    return b * 2


def _view_on_second(r):
    a = r.randn(3, 4)
    return (a, r.pick(r.randn(4), a[1]))


@case(_view_on_second)
def trust_input_view_of_other_on_second_call(a, b):
    b.mul_(10)
    return a.sum(), b


@case(_same_on_second)
def trust_inputs_alias_copy_between(a, b):
    a.copy_(b * 2)
    return a + b


@case(lambda r: (r.randn(3, 4), r.pick(r.randn(3, 4), r.randn(4, 3).t())))
def trust_input_noncontiguous_on_second_call(x, y):
    y.add_(x)
    return y.view(-1) if y.is_contiguous() else y.reshape(-1)


@case(lambda r: (r.randn(3, 4, dtype=r.pick(torch.float32, torch.float64)),))
def trust_input_dtype_changes(x):
    return x * 2, x.dtype


@case(lambda r: (r.randn(3, 4, requires_grad=r.pick(False, True)),))
def trust_input_requires_grad_changes(x):
    y = x * 2
    return y, y.requires_grad


@case(lambda r: ([r.randn(2) for _ in range(r.pick(2, 3))],))
def trust_list_input_grows(xs):
    return sum(xs), len(xs)


@case(
    lambda r: (
        r.pick({"a": r.randn(2), "b": r.randn(2)}, {"b": r.randn(2), "a": r.randn(2)}),
    )
)
def trust_dict_input_key_order(d):
    return [k for k in d], torch.stack(list(d.values()))


W = torch.ones(4)
CFG = {"scale": 1.0, "act": "relu"}


def _rebind_w(_, seed):
    global W
    W = torch.full((4,), float(seed + 2))


@case(lambda r: (r.randn(3, 4),), prepare=_rebind_w)
def trust_global_tensor_rebound_between_calls(x):
    return x * W


def _config(_, seed):
    CFG["scale"] = [1.0, 3.0][seed]
    CFG["act"] = ["relu", "tanh"][seed]


@case(lambda r: (r.randn(3, 4),), prepare=_config)
def trust_global_config_dict_between_calls(x):
    act = torch.relu if CFG["act"] == "relu" else torch.tanh
    return act(x) * CFG["scale"]


@contextlib.contextmanager
def _no_grad_second(seed):
    with torch.set_grad_enabled(seed == 0):
        yield


@case(lambda r: (r.randn(3, 4, requires_grad=True),), around=_no_grad_second)
def trust_grad_mode_around_second_call(x):
    y = x.exp()
    return y, y.requires_grad


# torch.compile (2.11) raises its own TorchRuntimeError from fake-tensor propagation instead of
# eager's RuntimeError; torchferro raises eager's.
@case(lambda r: (r.randn(3, 4, requires_grad=True),), raises=True, xfail_tc=TC_DIFFERS)
def trust_inplace_on_leaf_raises(x):
    x.add_(1)
    return x


# ---------------------------------------------------------------------------------------------
# Modules changed between calls


def x34(r):
    return (r.randn(3, 4),)


class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.norm = nn.LayerNorm(4)
        self.drop = nn.Dropout(0.5)
        self.scale = 1.0
        self.mask = torch.ones(4)

    def forward(self, x):
        return self.drop(self.norm(self.fc(x))) * self.scale * self.mask


def _mod(name, prep, **kw):
    register(f"trust_between_{name}", Scaled, x34, module=True, prepare=prep, **kw)


def _scale(m, seed):
    m.scale = [1.0, -2.5][seed]


def _mask(m, seed):
    if seed == 1:
        m.mask = torch.tensor([1.0, 0.0, 1.0, 0.0])


def _drop_p(m, seed):
    m.drop.p = [0.5, 0.0][seed]


def _eps(m, seed):
    m.norm.eps = [1e-5, 10.0][seed]


def _double(m, seed):
    if seed == 1:
        m.double()


def _freeze(m, seed):
    m.requires_grad_(seed == 0)


def _swap_norm(m, seed):
    if seed == 1:
        m.norm = nn.Identity()


_mod("plain_float_attribute", _scale)
_mod("plain_tensor_attribute", _mask)
_mod("dropout_p", _drop_p)
_mod("layernorm_eps", _eps)
_mod(
    "requires_grad_false",
    _freeze,
    breadth="parameters' requires_grad is guarded: model.requires_grad_(False) between calls "
    "recompiles. torch.compile (2.11) reuses its graph because it skips the tensor guards of a "
    "module's parameters while the `_parameters` dict's tag is unchanged "
    "(skip_tensor_guards_with_matching_dict_tags); that reuse is sound only for a backend that "
    "runs torch's ops (the outputs' requires_grad recomputed per call), not for our inductor's "
    "forward/backward split, so the guard would have to depend on the backend",
)
_mod("layer_swapped_for_identity", _swap_norm)


class Blocks(nn.ModuleList):
    """A user ``ModuleList`` subclass with its own method."""

    def run(self, x):
        for b in self:
            x = torch.tanh(b(x))
        return x


class Stack(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = Blocks([nn.Linear(4, 4) for _ in range(3)])
        self.seq = nn.Sequential(*[nn.Linear(4, 4) for _ in range(3)])
        self.depth = 2

    def forward(self, x):
        return self.blocks.run(x), self.seq[: self.depth](x)


def _append_block(m, seed):
    if seed == 1:
        torch.manual_seed(3)
        m.blocks.append(nn.Linear(4, 4))


def _depth(m, seed):
    m.depth = [2, 3][seed]


register(
    "trust_modulelist_subclass_append_between_calls",
    Stack,
    x34,
    module=True,
    prepare=_append_block,
)
register(
    "trust_sequential_slice_depth_between_calls",
    Stack,
    x34,
    module=True,
    prepare=_depth,
)


class TiedWeights(nn.Module):
    """An embedding and an output layer sharing one weight, updated by hand."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(6, 4)
        self.out = nn.Linear(4, 6, bias=False)
        self.out.weight = self.emb.weight

    def forward(self, idx):
        logits = self.out(self.emb(idx))
        loss = F.cross_entropy(logits, idx)
        loss.backward()
        with torch.no_grad():
            self.emb.weight -= 0.5 * self.emb.weight.grad
            self.emb.weight.grad = None
        return loss.detach(), self.out.weight.sum()


register(
    "trust_tied_weights_manual_update",
    TiedWeights,
    lambda r: (r.randint(0, 6, 5),),
    module=True,
)


class OptLoaded(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 1)
        self._opt = torch.optim.SGD(self.parameters(), lr=0.1, momentum=0.9)

    def forward(self, x):
        self._opt.zero_grad()
        loss = self.fc(x).pow(2).mean()
        loss.backward()
        self._opt.step()
        return loss.detach()


def _reload_opt(m, seed):
    if seed == 1:
        sd = m._opt.state_dict()
        sd["param_groups"][0]["lr"] = 0.01
        m._opt.load_state_dict(sd)


register(
    "trust_optimizer_load_state_dict_between_calls",
    OptLoaded,
    x34,
    module=True,
    prepare=_reload_opt,
)


class GradPrefilled(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 1)

    def forward(self, x):
        self.fc(x).sum().backward()
        return self.fc.weight.grad.clone()


def _prefill_grad(m, seed):
    if seed == 1:
        m.fc.weight.grad = torch.full_like(m.fc.weight, 100.0)


register(
    "trust_grad_prefilled_between_calls",
    GradPrefilled,
    x34,
    module=True,
    prepare=_prefill_grad,
)


# ---------------------------------------------------------------------------------------------
# Issue 14: ModuleList subclasses and Sequential slices


class Gated(nn.ModuleList):
    """A ``ModuleList`` subclass with a ``forward`` of its own and a method using ``len``."""

    def forward(self, x):
        for i, m in enumerate(self):
            x = x + m(x) / (i + 1)
        return x

    def last(self):
        return self[len(self) - 1]


class SliceUser(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = Gated([nn.Linear(4, 4) for _ in range(4)])
        self.seq = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 4), nn.Tanh())
        self.heads = nn.ModuleList([nn.Linear(4, 1) for _ in range(4)])

    def forward(self, x, n):
        a = self.blocks(x)
        b = self.seq[1:][1](x) + self.seq[-1](x)
        c = sum(h(blk(x)) for blk, h in zip(self.blocks[:n], self.heads[:n]))
        d = self.blocks.last()(x)
        return a, b, c, d, len(self.seq[:n])


register(
    "trust_modulelist_subclass_and_slices",
    SliceUser,
    lambda r: (r.randn(3, 4), r.pick(2, 3)),
    module=True,
)


class SeqSub(nn.Sequential):
    """An ``nn.Sequential`` subclass whose forward skips its last layer."""

    def forward(self, x):
        for m in self[:-1]:
            x = m(x)
        return x


class UsesSeqSub(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = SeqSub(nn.Linear(4, 4), nn.GELU(), nn.Linear(4, 2), nn.Sigmoid())

    def forward(self, x):
        return self.body(x), self.body[2:](self.body[0](x))


register("trust_sequential_subclass_forward", UsesSeqSub, x34, module=True)
