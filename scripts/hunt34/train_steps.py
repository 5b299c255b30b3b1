"""Multi-step training programs: each builds (model, step) where ``step(batch_index)`` runs one
training step; the step is run eagerly, under torch.compile (counting backend), torchferro's
eager backend and its inductor, over STEPS steps; after every step parameters, gradients,
optimizer state and the step's returned values are compared with eager's; graph counts are
printed. Usage: PYTHONPATH=python:tests python scripts/hunt34/train_steps.py [name ...]"""

import copy
import math
import sys
import traceback

import torch
import torch.utils.checkpoint as cp
from torch import nn
from torch.nn import functional as F

import torchferro
from torchferro import _events

STEPS = 10


def batch(i):
    g = torch.Generator().manual_seed(i)
    return torch.randn(6, 8, generator=g), torch.randn(6, 4, generator=g)


class Net(nn.Module):
    def __init__(self, drop=0.0):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.drop = nn.Dropout(drop)
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x):
        return self.fc2(self.drop(F.gelu(self.fc1(x))))


def state(model, opt, extra):
    return {
        "params": {k: v.detach().clone() for k, v in model.state_dict().items()},
        "grads": {
            k: None if p.grad is None else p.grad.clone()
            for k, p in model.named_parameters()
        },
        "opt": [
            {k: (v.clone() if torch.is_tensor(v) else v) for k, v in s.items()}
            for s in opt.state.values()
        ],
        "lr": [g["lr"] for g in opt.param_groups],
        "extra": extra,
    }


PROGRAMS = {}


def program(fn):
    PROGRAMS[fn.__name__] = fn
    return fn


def _sched_step(make_sched, inside):
    def build():
        torch.manual_seed(0)
        m = Net()
        opt = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
        sched = make_sched(opt)

        def train(x, y):
            opt.zero_grad()
            loss = F.mse_loss(m(x), y)
            loss.backward()
            opt.step()
            if inside:
                sched.step()
            return loss.detach()

        def outer(compiled, i):
            r = compiled(*batch(i))
            if not inside:
                sched.step()
            return r

        return m, opt, train, outer

    return build


for nm, mk in {
    "onecycle": lambda o: torch.optim.lr_scheduler.OneCycleLR(
        o, max_lr=0.5, total_steps=20
    ),
    "cosine": lambda o: torch.optim.lr_scheduler.CosineAnnealingLR(o, T_max=5),
    "lambda": lambda o: torch.optim.lr_scheduler.LambdaLR(o, lambda e: 0.9**e),
    "warmup_seq": lambda o: torch.optim.lr_scheduler.SequentialLR(
        o,
        [
            torch.optim.lr_scheduler.LinearLR(o, 0.1, total_iters=3),
            torch.optim.lr_scheduler.ExponentialLR(o, 0.9),
        ],
        milestones=[3],
    ),
}.items():
    for inside in (False, True):
        PROGRAMS[f"sched_{nm}_{'inside' if inside else 'outside'}"] = _sched_step(
            mk, inside
        )


def _simple(
    body,
    opt_fn=lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9),
    drop=0.0,
    model_fn=None,
):
    def build():
        torch.manual_seed(0)
        m = model_fn() if model_fn else Net(drop)
        opt = opt_fn(m.parameters())

        def train(x, y):
            return body(m, opt, x, y)

        def outer(compiled, i):
            return compiled(*batch(i))

        return m, opt, train, outer

    return build


def clip_value(m, opt, x, y):
    opt.zero_grad(set_to_none=False)
    loss = F.mse_loss(m(x), y)
    loss.backward()
    torch.nn.utils.clip_grad_value_(m.parameters(), 0.05)
    opt.step()
    return loss.detach()


PROGRAMS["clip_grad_value_zero_grad_keep"] = _simple(clip_value)


def clip_norm_adam(m, opt, x, y):
    opt.zero_grad()
    loss = F.mse_loss(m(x), y)
    loss.backward()
    n = torch.nn.utils.clip_grad_norm_(
        m.parameters(), 0.1, norm_type=2.0, error_if_nonfinite=True
    )
    opt.step()
    return loss.detach(), n


PROGRAMS["clip_norm_adamw"] = _simple(
    clip_norm_adam, lambda p: torch.optim.AdamW(p, lr=0.01, weight_decay=0.1)
)


def accumulate(m, opt, x, y):
    k = 3
    opt.zero_grad()
    total = 0.0
    for xs, ys in zip(x.chunk(k), y.chunk(k)):
        loss = F.mse_loss(m(xs), ys) / k
        loss.backward()
        total += loss.item()
    opt.step()
    return total


PROGRAMS["grad_accumulation_item"] = _simple(accumulate)


def accumulate_tensor(m, opt, x, y):
    k = 2
    total = torch.zeros(())
    for xs, ys in zip(x.chunk(k), y.chunk(k)):
        loss = F.mse_loss(m(xs), ys) / k
        loss.backward()
        total = total + loss.detach()
    opt.step()
    opt.zero_grad(set_to_none=False)
    return total


PROGRAMS["grad_accumulation_tensor_zero_after"] = _simple(
    accumulate_tensor, lambda p: torch.optim.Adam(p, lr=0.01)
)


def ckpt(reentrant):
    def body(m, opt, x, y):
        opt.zero_grad()
        h = cp.checkpoint(m, x, use_reentrant=reentrant)
        loss = F.mse_loss(h, y)
        loss.backward()
        opt.step()
        return loss.detach()

    return body


PROGRAMS["checkpoint_reentrant_dropout"] = _simple(ckpt(True), drop=0.3)
PROGRAMS["checkpoint_nonreentrant_dropout"] = _simple(ckpt(False), drop=0.3)


def autocast_bf16(m, opt, x, y):
    opt.zero_grad()
    with torch.amp.autocast("cpu", dtype=torch.bfloat16):
        out = m(x)
        loss = F.mse_loss(out.float(), y)
    loss.backward()
    opt.step()
    return loss.detach(), out.dtype


PROGRAMS["autocast_bf16"] = _simple(autocast_bf16)


class EmaNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = Net()
        self.ema = copy.deepcopy(self.net)
        for p in self.ema.parameters():
            p.requires_grad_(False)

    def forward(self, x):
        return self.net(x)


def ema_step(kind):
    def body(m, opt, x, y):
        opt.zero_grad()
        loss = F.mse_loss(m(x), y)
        loss.backward()
        opt.step()
        with torch.no_grad():
            ps = list(m.net.parameters())
            es = list(m.ema.parameters())
            if kind == "lerp":
                torch._foreach_lerp_(es, ps, 0.1)
            else:
                for e, p in zip(es, ps):
                    e.mul_(0.9).add_(p, alpha=1 - 0.9)
        return loss.detach(), F.mse_loss(m.ema(x), y)

    return body


PROGRAMS["ema_foreach_lerp"] = _simple(ema_step("lerp"), model_fn=EmaNet)
PROGRAMS["ema_mul_add"] = _simple(ema_step("mul"), model_fn=EmaNet)


def compare(a, b, path=""):
    if isinstance(a, torch.Tensor):
        assert isinstance(b, torch.Tensor), path
        torch.testing.assert_close(
            b, a, msg=lambda m: f"{path}: {m}", atol=1e-5, rtol=1e-4
        )
    elif isinstance(a, dict):
        assert a.keys() == b.keys(), path
        for k in a:
            compare(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            compare(x, y, f"{path}[{i}]")
    elif isinstance(a, float):
        assert math.isclose(a, b, rel_tol=1e-4, abs_tol=1e-6), (path, a, b)
    else:
        assert a == b, (path, a, b)


def run(name, mode):
    build = PROGRAMS[name]
    torch._dynamo.reset()
    torchferro.compiler.reset()
    m, opt, train, outer = build()
    count = [0]

    def be(gm, ex):
        count[0] += 1
        return gm.forward

    events = []
    if mode == "eager":
        f = train
    elif mode == "tc":
        f = torch.compile(train, backend=be)
    elif mode == "tf":
        f = torchferro.compile(train, backend=be)
    else:
        f = torchferro.compile(train)
        sub = lambda e: events.append(e)  # noqa: E731
        _events.subscribe(sub)
    out = []
    try:
        for i in range(STEPS):
            torch.manual_seed(100 + i)
            r = outer(f, i)
            out.append((r, state(m, opt, None), torch.get_rng_state()))
    finally:
        if mode == "tfi":
            _events.unsubscribe(sub)
    if mode == "tfi":
        count[0] = sum(1 for e in events if e.get("kind") == "compile" and e.get("ops"))
    return out, count[0]


def main(names):
    for name in names or PROGRAMS:
        try:
            want, _ = run(name, "eager")
        except Exception as e:  # noqa: BLE001
            print(f"{name:40s} eager raised {e!r}")
            continue
        line = []
        for mode in ("tc", "tf", "tfi"):
            try:
                got, n = run(name, mode)
                try:
                    for i, (g, w) in enumerate(zip(got, want)):
                        compare(w, g, f"step{i}")
                    line.append(f"{mode} {n} ok")
                except AssertionError as e:
                    line.append(f"{mode} {n} WRONG {str(e)[:300]}")
            except Exception as e:  # noqa: BLE001
                line.append(
                    f"{mode} RAISED {traceback.format_exception_only(e)[-1][:300]}"
                )
        print(f"{name:40s} " + " | ".join(line), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
