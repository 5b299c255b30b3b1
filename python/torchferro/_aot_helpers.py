"""Host calls of compiled backward graphs whose inputs the inductor cannot size ahead.

``embedding_bag_backward`` is the backward of ``F.embedding_bag``
(``fx/src/autodiff/rules/embedding_bag.rs``): the bag bookkeeping ``_embedding_bag`` makes
(``offset2bag``, ``bag_size``, the max positions) has data-dependent sizes, so the forward keeps
only the bags and this call takes the bookkeeping again from the saved indices and offsets,
then runs torch's own backward kernels for the weight and the per-sample weights.
"""

from __future__ import annotations

import torch


def embedding_bag_backward(
    grad,
    weight,
    indices,
    offsets,
    per_sample_weights,
    mode,
    scale_grad_by_freq,
    include_last_offset,
    padding_idx,
    need_weight,
    need_per_sample_weights,
):
    """(gradient of ``weight`` or ``None``, gradient of ``per_sample_weights`` or ``None``).
    ``mode``: 0 sum, 1 mean, 2 max; ``padding_idx``: -1 for none (as ``F.embedding_bag``
    hands them to ``torch.embedding_bag``)."""
    psw_shape = None if per_sample_weights is None else per_sample_weights.shape
    if indices.dim() == 2:
        # F.embedding_bag's mini-batch form: fixed-length bags over the flattened indices.
        offsets = torch.arange(
            0,
            indices.numel(),
            indices.size(1),
            dtype=indices.dtype,
            device=indices.device,
        )
        include_last_offset = False
        indices = indices.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    _, offset2bag, bag_size, max_indices = torch.ops.aten._embedding_bag(
        weight,
        indices,
        offsets,
        scale_grad_by_freq,
        mode,
        False,
        per_sample_weights,
        include_last_offset,
        padding_idx,
    )
    gw = None
    if need_weight:
        gw = torch.ops.aten._embedding_bag_backward(
            grad,
            indices,
            offsets,
            offset2bag,
            bag_size,
            max_indices,
            weight.size(0),
            scale_grad_by_freq,
            mode,
            False,
            per_sample_weights,
            padding_idx,
        )
    gp = None
    if need_per_sample_weights:
        gp = torch.ops.aten._embedding_bag_per_sample_weights_backward(
            grad, weight, indices, offsets, offset2bag, mode, padding_idx
        ).reshape(psw_shape)
    return gw, gp
