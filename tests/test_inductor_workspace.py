"""Intermediates a compiled graph keeps allocated from one call to the next (the inductor's
workspace): outputs handed out earlier are never overwritten, calls from several threads at once
each get correct results, and nothing leaks over many calls."""

from __future__ import annotations

import gc
import sys
import threading

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchferro


class Mlp(nn.Module):
    def __init__(self, d=64):
        super().__init__()
        self.ln = nn.LayerNorm(d)
        self.up = nn.Linear(d, 4 * d)
        self.down = nn.Linear(4 * d, d)

    def forward(self, x):
        h = self.up(self.ln(x))
        h = F.gelu(h, approximate="tanh")
        return x + self.down(h), h.sum(-1)


def _model():
    torch.manual_seed(0)
    return Mlp().eval()


def test_outputs_of_earlier_calls_are_not_overwritten():
    torchferro.compiler.reset()
    m = _model()
    compiled = torchferro.compile(m)
    xs = [torch.randn(4, 32, 64) for _ in range(6)]
    with torch.no_grad():
        outs = [compiled(x) for x in xs]
        for x, (y, s) in zip(xs, outs):
            ey, es = m(x)
            torch.testing.assert_close(y, ey)
            torch.testing.assert_close(s, es)
    (entry,) = torchferro.compiler.cache_entries(m.forward)
    assert entry["runner"] == "inductor"
    assert entry["extern_calls"] == 2
    # Distinct outputs, no storage shared between calls.
    ptrs = {y.data_ptr() for y, _ in outs}
    assert len(ptrs) == len(outs)


def test_threads_calling_one_graph_at_once_get_their_own_answers():
    torchferro.compiler.reset()
    m = _model()
    compiled = torchferro.compile(m)
    with torch.no_grad():
        compiled(torch.randn(4, 32, 64))  # compile once, before the threads start
    errors: list[BaseException] = []

    def worker(seed):
        try:
            g = torch.Generator().manual_seed(seed)
            with torch.no_grad():
                for _ in range(25):
                    x = torch.randn(4, 32, 64, generator=g)
                    y, s = compiled(x)
                    ey, es = m(x)
                    torch.testing.assert_close(y, ey)
                    torch.testing.assert_close(s, es)
        except BaseException as e:  # noqa: BLE001 - reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]
    assert len(torchferro.compiler.cache_entries(m.forward)) == 1


def test_no_reference_leak_with_a_workspace():
    torchferro.compiler.reset()
    m = _model()
    compiled = torchferro.compile(m)
    x = torch.randn(2, 8, 64)
    with torch.no_grad():
        for _ in range(200):
            compiled(x)
        gc.collect()
        objects_before = len(gc.get_objects())
        ref_before = sys.getrefcount(x)
        for _ in range(3000):
            compiled(x)
        gc.collect()
    assert sys.getrefcount(x) == ref_before
    assert len(gc.get_objects()) - objects_before < 50


_HEAP_SCRIPT = r"""
import torch, torchferro

def in_heap(ptr):
    for line in open("/proc/self/maps"):
        if line.rstrip().endswith("[heap]"):
            lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
            if lo <= ptr < hi:
                return True
    return False

f = torchferro.compile(lambda x: (x * 2).relu())
assert torch.equal(f(torch.arange(-3.0, 3.0)), torch.tensor([0.0, 0, 0, 0, 2, 4]))
assert len(torchferro.compiler.cache_entries(f)) == 1
placed = []
for _ in range(3):
    t = torch.empty(6 * 1024 * 1024)  # 24 MiB, what a large convolution output takes
    placed.append(in_heap(t.data_ptr()))
    del t
print(" ".join(str(int(p)) for p in placed))
"""


def _heap_placement(tmp_path, env: dict) -> list[int]:
    import os
    import subprocess

    # A file, not `python -c`: frames of code without a source file are never compiled.
    script = tmp_path / "heap_placement.py"
    script.write_text(_HEAP_SCRIPT)
    out = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, **env},
    ).stdout
    return [int(x) for x in out.split()]


def test_large_host_allocations_come_from_the_heap_after_the_first_compile(tmp_path):
    """glibc maps a fresh block (every page of it faulting on first write) for an allocation at
    or above its mmap threshold; the inductor sets that threshold to 32 MiB once, so the same
    large size allocated on every call (a convolution's output) is recycled from the heap. A
    process that set glibc's thresholds itself keeps them."""
    import platform

    import pytest

    if sys.platform != "linux" or platform.libc_ver()[0] != "glibc":
        pytest.skip("glibc's allocator only")
    assert _heap_placement(tmp_path, {}) == [1, 1, 1]
    assert _heap_placement(tmp_path, {"MALLOC_MMAP_THRESHOLD_": "131072"}) == [0, 0, 0]


def _mapping_field(t: torch.Tensor, field: str) -> str:
    """A field of the /proc/self/smaps entry of the mapping holding the middle of `t`'s data
    (the hint splits the mapping at 2 MiB boundaries, so its ends lie in other mappings)."""
    ptr = t.data_ptr() + t.numel() * t.element_size() // 2
    inside = False
    for line in open("/proc/self/smaps"):
        head = line.split()[0]
        if "-" in head and not head.endswith(":"):
            lo, hi = (int(x, 16) for x in head.split("-"))
            inside = lo <= ptr < hi
        elif inside and line.startswith(field + ":"):
            return line.split(":", 1)[1].strip()
    return ""


def _huge_page_hinted(t: torch.Tensor) -> bool:
    """Whether the mapping holding `t` carries MADV_HUGEPAGE (VmFlags `hg`). That is what the
    runtime does; whether the kernel then finds a free 2 MiB page at fault time depends on the
    machine's fragmentation at that instant (a fresh CI machine raced a control check and lost)."""
    return "hg" in _mapping_field(t, "VmFlags").split()


def test_a_large_gemm_output_is_backed_by_huge_pages():
    """A GEMM output of 32 MiB or more is mapped fresh on every call; the runtime asks for
    transparent huge pages before torch writes it (one fault per 2 MiB instead of per 4 KiB:
    GPT-2's 100 MiB logits went from ~87 to ~65 ms a call)."""
    import pytest

    try:
        mode = open("/sys/kernel/mm/transparent_hugepage/enabled").read()
    except OSError:
        pytest.skip("no transparent huge pages")
    if "[madvise]" not in mode:
        pytest.skip(f"transparent huge pages not left to madvise: {mode.strip()}")
    torchferro.compiler.reset()
    a, w = torch.randn(512, 64), torch.randn(64, 20000)  # a 39 MiB result
    f = torchferro.compile(lambda a, w: a @ w)
    with torch.no_grad():
        out = f(a, w)
    torch.testing.assert_close(out, a @ w)
    assert _huge_page_hinted(out)
    eager = a @ w
    # The same allocation made by eager torch gets no hint (the test can tell the two apart).
    assert not _huge_page_hinted(eager)
