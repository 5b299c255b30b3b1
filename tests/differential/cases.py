"""Imports every ``cases_*`` module, which registers its cases in ``runner.CASES``."""

from . import (  # noqa: F401
    cases_aliasing,
    cases_builtins,
    cases_comprehensions,
    cases_containers,
    cases_dunders,
    cases_frames,
    cases_generators,
    cases_grad_decorators,
    cases_grads,
    cases_hash_keys,
    cases_idioms,
    cases_kernels,
    cases_language,
    cases_model_code,
    cases_numpy,
    cases_rng,
    cases_specialization,
    cases_state,
    cases_torch_api,
    cases_training,
)
