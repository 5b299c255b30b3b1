"""The training tests' graph-count oracle: how many graphs ``torch.compile`` makes of a call."""

from __future__ import annotations

import torch


def torch_compile_graphs(fn, *args, calls: int = 1) -> int:
    """Graphs ``torch.compile`` (a counting backend, a fresh dynamo state) makes of ``calls``
    calls of ``fn(*args)``; dynamo is reset again afterwards."""
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    torch._dynamo.reset()
    try:
        compiled = torch.compile(fn, backend=backend)
        for _ in range(calls):
            compiled(*args)
    finally:
        torch._dynamo.reset()
    return len(graphs)


def train_steps(model, loss_fn, batch, make_optimizer, compile_fn, steps):
    """Losses and a state snapshot after each of ``steps`` optimizer steps of
    ``compile_fn(lambda *b: loss_fn(model, *b))`` on ``batch(step)``."""
    model.train()
    opt = make_optimizer(model.parameters())
    step_fn = compile_fn(lambda *b: loss_fn(model, *b))
    losses, states = [], []
    for step in range(steps):
        torch.manual_seed(step)  # dropout draws: the same generator calls in both runs
        loss = step_fn(*batch(step))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        losses.append(loss.detach())
        states.append({k: v.detach().clone() for k, v in model.state_dict().items()})
    return losses, states


def assert_same_trajectory(losses_c, states_c, losses_e, states_e) -> None:
    """The compiled run's loss and every state entry equal eager's at each step (float32
    tolerances: the compiled kernels sum in another order)."""
    for step, (lc, le) in enumerate(zip(losses_c, losses_e, strict=True)):
        torch.testing.assert_close(lc, le, rtol=1e-4, atol=1e-5, msg=f"loss {step}")
        for k, ve in states_e[step].items():
            torch.testing.assert_close(
                states_c[step][k],
                ve,
                rtol=1e-3,
                atol=1e-4,
                msg=lambda m, k=k, s=step: f"step {s} {k}: {m}",
            )


def assert_trains_as_eager(base, loss_fn, batch, make_optimizer, steps) -> int:
    """Trains copies of ``base`` eagerly and through ``torchferro.compile`` for ``steps``
    steps; asserts equal losses and states at every step and no fallback to torch's autograd;
    returns torch.compile's graph count for one forward of a fresh copy (the oracle)."""
    import copy

    import torchferro
    from torchferro import _aot

    eager_model = copy.deepcopy(base)
    comp_model = copy.deepcopy(base)
    torchferro.compiler.reset()
    _aot.reset()
    losses_e, states_e = train_steps(
        eager_model, loss_fn, batch, make_optimizer, lambda f: f, steps
    )
    losses_c, states_c = train_steps(
        comp_model, loss_fn, batch, make_optimizer, torchferro.compile, steps
    )
    assert_same_trajectory(losses_c, states_c, losses_e, states_e)
    assert _aot.counters["fallback"] == 0, _aot.fallback_reasons
    oracle_model = copy.deepcopy(base)
    oracle_model.train()
    return torch_compile_graphs(lambda *b: loss_fn(oracle_model, *b), *batch(0))
