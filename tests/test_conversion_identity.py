"""Conversions that eager answers with the tensor itself (`x.to(x.dtype) is x`,
`x.contiguous() is x` for a contiguous `x`, `x.float()` of a float32 tensor) answer so in the
compiled frame too, and those that copy answer with a new tensor: `is` against eager's over
generated calls, with a write through the result reaching (or not reaching) the input."""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import torchferro

DTYPES = [torch.float32, torch.float64, torch.int64]

CALLS = {
    "to_dtype": lambda x, d: x.to(d),
    "to_dtype_kw": lambda x, d: x.to(dtype=d),
    "to_device": lambda x, d: x.to(x.device),
    "to_device_dtype": lambda x, d: x.to(x.device, d),
    "to_copy": lambda x, d: x.to(d, copy=True),
    "to_non_blocking": lambda x, d: x.to(d, non_blocking=True),
    "to_preserve": lambda x, d: x.to(d, memory_format=torch.preserve_format),
    "to_contiguous_format": lambda x, d: x.to(d, memory_format=torch.contiguous_format),
    "to_channels_last": lambda x, d: x.to(d, memory_format=torch.channels_last),
    "to_other": lambda x, d: x.to(torch.zeros((), dtype=d)),
    "type": lambda x, d: x.type(d),
    "float": lambda x, d: x.float(),
    "double": lambda x, d: x.double(),
    "long": lambda x, d: x.long(),
    "cpu": lambda x, d: x.cpu(),
    "contiguous": lambda x, d: x.contiguous(),
    "contiguous_format": lambda x, d: x.contiguous(
        memory_format=torch.contiguous_format
    ),
}

LAYOUTS = {
    "contiguous": lambda t: t,
    "transposed": lambda t: t.transpose(0, 1),
    "sliced": lambda t: t[:, ::2],
    "size_one": lambda t: t[:1],
    "channels_last": lambda t: t.contiguous(memory_format=torch.channels_last),
    "channels_last_size_one": lambda t: t[:, :1].contiguous(
        memory_format=torch.channels_last
    ),
    "channels_last_sliced": lambda t: t.contiguous(memory_format=torch.channels_last)[
        ..., ::2
    ],
}


@settings(max_examples=120, deadline=None)
@given(
    call=st.sampled_from(sorted(CALLS)),
    layout=st.sampled_from(sorted(LAYOUTS)),
    ndim=st.sampled_from([2, 4]),
    src=st.sampled_from(DTYPES),
    dst=st.sampled_from(DTYPES),
)
def test_conversion_is_the_tensor_exactly_where_eager_says(
    call, layout, ndim, src, dst
):
    """Over conversions, 2-d and 4-d tensors in contiguous, transposed, sliced and
    channels-last layouts: `is` as eager's (``Tensor.suggest_memory_format`` decides whether
    a `memory_format` aliases), values, and the write through the result."""
    if ndim == 2 and (layout.startswith("channels_last") or call == "to_channels_last"):
        return  # channels-last is 4-d only (eager raises)
    convert = CALLS[call]

    def fn(x):
        y = convert(x, dst)
        y.add_(1)
        return y * 2, y is x

    shape = (4, 6) if ndim == 2 else (2, 4, 3, 4)
    base = (torch.arange(96)[: 24 if ndim == 2 else 96].reshape(shape) % 5).to(src)
    xe, xc = LAYOUTS[layout](base.clone()), LAYOUTS[layout](base.clone())
    want = fn(xe)
    torchferro.compiler.reset()
    got = torchferro.compile(fn, fullgraph=True)(xc)
    assert got[1] == want[1], (call, layout, src, dst)
    assert torch.equal(got[0], want[0])
    assert got[0].stride() == want[0].stride()
    # A write through the result reaches the input exactly when eager's did.
    assert torch.equal(xc, xe)
