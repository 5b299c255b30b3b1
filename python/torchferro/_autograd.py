"""Graph-node callables for ``torch.autograd.Function`` subclasses called in traced code.

The tracer puts ``MyFunction.apply(*args)`` in the graph as one node. Its target is a plain
function made here per class rather than the bound ``apply`` itself: torch.fx writes a callable
whose ``__module__`` is in torch as an import path (``torch.autograd.function.apply``), which
does not resolve for a bound classmethod; a function of this module is held as a global of the
generated code instead.

The node applies a subclass of the user's class whose backward runs the user's backward with
the frame hook off (``_C.call_disabled``). torch.compile traces the backward into its graph
with the forward (its ``autograd_function_apply`` higher-order op), so when autograd later runs
that node the user's backward is never a frame the compiler sees; without this, our hook would
compile the backward (and what it calls) as frames of their own during ``loss.backward()``.
A Function applied outside compiled code keeps its own class, so its backward is compiled
where autograd calls it, as torch.compile does. Running a frame without the hook changes no
value: the same code runs natively."""

from __future__ import annotations

import weakref

_APPLIES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _uncompiled_backward(cls):
    """A subclass of ``cls`` whose backward (or vjp, whichever ``cls`` defines) runs with the
    hook off. Made through ``cls``'s metaclass under ``cls``'s name, so its autograd node is
    named as eager's (``<name>Backward``)."""
    from torch.autograd import Function

    from . import _C

    # autograd calls `vjp` where the class overrides it, else `backward`; override the same one
    # (defining both is an error at backward time).
    attr = "vjp" if cls.vjp is not Function.vjp else "backward"
    user_fn = getattr(cls, attr)

    def run(ctx, *grads):
        return _C.call_disabled(user_fn, ctx, *grads)

    run.__name__ = run.__qualname__ = attr
    namespace = {
        attr: staticmethod(run),
        "__module__": cls.__module__,
        "__qualname__": cls.__qualname__,
        "__doc__": cls.__doc__,
    }
    return type(cls)(cls.__name__, (cls,), namespace)


def apply_of(cls):
    """The graph node's callable for ``cls.apply`` (one per class)."""
    fn = _APPLIES.get(cls)
    if fn is None:
        node_cls = _uncompiled_backward(cls)

        def fn(*args):
            return node_cls.apply(*args)

        fn.__name__ = fn.__qualname__ = f"apply_{cls.__name__}"
        _APPLIES[cls] = fn
    return fn


def hook_registrar(hook):
    """The graph node's callable for ``t.register_hook(hook)`` on a tensor the graph computes
    (``tracer/src/interp/calls/torch.rs``, ``traced_tensor_hook``).

    The node registers ``hook`` on the real tensor when the graph runs, so the hook sees the
    whole gradient of that tensor (uses traced before the registration included), as eager's
    does; torch.compile instead traces the hook into the graph. The hook runs with the frame
    hook off, as this module runs a Function's backward: torch.compile never sees it as a frame
    of its own either (it is part of that graph's backward). Registering on the meta tensor of
    the tracer's shape inference is skipped (it does not require grad)."""
    import functools

    from . import _C

    run = functools.partial(_C.call_disabled, hook)

    def register_hook(t):
        if t.requires_grad and t.device.type != "meta":
            t.register_hook(run)

    register_hook.__name__ = register_hook.__qualname__ = "register_hook"
    return register_hook
