"""CUDA autocast compiled by the Rust inductor (issue 16): a `torch.autocast("cuda")` region in
the compiled function, and a frame entered under CUDA autocast, are written out as explicit
casts (`tracer/src/backend/autocast.rs`) and run as our CUDA kernels. Every output's dtype is
eager's exactly; values within 16-bit rounding (the inductor computes a fused chain in float32
and rounds once, where eager rounds after each op, as torch.compile's Inductor does). Skips
without a CUDA device. The CPU-side checks of the mechanism are in `test_autocast.py`."""

from __future__ import annotations

import pytest
import torch
from torch import nn

if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

import torchferro  # noqa: E402
from cuda_env import DEV, cuda_env, launches  # noqa: E402


@pytest.fixture(scope="module", autouse=True)
def _cuda_on(tmp_path_factory):
    with cuda_env(tmp_path_factory):
        yield


def setup_function():
    torchferro.compiler.reset()


def close(got, want, from_16bit=False):
    """Dtypes exact; values within 16-bit rounding where the value is 16-bit or computed from
    16-bit values (`from_16bit`: a float32 `softmax` of a bfloat16 `h` inherits any one-ulp
    difference in `h`, as the CPU rewrite shows for gelu), else within float32's."""
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    if from_16bit or want.dtype in (torch.bfloat16, torch.float16):
        torch.testing.assert_close(got.float(), want.float(), rtol=2e-2, atol=2e-2)
    else:
        torch.testing.assert_close(got, want, rtol=1e-3, atol=1e-3)


def why_not_ours(fn):
    """What the entries of ``fn`` ran on and why, for a failed launch check."""
    return [
        (e["runner"], e["fallback_reasons"])
        for e in torchferro.compiler.cache_entries(fn)
    ]


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_a_cuda_autocast_region_runs_our_kernels_in_eagers_dtypes(dtype):
    torch.manual_seed(0)
    lin = nn.Linear(64, 96).to(DEV)
    norm = nn.LayerNorm(96).to(DEV)

    def f(x, y):
        with torch.autocast("cuda", dtype=dtype):
            h = nn.functional.gelu(lin(x))  # linear: 16-bit; gelu keeps it
            p = torch.softmax(h, -1)  # float32 list
            n = norm(h)  # layer_norm: float32
            s = (h * 2).sum(-1)  # sum: float32
            c = torch.cat([h, y], -1)  # promote: the widest
            e = torch.exp(h)  # float32 list
            with torch.autocast("cuda", enabled=False):
                plain = torch.mm(x, x.t())  # float32 again
        return h, p, n, s, c, e, plain, h.float() + 1

    f_c = torchferro.compile(f, fullgraph=True)
    for rows in (32, 7):
        x = torch.randn(rows, 64, device=DEV)
        y = torch.randn(rows, 5, device=DEV)
        # Inference (the parameters need no gradient here): the training path is `aot`'s.
        with torch.no_grad():
            want = f(x, y)
            before = launches()
            got = f_c(x, y)
            assert launches() > before, why_not_ours(f)
        assert len(got) == len(want)
        # Every output but `plain` (float32 throughout) is computed from the 16-bit `h`.
        for i, (g, w) in enumerate(zip(got, want)):
            close(g, w, from_16bit=i != 6)
    assert not torch.is_autocast_enabled("cuda")
    # Rows 32, then 7: the second call recompiles with a dynamic batch (torch.compile's two
    # compiles); both run our kernels.
    runners = [e["runner"] for e in torchferro.compiler.cache_entries(f)]
    assert runners == ["inductor", "inductor"], why_not_ours(f)


def test_a_compiled_module_called_inside_cuda_autocast_matches_eager():
    """A frame entered under CUDA autocast compiles (guarded on the state) instead of running
    eagerly, as torch.compile does; outside the region it compiles again."""
    torch.manual_seed(0)
    lin = nn.Linear(64, 64).to(DEV)
    lin2 = nn.Linear(64, 32).to(DEV)

    def block(x):
        # Linear in bfloat16, softmax in float32, the second linear in bfloat16 again.
        return lin2(torch.softmax(lin(x), -1) * 2)

    def outer(x):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            return cblock(x)

    cblock = torchferro.compile(block)
    x = torch.randn(16, 64, device=DEV)
    with torch.no_grad():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            want = block(x)
        before = launches()
        for got in (outer(x), torchferro.compile(outer)(x)):
            close(got, want)
        assert launches() > before
        entries = torchferro.compiler.cache_entries(block)
        assert [e["runner"] for e in entries] == ["inductor"]
        assert "AUTOCAST cuda bfloat16" in entries[0]["guards"]
        close(cblock(x), block(x))
    assert len(torchferro.compiler.cache_entries(block)) == 2


def test_gpt2_under_cuda_autocast_is_one_inductor_graph():
    """The bench's gpt2_amp at a small config: GPT-2 called inside `torch.autocast("cuda",
    bfloat16)` in the compiled function is one graph, run by our kernels, with eager's logits
    dtype."""
    transformers = pytest.importorskip("transformers")
    from zoo import gpt2_config

    torch.manual_seed(0)
    cfg = gpt2_config(use_cache=False)
    model = transformers.GPT2LMHeadModel(cfg).to(DEV).eval()

    def forward(ids):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            return model(ids).logits

    f = torchferro.compile(forward, fullgraph=True)
    for t in (16, 9):
        ids = torch.randint(0, cfg.vocab_size, (2, t), device=DEV)
        with torch.no_grad():
            want = forward(ids)
            before = launches()
            got = f(ids)
            assert launches() > before, why_not_ours(forward)
        close(got, want)
    assert torchferro.compiler.cache_entries(forward)[0]["runner"] == "inductor"
