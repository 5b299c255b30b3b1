"""Session 35 hunt: multi-step training programs, eager vs torch.compile vs torchferro
(counting backend, aot_eager, inductor). Each program(cf) runs STEPS steps with cf as the
compile function and returns per-step snapshots."""

import copy, math, sys, traceback
import torch
from torch import nn
from torch.nn import functional as F
import torchferro
from torchferro import _events, _aot

STEPS = 5


def batch(i):
    g = torch.Generator().manual_seed(i)
    return torch.randn(6, 8, generator=g), torch.randn(6, 4, generator=g)


class Net(nn.Module):
    def __init__(self, drop=0.0, bn=False):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.bn = nn.BatchNorm1d(16) if bn else nn.Identity()
        self.drop = nn.Dropout(drop)
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x):
        return self.fc2(self.drop(F.gelu(self.bn(self.fc1(x)))))


def snap(m, extra=None):
    return {
        "p": {k: v.detach().clone() for k, v in m.state_dict().items()},
        "g": {
            k: None if p.grad is None else p.grad.clone()
            for k, p in m.named_parameters()
        },
        "extra": extra,
    }


P = {}


def prog(fn):
    P[fn.__name__] = fn
    return fn


def sgd(m, **kw):
    return torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9, **kw)


@prog
def compiled_module_backward_outside(cf):
    torch.manual_seed(0)
    m = Net(drop=0.2)
    opt = sgd(m)
    cm = cf(m)
    out = []
    for i in range(STEPS):
        x, y = batch(i)
        opt.zero_grad()
        loss = F.mse_loss(cm(x), y)
        loss.backward()
        opt.step()
        out.append((loss.detach(), snap(m)))
    return out


@prog
def compiled_step_backward_inside(cf):
    torch.manual_seed(0)
    m = Net(drop=0.2)
    opt = sgd(m)

    def step(x, y):
        opt.zero_grad()
        loss = F.mse_loss(m(x), y)
        loss.backward()
        opt.step()
        return loss.detach()

    f = cf(step)
    return [(f(*batch(i)), snap(m)) for i in range(STEPS)]


@prog
def loss_fn_compiled_backward_outside(cf):
    torch.manual_seed(0)
    m = Net()
    opt = sgd(m)
    f = cf(lambda x, y: F.mse_loss(m(x), y))
    out = []
    for i in range(STEPS):
        opt.zero_grad()
        loss = f(*batch(i))
        loss.backward()
        opt.step()
        out.append((loss.detach(), snap(m)))
    return out


@prog
def retain_graph_twice(cf):
    torch.manual_seed(0)
    m = Net()
    opt = sgd(m)
    f = cf(lambda x, y: F.mse_loss(m(x), y))
    out = []
    for i in range(STEPS):
        opt.zero_grad()
        loss = f(*batch(i))
        loss.backward(retain_graph=True)
        loss.backward()
        opt.step()
        out.append((loss.detach(), snap(m)))
    return out


@prog
def retain_graph_inside(cf):
    torch.manual_seed(0)
    m = Net()
    opt = sgd(m)

    def step(x, y):
        opt.zero_grad()
        loss = F.mse_loss(m(x), y)
        loss.backward(retain_graph=True)
        (loss * 0.5).backward()
        opt.step()
        return loss.detach()

    f = cf(step)
    return [(f(*batch(i)), snap(m)) for i in range(STEPS)]


@prog
def two_losses_separate_backward(cf):
    torch.manual_seed(0)
    m = Net()
    opt = sgd(m)

    def fwd(x, y):
        h = m(x)
        return F.mse_loss(h, y), h.abs().mean()

    f = cf(fwd)
    out = []
    for i in range(STEPS):
        opt.zero_grad()
        l1, l2 = f(*batch(i))
        l1.backward(retain_graph=True)
        l2.backward()
        opt.step()
        out.append(((l1.detach(), l2.detach()), snap(m)))
    return out


@prog
def two_losses_summed_inside(cf):
    torch.manual_seed(0)
    m = Net()
    opt = sgd(m)

    def step(x, y):
        opt.zero_grad()
        h = m(x)
        l1 = F.mse_loss(h, y)
        l2 = h.pow(2).mean() * 0.1
        (l1 + l2).backward()
        opt.step()
        return l1.detach(), l2.detach()

    f = cf(step)
    return [(f(*batch(i)), snap(m)) for i in range(STEPS)]


@prog
def autograd_grad_manual_sgd(cf):
    torch.manual_seed(0)
    m = Net()
    params = list(m.parameters())

    def step(x, y):
        loss = F.mse_loss(m(x), y)
        gs = torch.autograd.grad(loss, params)
        with torch.no_grad():
            for p, g in zip(params, gs):
                p.sub_(0.1 * g)
        return loss.detach()

    f = cf(step)
    return [(f(*batch(i)), snap(m)) for i in range(STEPS)]


@prog
def autograd_grad_outside(cf):
    torch.manual_seed(0)
    m = Net()
    params = list(m.parameters())
    f = cf(lambda x, y: F.mse_loss(m(x), y))
    out = []
    for i in range(STEPS):
        loss = f(*batch(i))
        gs = torch.autograd.grad(loss, params)
        with torch.no_grad():
            for p, g in zip(params, gs):
                p.sub_(0.1 * g)
        out.append((loss.detach(), snap(m)))
    return out


@prog
def gradient_penalty_outside(cf):
    # WGAN-GP style: the critic compiled, the penalty through create_graph outside.
    torch.manual_seed(0)
    m = Net()
    opt = sgd(m)
    cm = cf(m)
    out = []
    for i in range(STEPS):
        x, y = batch(i)
        x = x.requires_grad_(True)
        opt.zero_grad()
        o = cm(x)
        (gx,) = torch.autograd.grad(o.sum(), x, create_graph=True)
        pen = ((gx.norm(2, dim=1) - 1) ** 2).mean()
        loss = F.mse_loss(o, y) + 0.1 * pen
        loss.backward()
        opt.step()
        out.append((loss.detach(), snap(m)))
    return out


@prog
def gradient_penalty_inside(cf):
    torch.manual_seed(0)
    m = Net()
    opt = sgd(m)

    def step(x, y):
        x = x.requires_grad_(True)
        opt.zero_grad()
        o = m(x)
        (gx,) = torch.autograd.grad(o.sum(), x, create_graph=True)
        pen = ((gx.norm(2, dim=1) - 1) ** 2).mean()
        loss = F.mse_loss(o, y) + 0.1 * pen
        loss.backward()
        opt.step()
        return loss.detach()

    f = cf(step)
    return [(f(*batch(i)), snap(m)) for i in range(STEPS)]


@prog
def hook_on_intermediate(cf):
    torch.manual_seed(0)
    m = Net()
    opt = sgd(m)
    seen = []

    def fwd(x, y):
        h = m.fc1(x)
        h.register_hook(lambda g: g * 0.5)
        return F.mse_loss(m.fc2(torch.tanh(h)), y)

    f = cf(fwd)
    out = []
    for i in range(STEPS):
        opt.zero_grad()
        loss = f(*batch(i))
        loss.backward()
        opt.step()
        out.append((loss.detach(), snap(m)))
    return out


@prog
def hook_on_parameter(cf):
    torch.manual_seed(0)
    m = Net()
    opt = sgd(m)
    seen = []
    m.fc1.weight.register_hook(lambda g: g.clamp(-0.01, 0.01))
    m.fc2.bias.register_hook(lambda g: seen.append(g.norm().item()))
    f = cf(lambda x, y: F.mse_loss(m(x), y))
    out = []
    for i in range(STEPS):
        opt.zero_grad()
        loss = f(*batch(i))
        loss.backward()
        opt.step()
        out.append((loss.detach(), snap(m, list(seen))))
    return out


@prog
def hook_registered_inside_on_param(cf):
    torch.manual_seed(0)
    m = Net()
    opt = sgd(m)

    def step(x, y):
        opt.zero_grad()
        h = m.fc1(x)
        h.register_hook(lambda g: g * 2)
        loss = F.mse_loss(m.fc2(F.relu(h)), y)
        loss.backward()
        opt.step()
        return loss.detach()

    f = cf(step)
    return [(f(*batch(i)), snap(m)) for i in range(STEPS)]


@prog
def data_write_decay(cf):
    torch.manual_seed(0)
    m = Net()
    opt = torch.optim.SGD(m.parameters(), lr=0.1)

    def step(x, y):
        opt.zero_grad()
        loss = F.mse_loss(m(x), y)
        loss.backward()
        for p in m.parameters():
            p.data.mul_(0.99)
        opt.step()
        return loss.detach()

    f = cf(step)
    return [(f(*batch(i)), snap(m)) for i in range(STEPS)]


@prog
def detach_write_between_fwd_bwd(cf):
    torch.manual_seed(0)
    m = Net()
    opt = sgd(m)

    def fwd(x, y):
        h = m.fc1(x)
        o = m.fc2(h * 2)
        h.detach().mul_(0.0)  # writes h; mul by 2 saves nothing of h
        return F.mse_loss(o, y), h

    f = cf(fwd)
    out = []
    for i in range(STEPS):
        opt.zero_grad()
        loss, h = f(*batch(i))
        loss.backward()
        opt.step()
        out.append(((loss.detach(), h.detach()), snap(m)))
    return out


class Tied(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(11, 8)
        self.fc = nn.Linear(8, 8)
        self.head = nn.Linear(8, 11, bias=False)
        self.head.weight = self.emb.weight

    def forward(self, t):
        return self.head(torch.tanh(self.fc(self.emb(t))))


def tokens(i):
    g = torch.Generator().manual_seed(i)
    return torch.randint(0, 11, (2, 5), generator=g), torch.randint(
        0, 11, (2, 5), generator=g
    )


@prog
def weight_tying_lm(cf):
    torch.manual_seed(0)
    m = Tied()
    opt = torch.optim.AdamW(m.parameters(), lr=0.01)

    def step(t, y):
        opt.zero_grad()
        logits = m(t)
        loss = F.cross_entropy(logits.reshape(-1, 11), y.reshape(-1))
        loss.backward()
        opt.step()
        return loss.detach()

    f = cf(step)
    return [(f(*tokens(i)), snap(m)) for i in range(STEPS)]


@prog
def frozen_toggle_between_steps(cf):
    torch.manual_seed(0)
    m = Net()
    opt = sgd(m)
    f = cf(lambda x, y: F.mse_loss(m(x), y))
    out = []
    for i in range(STEPS):
        m.fc1.requires_grad_(i % 2 == 1)
        opt.zero_grad()
        loss = f(*batch(i))
        loss.backward()
        opt.step()
        out.append((loss.detach(), snap(m)))
    return out


@prog
def frozen_toggle_step_inside(cf):
    torch.manual_seed(0)
    m = Net()
    opt = sgd(m)

    def step(x, y):
        opt.zero_grad()
        loss = F.mse_loss(m(x), y)
        loss.backward()
        opt.step()
        return loss.detach()

    f = cf(step)
    out = []
    for i in range(STEPS):
        m.fc2.requires_grad_(i < 2)
        out.append((f(*batch(i)), snap(m)))
    return out


@prog
def no_grad_eval_between(cf):
    torch.manual_seed(0)
    m = Net(drop=0.3, bn=True)
    opt = sgd(m)
    cm = cf(m)
    out = []
    for i in range(STEPS):
        x, y = batch(i)
        m.train()
        opt.zero_grad()
        loss = F.mse_loss(cm(x), y)
        loss.backward()
        opt.step()
        m.eval()
        with torch.no_grad():
            ev = F.mse_loss(cm(x), y)
        out.append(((loss.detach(), ev), snap(m)))
    return out


@prog
def train_eval_toggle_inside_step(cf):
    torch.manual_seed(0)
    m = Net(drop=0.3, bn=True)
    opt = sgd(m)

    def step(x, y):
        m.train()
        opt.zero_grad()
        loss = F.mse_loss(m(x), y)
        loss.backward()
        opt.step()
        m.eval()
        with torch.no_grad():
            ev = F.mse_loss(m(x), y)
        return loss.detach(), ev

    f = cf(step)
    return [(f(*batch(i)), snap(m)) for i in range(STEPS)]


@prog
def inference_mode_eval_between(cf):
    torch.manual_seed(0)
    m = Net(bn=True)
    opt = sgd(m)
    f = cf(lambda x, y: F.mse_loss(m(x), y))
    out = []
    for i in range(STEPS):
        x, y = batch(i)
        m.train()
        opt.zero_grad()
        loss = f(x, y)
        loss.backward()
        opt.step()
        m.eval()
        with torch.inference_mode():
            ev = f(x, y)
        out.append(((loss.detach(), ev.clone()), snap(m)))
    return out


@prog
def autocast_bf16_outside_backward(cf):
    torch.manual_seed(0)
    m = Net()
    opt = sgd(m)

    def fwd(x, y):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            o = m(x)
        return F.mse_loss(o.float(), y)

    f = cf(fwd)
    out = []
    for i in range(STEPS):
        opt.zero_grad()
        loss = f(*batch(i))
        loss.backward()
        opt.step()
        out.append((loss.detach(), snap(m)))
    return out


@prog
def autocast_around_compiled_call(cf):
    torch.manual_seed(0)
    m = Net(bn=True)
    opt = sgd(m)
    cm = cf(m)
    out = []
    for i in range(STEPS):
        x, y = batch(i)
        opt.zero_grad()
        with torch.autocast("cpu", dtype=torch.bfloat16):
            o = cm(x)
        loss = F.mse_loss(o.float(), y)
        loss.backward()
        opt.step()
        out.append((loss.detach(), snap(m)))
    return out


@prog
def grad_accum_with_no_sync_like(cf):
    torch.manual_seed(0)
    m = Net()
    opt = torch.optim.Adam(m.parameters(), lr=0.01)
    f = cf(lambda x, y: F.mse_loss(m(x), y) / 2)
    out = []
    for i in range(STEPS):
        x, y = batch(i)
        for xs, ys in zip(x.chunk(2), y.chunk(2)):
            f(xs, ys).backward()
        opt.step()
        opt.zero_grad()
        out.append((None, snap(m)))
    return out


@prog
def ema_of_params_outside(cf):
    torch.manual_seed(0)
    m = Net()
    ema = copy.deepcopy(m).requires_grad_(False)
    opt = sgd(m)
    cm = cf(m)
    ce = cf(ema)
    out = []
    for i in range(STEPS):
        x, y = batch(i)
        opt.zero_grad()
        loss = F.mse_loss(cm(x), y)
        loss.backward()
        opt.step()
        with torch.no_grad():
            for e, p in zip(ema.parameters(), m.parameters()):
                e.lerp_(p, 0.1)
            ev = ce(x)
        out.append(((loss.detach(), ev), snap(m)))
    return out


@prog
def param_requires_grad_false_inside(cf):
    torch.manual_seed(0)
    m = Net()
    opt = sgd(m)

    def step(x, y, freeze):
        m.fc1.weight.requires_grad_(not freeze)
        opt.zero_grad()
        loss = F.mse_loss(m(x), y)
        loss.backward()
        opt.step()
        return loss.detach()

    f = cf(step)
    return [(f(*batch(i), i in (1, 2)), snap(m)) for i in range(STEPS)]


@prog
def lr_scheduler_and_clip_inside(cf):
    torch.manual_seed(0)
    m = Net()
    opt = torch.optim.AdamW(m.parameters(), lr=0.01)
    sched = torch.optim.lr_scheduler.StepLR(opt, 2, 0.5)

    def step(x, y):
        opt.zero_grad()
        loss = F.mse_loss(m(x), y)
        loss.backward()
        n = torch.nn.utils.clip_grad_norm_(m.parameters(), 0.5)
        opt.step()
        sched.step()
        return loss.detach(), n

    f = cf(step)
    return [(f(*batch(i)), snap(m)) for i in range(STEPS)]


def compare(a, b, path=""):
    if isinstance(a, torch.Tensor):
        assert isinstance(b, torch.Tensor), path
        assert a.dtype == b.dtype, (path, a.dtype, b.dtype)
        assert a.requires_grad == b.requires_grad, (
            path,
            "requires_grad",
            a.requires_grad,
            b.requires_grad,
        )
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
    torch._dynamo.reset()
    torchferro.compiler.reset()
    _aot.reset()
    count = [0]
    events = []

    def be(gm, ex):
        count[0] += 1
        return gm.forward

    sub = None
    if mode == "eager":
        cf = lambda f: f
    elif mode == "tc":
        cf = lambda f: torch.compile(f, backend=be)
    elif mode in ("tca", "tci"):

        def be2(gm, ex):
            count[0] += 1
            from torch._dynamo.backends.common import aot_autograd

            if mode == "tca":
                return torch._dynamo.backends.registry.lookup_backend("aot_eager")(
                    gm, ex
                )
            from torch._inductor.compile_fx import compile_fx

            return compile_fx(gm, ex)

        cf = lambda f: torch.compile(f, backend=be2)
    elif mode == "tf":
        cf = lambda f: torchferro.compile(f, backend=be)
    else:
        be_name = {"tfa": "aot_eager", "tfi": "inductor"}[mode]
        cf = lambda f: torchferro.compile(f, backend=be_name)
        sub = lambda e: events.append(e)
        _events.subscribe(sub)
    try:
        torch.manual_seed(123)
        out = P[name](cf)
    finally:
        if sub:
            _events.unsubscribe(sub)
        torch.set_grad_enabled(True)
    if sub:
        count[0] = sum(1 for e in events if e.get("kind") == "compile" and e.get("ops"))
    fb = dict(_aot.counters).get("fallback", 0)
    return out, count[0], fb


import os

MODES = os.environ.get("MODES", "tc,tf,tfa,tfi").split(",")


def main(names):
    for name in names or P:
        try:
            want, _, _ = run(name, "eager")
        except Exception as e:
            print(f"{name:40s} eager raised {e!r}"[:300])
            continue
        line = []
        for mode in MODES:
            try:
                got, n, fb = run(name, mode)
                extra = f" fb={fb}" if mode in ("tfa", "tfi") else ""
                try:
                    compare(want, got, "")
                    line.append(f"{mode} {n} ok{extra}")
                except AssertionError as e:
                    line.append(f"{mode} {n}{extra} WRONG {str(e)[:250]}")
            except Exception as e:
                line.append(
                    f"{mode} RAISED {traceback.format_exception_only(e)[-1][:250]}"
                )
        print(f"{name:40s} " + " | ".join(line), flush=True)


# ---- batch 2
@prog
def gan_two_compiled_modules(cf):
    torch.manual_seed(0)
    G = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 8))
    D = nn.Sequential(nn.Linear(8, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1))
    og = torch.optim.Adam(G.parameters(), lr=0.01, betas=(0.5, 0.9))
    od = torch.optim.Adam(D.parameters(), lr=0.01, betas=(0.5, 0.9))
    cg, cd = cf(G), cf(D)
    out = []
    for i in range(STEPS):
        g = torch.Generator().manual_seed(i)
        z = torch.randn(6, 4, generator=g)
        real = torch.randn(6, 8, generator=g)
        fake = cg(z)
        od.zero_grad()
        ld = F.softplus(-cd(real)).mean() + F.softplus(cd(fake.detach())).mean()
        ld.backward()
        od.step()
        og.zero_grad()
        lg = F.softplus(-cd(fake)).mean()
        lg.backward()
        og.step()
        out.append(((ld.detach(), lg.detach()), snap(G), snap(D)))
    return out


@prog
def fgsm_input_grad(cf):
    torch.manual_seed(0)
    m = Net()
    opt = sgd(m)
    cm = cf(m)
    out = []
    for i in range(STEPS):
        x, y = batch(i)
        x = x.clone().requires_grad_(True)
        loss = F.mse_loss(cm(x), y)
        (gx,) = torch.autograd.grad(loss, x)
        xa = (x + 0.1 * gx.sign()).detach()
        opt.zero_grad()
        l2 = F.mse_loss(cm(xa), y)
        l2.backward()
        opt.step()
        out.append(((loss.detach(), l2.detach(), gx), snap(m)))
    return out


@prog
def backward_inputs_subset(cf):
    torch.manual_seed(0)
    m = Net()
    opt = sgd(m)
    f = cf(lambda x, y: F.mse_loss(m(x), y))
    out = []
    for i in range(STEPS):
        opt.zero_grad()
        loss = f(*batch(i))
        loss.backward(inputs=list(m.fc2.parameters()))
        opt.step()
        out.append((loss.detach(), snap(m)))
    return out


@prog
def backward_with_gradient_arg(cf):
    torch.manual_seed(0)
    m = Net()
    opt = sgd(m)
    cm = cf(m)
    out = []
    for i in range(STEPS):
        x, y = batch(i)
        opt.zero_grad()
        o = cm(x)
        o.backward(gradient=(o - y) * 0.1)
        opt.step()
        out.append((o.detach(), snap(m)))
    return out


@prog
def param_replaced_between_steps(cf):
    torch.manual_seed(0)
    m = Net()
    f = cf(lambda x, y: F.mse_loss(m(x), y))
    out = []
    for i in range(STEPS):
        opt = torch.optim.SGD(m.parameters(), lr=0.1)
        loss = f(*batch(i))
        loss.backward()
        opt.step()
        if i == 2:
            m.fc1.weight = nn.Parameter(m.fc1.weight.detach() * 0.5)
        out.append((loss.detach(), snap(m)))
    return out


@prog
def data_assign_between_steps(cf):
    torch.manual_seed(0)
    m = Net()
    opt = sgd(m)
    f = cf(lambda x, y: F.mse_loss(m(x), y))
    out = []
    for i in range(STEPS):
        opt.zero_grad()
        loss = f(*batch(i))
        loss.backward()
        opt.step()
        if i == 1:
            m.fc2.weight.data = m.fc2.weight.data * 0.5
        out.append((loss.detach(), snap(m)))
    return out


@prog
def requires_grad_attr_freeze_inside(cf):
    torch.manual_seed(0)
    m = Net()
    opt = sgd(m)

    def step(x, y, i):
        for p in m.fc1.parameters():
            p.requires_grad = i >= 2
        opt.zero_grad()
        loss = F.mse_loss(m(x), y)
        loss.backward()
        opt.step()
        return loss.detach()

    f = cf(step)
    return [(f(*batch(i), i), snap(m)) for i in range(STEPS)]


@prog
def batchnorm_cumulative_momentum(cf):
    torch.manual_seed(0)
    m = nn.Sequential(
        nn.Linear(8, 16), nn.BatchNorm1d(16, momentum=None), nn.ReLU(), nn.Linear(16, 4)
    )
    opt = sgd(m)
    cm = cf(m)
    out = []
    for i in range(STEPS):
        x, y = batch(i)
        opt.zero_grad()
        loss = F.mse_loss(cm(x), y)
        loss.backward()
        opt.step()
        out.append((loss.detach(), snap(m)))
    return out


@prog
def weight_norm_parametrization(cf):
    torch.manual_seed(0)
    m = Net()
    torch.nn.utils.parametrizations.weight_norm(m.fc1)
    opt = sgd(m)

    def step(x, y):
        opt.zero_grad()
        loss = F.mse_loss(m(x), y)
        loss.backward()
        opt.step()
        return loss.detach()

    f = cf(step)
    return [(f(*batch(i)), snap(m)) for i in range(STEPS)]


@prog
def shared_module_twice_with_hook(cf):
    torch.manual_seed(0)
    m = Net()
    opt = sgd(m)
    counts = []
    m.fc1.register_full_backward_hook(lambda mod, gi, go: counts.append(go[0].shape[0]))

    def fwd(x, y):
        return F.mse_loss(m(x) + m(x * 0.5), y)

    f = cf(fwd)
    out = []
    for i in range(STEPS):
        opt.zero_grad()
        loss = f(*batch(i))
        loss.backward()
        opt.step()
        out.append((loss.detach(), snap(m, list(counts))))
    return out


@prog
def no_grad_decorated_eval_fn(cf):
    torch.manual_seed(0)
    m = Net(bn=True)
    opt = sgd(m)

    @torch.no_grad()
    def evaluate(x, y):
        m.eval()
        r = F.mse_loss(m(x), y)
        m.train()
        return r

    def step(x, y):
        opt.zero_grad()
        loss = F.mse_loss(m(x), y)
        loss.backward()
        opt.step()
        return loss.detach(), evaluate(x, y)

    f = cf(step)
    return [(f(*batch(i)), snap(m)) for i in range(STEPS)]


@prog
def enable_grad_inside_no_grad(cf):
    torch.manual_seed(0)
    m = Net()
    opt = sgd(m)

    def fwd(x, y):
        with torch.no_grad():
            h = m.fc1(x)
            with torch.enable_grad():
                o = m.fc2(F.gelu(h))
        return F.mse_loss(o, y)

    f = cf(fwd)
    out = []
    for i in range(STEPS):
        opt.zero_grad()
        loss = f(*batch(i))
        loss.backward()
        opt.step()
        out.append((loss.detach(), snap(m)))
    return out


@prog
def zero_grad_keep_and_accumulate_outside(cf):
    torch.manual_seed(0)
    m = Net()
    opt = torch.optim.SGD(m.parameters(), lr=0.05)
    f = cf(lambda x, y: F.mse_loss(m(x), y))
    out = []
    for i in range(STEPS):
        loss = f(*batch(i))
        loss.backward()
        if i % 2 == 1:
            opt.step()
            opt.zero_grad(set_to_none=False)
        out.append((loss.detach(), snap(m)))
    return out


@prog
def lora_frozen_base(cf):
    torch.manual_seed(0)

    class Lora(nn.Module):
        def __init__(self):
            super().__init__()
            self.base = nn.Linear(8, 4)
            self.base.requires_grad_(False)
            self.a = nn.Parameter(torch.randn(2, 8) * 0.1)
            self.b = nn.Parameter(torch.zeros(4, 2))

        def forward(self, x):
            return self.base(x) + F.linear(F.linear(x, self.a), self.b) * 2.0

    m = Lora()
    opt = torch.optim.AdamW([m.a, m.b], lr=0.01)

    def step(x, y):
        opt.zero_grad()
        loss = F.mse_loss(m(x), y)
        loss.backward()
        opt.step()
        return loss.detach()

    f = cf(step)
    return [(f(*batch(i)), snap(m)) for i in range(STEPS)]


@prog
def detach_inplace_output(cf):
    torch.manual_seed(0)
    m = Net()
    opt = sgd(m)

    def fwd(x, y):
        h = m.fc1(x)
        t = h.clone()
        t.detach_()
        return F.mse_loss(m.fc2(h + t), y), t

    f = cf(fwd)
    out = []
    for i in range(STEPS):
        opt.zero_grad()
        loss, t = f(*batch(i))
        loss.backward()
        opt.step()
        out.append(((loss.detach(), t), snap(m)))
    return out


# ---- batch 3: writes with grad values inside training steps, autocast
class Attn(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(8, 24)
        self.o = nn.Linear(8, 4)
        self.bias = nn.Parameter(torch.tensor(-2.0))

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, -1)
        s = q @ k.transpose(-1, -2) / 8**0.5
        mask = torch.ones(s.shape[-2:], dtype=torch.bool).triu(1)
        s.masked_fill_(mask, float("-inf"))
        s.masked_fill_(torch.eye(s.shape[-1], dtype=torch.bool), self.bias)
        return self.o(torch.softmax(s, -1) @ v)


def seqs(i):
    g = torch.Generator().manual_seed(i)
    return torch.randn(2, 5, 8, generator=g), torch.randn(2, 5, 4, generator=g)


def _attn_prog(autocast):
    def p(cf):
        torch.manual_seed(0)
        m = Attn()
        opt = torch.optim.AdamW(m.parameters(), lr=0.01)

        def step(x, y):
            opt.zero_grad()
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
                o = m(x)
            loss = F.mse_loss(o.float(), y)
            loss.backward()
            opt.step()
            return loss.detach()

        f = cf(step)
        return [(f(*seqs(i)), snap(m)) for i in range(STEPS)]

    return p


P["attn_masked_fill_learned_diag"] = _attn_prog(False)
P["attn_masked_fill_learned_diag_bf16"] = _attn_prog(True)


@prog
def scatter_topk_into_activation(cf):
    torch.manual_seed(0)
    m = Net()
    opt = sgd(m)

    def step(x, y):
        opt.zero_grad()
        h = m.fc1(x)
        vals, idx = h.topk(3, dim=1)
        sparse = torch.zeros_like(h).scatter_(1, idx, vals)
        loss = F.mse_loss(m.fc2(F.gelu(sparse)), y)
        loss.backward()
        opt.step()
        return loss.detach()

    f = cf(step)
    return [(f(*batch(i)), snap(m)) for i in range(STEPS)]


@prog
def index_add_segment_sum(cf):
    torch.manual_seed(0)
    m = Net()
    opt = sgd(m)
    seg = torch.tensor([0, 0, 1, 2, 2, 2])

    def step(x, y):
        opt.zero_grad()
        h = m.fc1(x)
        pooled = torch.zeros(3, 16).index_add_(0, seg, h)
        out = m.fc2(torch.tanh(pooled))[seg]
        loss = F.mse_loss(out, y)
        loss.backward()
        opt.step()
        return loss.detach()

    f = cf(step)
    return [(f(*batch(i)), snap(m)) for i in range(STEPS)]


@prog
def sin_positional_mlp_bf16(cf):
    torch.manual_seed(0)
    m = Net()
    opt = sgd(m)

    def step(x, y):
        opt.zero_grad()
        with torch.autocast("cpu", dtype=torch.bfloat16):
            h = torch.sin(m.fc1(x) * 3) + torch.atan(m.fc1(x))
            o = m.fc2(h)
        loss = F.mse_loss(o.float(), y)
        loss.backward()
        opt.step()
        return loss.detach()

    f = cf(step)
    return [(f(*batch(i)), snap(m)) for i in range(STEPS)]


if __name__ == "__main__":
    main(sys.argv[1:])
