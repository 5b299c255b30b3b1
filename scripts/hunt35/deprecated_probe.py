"""typing_extensions.deprecated-wrapped helpers called in compiled code: graphs vs torch.compile."""

import warnings
import torch, torchferro
import torch._dynamo as td
from typing_extensions import deprecated


@deprecated("use g")
def old(x):
    return x * 2


def f(x):
    y = torch.sin(x)
    return old(y) + 1


def f2(x):
    y = torch.sin(x)
    torch.nn.utils.clip_grad_norm([y.requires_grad_()], 1.0)
    return y + 1


for fn in (f,):
    x = torch.randn(4)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        e = torchferro.explain(fn, x, backend="eager")
    print(
        fn.__name__,
        "ferro",
        e.graph_count,
        e.graph_break_count,
        [str(b) for b in e.break_reasons],
        len(w),
    )
    td.reset()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        e2 = td.explain(fn)(x)
    print(
        fn.__name__,
        "tc",
        e2.graph_count,
        e2.graph_break_count,
        [b.reason[:150] for b in e2.break_reasons],
        len(w),
    )
