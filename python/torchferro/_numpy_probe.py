"""The tracer's trace-time numpy calls on probe arrays (``tracer/src/interp/numpy.rs``): numpy's
floating-point warnings and Python warnings are silenced, since a probe of ones may warn where
the program's own values do not."""

from __future__ import annotations

import warnings


def probe(f, *args, **kwargs):
    import numpy as np

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return f(*args, **kwargs)
