"""The brief's known items: vmap, torch.real identity, pack_padded_sequence, a
typing_extensions.deprecated helper (torch.compile inlines its wrapper and breaks at its
warnings.warn: 3 graphs; ours runs the skipped wrapper natively) — graphs vs torch.compile."""

import torch, torchferro
import torch._dynamo as td
from torch import nn
from typing_extensions import deprecated


def vm(x):
    return torch.vmap(lambda r: r.sin() * 2)(x) + 1


def real_is(x):
    r = torch.real(x)
    return r is x, r + 1, x.real is x


lstm = nn.LSTM(3, 4, batch_first=True)


@deprecated("use g")
def old(x):
    return x * 2


def dep(x):
    return old(torch.sin(x)) + 1


def packed(x, lengths):
    p = nn.utils.rnn.pack_padded_sequence(
        x, lengths, batch_first=True, enforce_sorted=False
    )
    out, (h, c) = lstm(p)
    o, l = nn.utils.rnn.pad_packed_sequence(out, batch_first=True)
    return o, l, h


cases = [
    (vm, (torch.randn(3, 4),)),
    (real_is, (torch.randn(3),)),
    (packed, (torch.randn(3, 5, 3), torch.tensor([5, 2, 3]))),
    (dep, (torch.randn(4),)),
]
for fn, args in cases:
    eager = fn(*args)
    e = torchferro.explain(fn, *args, backend="eager")
    got = torchferro.compile(fn)(*args)
    print(
        fn.__name__,
        "ferro",
        e.graph_count,
        e.graph_break_count,
        [str(b)[:160] for b in e.break_reasons],
    )
    print(
        "   eager",
        [
            a if not isinstance(a, torch.Tensor) else a.shape
            for a in (eager if isinstance(eager, tuple) else (eager,))
        ],
    )
    print(
        "   ferro",
        [
            a if not isinstance(a, torch.Tensor) else a.shape
            for a in (got if isinstance(got, tuple) else (got,))
        ],
    )
    td.reset()
    e2 = td.explain(fn)(*args)
    print(
        fn.__name__,
        "tc",
        e2.graph_count,
        e2.graph_break_count,
        [b.reason[:150] for b in e2.break_reasons],
    )
