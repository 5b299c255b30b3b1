"""Probe batch E: torch.func, autograd.Function, grad modes, RNG state handling, init."""

import torch
from differential.runner import case, register
from torch import nn
from torch.nn import functional as F

STRICT_BREADTH = True


def x34(r):
    return (r.randn(3, 4),)


@case(x34)
def e_vmap_simple(x):
    return torch.vmap(lambda r: r.dot(r) + r.sum())(x), torch.func.vmap(torch.outer)(
        x, x
    )


@case(x34)
def e_vmap_in_dims(x):
    w = torch.arange(4.0)
    return torch.vmap(lambda a, b: a * b, in_dims=(0, None))(x, w)


@case(lambda r: (r.randn(4, requires_grad=False),))
def e_func_grad(x):
    g = torch.func.grad(lambda v: (v.sin() * v).sum())(x)
    j = torch.func.jacrev(lambda v: v.exp() * 2)(x)
    return g, j


class Lin(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        p = {k: v * 2 for k, v in self.named_parameters()}
        return torch.func.functional_call(
            self.fc, {"weight": p["fc.weight"], "bias": p["fc.bias"]}, (x,)
        )


register("e_functional_call", Lin, x34, module=True)


class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, k):
        ctx.save_for_backward(x)
        ctx.k = k
        return x * x * k

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 2 * x * ctx.k, None


@case(lambda r: (r.randn(3, 4, requires_grad=True),))
def e_autograd_function(x):
    y = Square.apply(x, 3.0)
    y.sum().backward()
    return y.detach(), x.grad


class Clamp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.mark_non_differentiable
        return x.clamp(-1, 1)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, g):
        return g


@case(lambda r: (r.randn(3, 4, requires_grad=True),))
def e_autograd_function_once_diff(x):
    y = Clamp.apply(x * 3)
    return y, torch.autograd.grad(y.sum(), x)[0]


@case(lambda r: (r.randn(3, requires_grad=True),))
def e_grad_mode_functions(x):
    torch.set_grad_enabled(False)
    a = x * 2
    torch.set_grad_enabled(True)
    with torch.no_grad():
        with torch.enable_grad():
            b = x * 3
        c = x * 4
    return a.requires_grad, b.requires_grad, c.requires_grad, a, b, c


@case(lambda r: (r.randn(3),))
def e_inference_mode_inside(x):
    with torch.inference_mode():
        y = x * 2
    return y.is_inference(), y + 1


@case(lambda r: (r.randn(3),))
def e_rng_state_replay(x):
    s = torch.get_rng_state()
    a = torch.randn(3)
    torch.set_rng_state(s)
    b = torch.randn(3)
    return x + a, b, torch.equal(a, b)


@case(lambda r: (r.randn(3),))
def e_manual_seed_inside(x):
    torch.manual_seed(123)
    a = torch.rand(3)
    b = torch.randn_like(x)
    return x + a, b, torch.initial_seed()


@case(lambda r: (r.randn(4, 4),))
def e_bernoulli_inplace_dropout_eval(x):
    m = torch.empty(4, 4).bernoulli_(0.3)
    return x * m, F.dropout(x, 0.5, training=False), F.dropout1d(x[None], 0.5)


class InitInForward(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.empty(4, 4))
        self.initialized = False

    def forward(self, x):
        if not self.initialized:
            nn.init.kaiming_uniform_(self.w, a=5**0.5)
            self.initialized = True
        return x @ self.w


register("e_lazy_init_in_forward", InitInForward, x34, module=True)


class LazyLin(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.LazyLinear(5)

    def forward(self, x):
        return self.fc(x).relu()


register("e_lazy_linear", LazyLin, x34, module=True)


@case(x34)
def e_randperm_shuffle_index(x):
    p = torch.randperm(x.shape[0])
    return (
        x[p],
        torch.multinomial(torch.ones(5), 3, replacement=False),
        torch.normal(0.0, 1.0, (2,)),
    )


@case(x34)
def e_fork_rng_devices(x):
    with torch.random.fork_rng(devices=[]):
        a = torch.randn(3)
    b = torch.randn(3)
    return x.sum() + a, b


class GradHook(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.seen = []

    def forward(self, x):
        h = self.fc(x)
        h.register_hook(lambda g: g * 0.5)
        out = (h * h).sum()
        out.backward()
        return out.detach(), self.fc.weight.grad.clone()


register("e_tensor_hook_then_backward", GradHook, x34, module=True)


class ParamsToVec(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 3)
        self.b = nn.Linear(3, 2)

    def forward(self, x):
        v = nn.utils.parameters_to_vector(self.parameters())
        with torch.no_grad():
            nn.utils.vector_to_parameters(v * 0.5, self.parameters())
        return self.b(self.a(x)), v.norm()


register("e_parameters_to_vector_and_back", ParamsToVec, x34, module=True)


class ApplyInit(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 2))

    def forward(self, x):
        names = [n for n, _ in self.named_modules(prefix="root")]
        total = sum(p.numel() for p in self.parameters() if p.requires_grad)
        return self.net(x), names, total


register("e_named_modules_prefix", ApplyInit, x34, module=True)
