"""A fallback op (one the inductor does not lower, run by torch) may return its own argument:
`t.type_as(u)` with `u` of `t`'s dtype returns `t` itself. The inductor copies such a result into
its own buffer instead of adopting it: adopted, the argument's buffer (reused by the schedule once
its last reader ran) and the result shared memory, and a later kernel overwrote the result
(Gemma's RMSNorm ends in `.type_as(x)`; its attention projections read the result twice)."""

import torch
import torchferro


def _two_readers(h, wq, wk):
    h = (h * 2).type_as(h)
    return (
        torch.nn.functional.linear(h, wq).sum()
        + torch.nn.functional.linear(h, wk).sum()
    )


def test_fallback_returning_its_argument_keeps_its_value():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(2, 8, 64, generator=g)
    wq = torch.randn(64, 64, generator=g)
    wk = torch.randn(32, 64, generator=g)
    torchferro.compiler.reset()
    compiled = torchferro.compile(_two_readers)
    for _ in range(2):
        torch.testing.assert_close(compiled(x, wq, wk), _two_readers(x, wq, wk))
    torchferro.compiler.reset()
