"""A pytest plugin that keeps one shard of the collected tests, so that `gpu_suite.sh` can run
the suite as several processes within the device machine's per-command time limit.

TORCHFERRO_SHARD=i and TORCHFERRO_NSHARDS=n keep the tests whose collection index is i mod n
(round robin, so each shard gets a share of every module and the shards take similar times).
"""

from __future__ import annotations

import os


def pytest_collection_modifyitems(config, items):
    n = int(os.environ.get("TORCHFERRO_NSHARDS", "1"))
    i = int(os.environ.get("TORCHFERRO_SHARD", "0"))
    if n <= 1:
        return
    if not 0 <= i < n:
        raise ValueError(f"TORCHFERRO_SHARD={i} is not in 0..{n - 1}")
    keep = [item for k, item in enumerate(items) if k % n == i]
    drop = [item for k, item in enumerate(items) if k % n != i]
    config.hook.pytest_deselected(items=drop)
    items[:] = keep
