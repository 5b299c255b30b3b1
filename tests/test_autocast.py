"""`torch.autocast` regions with the default (inductor) backend: the graph keeps the region, runs
on the eager runner (the inductor does not model autocast's casts), and says so in the log."""

import logging

import pytest

import torch
from torch import nn

import torchferro

W = torch.randn(8, 4, generator=torch.Generator().manual_seed(3))


def attention_like(x):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        s = torch.softmax((x @ W) * 0.5, -1)
        with torch.autocast("cpu", enabled=False):
            f = x @ W
    return s, f, s.float() + f


def setup_function():
    torchferro.compiler.reset()


def test_autocast_region_with_the_inductor_backend_matches_eager(caplog):
    x = torch.randn(5, 8)
    want = attention_like(x)
    f = torchferro.compile(attention_like, fullgraph=True)
    with caplog.at_level(logging.INFO, logger="torchferro"):
        got = f(x)
        got2 = f(x)
    for g in (got, got2):
        assert [t.dtype for t in g] == [torch.bfloat16, torch.float32, torch.float32]
        for a, b in zip(g, want):
            torch.testing.assert_close(a, b, rtol=0, atol=0)
    # The region ended: no autocast leaks out of the compiled call.
    assert not torch.is_autocast_enabled("cpu")
    state, entries = torchferro._C.cache_entries(attention_like.__code__)
    assert (state, len(entries)) == ("normal", 1)
    messages = [
        r.getMessage() for r in caplog.records if r.name == "torchferro.inductor"
    ]
    assert any(
        "the whole graph runs on the eager backend: it has an autocast region" in m
        for m in messages
    ), messages


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)
        self.norm = nn.LayerNorm(8)

    def forward(self, x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            h = torch.nn.functional.gelu(self.proj(x))
        return self.norm(h.float() + x)


def test_module_with_an_autocast_region_matches_eager_on_two_shapes():
    torch.manual_seed(0)
    m = Block().eval()
    f = torchferro.compile(m)
    for shape in [(2, 8), (6, 8)]:
        x = torch.randn(*shape)
        torch.testing.assert_close(f(x), m(x), rtol=0, atol=0)
    assert not torch.is_autocast_enabled("cpu")


def test_a_frame_entered_inside_autocast_infers_autocast_dtypes():
    """Tracing starts from the autocast state the frame is entered in."""

    def mm(x):
        return x @ W, (x @ W).dtype

    x = torch.randn(3, 8)
    f = torchferro.compile(mm, backend="eager")
    with torch.autocast("cpu", dtype=torch.bfloat16):
        want = mm(x)
        got = f(x)
    assert got[1] == want[1] == torch.bfloat16
    torch.testing.assert_close(got[0], want[0], rtol=0, atol=0)


def test_entering_autocast_around_a_compiled_call_recompiles(caplog):
    """The autocast state is guarded like grad mode: a graph traced without autocast is not
    replayed under it (its dtypes would be wrong)."""

    def mm(x):
        return x @ W

    x = torch.randn(3, 8)
    f = torchferro.compile(mm)
    with caplog.at_level(logging.INFO, logger="torchferro.recompiles"):
        assert f(x).dtype == torch.float32
        with torch.autocast("cpu", dtype=torch.bfloat16):
            got = f(x)
            want = mm(x)
        assert f(x).dtype == torch.float32
    assert got.dtype == want.dtype == torch.bfloat16
    torch.testing.assert_close(got, want, rtol=0, atol=0)
    code = mm.__code__
    assert [r.getMessage() for r in caplog.records] == [
        f"Recompiling function mm in {code.co_filename}:{code.co_firstlineno}\n"
        "    triggered by the following guard failure(s):\n"
        f"    - {_frame(mm)}/0: autocast mismatch. expected off, actual cpu bfloat16"
    ]
    _, entries = torchferro._C.cache_entries(code)
    assert len(entries) == 2


def _frame(fn):
    _, entries = torchferro._C.cache_entries(fn.__code__)
    return entries[-1]["compile_id"].split("/")[0]


def _ambient_cuda_autocast(enabled):
    torch.set_autocast_enabled("cuda", enabled)


def test_a_frame_entered_inside_another_devices_autocast_runs_eagerly():
    """Only CPU autocast is traced: under CUDA autocast the traced dtypes would be the CPU's
    (a compiled GPT-2 called inside `torch.autocast("cuda")` raised a dtype mismatch), so the
    frame runs eagerly there, and compiles again outside the region."""

    def mm(x):
        return torch.softmax(x @ W, -1)

    x = torch.randn(3, 8)
    f = torchferro.compile(mm)
    _ambient_cuda_autocast(True)
    try:
        got = f(x)
        assert torchferro._C.cache_entries(mm.__code__)[1] == []
        with pytest.raises(torchferro.Unsupported) as e:
            torchferro.compile(mm, fullgraph=True)(x)
        assert (
            "autocast is enabled around the frame for another device than the CPU "
            "(cuda float16); only CPU autocast is traced" in str(e.value)
        )
    finally:
        _ambient_cuda_autocast(False)
    torch.testing.assert_close(got, mm(x), rtol=0, atol=0)
    torch.testing.assert_close(f(x), mm(x))
    assert len(torchferro._C.cache_entries(mm.__code__)[1]) == 1


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_a_compiled_module_called_inside_cuda_autocast_matches_eager():
    torch.manual_seed(0)
    lin = nn.Linear(64, 64).cuda()
    lin2 = nn.Linear(64, 32).cuda()

    def block(x):
        # Linear in bfloat16, softmax in float32, the second linear in bfloat16 again.
        return lin2(torch.softmax(lin(x), -1) * 2)

    def outer(x):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            return cblock(x)

    cblock = torchferro.compile(block)
    x = torch.randn(16, 64, device="cuda")
    with torch.autocast("cuda", dtype=torch.bfloat16):
        want = block(x)
    for got in (outer(x), torchferro.compile(outer)(x)):
        assert got.dtype == want.dtype == torch.bfloat16
        torch.testing.assert_close(got, want, rtol=0, atol=0)
    torch.testing.assert_close(cblock(x), block(x))
