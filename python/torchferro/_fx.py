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
            node = graph.call_function(target, _map(args, nodes), _map(kwargs, nodes))
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
