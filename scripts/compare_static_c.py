"""Checks that two builds of torchferro generate the same C for static graphs (issue 18: the
dynamic-shape work must leave a static graph's kernels byte-identical).

Compiles the dynamic-shape acceptance programs (``tests/test_dynamic_inductor.py``) and two
more (rows of 3, reductions over a leading dim, one of them over 4 blocks of columns) with ``dynamic=False`` at sizes 2, 3 and 13
under each build, and compares the generated C:

    python scripts/compare_static_c.py /work/main/python python
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.join(HERE, "..", "tests")

CHILD = r"""
import hashlib, sys, torch, torchferro, torchferro.compiler
sys.path.insert(0, sys.argv[1])
import test_dynamic_inductor as T
extra = {
    "rows3": (T.rows, lambda n: (T.R(3, n), T.R(n), T.R(n))),
    "reduce_leading": (lambda x: x.sum(0), lambda n: (T.R(n, 40),)),
    "reduce_leading_blocks": (lambda x: x.sum(0), lambda n: (T.R(n, 200),)),
    # Session 14 (the symbolic size type): argmax lanes, loop merging and reordering of a
    # transposed pointwise, cat's clamps, a gather, div/mod indices of a permuted reshape.
    "argmax_lanes": (lambda x: x.argmax(-1), lambda n: (T.R(n, 8 * n + 3),)),
    "transpose_add": (lambda x, y: x.t() + y, lambda n: (T.R(n, 5), T.R(5, n))),
    "cat": (lambda x, y: torch.cat([x, y], 1) * 2, lambda n: (T.R(n, 3), T.R(n, n))),
    "embedding": (
        lambda i, w: torch.nn.functional.embedding(i, w) + 1,
        lambda n: (torch.arange(n) % 7, T.R(7, n)),
    ),
    "permute_reshape": (
        lambda x: x.permute(1, 0, 2).reshape(-1, 6).exp(),
        lambda n: (T.R(n, 4, 3),),
    ),
    # Session 17 (symbolic convolution and pooling sizes): a strided convolution into a pool,
    # and cuts (`chunk`, `narrow`) of a static dimension.
    "conv_pool": (
        lambda x, w: torch.nn.functional.max_pool2d(
            torch.nn.functional.conv2d(x, w, padding=1, stride=2).relu(), 2
        ),
        lambda n: (T.R(2, 3, n + 6, n + 7), T.R(4, 3, 3, 3)),
    ),
    "chunk_narrow": (
        lambda x: torch.cat(x.chunk(2, 1)[::-1], 1) + x.narrow(1, 1, 1),
        lambda n: (T.R(n, 8),),
    ),
}
for name, (fn, make) in list(T.PROGRAMS.items()) + list(extra.items()):
    for n in (2, 3, 13):
        torch._dynamo.reset()
        torchferro.compiler.reset()
        f = torchferro.compile(fn, dynamic=False)
        with torch.no_grad():
            f(*make(n))
        [e] = torchferro.compiler.cache_entries(f)
        code = e["output_code"] or ""
        print(name, n, hashlib.sha256(code.encode()).hexdigest())
"""


def _hashes(pythonpath: str) -> list[str]:
    env = dict(os.environ, PYTHONPATH=os.path.abspath(pythonpath))
    # A file, not `-c`: frames of `<string>` code are not compiled.
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(CHILD)
    out = subprocess.run(
        [sys.executable, f.name, os.path.abspath(TESTS)],
        env=env,
        capture_output=True,
        text=True,
    )
    if out.returncode != 0:
        raise SystemExit(f"{pythonpath}: {out.stderr[-2000:]}")
    return out.stdout.splitlines()


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2:
        print(__doc__)
        return 2
    a, b = (_hashes(p) for p in argv)
    differ = [(x, y) for x, y in zip(a, b, strict=True) if x != y]
    for x, y in differ:
        print(f"differs: {x.split()[:2]}")
    print(f"{len(a) - len(differ)} of {len(a)} static graphs generate the same C")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
