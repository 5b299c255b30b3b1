"""Session 20 hunt, reads that must see writes made earlier in the same call: attributes set
and then read through ``getattr``/``hasattr``/``__dict__``, layer settings written before the
layer runs (``Dropout.p``, ``LayerNorm.eps``, ``ReLU.inplace``, ``LeakyReLU.negative_slope``,
``Softmax.dim``), ``train(False)``/``eval()`` on a container before its children run, a
submodule assigned and ``register_buffer`` inside the call."""

from __future__ import annotations

import torch
from torch import nn

from .runner import TC_DIFFERS, case

# Issue 14: more graphs than torch.compile fails unless the case names the gap (breadth=).
STRICT_BREADTH = True


class Obj:
    def __init__(self):
        self.a = 1.0


@case(lambda r: (r.randn(3), Obj()))
def trust_pending_getattr_builtin(x, o):
    o.a = 5.0
    return x * getattr(o, "a"), hasattr(o, "b")


@case(lambda r: (r.randn(3), Obj()))
def trust_pending_hasattr(x, o):
    o.b = 2.0
    return x * (o.b if hasattr(o, "b") else 0)


@case(lambda r: (r.randn(3), Obj()))
def trust_pending_dict_read_after_store(x, o):
    o.a = 3.0
    return x * o.__dict__["a"]


@case(lambda r: (r.randn(3), Obj()))
def trust_pending_del_then_default(x, o):
    del o.a
    return x * getattr(o, "a", 7.0)


class _Holder(nn.Module):
    def __init__(self, **children):
        super().__init__()
        for k, v in children.items():
            setattr(self, k, v)


@case(lambda r: (r.randn(50), _Holder(drop=nn.Dropout(0.9))))
def trust_pending_dropout_p(x, m):
    m.drop.p = 0.0
    return m.drop(x)


@case(lambda r: (r.randn(4, 3), nn.Sequential(nn.BatchNorm1d(3))))
def trust_pending_sequential_eval_batchnorm(x, m):
    m.eval()
    return m(x), m.training, m[0].training


@case(lambda r: (r.randn(50), nn.Sequential(nn.Linear(50, 50), nn.Dropout(0.5))))
def trust_pending_train_false_dropout(x, m):
    m.train(False)
    return m(x)


@case(lambda r: (r.randn(2, 4), _Holder(norm=nn.LayerNorm(4))))
def trust_pending_layernorm_eps(x, m):
    m.norm.eps = 1.0
    return m.norm(x)


@case(lambda r: (r.randn(4), _Holder(act=nn.ReLU())))
def trust_pending_relu_inplace(x, m):
    m.act.inplace = True
    y = x.clone()
    m.act(y)
    return y


@case(lambda r: (r.randn(4), _Holder(act=nn.LeakyReLU(0.01))))
def trust_pending_leaky_slope(x, m):
    m.act.negative_slope = 0.5
    return m.act(x)


@case(lambda r: (r.randn(3, 4), _Holder(sm=nn.Softmax(dim=1))))
def trust_pending_softmax_dim(x, m):
    m.sm.dim = 0
    return m.sm(x)


@case(lambda r: (r.randn(4), _Holder(act=nn.ReLU())))
def trust_pending_submodule_assigned(x, m):
    m.act = nn.Tanh()
    return m.act(x)


@case(lambda r: (r.randn(4), _Holder(act=nn.ReLU())))
def trust_pending_register_buffer(x, m):
    m.register_buffer("extra", x * 2)
    return m.extra + 1


@case(lambda r: (r.randn(2, 4), _Holder(fc=nn.Linear(4, 4))))
def trust_pending_requires_grad_then_linear(x, m):
    m.fc.weight.requires_grad_(False)
    return m.fc(x), m.fc.weight.requires_grad


@case(lambda r: (r.randn(3, 4),))
def trust_pending_requires_grad_of_intermediate(x):
    y = x * 2
    y.requires_grad_()
    z = y.detach()
    z.detach_()
    return y.requires_grad, y.is_leaf, z.requires_grad, (y * 3).requires_grad


# torch.compile (2.11) reads `w.requires_grad` as before `y.detach_()` (True, eager False).
@case(lambda r: (r.randn(3, 4, requires_grad=True),), xfail_tc=TC_DIFFERS)
def trust_pending_detach_inplace_of_intermediate(x):
    y = x * 2
    w = y
    y.detach_()
    return w.requires_grad, w.is_leaf, (w + 1).requires_grad
