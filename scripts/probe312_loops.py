"""3.12 probe: torch.compile's graph counts and eager frames for the loop-resume programs whose
pins failed under CPython 3.12 (session 18), beside torchferro's."""

import sys, logging, contextlib, io
import torch, torch._dynamo

sys.path[:0] = ["tests"]
import programs.graph_breaks as G  # noqa
from torch._dynamo.utils import counters

names = [
    "zip_loop_resumes_with_a_return_ahead",
    "range_loop_resumes_with_a_return_ahead",
    "dict_items_loop_resumes_with_a_return_ahead",
    "enumerate_loop_resumes_with_a_return_ahead",
]
print(sys.version)
for name in names:
    fn = getattr(G, name)
    p = fn if not hasattr(fn, "make") else fn
    from programs.harness import PROGRAMS  # noqa

    prog = (
        PROGRAMS[name]
        if isinstance(PROGRAMS, dict)
        else [q for q in PROGRAMS if q.name == name][0]
    )
    torch._dynamo.reset()
    counters.clear()
    graphs = []

    def backend(gm, ex):
        graphs.append(gm)
        return gm.forward

    c = torch.compile(prog.target(), backend=backend)
    for s in (0, 1):
        args, kwargs = prog.make(s)
        with contextlib.redirect_stdout(io.StringIO()):
            c(*args, **kwargs)
    print(
        name,
        "torch.compile graphs",
        len(graphs),
        "breaks",
        dict(counters["graph_break"]) and sum(counters["graph_break"].values()),
        "frames",
        dict(counters["frames"]),
    )
