"""The runtime of training graphs compiled forward and backward (``tracer/src/backend/aot.rs``).

One ``torch.autograd.Function`` runs a graph's compiled forward and, on ``.backward()``, its
backward graph (derived in Rust, compiled on first use). Parameters stay leaves: the Function
returns their gradients and autograd accumulates ``.grad`` exactly as in eager. Outputs that
carry no gradient are marked non-differentiable. The backward is not itself differentiable:
double backward (``create_graph=True``) raises a clear error.
"""

from __future__ import annotations

import math

import torch

#: What ran: ``compiled`` graphs built, ``forward``/``backward`` calls of compiled graphs,
#: ``nodes`` the forwards made (one per backward component of a graph, see
#: ``CompiledGraph``), ``fallback`` graphs that run through torch's autograd instead,
#: ``saved_bytes`` of the last compiled graph. Tests read these to know the compiled path ran.
counters: dict[str, int] = {
    "compiled": 0,
    "forward": 0,
    "nodes": 0,
    "backward": 0,
    "fallback": 0,
    "saved_bytes": 0,
}
#: The reasons of the fallbacks, latest last.
fallback_reasons: list[str] = []


def reset() -> None:
    for k in counters:
        counters[k] = 0
    fallback_reasons.clear()


def note_fallback(why: str) -> None:
    counters["fallback"] += 1
    fallback_reasons.append(why)


def note_compiled(saved_bytes: int) -> None:
    counters["compiled"] += 1
    counters["saved_bytes"] = saved_bytes


#: Where ``ctx.saved_values`` holds a tensor (kept by ``save_for_backward``).
_TENSOR = object()


class CompiledGraph(torch.autograd.Function):
    """One node of a compiled training graph. ``part`` is None (the whole graph) or
    ``(p, shared)``: the node of the outputs of backward component ``p``
    (``autodiff::components``), where the graph's outputs share no op between components. One
    node per component lets autograd free and retain each as it does eager's separate nodes
    (a GAN step: ``ld.backward()``, then a backward through ``fake``); the forward runs once,
    for the first component's node, and ``shared`` hands its results to the others."""

    @staticmethod
    def forward(ctx, core, part, *inputs):
        n_user, differentiable, *_ = core.layout
        prep = None if part is None else part[1].get("prep")
        if prep is None:
            prep = _prepare(core, inputs)
            if part is not None:
                part[1]["prep"] = prep
            counters["forward"] += 1
        outs, tensors, n_read, saved_values = prep
        counters["nodes"] += 1
        ctx.save_for_backward(*tensors)
        ctx.n_read = n_read
        ctx.saved_values = saved_values
        ctx.core = core
        # An output nothing used gets `None`, not zeros the size of the output (GPT-2's logits
        # beside its loss: a 103 MB fill and read per step); the backward is derived without it.
        ctx.set_materialize_grads(False)
        user = outs[:n_user]
        ctx.output_metas = [(o.shape, o.dtype, o.device) for o in user]
        mine = range(n_user) if part is None else part[1]["returns"][part[0]]
        ctx.returned = None if part is None else mine
        diff = set(differentiable)
        nondiff = [user[i] for i in mine if i not in diff]
        if nondiff:
            ctx.mark_non_differentiable(*nondiff)
        return tuple(user[i] for i in mine)

    @staticmethod
    def backward(ctx, *grads):
        if torch.is_grad_enabled():
            # `create_graph=True`: the caller wants to differentiate the gradients again, which
            # this backward (not itself differentiable) cannot give; refusing beats a gradient
            # penalty that silently contributes nothing.
            raise RuntimeError(
                "torchferro: double backward (create_graph=True) through a compiled training "
                "graph is not supported; compile with backend='eager' for higher-order gradients"
            )
        core = ctx.core
        n_user, differentiable, _, grad_inputs, n_inputs, *_ = core.layout
        if ctx.returned is not None:
            full = [None] * n_user
            for i, g in zip(ctx.returned, grads, strict=True):
                full[i] = g
            grads = full
        absent = [k for k, i in enumerate(differentiable) if grads[i] is None]
        if len(absent) == len(differentiable):
            # Reached with no gradient (another component's backward, an input handed through
            # a later graph): nothing is read, so a backward that already ran is no error.
            return (None,) * (n_inputs + 2)
        # Unpacking checks every saved tensor's version, the watched ones included.
        all_saved = ctx.saved_tensors
        tangents = [
            grads[i].contiguous() for i in differentiable if grads[i] is not None
        ]
        tensors = iter(all_saved[: ctx.n_read])
        saved = [next(tensors) if v is _TENSOR else v for v in ctx.saved_values]
        with torch.no_grad():
            computed = core.backward(saved, tangents, absent) if absent else None
            if computed is None:
                full = [
                    grads[i].contiguous()
                    if grads[i] is not None
                    else _zeros_like_output(ctx, i)
                    for i in differentiable
                ]
                computed = core.backward(saved, full)
        result = [None] * n_inputs
        for k, i in enumerate(grad_inputs):
            result[i] = computed[k]
        counters["backward"] += 1
        return (None, None, *result)


def _prepare(core, inputs):
    """Runs the compiled forward; returns its outputs, the tensors to save (those the backward
    reads first, ``n_read`` of them, then those only watched) and the saved values with
    ``_TENSOR`` where a tensor goes."""
    n_user, _, saved_spec, _, _, mutated, watched, copied, *_ = core.layout
    outs = core.forward(list(inputs))
    # An input the graph writes is written after this forward (`apply`): the backward
    # reads the value it had here, so it keeps a copy of that. So it does of a value that
    # shares storage with an input eager's backward would not save (`autodiff::watch`: the
    # caller may write that input before `.backward()`, where eager still trains).
    written = {i for i, *_ in mutated}
    saved = [
        (inputs[i].clone() if i in written else inputs[i]) if kind == 0 else outs[i]
        for kind, i in saved_spec
    ]
    for k in copied:
        if not (saved_spec[k][0] == 0 and saved_spec[k][1] in written):
            saved[k] = saved[k].clone()
    # A saved intermediate that is a view (of an input: attention's `q = x[None, None]`)
    # was made here, where grad mode is off. Unpacking such a view after the caller wrote
    # its base raises autograd's "A view was created in no_grad mode ..." before the
    # version check; eager's saved view, made with grad mode on, raises "modified by an
    # inplace operation". A detached alias shares the storage and the version counter and
    # carries no view history, so its unpacking checks the version as eager's does.
    for k, (kind, i) in enumerate(saved_spec):
        s = saved[k]
        if kind == 1 and i >= n_user and isinstance(s, torch.Tensor) and s._is_view():
            saved[k] = s.detach()
    # A symbolic int input (automatic dynamic made an int argument a graph input) may be
    # saved too: autograd saves tensors only, so other values are kept on `ctx` in place.
    tensors = [s for s in saved if isinstance(s, torch.Tensor)]
    # The inputs and outputs eager's backward would have saved (`autodiff::watch`) are
    # saved too, read by nothing: autograd checks their version counters at `.backward()`,
    # so a caller's in-place write to a returned `tanh(h)` (which the backward recomputes
    # from `h`) or to an input between the call and `.backward()` raises eager's "modified
    # by an inplace operation" error instead of giving a gradient of other values.
    n_read = len(tensors)
    held = {id(t) for t in tensors}
    for kind, i in watched:
        t = inputs[i] if kind == 0 else outs[i]
        if id(t) not in held:
            held.add(id(t))
            tensors.append(t)
    # A written input eager's backward keeps (`autodiff::watch::written_kept`) is saved
    # itself, its version counter moved by the `k` writes of this graph that came before
    # eager's op read it; `apply` sets the counter to its final version after the
    # write-back. A version before the graph's last write then raises at `.backward()` as
    # eager's does (`r = w * s`, then `s.mul_(3)` under `no_grad`), and so does a caller's
    # write after the call; the backward itself reads the copy saved above.
    for i, _, _, k in mutated:
        if k is None:
            continue
        t = inputs[i]
        if k:
            _set_version(t, t._version + k)
        if id(t) not in held:
            held.add(id(t))
            tensors.append(t)
    saved_values = [_TENSOR if isinstance(s, torch.Tensor) else s for s in saved]
    return outs, tensors, n_read, saved_values


def _zeros_like_output(ctx, i):
    """The zero tangent of user output ``i`` (where the backward needs it materialized)."""
    shape, dtype, device = ctx.output_metas[i]
    return torch.zeros(shape, dtype=dtype, device=device)


def apply(core, *inputs):
    """Runs the Function, then writes the inputs the graph changes (BatchNorm's
    ``num_batches_tracked``, ``x.add_(1)`` on an input that requires grad): the functional
    forward returned their new values last. One ``copy_`` each; its version counter then moves
    as far as eager's in-place writes moved it (one bump per write). A new value that carries a
    gradient is copied in with autograd recording it, so the input's history runs through the
    Function as eager's in-place ops rebased it (a leaf that requires grad raises eager's
    error); any other is copied outside autograd, as is one written only under ``no_grad``
    (``keeps_history``: eager changed its value, not its history; a leaf stays a leaf)."""
    mutated = core.layout[5]
    # The versions before the call of the written inputs the Function saves itself (its
    # forward moves their counters to the version eager's backward kept).
    before = {i: inputs[i]._version for i, _, _, k in mutated if k is not None}
    # Inputs the graph differentiates through no op go in detached (no edge of the node; see
    # `unlinked` in `backend/aot.rs`): same storage and version counter.
    args = list(inputs)
    for i in core.layout[9]:
        args[i] = args[i].detach()
    n_user, differentiable, *_, parts, _ = core.layout
    ids = sorted(set(parts))
    if len(ids) > 1:
        # One node per backward component (see `CompiledGraph`); outputs that carry no
        # gradient come from the first.
        part_of = {i: parts[k] for k, i in enumerate(differentiable)}
        returns = {
            p: [i for i in range(n_user) if part_of.get(i, ids[0]) == p] for p in ids
        }
        shared = {"returns": returns}
        outs = [None] * n_user
        for p in ids:
            got = CompiledGraph.apply(core, (p, shared), *args)
            for i, t in zip(returns[p], got, strict=True):
                outs[i] = t
    else:
        outs = list(CompiledGraph.apply(core, None, *args))
    if mutated:
        n = len(outs) - len(mutated)
        for (i, writes, keeps_history, _), v in zip(mutated, outs[n:]):
            t = inputs[i]
            if v.requires_grad and not keeps_history:
                t.copy_(v)
            else:
                with torch.no_grad():
                    t.copy_(v)
            if i in before:
                _set_version(t, before[i] + writes)
            else:
                for _ in range(writes - 1):
                    torch.autograd.graph.increment_version(t)
        del outs[n:]
    return outs


def _set_version(t, version):
    torch._C._autograd._unsafe_set_version_counter((t,), (version,))


def _advanced(index):
    items = index if isinstance(index, tuple) else (index,)
    return any(isinstance(i, (torch.Tensor, list)) for i in items)


def index_backward(grad, sizes, index):
    """The gradient of ``x[index]``: ``grad`` written into zeros of ``x``'s sizes at the same
    index. With index tensors a position can be taken twice: the positions are found by the
    same indexing of an ``arange`` and the gradients summed into them."""
    out = grad.new_zeros(sizes)
    if _advanced(index):
        pos = torch.arange(out.numel(), device=grad.device).view(sizes)[index]
        out.view(-1).index_add_(0, pos.reshape(-1), grad.reshape(-1))
    else:
        out[index] = grad
    return out


def written_backward(grad, index):
    """The gradient of the tensor that ``x[index] = v`` wrote: ``grad`` where it kept its
    value, zero where it was overwritten."""
    out = grad.clone()
    out[index] = 0
    return out


def _summed_to(g, sizes):
    return g.sum_to_size(sizes).contiguous() if tuple(g.shape) != tuple(sizes) else g


def value_backward(grad, index, sizes):
    """The gradient of ``v`` in ``x[index] = v``: ``grad[index]`` summed to ``v``'s shape (it
    was broadcast into the indexed part)."""
    return _summed_to(grad[index], sizes)


def masked_scatter_backward(grad, mask, sizes):
    """The gradient of ``source`` in ``x.masked_scatter(mask, source)``: ``grad`` at the masked
    positions in order (the source elements they took), zeros for the source elements no
    position took, in ``source``'s shape."""
    taken = grad.masked_select(mask)
    out = grad.new_zeros(math.prod(sizes))
    out[: taken.numel()] = taken
    return out.view(sizes)


def view_backward(grad, sizes, *steps):
    """The gradient of ``src`` in a write through a view (``view_scatter(base, src, *steps)``):
    the view of ``grad``, summed to ``src``'s shape."""
    from torchferro._functional import replay

    return _summed_to(replay(grad, *steps), sizes).contiguous()
