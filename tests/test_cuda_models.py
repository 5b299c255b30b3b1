"""The model zoo (``tests/test_models.py``: torchvision CNNs, ViT, a detector, the transformers
decoders, encoders and T5, small configs, random weights) with CUDA parameters and inputs,
compiled by ``torchferro.compile`` with ``TORCHFERRO_CUDA=1`` (the Rust inductor's CUDA
kernels, issue 16), against eager on the same GPU: two input sets each, every output leaf
compared. The launch counter shows our kernels ran. Skips without a CUDA device or without
torchvision/transformers.

Tolerances are test_models' (float32, rtol = atol = 1e-4) widened to 1e-3, as the inductor
bounds there are: our kernels sum in another order than eager's CUDA kernels (one block per
row, a fixed tree), and the deep CNNs amplify the rounding (``INDUCTOR_ATOL`` of
test_models, taken over for the two models it names).
"""

from __future__ import annotations

import pytest
import torch

if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

import test_models as M  # noqa: E402

import torchferro  # noqa: E402
from cuda_env import DEV, cuda_env, launches  # noqa: E402

ATOL = 1e-3
# Models whose graphs launch none of our kernels (values are still compared). mistral (a CPU
# scalar tensor in its sliding-window cache) and vit (`torch._native_multi_head_attention`)
# were here until session 11.
NO_KERNELS: set[str] = set()


@pytest.fixture(scope="module", autouse=True)
def _cuda_on(tmp_path_factory):
    # Full float32 keeps the comparison about our kernels (see `cuda_env`).
    with cuda_env(tmp_path_factory, full_float32=True):
        yield


def to_cuda(x):
    if isinstance(x, torch.Tensor):
        return x.to(DEV)
    if isinstance(x, (list, tuple)):
        return type(x)(to_cuda(v) for v in x)
    if isinstance(x, dict):
        return {k: to_cuda(v) for k, v in x.items()}
    return x


def _assert_matches(expected, actual, path, atol):
    # test_models' comparison, with its module-level tolerance widened for these kernels.
    old = M.RTOL
    M.RTOL = max(old, ATOL)
    try:
        M.assert_matches(expected, actual, path, atol=atol)
    finally:
        M.RTOL = old


@pytest.mark.parametrize("name", M.NAMES)
def test_model_on_cuda_matches_eager(name):
    model = M.build(name).to(DEV)
    compiled = torchferro.compile(model)
    before = launches()
    atol = max(ATOL, M.INDUCTOR_ATOL.get(name, 0.0))
    with torch.no_grad():
        for seed in (0, 1):
            args = to_cuda(M.inputs(name, seed))
            want = model(*args)
            got = compiled(*args)
            _assert_matches(want, got, f"{name}, input set {seed}", atol)
    ran = launches() > before
    assert ran != (name in NO_KERNELS), f"our kernels ran: {ran}"
