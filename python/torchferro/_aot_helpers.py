"""Host calls of compiled backward graphs whose inputs the inductor cannot size ahead.

``embedding_bag_backward`` is the backward of ``F.embedding_bag``
(``fx/src/autodiff/rules/embedding_bag.rs``): the bag bookkeeping ``_embedding_bag`` makes
(``offset2bag``, ``bag_size``, the max positions) has data-dependent sizes, so the forward keeps
only the bags and this call takes the bookkeeping again from the saved indices and offsets,
then runs torch's own backward kernels for the weight and the per-sample weights.

``max_pool2d_backward`` is the backward of ``F.max_pool2d`` (the argmax taken again from the saved
input); the inductor lowers it as a gather (``inductor/src/lower/pool.rs``).

``sdpa_forward`` / ``sdpa_backward`` are CUDA attention in training
(``fx/src/autodiff/fused_attention.rs``): torch picks the fused kernel at run time from the
device's capability, so the host asks ``torch._fused_sdp_choice`` as eager's dispatch does and
runs that backend's forward (output and logsumexp) and, in the backward, its fused backward on
the saved output and logsumexp (flash, memory-efficient or cuDNN), as torch.compile's graphs do.
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


# ``torch.nn.attention.SDPBackend`` values ``torch._fused_sdp_choice`` returns.
_FLASH = 1
_EFFICIENT = 2
_CUDNN = 3


def _sdpa_backend(q, k, v, mask, is_causal, scale):
    """The backend eager's attention takes for these operands in training (they require grad
    there, which some of torch's constraints read)."""
    if q.shape[-1] % 8:
        # Eager pads such heads for the flash kernel and slices its result: the fused pair here
        # takes unpadded heads only.
        return 0
    qg, kg, vg = (t.detach().requires_grad_(True) for t in (q, k, v))
    backend = torch._fused_sdp_choice(qg, kg, vg, mask, 0.0, is_causal, scale=scale)
    # A mask goes to the memory-efficient and cuDNN kernels (as eager's dispatch does); another
    # backend with a mask recomputes.
    return backend if mask is None or backend in (_EFFICIENT, _CUDNN) else 0


def _sdpa_bias(mask, q, k):
    """The attention bias eager's dispatch hands the memory-efficient kernel: a boolean mask
    as 0 where True and -inf where False in q's dtype, expanded to [B, H, L, S], its rows
    padded to a multiple of 16 elements and sliced back (the kernel's alignment)."""
    if mask is None:
        return None
    if mask.dtype == torch.bool:
        mask = torch.zeros_like(mask, dtype=q.dtype).masked_fill_(
            mask.logical_not(), float("-inf")
        )
    elif mask.dtype != q.dtype:
        mask = _as_q_dtype(mask, q)
    s = k.shape[2]
    bias = mask.expand(q.shape[0], q.shape[1], q.shape[2], s)
    if s % 16:
        bias = torch.nn.functional.pad(bias, (0, 16 - s % 16))[..., :s]
    return bias


# What eager's dispatch writes for False in a boolean mask it hands cuDNN: a finite fill rather
# than -inf (torch's `convert_boolean_attn_mask_cudnn`), so a row with every key masked attends
# uniformly there as it does here.
_CUDNN_MASKED = -65504.0


# The last boolean mask converted for cuDNN: (mask, its version, q's dtype, the bias). A
# model's layers pass one mask tensor to each attention, forward and backward; the entry holds
# the mask itself, so the identity test cannot meet another tensor at a reused address, and
# an in-place write to the mask changes its version.
_cudnn_bias_memo = None


def _as_q_dtype(mask, q):
    """An additive mask of another float dtype than q's, in q's: eager's math form adds the
    mask into the scores in place, in their dtype. (Eager's dispatch hands such a mask to
    torch 2.11's cuDNN kernel as it is, which reads it as q's dtype and answers wrongly,
    upstream #191612; its memory-efficient kernel refuses it.)"""
    return mask.to(q.dtype)


def _cudnn_bias(mask, q):
    """The attention bias eager's dispatch hands the cuDNN kernel: a boolean mask as 0 where
    True and :data:`_CUDNN_MASKED` where False in q's dtype; an additive mask in q's dtype."""
    global _cudnn_bias_memo
    if mask is None:
        return None
    if mask.dtype != torch.bool:
        return mask if mask.dtype == q.dtype else _as_q_dtype(mask, q)
    memo = _cudnn_bias_memo
    if (
        memo is not None
        and memo[0] is mask
        and memo[1] == mask._version
        and memo[2] == q.dtype
    ):
        return memo[3]
    zero = torch.zeros((), dtype=q.dtype, device=mask.device)
    bias = torch.where(mask.logical_not(), _CUDNN_MASKED, zero)
    _cudnn_bias_memo = (mask, mask._version, q.dtype, bias)
    return bias


def _lse_rows(q):
    """Rows of the saved logsumexp: the query length padded to a multiple of 32 (the
    memory-efficient kernel's form; the flash kernel's is padded to it with zeros)."""
    return (q.shape[2] + 31) // 32 * 32


def sdpa_forward(q, k, v, mask, is_causal, scale):
    """(output, logsumexp) of ``F.scaled_dot_product_attention(q, k, v, mask, is_causal=,
    scale=)``
    on the fused kernel eager's attention runs (``[B, H, L]`` logsumexp in float32, padded to
    :func:`_lse_rows`; zeros where the backend has no fused backward here)."""
    b, h, l, _ = q.shape
    backend = _sdpa_backend(q, k, v, mask, is_causal, scale)
    if backend == _FLASH:
        r = torch.ops.aten._scaled_dot_product_flash_attention(
            q, k, v, 0.0, is_causal, False, scale=scale
        )
        out, lse = r[0], r[1]
        lse = torch.nn.functional.pad(lse.float(), (0, _lse_rows(q) - l))
        return out, lse.contiguous()
    if backend == _EFFICIENT:
        out, lse, _, _ = torch.ops.aten._scaled_dot_product_efficient_attention(
            q, k, v, _sdpa_bias(mask, q, k), True, 0.0, is_causal, scale=scale
        )
        if lse.shape[2] != _lse_rows(q):
            lse = torch.nn.functional.pad(lse, (0, _lse_rows(q) - lse.shape[2]))
        return out, lse.contiguous()
    if backend == _CUDNN:
        r = torch.ops.aten._scaled_dot_product_cudnn_attention(
            q, k, v, _cudnn_bias(mask, q), True, 0.0, is_causal, False, scale=scale
        )
        # Its logsumexp is [B, H, L, 1].
        lse = r[1].reshape(b, h, l)
        if _lse_rows(q) != l:
            lse = torch.nn.functional.pad(lse, (0, _lse_rows(q) - l))
        return r[0], lse.contiguous()
    out = torch.nn.functional.scaled_dot_product_attention(
        q, k, v, attn_mask=mask, is_causal=is_causal, scale=scale
    )
    return out, q.new_zeros((b, h, _lse_rows(q)), dtype=torch.float32)


def _like(t, ref):
    """``t`` in ``ref``'s memory layout (``empty_like``'s preserve format), copied only when it
    is laid out otherwise. cuDNN's forward allocates its output like q and its backward reads
    the output and its gradient in that layout: the graph may hold them in another (the
    compiled forward's promise for a masked half-precision call is the memory-efficient
    kernel's ``[B, L, H, E]``, the host copying cuDNN's result into it), and cuDNN's backward
    handed a ``[B, L, H, E]`` output returned wrong gradients (H100, session 33)."""
    if t.shape != ref.shape or t.stride() == ref.stride():
        return t
    r = torch.empty_like(ref, dtype=t.dtype)
    if r.stride() == t.stride():
        return t
    return r.copy_(t)


def sdpa_backward(grad, q, k, v, out, lse, mask, is_causal, scale):
    """(grad_query, grad_key, grad_value) of :func:`sdpa_forward`'s attention: the same
    backend's fused backward on the saved output and logsumexp; for a backend without one
    here, torch's autograd through the attention again."""
    backend = _sdpa_backend(q, k, v, mask, is_causal, scale)
    l, s = q.shape[2], k.shape[2]
    if backend == _FLASH:
        # Dropout is off: the Philox state the kernel reads only with dropout is a placeholder.
        rng = torch.zeros(2, dtype=torch.uint64, device=q.device)
        unused = torch.zeros((), dtype=torch.uint64, device=q.device)
        return torch.ops.aten._scaled_dot_product_flash_attention_backward(
            grad,
            q,
            k,
            v,
            out,
            lse[:, :, :l].contiguous(),
            None,
            None,
            l,
            s,
            0.0,
            is_causal,
            rng,
            unused,
            scale=scale,
        )
    if backend == _EFFICIENT:
        seed = torch.zeros((), dtype=torch.int64, device=q.device)
        r = torch.ops.aten._scaled_dot_product_efficient_attention_backward(
            grad,
            q,
            k,
            v,
            _sdpa_bias(mask, q, k),
            out,
            lse,
            seed,
            seed,
            0.0,
            [True, True, True, False],
            is_causal,
            scale=scale,
        )
        return r[0], r[1], r[2]
    if backend == _CUDNN:
        seed = torch.zeros((), dtype=torch.int64, device=q.device)
        return torch.ops.aten._scaled_dot_product_cudnn_attention_backward(
            _like(grad, q),
            q,
            k,
            v,
            _like(out, q),
            lse[:, :, :l].unsqueeze(-1).contiguous(),
            seed,
            seed,
            _cudnn_bias(mask, q),
            None,
            None,
            l,
            s,
            0.0,
            is_causal,
            scale=scale,
        )
    with torch.enable_grad():
        qg, kg, vg = (t.detach().requires_grad_(True) for t in (q, k, v))
        o = torch.nn.functional.scaled_dot_product_attention(
            qg, kg, vg, attn_mask=mask, is_causal=is_causal, scale=scale
        )
        return torch.autograd.grad(o, (qg, kg, vg), grad)


def max_pool2d_backward(grad, x, kernel_size, stride, padding, dilation, ceil_mode):
    """The input gradient of ``F.max_pool2d`` (``fx/src/autodiff/rules/train.rs``): the forward
    keeps no indices, so they are taken again from the saved input, the same windows, then
    torch's own backward kernel routes each window's gradient to its argmax."""
    _, indices = torch.ops.aten.max_pool2d_with_indices(
        x, kernel_size, stride, padding, dilation, ceil_mode
    )
    return torch.ops.aten.max_pool2d_with_indices_backward(
        grad, x, kernel_size, stride, padding, dilation, ceil_mode, indices
    )
