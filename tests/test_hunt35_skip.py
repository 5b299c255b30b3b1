"""Session 35 (hunt35): frames the hook must run as they are.

- ``typing_extensions`` is one file in site-packages, not a package: the skip list named it but
  only packages were skipped, so its helpers that typing calls natively (``_collect_parameters``
  when a ``typing.Union[...]`` misses typing's cache, as ``torch.autograd.backward`` and
  ``record_function`` in an optimizer's ``zero_grad`` do) were traced as frames of their own and logged graph breaks at
  their ``sys._getframe``. torch.compile inlines nothing there either (no tensors).
- a function a native ``torch.vmap`` / ``torch.func.grad`` calls gets the transform's wrapper
  tensors (a ``BatchedTensor`` shows one slice's sizes): compiled by the inductor, its kernel
  read them as plain memory and the process crashed. It runs as it is, as eager runs it.
"""

import os
import subprocess
import sys
import typing

import torch
import torchferro


def test_typing_extensions_frames_are_not_traced():
    p = torch.nn.Parameter(torch.randn(4))
    opt = torch.optim.SGD([p], lr=0.1)

    def f(x):
        opt.zero_grad()
        loss = (p * x).sum()
        loss.backward()  # run natively: torch.autograd.backward evaluates typing.Union[...]
        return loss.detach()

    for clear in typing._cleanups:  # typing's caches cold, as in a fresh process
        clear()
    x = torch.randn(4)
    e = torchferro.explain(f, x, backend="eager")
    where = [str(b) for b in e.break_reasons]
    assert not any("typing_extensions" in w for w in where), where
    assert e.graph_count == 2, where
    assert torch.equal(p.grad, x)
    assert torch.equal(torchferro.compile(f, backend="eager")(x), (p * x).sum())


_VMAP_CHILD = """
import torch, torchferro
def f(x):
    return torch.vmap(lambda r: r.sin() * 2)(x) + 1
def h(x):
    return torch.vmap(lambda r: r.sin() * 2 + r.sum())(x) + 1
def g(x):
    return torch.func.grad(lambda r: (r.sin() * r).sum())(x) * 2
x = torch.randn(3, 4)
for fn in (f, h, g):
    got = torchferro.compile(fn)(x)
    assert torch.allclose(got, fn(x), atol=1e-6), fn.__name__
    got = torchferro.compile(fn)(x)
    assert torch.allclose(got, fn(x), atol=1e-6), fn.__name__
inner = lambda r: r.sin() * 2 + r.sum()
c = torchferro.compile(inner)
c(x[0])  # compiled for a plain tensor first: the batched call must not reuse that entry
assert torch.allclose(torch.vmap(c)(x), torch.vmap(inner)(x), atol=1e-6)
print("ok")
"""


def test_function_under_native_vmap_is_not_compiled_by_the_inductor(tmp_path):
    # In a child: the old failure was a segmentation fault. From a file: the hook runs the
    # lambdas of `python -c` code (file "<string>") as they are.
    script = tmp_path / "vmap_child.py"
    script.write_text(_VMAP_CHILD)
    env = dict(os.environ)
    r = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert r.returncode == 0 and r.stdout.strip() == "ok", (
        r.returncode,
        r.stderr[-2000:],
    )
