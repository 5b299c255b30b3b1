"""Why a probe program specializes: torchferro's dynamic-shape log for one program, dynamic=True."""

import logging
import sys

import torch
import torchferro
from probe import P

logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
logging.getLogger("torchferro.dynamic").setLevel(logging.DEBUG)
for name in sys.argv[1:]:
    f, make = P[name]
    c = torchferro.compile(f, dynamic=True, backend="eager")
    print("==", name)
    for s in (4, 7):
        c(*make(s, torch.Generator().manual_seed(s)))
    torchferro.compiler.reset()
