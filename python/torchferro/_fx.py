"""Builds a ``torch.fx.GraphModule`` from the node list the Rust tracer describes."""

from __future__ import annotations


class NodeRef:
    """Refers to the node at ``index`` in the description."""

    __slots__ = ("index",)

    def __init__(self, index: int):
        self.index = index


def _map(value, nodes):
    if isinstance(value, NodeRef):
        return nodes[value.index]
    if isinstance(value, tuple):
        return tuple(_map(v, nodes) for v in value)
    if isinstance(value, list):
        return [_map(v, nodes) for v in value]
    if isinstance(value, dict):
        return {k: _map(v, nodes) for k, v in value.items()}
    if isinstance(value, slice):
        return slice(
            _map(value.start, nodes), _map(value.stop, nodes), _map(value.step, nodes)
        )
    return value


def _honest(target):
    """``target``, or a function calling it where fx's code generation would name another
    object: fx refers to a function whose ``__module__`` is torch's by its qualified name, and a
    wrapper that copied a torch function's name (``functools.wraps``: what
    ``torch.func.vmap(torch.outer)`` returns) would run the torch function itself."""
    import types

    if not isinstance(target, types.FunctionType) or not hasattr(target, "__wrapped__"):
        return target
    from torch.fx.graph import _is_from_torch
    from torch.fx.node import _get_qualified_name

    try:
        if not _is_from_torch(target):
            return target
        obj = __import__("torch")
        for part in _get_qualified_name(target).split(".")[1:]:
            obj = getattr(obj, part)
        if obj is target:
            return target
    except Exception:  # noqa: BLE001  (a name that does not resolve is not the target)
        pass

    def call(*args, **kwargs):
        return target(*args, **kwargs)

    call.__name__ = getattr(target, "__name__", "call")
    return call


def build_graph_module(description):
    import torch
    import torch.fx

    graph = torch.fx.Graph()
    nodes = []
    for item in description:
        kind = item[0]
        if kind == "placeholder":
            nodes.append(graph.placeholder(item[1]))
        elif kind == "call_function":
            _, name, target, args, kwargs = item
            node = graph.call_function(
                _honest(target), _map(args, nodes), _map(kwargs, nodes)
            )
            node.name = name
            nodes.append(node)
        elif kind == "call_method":
            _, name, target, args, kwargs = item
            node = graph.call_method(target, _map(args, nodes), _map(kwargs, nodes))
            node.name = name
            nodes.append(node)
        elif kind == "output":
            nodes.append(graph.output(_map(item[1], nodes)))
        else:
            raise ValueError(f"unknown node kind {kind!r}")
    graph.lint()
    return torch.fx.GraphModule(torch.nn.Module(), graph)


def failing_node(gm, tb):
    """The name of the node of ``gm`` whose line of ``gm.forward`` raised, from the traceback
    ``tb`` of the error (``None`` where no frame of that ``forward`` is in it)."""
    forward = getattr(type(gm), "forward", None)
    code = getattr(forward, "__code__", None)
    lineno_map = getattr(gm, "_lineno_map", None)
    if code is None or not lineno_map:
        return None
    found = None
    while tb is not None:
        frame = tb.tb_frame
        if frame.f_code is code:
            found = tb.tb_lineno
        tb = tb.tb_next
    if found is None:
        return None
    index = lineno_map.get(found - code.co_firstlineno)
    if index is None:
        return None
    nodes = list(gm.graph.nodes)
    return nodes[index].name if 0 <= index < len(nodes) else None
