"""``python -m differential.child CASE MODE``: runs one differential case in this process and
exits 0 (passed), 1 (a difference: the assertion is printed) or ``XFAIL_EXIT`` (breadth xfail).
A crash shows as a negative status in the parent."""

from __future__ import annotations

import sys
import traceback

import pytest

from differential import cases  # noqa: F401  (registers the cases)
from differential.runner import CASES, XFAIL_EXIT, differential


def main() -> int:
    name, mode = sys.argv[1:3]
    (c,) = [c for c in CASES if c.name == name]
    try:
        differential(c, mode)
    except pytest.xfail.Exception as e:
        print(e)
        return XFAIL_EXIT
    except BaseException:  # noqa: BLE001  (reported to the parent)
        traceback.print_exc()
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
