"""The shared set-up of the CUDA test modules (``test_cuda*.py``, ``test_aot_cuda.py``): the
environment each module runs under, restored after it, and the launch counter that shows our
kernels ran (not the eager runner). Each module keeps its own autouse fixture, which enters
``cuda_env`` with what that module needs on top."""

from __future__ import annotations

import contextlib
import os

import torch
import torchferro

DEV = torch.device("cuda", 0)


@contextlib.contextmanager
def cuda_env(tmp_path_factory, full_float32: bool = False, **env: str):
    """Our CUDA inductor on (``TORCHFERRO_CUDA=1``) with a module's own kernel cache (a fresh
    temporary ``TORCHFERRO_CACHE_DIR``: the module starts cold and never touches the user's
    cache), plus ``env``; with ``full_float32``, TF32 off for cuDNN and cuBLAS (TF32 rounds
    each GEMM's inputs to 10 bits, so the same extern call on inputs that differ in the last
    float32 bit differs by 1e-3, amplified layer after layer). All restored on exit."""
    env = {
        "TORCHFERRO_CUDA": "1",
        "TORCHFERRO_CACHE_DIR": str(tmp_path_factory.mktemp("kernels")),
        **env,
    }
    old = {k: os.environ.get(k) for k in env}
    tf32 = (torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32)
    os.environ.update(env)
    if full_float32:
        torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = False
    try:
        yield
    finally:
        torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = tf32
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def launches() -> int:
    """CUDA kernels of ours launched in this process so far."""
    return torchferro._C._cuda_kernel_launches()
