"""Inputs written in place (`inductor/src/lower/write_back.rs`): each new value is stored straight
into its input's buffer, ordered so that no value is computed after an input it reads was
overwritten, and fused into one kernel with the other stores of its size where every point reads
only the element it stores (`schedule.rs::may_store_input`). A cycle (two values each reading the
other's old input) or a value reading its own input at another element goes through a temporary (a register
where it is read only at its own element).
Every case compares results and the written inputs with eager, and pins the kernel count that
the order and fusion rules give.
"""

from __future__ import annotations

import os

import hypothesis.strategies as st
import torch
from hypothesis import given
from inductor_checks import SETTINGS, _kernel_cache, check  # noqa: F401 - the fixture is used

N = 40_000


def _vecs(k, n=N):
    g = torch.Generator().manual_seed(k)
    return [torch.randn(n, generator=g) for _ in range(k)]


def test_a_moment_and_the_update_reading_it_are_one_kernel_storing_both():
    def f(p, g, m):
        m.mul_(0.9).add_(g, alpha=0.1)
        p.add_(m, alpha=-0.01)

    # p's new value reads m's old value: p is stored first, then m, in one pass.
    entry = check(f, *_vecs(3), kernels=1)
    assert entry["output_code"].count("[x0] = ") == 2, entry["output_code"]


def test_two_values_reading_each_others_old_input_go_through_a_temporary():
    def f(a, b):
        t = a.clone()
        a.add_(b)
        b.mul_(t)

    # a's value is computed into a temporary (a register: read only at its own element), b is
    # stored, then a: still one pass.
    entry = check(f, *_vecs(2), kernels=1)
    assert entry["output_code"].count("[x0] = ") == 2, entry["output_code"]


def test_a_value_reading_its_own_input_at_another_element_is_staged():
    def f(x, y):
        x.sub_(x.t().contiguous()).mul_(y)

    # Stored in place, the lower triangle would read the upper one's new values.
    check(f, *[v.view(200, 200) for v in _vecs(2)], kernels=2)


def test_a_store_never_joins_a_kernel_that_reads_its_input_at_another_element():
    def f(a, b):
        b.mul_(2)
        a.add_(b.t())

    # a's value reads b transposed: a is stored first, and b's store starts its own kernel.
    check(f, *[v.view(200, 200) for v in _vecs(2)], kernels=2)


def test_a_scalar_input_read_by_a_larger_value_is_written_after_it():
    def f(x, s):
        s.add_(1)
        x.mul_(s)

    x, _ = _vecs(2)
    check(f, x, torch.tensor([0.5]), kernels=2)


def test_a_per_tensor_scalar_is_computed_once_before_the_loop():
    def f(p, step):
        step.add_(1)
        p.mul_(1 - 0.999**step)

    entry = check(f, _vecs(1)[0], torch.tensor(3.0))
    code = entry["output_code"]
    # The power of the loaded step is printed at the kernel's top level, not per element.
    pow_lines = [line for line in code.splitlines() if "powf(" in line]
    assert pow_lines and all(line.startswith("  const") for line in pow_lines), code


def _three_way(a, b, c):
    nb = a + b + c
    nc = a + c + b
    b.add_(nb - b)
    c.add_(nc - c)
    a.mul_(2)


def test_values_reading_each_other_and_a_first_input_read_by_both_terminate(tmp_path):
    """b's and c's new values each read the other's old input and a's; a's reads only a. No
    value is free to go first, and staging a (the first pending) freed nothing: the old loop
    staged a again on every round, forever. Each round now stages a value that still reads an
    input (`write_back_inputs`), so the loop ends by construction. Run in a child process so a
    regression fails on its timeout instead of hanging the suite."""
    import subprocess
    import sys

    code = (
        "import torch, test_inductor_write_back as t\n"
        "from inductor_checks import check\n"
        "check(t._three_way, *[v.round() for v in t._vecs(3)])\n"
        "print('ok')\n"
    )
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join(sys.path),
        TORCHFERRO_CACHE_DIR=str(tmp_path),
    )
    r = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stderr[-3000:]


@SETTINGS
@given(data=st.data())
def test_generated_inputs_updated_from_each_others_old_values(data):
    """k inputs, each updated in place (in a drawn order) to its own value scaled plus a drawn
    set of the others' OLD values (read before any write), so the write-backs read each other's
    inputs in every pattern: chains, cycles, one input read by all. Integer-valued floats keep
    every sum exact, so results and written inputs equal eager's whatever the store order."""
    k = data.draw(st.integers(2, 4), label="inputs")
    reads = [
        data.draw(
            st.sets(st.sampled_from([j for j in range(k) if j != i])), label=f"reads{i}"
        )
        for i in range(k)
    ]
    order = data.draw(st.permutations(range(k)), label="order")
    scale = [
        data.draw(st.sampled_from([1.0, 2.0, -1.0]), label=f"scale{i}")
        for i in range(k)
    ]

    def f(*xs):
        news = []
        for i in range(k):
            v = xs[i] * scale[i]
            for j in sorted(reads[i]):
                v = v + xs[j]
            news.append(v)
        for i in order:
            xs[i].add_(news[i] - xs[i])

    g = torch.Generator().manual_seed(k)
    check(f, *[torch.randint(-8, 9, (64,), generator=g).float() for _ in range(k)])
