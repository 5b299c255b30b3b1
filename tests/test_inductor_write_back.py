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

import torch
from inductor_checks import _kernel_cache, check  # noqa: F401 - the fixture is used by pytest

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
