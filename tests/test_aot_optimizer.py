"""Issue 17: a compiled training step that calls ``opt.step()`` inside the compiled function.

``loss.backward()`` ends the graph (its result depends on tensor data); the optimizer's
``step`` is traced into a second graph, as torch.compile traces it: torch.optim's Python for
SGD, Adam and AdamW is inlined (`tracer/src/interp/calls/optim.rs`), ``_init_group`` runs at
trace time (making the state lazily, as torch.compile does), and the ``_foreach_*`` list ops
are written out per tensor (`fx/src/ops/foreach.rs`), which the inductor fuses per parameter.
``zero_grad`` runs natively (torch marks it ``_disable_dynamo``), as under torch.compile. Over
5 steps the losses, parameters and the whole optimizer state (step counters, moments,
momentum buffers) must be eager's, for SGD (momentum, weight decay) and AdamW (weight decay;
``lr`` a float or a tensor), foreach and not, starting from an empty optimizer state (its lazy
initialization runs inside the compiled function's first call); the graph count is
torch.compile's.
"""

from __future__ import annotations

import copy

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchferro
from aot_oracle import torch_compile_graphs
from torchferro import _aot

STEPS = 5

CASES = [
    ("sgd", True, False),
    ("sgd", False, False),
    ("adamw", True, False),
    ("adamw", False, False),
    # A tensor lr needs foreach=False (or capturable) on CPU.
    ("adamw", False, True),
]


def _model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 4))


def _optimizer(kind, params, foreach, lr_tensor):
    lr = torch.tensor(1e-2) if lr_tensor else 1e-2
    if kind == "sgd":
        return torch.optim.SGD(
            params, lr=lr, momentum=0.9, weight_decay=0.01, foreach=foreach
        )
    return torch.optim.AdamW(params, lr=lr, weight_decay=0.01, foreach=foreach)


def step(m, o, x, y):
    loss = F.mse_loss(m(x), y)
    loss.backward()
    o.step()
    o.zero_grad(set_to_none=True)
    return loss


def _batch(i):
    g = torch.Generator().manual_seed(100 + i)
    return torch.randn(32, 8, generator=g), torch.randn(32, 4, generator=g)


def _state(o):
    return {
        (k, name): v.clone() if torch.is_tensor(v) else v
        for k, s in o.state_dict()["state"].items()
        for name, v in s.items()
    }


@pytest.mark.parametrize("kind,foreach,lr_tensor", CASES)
def test_step_with_optimizer_matches_eager(kind, foreach, lr_tensor):
    base = _model()
    me, mc = copy.deepcopy(base), copy.deepcopy(base)
    oe = _optimizer(kind, me.parameters(), foreach, lr_tensor)
    oc = _optimizer(kind, mc.parameters(), foreach, lr_tensor)
    torchferro.compiler.reset()
    _aot.reset()
    compiled = torchferro.compile(step)
    for i in range(STEPS):
        x, y = _batch(i)
        le = step(me, oe, x, y)
        lc = compiled(mc, oc, x, y)
        torch.testing.assert_close(lc, le, rtol=1e-5, atol=1e-6, msg=f"loss {i}")
        for (n, pe), pc in zip(me.named_parameters(), mc.parameters()):
            torch.testing.assert_close(pc, pe, msg=lambda m, n=n, i=i: f"{i} {n}: {m}")
            assert pc.grad is None and pe.grad is None
        se, sc = _state(oe), _state(oc)
        assert se.keys() == sc.keys()
        for key, ve in se.items():
            vc = sc[key]
            if torch.is_tensor(ve):
                # The step counter is a float32 scalar tensor (AdamW) that must count calls.
                assert vc.dtype == ve.dtype and vc.shape == ve.shape, key
                torch.testing.assert_close(vc, ve, msg=lambda m, k=key: f"{k}: {m}")
            else:
                assert vc == ve, key
        if kind == "adamw":
            assert all(s["step"].item() == i + 1 for s in oc.state.values())
    # The forward and loss: one compiled training graph, its backward run at every step. The
    # update is an inference graph (every op of it runs under no_grad: it writes the parameters
    # in place, as eager's step, and is no autograd Function).
    assert _aot.counters["fallback"] == 0, _aot.fallback_reasons
    assert _aot.counters["compiled"] == 1
    assert _aot.counters["forward"] == STEPS
    assert _aot.counters["backward"] == STEPS


def _graphs(kind, foreach, lr_tensor):
    """Graphs torchferro and torch.compile make of one step after a first eager step (the
    optimizer's state exists)."""
    counts = []
    for count in (
        lambda fn, *a: torchferro.explain(fn)(*a).graph_count,
        torch_compile_graphs,
    ):
        torchferro.compiler.reset()
        m = _model()
        o = _optimizer(kind, m.parameters(), foreach, lr_tensor)
        step(m, o, *_batch(0))
        counts.append(count(step, m, o, *_batch(1)))
    return counts


@pytest.mark.parametrize("kind,foreach,lr_tensor", CASES)
def test_optimizer_step_compiles_as_torch_compile_does(kind, foreach, lr_tensor):
    """The loss graph and the update: 2 graphs, torch.compile's count."""
    ours, theirs = _graphs(kind, foreach, lr_tensor)
    assert ours == theirs == 2


def test_update_graph_holds_the_foreach_ops_written_out():
    """The AdamW foreach update is traced: its graph holds per-tensor pointwise ops (no list
    op, no opaque call), reads every parameter, gradient and state tensor, and writes the
    parameters and state in place (functionalized, then copied back)."""
    m = _model()
    o = _optimizer("adamw", m.parameters(), True, False)
    step(m, o, *_batch(0))
    torchferro.compiler.reset()
    e = torchferro.explain(step)(m, o, *_batch(1))
    assert e.graph_count == 2
    code = e.graphs[-1]
    assert "_foreach" not in code, code
    n_params = len(list(m.parameters()))
    # Each parameter's update, written out: the step counter, weight decay, both moments (lerp
    # and addcmul in their kernels' formula, pointwise ops the inductor fuses), the
    # bias-corrected step.
    for op in (".add_(1)", ".mul_(0.9999)", ".mul_(0.999)", ".sqrt()"):
        assert code.count(op) == n_params, (op, code)
    for op in ("lerp", "addcmul", "addcdiv"):
        assert op not in code, (op, code)
    inputs = code[code.index("(self, ") + 7 : code.index("):")].split(", ")
    # Read from where they live: the parameters and gradients through the optimizer's groups,
    # the state by parameter.
    assert (
        sum(i.startswith("l_o_param_groups_0_params_") for i in inputs) == 2 * n_params
    )
    for name in ("_exp_avg", "_exp_avg_sq", "_step"):
        assert (
            sum(i.startswith("l_o_state_") and i.endswith(name) for i in inputs)
            == n_params
        )


def test_adamw_update_stores_each_parameter_and_its_moments_in_one_pass():
    """The compiled AdamW foreach update writes every parameter, ``exp_avg`` and ``exp_avg_sq``
    in place from one kernel per parameter size (no temporary and copy-back per written input,
    the moments computed once per element), the step counters in one more, and computes the bias
    corrections (``powf`` of a step counter) once per tensor, not per element
    (`inductor/src/lower/write_back.rs`, `codegen/c/mod.rs`). Values stay eager's."""

    def update(o):
        o.step()

    def make():
        g = torch.Generator().manual_seed(0)
        ps = [
            nn.Parameter(torch.randn(s, generator=g)) for s in [(64, 32), (32,), (32,)]
        ]
        for p in ps:
            p.grad = torch.randn(p.shape, generator=g)
        return ps, torch.optim.AdamW(ps, lr=1e-2, weight_decay=0.01, foreach=True)

    (pe, oe), (pc, oc) = make(), make()
    torchferro.compiler.reset()
    compiled = torchferro.compile(update)
    for _ in range(3):
        update(oe)
        compiled(oc)
    for a, b in zip(pe, pc):
        torch.testing.assert_close(b, a)
    assert _state(oc).keys() == _state(oe).keys()
    for k, v in _state(oe).items():
        torch.testing.assert_close(_state(oc)[k], v)
    [entry] = torchferro.compiler.cache_entries(update)
    code = entry["output_code"]
    # The step sizes, the (64, 32) parameter, both (32,) parameters, the step counters.
    assert entry["kernels"] == 4, code
    # Three stores per parameter, one per step size: nothing is staged and copied back.
    assert code.count("[x0] = ") == 3 * 3 + 1, code
    pow_lines = [line for line in code.splitlines() if "powf(" in line]
    assert pow_lines and all(line.startswith("  const") for line in pow_lines), code
