"""The graph-counting backend the dynamic-shape and graph-break tests hand to torch.compile."""

from __future__ import annotations


class Count:
    """A torch.compile backend that counts graphs and runs the GraphModule it is given (kept
    in ``graphs`` for tests that read them)."""

    def __init__(self):
        self.n = 0
        self.graphs = []

    def __call__(self, gm, example_inputs):
        self.n += 1
        self.graphs.append(gm)
        return gm.forward


def compiled_counting(compile_fn, fn):
    """``compile_fn(fn)`` (``torch.compile`` or ``torchferro.compile``) with a fresh
    ``Count`` as its backend, and the count."""
    count = Count()
    return compile_fn(fn, backend=count), count
