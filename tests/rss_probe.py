"""The resident-memory probe that ``test_memory`` and ``test_aot_runtime`` share: a child
process (a fresh allocator, nothing of the test run's own caches) runs a script after
:data:`PRELUDE`, which gives it ``rss()`` (MiB resident after a collection and
``malloc_trim``), and prints one JSON object last; :func:`run_child` returns it."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import torchferro

PRELUDE = r"""
import ctypes, gc, json, os, weakref
import torch, torchferro
from torchferro import _aot

libc = ctypes.CDLL("libc.so.6")


def rss():
    gc.collect()
    libc.malloc_trim(0)
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20

"""


def run_child(script: str, drop_env: tuple[str, ...] = ()) -> dict:
    """Runs ``PRELUDE + script`` with this checkout's package first on the path (and without
    the environment variables ``drop_env``); the last line it prints, as JSON."""
    env = dict(os.environ)
    for k in drop_env:
        env.pop(k, None)
    pkg = os.path.dirname(os.path.dirname(torchferro.__file__))
    env["PYTHONPATH"] = pkg + os.pathsep + env.get("PYTHONPATH", "")
    r = subprocess.run(
        [sys.executable, "-c", PRELUDE + script],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])
