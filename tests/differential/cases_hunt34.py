"""Session 34 (hunt34) hunt: programs written as PyTorch users write them, from outside the
project, where torchferro differed from eager or made more graphs than torch.compile:

- a ``no_grad`` region over parameters in a call made in grad mode, on the inductor: the
  ops the inductor hands to torch (``nn.TransformerEncoder``'s eval fast path, a group norm,
  a convolution) ran in grad mode and returned tensors that require grad
  (``InductorProgram::without_grad``);
- ``weakref.ref`` objects called in traced code: ``nn.LSTM``/``nn.GRU``'s
  ``_weights_have_changed`` and a child module's weak reference to its parent broke the graph
  (``source::Step::WeakRefCall``);
- a container a builtin makes from constants and the code then writes: a forward pre-hook
  ``with_kwargs=True`` copying its keywords with ``dict(kwargs)``, ``sorted(xs).append``
  (``Frame::own_container``);
- a function ``functools.wraps`` dressed as a torch function: a user's decorator around
  ``F.gelu`` lowered as ``gelu`` by the inductor, ``torch.func.vmap(torch.outer)`` run as
  ``torch.outer`` by the graph module's code (``calls::torch::dressed_user_wrapper``,
  ``callable_path``, ``torchferro._fx._honest``);
- complex tensors: the native metadata rule gave ``abs`` of a complex tensor a complex dtype
  (the inductor's fallback raised), a write into a spectrum panicked in the inductor's code
  generation, and ``.real``/``.imag`` broke the graph (``fx::infer`` unary rules, the inductor
  refusing complex graphs, ``tensor_attr``).

Next to them, the idioms of the same hunt that already matched (parametrizations,
``BatchNorm`` with ``momentum=None`` between train and eval, ``ModuleDict``/``ParameterList``,
``F.embedding`` with ``max_norm``, attention masks, ``torch.unique``, boolean masks,
``scatter_reduce``, ``index_add_``, ``bucketize``, distributions and explicit generators)."""

from __future__ import annotations

import functools
import weakref

import torch
from torch import nn
from torch.nn import functional as F

from .runner import case, register

STRICT_BREADTH = True


def x48(r):
    return (r.randn(4, 8),)


def seq(r):
    return (r.randn(3, 5, 8),)


def _eval(m, seed):
    m.eval()


def _train_then_eval(m, seed):
    m.train(seed == 0)


def _mod(name, cls, inputs, **options):
    register(f"hunt34_{name}", cls, inputs, module=True, **options)


# ---- no_grad regions over parameters, on the inductor


class EncoderEvalNoGrad(nn.Module):
    """Found here: the inductor's output required grad (the fast path's fallback op ran in
    grad mode over the layers' parameters)."""

    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(8, 2, 16, batch_first=True, dropout=0.0)
        self.enc = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)

    def forward(self, x):
        kpm = torch.zeros(3, 5, dtype=torch.bool)
        kpm[1, 3:] = True
        with torch.no_grad():
            return self.enc(x, src_key_padding_mask=kpm)


_mod("encoder_eval_fast_path_no_grad", EncoderEvalNoGrad, seq, prepare=_eval)


class TeacherNoGrad(nn.Module):
    """A frozen teacher (convolution and group norm) run under ``no_grad`` next to a student
    trained by the caller: the teacher's output must not require grad."""

    def __init__(self):
        super().__init__()
        self.teacher = nn.Sequential(nn.Conv1d(5, 6, 3, padding=1), nn.GroupNorm(2, 6))
        self.student = nn.Conv1d(5, 6, 3, padding=1)

    def forward(self, x):
        with torch.no_grad():
            t = self.teacher(x)
        return t, F.mse_loss(self.student(x), t)


_mod("teacher_no_grad_group_norm", TeacherNoGrad, seq)


# ---- weak references called in traced code


class Lstm(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(8, 6, num_layers=2, batch_first=True, bidirectional=True)

    def forward(self, x):
        h0 = torch.zeros(4, 3, 6)
        c0 = torch.ones(4, 3, 6)
        out, (h, c) = self.lstm(x, (h0, c0))
        return out[:, -1], h.sum(0), c


_mod("lstm_bidirectional_two_layers", Lstm, seq)


class LstmEvalNoGrad(Lstm):
    def forward(self, x):
        with torch.no_grad():
            return super().forward(x)


_mod("lstm_eval_no_grad", LstmEvalNoGrad, seq, prepare=_eval)


class GruHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(8, 6, batch_first=True)
        self.head = nn.Linear(6, 2)

    def forward(self, x):
        out, h = self.gru(x.tanh())
        return self.head(out[:, -1]), h


_mod("gru_head", GruHead, seq)


class _Child(nn.Module):
    def __init__(self, parent):
        super().__init__()
        self._parent = weakref.ref(parent)
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        p = self._parent()
        if p is None:
            return self.fc(x)
        return self.fc(x) * p.scale + p.bias


class WeakParent(nn.Module):
    """A child module holding a weak reference to its parent (not a submodule, to avoid the
    cycle in ``modules()``)."""

    def __init__(self):
        super().__init__()
        self.scale = 2.0
        self.bias = nn.Parameter(torch.ones(8))
        self.kids = [_Child(self)]
        self.child = self.kids[0]

    def forward(self, x):
        return self.child(x.relu()).sum(1)


_mod("weakref_to_parent_module", WeakParent, seq)


class _Holder:
    pass


_DEAD = weakref.ref(_Holder())
_ALIVE_OBJ = _Holder()
_ALIVE_OBJ.k = 3
_ALIVE = weakref.ref(_ALIVE_OBJ)


@case(seq)
def hunt34_weakref_dead_and_alive(x):
    y = x.cos()
    a = _DEAD()
    b = _ALIVE()
    return y * (0 if a is None else 1) + b.k


# ---- containers made by a builtin and written


class _Scaled(nn.Module):
    def forward(self, x, scale=1.0):
        return x * scale


class HookedKwargs(nn.Module):
    """Forward (pre-)hooks with kwargs: the pre-hook copies the keywords and changes one."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.calls = 0

        def pre(mod, args, kwargs):
            kwargs = dict(kwargs)
            kwargs["scale"] = kwargs.get("scale", 1.0) * 2
            return args, kwargs

        def post(mod, args, kwargs, out):
            self.calls += 1
            return out + kwargs["scale"]

        self.inner = _Scaled()
        self.inner.register_forward_pre_hook(pre, with_kwargs=True)
        self.inner.register_forward_hook(post, with_kwargs=True)

    def forward(self, x):
        return self.inner(self.fc(x), scale=3.0)


_mod("forward_hooks_with_kwargs_dict_copy", HookedKwargs, x48)


@case(x48)
def hunt34_sorted_then_appended(x):
    y = x.sin()
    widths = sorted([3, 1, 2])
    widths.append(4)
    opts = dict(zip(["a", "b"], [1.0, 2.0]))
    opts["c"] = 3.0
    return y * sum(widths) + opts["c"], widths, opts


# ---- idioms of the hunt that matched already


class Ortho(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.utils.parametrizations.orthogonal(nn.Linear(8, 8))
        self.sn = nn.utils.parametrizations.spectral_norm(nn.Linear(8, 6))

    def forward(self, x):
        with nn.utils.parametrize.cached():
            return self.sn(self.fc(x).relu() + self.fc(x * 2))


_mod("orthogonal_and_spectral_norm_cached", Ortho, x48, prepare=_train_then_eval)


class BnCumulative(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm1d(8, momentum=None)
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        return self.fc(self.bn(x))


_mod(
    "batchnorm_cumulative_train_then_eval", BnCumulative, x48, prepare=_train_then_eval
)


class Containers(nn.Module):
    def __init__(self):
        super().__init__()
        self.heads = nn.ModuleDict({"b": nn.Linear(8, 2), "a": nn.Linear(8, 3)})
        self.ps = nn.ParameterList([nn.Parameter(torch.randn(8)) for _ in range(3)])
        self.pd = nn.ParameterDict({"s": nn.Parameter(torch.ones(1))})

    def forward(self, x):
        for p in self.ps:
            x = x * p
        x = x * self.pd["s"]
        out = {k: m(x) for k, m in self.heads.items()}
        out["n"] = len(self.ps) + len(self.heads)
        return out, [k for k in self.heads], self.ps[-1].sum()


_mod("module_dict_parameter_list", Containers, x48)


@case(lambda r: (r.randint(0, 6, 2, 5), r.randn(6, 4) * 3))
def hunt34_embedding_max_norm_padding_idx(idx, w):
    before = w.sum()
    return F.embedding(idx, w, max_norm=1.0, padding_idx=0) * 2, before, w.sum()


@case(lambda r: (r.randint(0, 5, 12), r.randn(5, 4)))
def hunt34_unique_and_masks(x, y):
    u, inv, cnt = torch.unique(x, sorted=True, return_inverse=True, return_counts=True)
    m = y > 0
    z = y.clone()
    z[m] = 0.0
    return u, inv, cnt, z, y[m] * 2, torch.nonzero(m, as_tuple=True)


@case(lambda r: (r.randn(6), r.randint(0, 3, 6), r.randn(5, 3)))
def hunt34_scatter_reduce_index_add(src, idx, acc):
    a = torch.zeros(3).scatter_reduce(0, idx, src, "amax", include_self=False)
    b = torch.ones(3).scatter_reduce(0, idx, src, "mean", include_self=True)
    acc.index_add_(0, idx[:4].clamp(max=4), src[:4, None].expand(4, 3), alpha=0.5)
    return a, b, acc * 1


@case(lambda r: (r.randn(3), torch.Generator().manual_seed(r.seed)))
def hunt34_explicit_generator(x, g):
    a = torch.randn(3, generator=g)
    d = torch.distributions.Normal(x, x.abs() + 0.1)
    s = d.rsample()
    return x * a, torch.bernoulli(torch.full((3,), 0.5), generator=g), s, d.log_prob(s)


# ---- functions functools.wraps dressed as torch functions


def _halved(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs) * 0.5

    return wrapper


_half_gelu = _halved(F.gelu)
_half_add = _halved(torch.add)


@case(x48)
def hunt34_user_wrapper_of_torch_functions(x):
    """Found here: the inductor lowered the wrappers as ``gelu``/``add`` (wrong values)."""
    return _half_gelu(x) + F.gelu(x), _half_add(x, 1.0) - torch.add(x, 1.0)


@case(lambda r: (r.randn(3, 4),))
def hunt34_vmap_of_torch_function(x):
    """Found here: the graph module's code ran ``torch.outer`` on the unbatched inputs."""
    return torch.func.vmap(torch.outer)(x, x).sum(0) + torch.outer(x[0], x[0])


# ---- complex tensors (spectral code, rotary embeddings written with complex numbers)


@case(lambda r: (r.randn(4, 10),))
def hunt34_fft_magnitude_phase(x):
    """Found here: the inductor raised ("fallback abs returned Float32, expected Complex64":
    the native metadata rule kept ``abs``'s complex dtype), and ``.real``/``.imag`` broke the
    graph."""
    c = torch.fft.rfft(x)
    return c.abs(), c.angle(), c.real + c.imag, torch.view_as_real(c)


@case(lambda r: (r.randn(8),))
def hunt34_fft_band_stop(x):
    """Found here: the write into the spectrum panicked in the inductor's code generation
    ("no C type for Complex64"; the frame ran eagerly as an internal error)."""
    X = torch.fft.fft(x)
    X[3:6] = 0
    return torch.fft.ifft(X).real, X.abs().max()


@case(lambda r: (r.randn(2, 5, 8),))
def hunt34_rotary_as_complex(x):
    freqs = 1.0 / (10000 ** (torch.arange(0, 8, 2).float() / 8))
    f = torch.outer(torch.arange(5).float(), freqs)
    cis = torch.polar(torch.ones_like(f), f)
    xc = torch.view_as_complex(x.reshape(2, 5, 4, 2))
    return (
        torch.view_as_real(xc * cis).flatten(2),
        (xc * cis).abs().sum(),
        xc.conj().imag,
    )


@case(lambda r: (r.randn(3, 4),))
def hunt34_complex_math(x):
    z = torch.complex(x, x.flip(1))
    return (
        z.abs(),
        z.exp(),
        (z / (z + 1)).real,
        z.sum(1),
        torch.sgn(z),
        z.sigmoid().imag,
    )
