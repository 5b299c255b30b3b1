"""Session 28 (hunt28): precompiled artifacts of training code, loaded in a fresh process.

- An EMA update (``with torch.no_grad(): ema.mul_(0.9).add_(p, alpha=0.1)`` over parameters that
  require grad) is compiled live without its grad-mode switches (``aot::without_no_grad_switches``);
  the loader rebuilt it with them, so the inductor refused it ("an input that requires grad")
  and ``load`` failed. It is now rebuilt in the capture's grad mode as the live build did, and
  the written parameters' version counters move as eager's writes moved them.
- A loss function captured in grad mode, loaded in a fresh process on other weights and
  trained for three SGD steps: losses, gradients, parameters and BatchNorm buffers equal eager's
  at every step (the model's weights change between calls: the artifact reads them per call)."""

from __future__ import annotations

import pytest

from test_precompile import _run

MODELS = """
import copy
import torch
import torch.nn.functional as F


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(6, 8)
        self.bn = torch.nn.BatchNorm1d(8)
        self.fc2 = torch.nn.Linear(8, 3)

    def forward(self, x):
        return self.fc2(torch.relu(self.bn(self.fc1(x))))


def loss_fn(model, x, y):
    return F.cross_entropy(model(x), y)


def ema_update(ema, model):
    with torch.no_grad():
        for pe, p in zip(ema.parameters(), model.parameters()):
            pe.mul_(0.9).add_(p, alpha=0.1)


def data(i):
    g = torch.Generator().manual_seed(100 + i)
    return torch.randn(5, 6, generator=g), torch.randint(0, 3, (5,), generator=g)
"""


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    """One capture process (the EMA update, then the loss function in grad mode) and one
    fresh loading process that runs both against eager."""
    tmp = tmp_path_factory.mktemp("precompile_training")
    (tmp / "pt_models.py").write_text(MODELS)
    c = _run(
        tmp,
        """
        from pt_models import *
        torch.manual_seed(0)
        model = Net()
        ema = copy.deepcopy(model)
        with precompile.capture(ema_update, artifact_path="ema.py", cache_path="ema.cache") as cap:
            cap(ema, model)
        with precompile.capture(loss_fn, artifact_path="loss.py", cache_path="loss.cache") as cap:
            x, y = data(0)
            cap(model, x, y).backward()
        print(json.dumps(precompile.counters()))
        """,
    )
    assert c["traces"] == 2, c
    return _run(
        tmp,
        """
        from pt_models import *
        out = {}
        try:
            f = precompile.load("ema.py", "ema.cache")
        except Exception as e:
            out["ema_load"] = f"{type(e).__name__}: {e}"
        else:
            torch.manual_seed(3)
            model = Net()
            ema, want = copy.deepcopy(model), copy.deepcopy(model)
            with torch.no_grad():
                for p in model.parameters():
                    p.add_(torch.randn_like(p))
            close = []
            for _ in range(2):
                f(ema, model)
                ema_update(want, model)
                close.append(all(torch.allclose(a, b, rtol=1e-6, atol=1e-7)
                                 for a, b in zip(ema.parameters(), want.parameters())))
            out["ema_close"] = close
            out["ema_versions"] = [[a._version, b._version]
                                   for a, b in zip(ema.parameters(), want.parameters())]
        f = precompile.load("loss.py", "loss.cache")
        torch.manual_seed(7)
        model = Net()
        ref = copy.deepcopy(model)
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        opt_ref = torch.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
        steps = []
        for i in range(3):
            x, y = data(i)
            loss, loss_ref = f(model, x, y), loss_fn(ref, x, y)
            loss.backward()
            loss_ref.backward()
            grads = all(torch.allclose(a.grad, b.grad, atol=1e-6)
                        for a, b in zip(model.parameters(), ref.parameters()))
            opt.step(); opt.zero_grad(); opt_ref.step(); opt_ref.zero_grad()
            state = all(torch.allclose(a.float(), b.float(), atol=1e-6)
                        for a, b in zip(model.state_dict().values(), ref.state_dict().values()))
            steps.append([abs(loss.item() - loss_ref.item()) < 1e-6, grads, state])
        out["steps"] = steps
        print(json.dumps({**out, **precompile.counters()}))
        """,
        loader=True,
    )


def test_ema_update_loads_and_moves_versions(loaded):
    assert "ema_load" not in loaded, loaded["ema_load"]
    assert loaded["traces"] == 0 and loaded["c_compiles"] == 0, loaded
    assert loaded["ema_close"] == [True, True], loaded
    assert all(got == want for got, want in loaded["ema_versions"]), loaded[
        "ema_versions"
    ]


def test_loss_captured_then_trained_in_a_fresh_process(loaded):
    assert loaded["traces"] == 0 and loaded["c_compiles"] == 0, loaded
    assert loaded["steps"] == [[True, True, True]] * 3, loaded
