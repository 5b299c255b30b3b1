"""functorch transforms around/inside compiled code: each case in a child process (a crash is a result)."""

import subprocess, sys, os

CASES = {
    "vmap_inside": """
def f(x):
    return torch.vmap(lambda r: r.sin() * 2)(x) + 1
args = (torch.randn(3, 4),)""",
    "grad_inside": """
def f(x):
    return torch.func.grad(lambda r: (r.sin() * r).sum())(x) + 1
args = (torch.randn(3, 4),)""",
    "jacrev_inside": """
def f(x):
    return torch.func.jacrev(lambda r: r.cos() * 3)(x)
args = (torch.randn(4),)""",
    "vmap_of_compiled": """
inner = lambda r: r.sin() * 2 + r.sum()
def f(x):
    return torch.vmap(COMPILE(inner))(x)
args = (torch.randn(3, 4),)
EAGER_F = lambda x: torch.vmap(inner)(x)""",
    "grad_of_compiled": """
inner = lambda r: (r.sin() * r).sum()
def f(x):
    return torch.func.grad(COMPILE(inner))(x)
args = (torch.randn(3, 4),)
EAGER_F = lambda x: torch.func.grad(inner)(x)""",
    "vmap_of_compiled_after_plain": """
inner = lambda r: r.sin() * 2
def f(x):
    c = COMPILE(inner)
    c(x[0])
    return torch.vmap(c)(x)
args = (torch.randn(3, 4),)
EAGER_F = lambda x: torch.vmap(inner)(x)""",
}

TEMPLATE = """
import torch, torchferro, functools
MODE = {mode!r}
if MODE == 'tc':
    COMPILE = lambda g: torch.compile(g, backend='eager')
elif MODE == 'tc-ind':
    COMPILE = torch.compile
elif MODE == 'ferro':
    COMPILE = lambda g: torchferro.compile(g, backend='eager')
else:
    COMPILE = torchferro.compile
{body}
ref = globals().get('EAGER_F', f)(*args)
if 'EAGER_F' in globals():
    got = f(*args)
else:
    got = COMPILE(f)(*args)
print('match' if torch.allclose(ref, got, atol=1e-5) else 'MISMATCH')
"""

for name, body in CASES.items():
    if len(sys.argv) > 1 and name not in sys.argv[1:]:
        continue
    row = []
    for mode in ("tc", "ferro", "ferro-ind"):
        src = TEMPLATE.format(mode=mode, body=body)
        r = subprocess.run(
            [sys.executable, "-c", src],
            capture_output=True,
            text=True,
            env=dict(os.environ, PYTHONPATH="python"),
        )
        out = (r.stdout.strip().splitlines() or [""])[-1]
        if r.returncode:
            out = (
                f"rc={r.returncode} "
                + (r.stderr.strip().splitlines() or [""])[-1][:120]
            )
        row.append(f"{mode}: {out}")
    print(name, " | ".join(row), flush=True)
