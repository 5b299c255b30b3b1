"""Method spellings whose receiver is not the schema's first parameter: `x.where(cond, y)` is
`torch.where(cond, x, y)`. The lowering bound the receiver as the condition, so a bool receiver
computed a wrong value (found in session 12)."""

import pytest
import torch

import torchferro


def _cases():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(4, 6, generator=g)
    y = torch.randn(4, 6, generator=g)
    m = torch.randn(4, 6, generator=g) > 0
    b = torch.randn(4, 6, generator=g) > 0.3
    c = torch.randn(6, generator=g) > -0.3
    return {
        "float_receiver": (lambda x, m, y: x.where(m, y) * 2, (x, m, y)),
        "bool_receiver": (lambda b, m, c: b.where(m, c), (b, m, c)),
        "bool_receiver_keyword": (lambda b, m, c: b.where(m, other=c), (b, m, c)),
        "bool_receiver_scalar_other": (lambda b, m: b.where(m, False), (b, m)),
        "function_spelling": (lambda b, m, c: torch.where(m, b, c), (b, m, c)),
        "chained": (lambda x, m, y: (x > 0).where(m, y > 0).float() + x, (x, m, y)),
    }


@pytest.mark.parametrize("name", sorted(_cases()))
def test_method_where_matches_eager(name):
    fn, args = _cases()[name]
    want = fn(*args)
    got = torchferro.compile(fn)(*args)
    assert got.dtype == want.dtype
    assert torch.equal(got, want)
