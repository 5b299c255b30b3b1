"""The training tests' graph-count oracle: how many graphs ``torch.compile`` makes of a call."""

from __future__ import annotations

import torch


def torch_compile_graphs(fn, *args) -> int:
    """Graphs ``torch.compile`` (a counting backend, a fresh dynamo state) makes of one call of
    ``fn(*args)``; dynamo is reset again afterwards."""
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    torch._dynamo.reset()
    try:
        torch.compile(fn, backend=backend)(*args)
    finally:
        torch._dynamo.reset()
    return len(graphs)
