"""Inductor cache entries and C compiles (a fresh kernel cache per program) against graph counts
(torchferro's counting backend) per probe program. GRAD=1: calls with grad enabled."""

import os
import sys
import tempfile

import torch
import torchferro
import torchferro.compiler
from probe import SIZES, P
from programs.counting import Count
from torchferro import _C

for name in sys.argv[1:] or list(P):
    f, make = P[name]
    for dyn in (None, True):
        torchferro.compiler.reset()
        fc = Count()
        c = torchferro.compile(f, backend=fc, dynamic=dyn)
        for s in SIZES:
            c(*make(s, torch.Generator().manual_seed(s)))
        torchferro.compiler.reset()
        os.environ["TORCHFERRO_CACHE_DIR"] = tempfile.mkdtemp(prefix="tf-dr31-")
        spec0 = _C._dynamic_specializations()
        pc0 = _C.precompile_counters()
        c = torchferro.compile(f, dynamic=dyn)
        with torch.set_grad_enabled(bool(os.environ.get("GRAD"))):
            for s in SIZES:
                c(*make(s, torch.Generator().manual_seed(s)))
        e = torchferro.compiler.cache_entries(c)
        flag = "ENTRIES>GRAPHS" if len(e) > fc.n else ""
        print(
            f"{name:24s} dyn={dyn!s:5s} graphs={fc.n} entries={len(e)} runners={sorted({x['runner'] for x in e})} spec={_C._dynamic_specializations() - spec0} pc={[b - a for a, b in zip(pc0, _C.precompile_counters())]} {flag}",
            flush=True,
        )
        torchferro.compiler.reset()
