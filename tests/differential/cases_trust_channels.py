"""Session 20 hunt, Python state written through the side doors and read back in the same
call: ``setattr``/``object.__setattr__``/``__dict__``/``vars()`` writes, ``delattr``,
``globals()[name] = v``, hooks registered or removed inside forward, ``add_module`` inside
forward, class attributes bumped through ``type(self)``."""

from __future__ import annotations

import torch
from torch import nn

from .runner import TC_DIFFERS, case, register

# Issue 14: more graphs than torch.compile fails unless the case names the gap (breadth=).
STRICT_BREADTH = True


def x34(r):
    return (r.randn(3, 4),)


class _Base(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.scale = 1.0


class SetattrBuiltin(_Base):
    def forward(self, x):
        setattr(self, "scale", self.scale + 1)
        return self.fc(x) * self.scale


class DictWrite(_Base):
    def forward(self, x):
        self.__dict__["scale"] = self.scale * 3
        return self.fc(x) * self.scale


class VarsWrite(_Base):
    def forward(self, x):
        vars(self)["scale"] = -self.scale
        return self.fc(x) * self.scale, vars(self)["scale"]


class ObjectSetattr(_Base):
    def forward(self, x):
        object.__setattr__(self, "scale", 5.0)
        return self.fc(x) * self.scale


class DelAttr(_Base):
    def __init__(self):
        super().__init__()
        self.tmp = 2.0

    def forward(self, x):
        out = self.fc(x) * getattr(self, "tmp", 1.0)
        if hasattr(self, "tmp"):
            del self.tmp
        return out, hasattr(self, "tmp"), getattr(self, "tmp", -1.0)


class HookInForward(_Base):
    """A forward hook registered inside forward on the first call and used at once."""

    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        if self.calls == 1:
            self.fc.register_forward_hook(lambda m, i, o: o * 0 + 7)
        return self.fc(x)


class HookRemovedInForward(_Base):
    def __init__(self):
        super().__init__()
        self._h = self.fc.register_forward_hook(lambda m, i, o: o + 100)

    def forward(self, x):
        a = self.fc(x)
        self._h.remove()
        return a, self.fc(x)


class AddModuleInForward(_Base):
    def forward(self, x):
        if not hasattr(self, "extra"):
            self.add_module("extra", nn.Tanh())
        return self.extra(self.fc(x))


class ClassCounter(_Base):
    made = 0

    def forward(self, x):
        type(self).made += 1
        return self.fc(x) + type(self).made


for _cls in (
    SetattrBuiltin,
    DictWrite,
    VarsWrite,
    ObjectSetattr,
    DelAttr,
    HookInForward,
    AddModuleInForward,
):
    register(f"trust_channel_{_cls.__name__}", _cls, x34, module=True)


def _reset_class_counter(_, seed):
    if seed == 0:
        ClassCounter.made = 0


register(
    "trust_channel_HookRemovedInForward",
    HookRemovedInForward,
    x34,
    module=True,
    breadth="RemovableHandle.remove() inside forward breaks the graph and torchferro compiles "
    "the rest (3 graphs over 2 calls). torch.compile (2.11) cannot represent a handle made in "
    "another frame, and fails at the LOAD_ATTR of `self._h`, an instruction it cannot resume "
    "at: it falls back to its last checkpoint (an instruction start with an empty stack once "
    "the graph holds more than one call), compiles the graph to there and runs the rest of "
    "the frame inline, eagerly (call 1: linear + the hook's add, 1 graph); on call 2 the hook "
    "is gone (guard on len(_forward_hooks)), the graph before the failure holds one call, so "
    "there is no checkpoint and the frame is skipped (1 frame eager). Matching means copying "
    "that checkpoint heuristic; tracing remove() as an effect would still make 2 graphs",
)


# torch.compile (2.11) bakes `type(self).made` into its graph with no guard on the class
# attribute: the second call reads the first call's count. torchferro reads it through the
# class's module global, guarded.
register(
    "trust_channel_ClassCounter",
    ClassCounter,
    x34,
    module=True,
    prepare=_reset_class_counter,
    xfail_tc=TC_DIFFERS,
)

LIMIT = 1.0


def _reset_limit(_, seed):
    global LIMIT
    if seed == 0:
        LIMIT = 1.0


# torch.compile (2.11) reads LIMIT as it was before `globals()["LIMIT"] = ...` in the same call.
@case(x34, prepare=_reset_limit, xfail_tc=TC_DIFFERS)
def trust_channel_globals_dict_write(x):
    globals()["LIMIT"] = LIMIT * 2
    return x.clamp(max=LIMIT), LIMIT
