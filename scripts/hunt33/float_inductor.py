"""The float idioms on the default backend (the inductor), dynamic=True: values against eager
at every size, cache entries and runners, and how many graphs were specialized at an
assignment (0 past the first call: the symbolic library served every size)."""

import importlib
import os
import sys
import tempfile

os.environ.setdefault("TORCHFERRO_CACHE_DIR", tempfile.mkdtemp(prefix="tf-h33-"))
import torch
import torchferro
import torchferro.compiler
from torchferro import _C

sys.path.insert(0, "scripts/hunt33")
sys.path.insert(0, "scripts/hunt34")
sys.path.insert(0, "tests")
# IDIOMS_MODULE=float_rounding runs session 34's idioms.
IDIOMS = importlib.import_module(os.environ.get("IDIOMS_MODULE", "float_idioms")).IDIOMS
from programs.compare import run_over_sizes

SIZES = [4, 7, 9, 4, 3, 2, 12]
for name in sys.argv[1:] or IDIOMS:
    prog, make = IDIOMS[name]
    torchferro.compiler.reset()
    f = torchferro.compile(prog, dynamic=True)
    try:
        with torch.no_grad():
            run_over_sizes(prog, make, SIZES[:1], f)
            spec = _C._dynamic_specializations()
            run_over_sizes(prog, make, SIZES[1:], f)
            spec = _C._dynamic_specializations() - spec
        entries = torchferro.compiler.cache_entries(f)
        print(
            f"{name:20s} entries {len(entries)} runners {[e['runner'] for e in entries]} specializations after the first {spec}",
            flush=True,
        )
    except Exception as e:  # noqa: BLE001
        print(f"{name:20s} ERROR {type(e).__name__}: {str(e)[:400]}", flush=True)
    finally:
        torchferro.compiler.reset()
