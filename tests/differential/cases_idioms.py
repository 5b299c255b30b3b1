"""Issue 14, session 12: programs written the way model and training code is written, around
the idioms the session made traceable and their neighbours: walks of a module's tree
(`modules()`, `named_parameters()`, `buffers()`, ...), forward hooks and pre-hooks on submodules,
`untyped_storage()`, `torch.set_default_dtype` inside the frame, `@contextmanager` generators,
plus builtins, exceptions, pattern matching, itertools, collections and functools as helpers
use them. Each must give eager's values in no more graphs than torch.compile."""

# The programs spell these idioms as users write them, on purpose:
# ruff: noqa: RUF058

from __future__ import annotations

import collections
import contextlib
import dataclasses
import functools
import itertools
import operator

import torch
import torch.nn.functional as F
from torch import nn

from .runner import case

# Issue 14: more graphs than torch.compile fails unless the case names the gap (breadth=).
STRICT_BREADTH = True

EVENTS: list = []


def x34(r):
    return (r.randn(3, 4),)


def x8(r):
    return (r.randn(2, 8),)


def xs3(r):
    return ([r.randn(2, 3) for _ in range(3)],)


# ---------------------------------------------------------------------------------------------
# Walks of a module's tree


class _Tower(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.inp = nn.Linear(8, 8)
        self.blocks = nn.ModuleList(
            [nn.Sequential(nn.Linear(8, 8), nn.ReLU()) for _ in range(2)]
        )
        self.norm = nn.LayerNorm(8)
        self.register_buffer("scale", torch.full((8,), 0.5))
        self.register_buffer(
            "steps", torch.zeros((), dtype=torch.long), persistent=False
        )


class _ParamCount(_Tower):
    def forward(self, x):
        n = sum(p.numel() for p in self.parameters())
        trainable = sum(p.numel() for p in self.parameters() if p.requires_grad)
        return self.norm(self.inp(x)) * (trainable / n)


@case(x8, module=True)
def tree_parameter_counts_scale_output():
    return _ParamCount()


class _FirstParamDevice(_Tower):
    def forward(self, x):
        p = next(self.parameters())
        return torch.zeros(x.shape, device=p.device, dtype=p.dtype) + self.inp(x)


@case(x8, module=True)
def tree_next_parameters_for_device_and_dtype():
    return _FirstParamDevice()


class _LinearsOnly(_Tower):
    def forward(self, x):
        h = x
        for m in self.modules():
            if isinstance(m, nn.Linear):
                h = m(h).tanh()
        return h


@case(x8, module=True)
def tree_modules_filtered_by_isinstance():
    return _LinearsOnly()


class _NamedModules(_Tower):
    def forward(self, x):
        names = [n for n, m in self.named_modules() if isinstance(m, nn.ReLU)]
        return self.inp(x), names


@case(x8, module=True)
def tree_named_modules_names():
    return _NamedModules()


class _NamedParamsL2(_Tower):
    def forward(self, x):
        reg = sum(
            (p**2).sum() for n, p in self.named_parameters() if n.endswith("weight")
        )
        return self.inp(x).sum() + 1e-3 * reg


@case(x8, module=True)
def tree_weight_decay_over_named_parameters():
    return _NamedParamsL2()


class _BufferDict(_Tower):
    def forward(self, x):
        bufs = dict(self.named_buffers())
        return self.inp(x) * bufs["scale"], sorted(bufs)


@case(x8, module=True)
def tree_named_buffers_as_dict():
    return _BufferDict()


class _ChildrenNames(_Tower):
    def forward(self, x):
        kinds = [type(c).__name__ for c in self.children()]
        named = [n for n, _ in self.named_children()]
        return self.inp(x), kinds, named


@case(x8, module=True)
def tree_children_and_named_children():
    return _ChildrenNames()


class _NoRecurse(_Tower):
    def forward(self, x):
        own = list(self.parameters(recurse=False))
        bufs = [b.sum() for b in self.buffers(recurse=False)]
        deep = [n for n, _ in self.named_parameters(prefix="model")]
        return self.inp(x), len(own), bufs, deep[:3]


@case(x8, module=True)
def tree_no_recurse_and_prefix():
    return _NoRecurse()


class _Tied(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.emb = nn.Linear(8, 8, bias=False)
        self.head = nn.Linear(8, 8, bias=False)
        self.head.weight = self.emb.weight
        self.shared = nn.ReLU()
        self.again = self.shared

    def forward(self, x):
        n_params = len(list(self.parameters()))
        n_all = len(list(self.named_parameters(remove_duplicate=False)))
        n_mods = len(list(self.modules()))
        return self.head(self.shared(self.emb(x))), n_params, n_all, n_mods


@case(x8, module=True)
def tree_tied_weights_counted_once():
    return _Tied()


class _SubmoduleParams(_Tower):
    def forward(self, x):
        h = self.inp(x)
        for block in self.blocks:
            w = next(block.parameters())
            h = block(h) + w.mean()
        return h


@case(x8, module=True)
def tree_parameters_of_a_submodule():
    return _SubmoduleParams()


class _FrozenCount(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.a = nn.Linear(8, 8)
        self.b = nn.Linear(8, 8)
        for p in self.a.parameters():
            p.requires_grad_(False)

    def forward(self, x):
        frozen = [n for n, p in self.named_parameters() if not p.requires_grad]
        return self.b(self.a(x)), frozen


@case(x8, module=True)
def tree_frozen_parameter_names():
    return _FrozenCount()


class _AnyHooks(_Tower):
    def forward(self, x):
        hooked = any(
            len(m._forward_hooks) + len(m._forward_pre_hooks) for m in self.modules()
        )
        return self.inp(x) + (1.0 if hooked else 0.0)


@case(x8, module=True)
def tree_fast_path_style_hook_check():
    return _AnyHooks()


# ---------------------------------------------------------------------------------------------
# Forward hooks and pre-hooks on submodules


def _double_output(mod, args, out):
    return out * 2


def _shift_input(mod, args):
    return (args[0] + 1,)


def _bare_input(mod, args):
    # A pre-hook may return a single value: it becomes the only argument.
    return args[0] * 3


def _observe(mod, args, out):
    EVENTS.append(("seen", type(mod).__name__, tuple(out.shape)))


class _Hooked(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.fc1 = nn.Linear(8, 8)
        self.fc2 = nn.Linear(8, 8)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


@case(x8, module=True)
def hook_forward_hook_replaces_output():
    m = _Hooked()
    m.fc1.register_forward_hook(_double_output)
    return m


@case(x8, module=True)
def hook_pre_hook_returns_tuple():
    m = _Hooked()
    m.fc2.register_forward_pre_hook(_shift_input)
    return m


@case(x8, module=True)
def hook_pre_hook_returns_single_value():
    m = _Hooked()
    m.fc1.register_forward_pre_hook(_bare_input)
    return m


@case(x8, module=True, state=("EVENTS",))
def hook_observer_returns_none():
    m = _Hooked()
    m.fc1.register_forward_hook(_observe)
    m.fc2.register_forward_hook(_observe)
    return m


@case(x8, module=True)
def hook_two_hooks_run_in_order():
    m = _Hooked()
    m.fc1.register_forward_hook(_double_output)
    m.fc1.register_forward_hook(lambda mod, a, out: out - 1)
    return m


@case(x8, module=True)
def hook_on_a_layer_inside_sequential():
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 4))
    m[0].register_forward_hook(_double_output)
    return m


class _Collector:
    """Keeps each layer's output, as feature extractors and `output_hidden_states` do."""

    def __init__(self):
        self.outs = []

    def __call__(self, mod, args, out):
        self.outs.append(out)


class _WithCollector(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.body = _Hooked()
        self.collector = _Collector()
        self.body.fc1.register_forward_hook(self.collector)
        self.body.fc2.register_forward_hook(self.collector)

    def forward(self, x):
        self.collector.outs.clear()
        y = self.body(x)
        return y, torch.stack(self.collector.outs).sum(0)


@case(x8, module=True)
def hook_collector_object_keeps_outputs():
    return _WithCollector()


# ---------------------------------------------------------------------------------------------
# Storage, default dtype, context managers


@case(lambda r: (r.randn(3, 4),))
def storage_nbytes_of_an_input(x):
    n = x.untyped_storage().nbytes()
    return x * (n // 16)


@case(lambda r: (r.randn(6),))
def storage_size_equals_numel_times_element_size(x):
    dense = x.untyped_storage().size() == x.numel() * x.element_size()
    return x + 1 if dense else x - 1


@case(x34)
def default_dtype_float64_region_restored(x):
    torch.set_default_dtype(torch.float64)
    try:
        y = torch.ones(3, 4) * x.double()
        z = torch.arange(4) / 3
    finally:
        torch.set_default_dtype(torch.float32)
    return y, z, torch.tensor([0.5])


@contextlib.contextmanager
def _dtype(d):
    old = torch.get_default_dtype()
    torch.set_default_dtype(d)
    try:
        yield
    finally:
        torch.set_default_dtype(old)


@case(x34)
def default_dtype_through_a_contextmanager(x):
    with _dtype(torch.float64):
        y = torch.zeros(3, 4) + x
    return y, torch.zeros(1)


@contextlib.contextmanager
def _tagged(tag):
    EVENTS.append(("enter", tag))
    try:
        yield tag * 2
    finally:
        EVENTS.append(("exit", tag))


@case(x34, state=("EVENTS",))
def contextmanager_nested_two_deep(x):
    with _tagged(1) as a, _tagged(2) as b:
        y = x * a + b
    return y


@case(x34, state=("EVENTS",))
def contextmanager_exception_caught_outside(x):
    try:
        with _tagged(3):
            raise ValueError("inside")
    except ValueError as e:
        y = x + len(str(e))
    return y


@contextlib.contextmanager
def _suppressing():
    try:
        yield
    except KeyError:
        EVENTS.append(("suppressed",))


@case(x34, state=("EVENTS",))
def contextmanager_that_suppresses(x):
    y = x
    with _suppressing():
        y = y + 1
        raise KeyError("k")
    return y * 2


# ---------------------------------------------------------------------------------------------
# Builtins, exceptions, pattern matching


@case(xs3)
def builtins_enumerate_zip_reversed(xs):
    out = []
    for i, (a, b) in enumerate(zip(xs, reversed(xs))):
        out.append(a * i + b)
    return out


@case(xs3)
def builtins_sorted_by_key_with_reverse(xs):
    scored = sorted(
        ((float(i), t) for i, t in enumerate(xs)), key=lambda p: p[0], reverse=True
    )
    return [t for _, t in scored]


@case(xs3)
def builtins_min_max_with_default(xs):
    k = max((len(t.shape) for t in xs), default=0)
    j = min([], default=7)
    return xs[0] * k + j


@case(x34)
def builtins_divmod_round_abs(x):
    q, r = divmod(17, 5)
    return x * q + r, round(2.675, 2), abs(-3), round(7.5)


@case(x34)
def exception_raised_in_helper_caught_here(x):
    def check(t):
        if t.dim() != 2:
            raise ValueError("need 2-d")
        return t

    try:
        check(x[0])
    except ValueError as e:
        msg = str(e)
    return check(x) * 2, msg


@case(x34)
def exception_try_else_finally(x):
    log = []
    try:
        y = x + 1
    except RuntimeError:
        y = x
    else:
        log.append("else")
    finally:
        log.append("finally")
    return y, log


@case(x34)
def exception_assert_passes(x):
    assert x.dim() == 2, "expected a matrix"
    return x.sum(0)


@case(x34)
def match_on_tuple_shape(x):
    match tuple(x.shape):
        case (n, 4):
            return x * n
        case _:
            return x


@case(x34)
def match_on_mapping_and_class(x):
    cfg = {"act": "gelu", "p": 0.0}
    match cfg:
        case {"act": "relu"}:
            y = F.relu(x)
        case {"act": "gelu", "p": float(p)}:
            y = F.gelu(x) * (1 - p)
        case _:
            y = x
    return y


@dataclasses.dataclass
class _Spec:
    kind: str
    scale: float


@case(x34)
def match_dataclass_with_guard(x):
    spec = _Spec("scale", 2.0)
    match spec:
        case _Spec(kind="scale", scale=s) if s > 1:
            return x * s
        case _Spec(kind="shift", scale=s):
            return x + s
    return x


# ---------------------------------------------------------------------------------------------
# itertools, collections, functools, operator


@case(xs3)
def itertools_accumulate_and_pairwise(xs):
    sums = list(itertools.accumulate(xs))
    diffs = [b - a for a, b in itertools.pairwise(sums)]
    return sums[-1], diffs


@case(xs3)
def itertools_islice_chain_starmap(xs):
    head = list(itertools.islice(itertools.chain(xs, xs), 1, 5, 2))
    prods = list(itertools.starmap(operator.mul, zip(xs, head)))
    return prods


@case(xs3)
def itertools_groupby_on_shapes(xs):
    groups = {
        k: len(list(g)) for k, g in itertools.groupby(xs, key=lambda t: t.shape[0])
    }
    return xs[0] * groups[2]


@case(x34)
def collections_counter_most_common(x):
    c = collections.Counter("abracadabra")
    (top, n), *_ = c.most_common(1)
    return x * n, top


@case(xs3)
def collections_deque_window(xs):
    window = collections.deque(maxlen=2)
    outs = []
    for t in xs:
        window.append(t)
        outs.append(sum(window))
    return outs


@case(x34)
def collections_namedtuple_replace(x):
    Out = collections.namedtuple("Out", "y aux")
    o = Out(x * 2, x.sum())
    o = o._replace(aux=o.aux + 1)
    return o.y + o.aux, o._asdict()["aux"]


@case(x34)
def functools_reduce_with_initial(x):
    parts = [x, x * 2, x * 3]
    return functools.reduce(operator.add, parts, torch.zeros_like(x)), functools.reduce(
        lambda a, b: a * b, [1, 2, 3, 4]
    )


@case(x34)
def functools_partial_of_functional(x):
    act = functools.partial(F.leaky_relu, negative_slope=0.2)
    norm = functools.partial(F.normalize, dim=-1)
    return norm(act(x))


@case(x34)
def operator_itemgetter_attrgetter(x):
    get = operator.itemgetter(0, 2)
    shape = operator.attrgetter("shape")
    a, b = get(x)
    return a + b, shape(x)[1]


# ---------------------------------------------------------------------------------------------
# User generator functions


def _doubled(xs):
    for t in xs:
        yield t * 2


def _pairs(xs):
    prev = None
    for t in xs:
        if prev is not None:
            yield prev, t
        prev = t


@case(xs3)
def generator_function_summed(xs):
    return sum(_doubled(xs))


@case(xs3)
def generator_function_listed_and_sorted(xs):
    return list(_doubled(xs)), sorted(_doubled(xs), key=lambda t: t.shape[0])


@case(xs3)
def generator_function_next_twice(xs):
    g = _doubled(xs)
    return next(g) + next(g)


@case(xs3)
def generator_function_in_a_comprehension(xs):
    return [a - b for a, b in _pairs(xs)]


@case(xs3)
def generator_function_zipped(xs):
    return [a + b for a, b in zip(_doubled(xs), xs)]


@case(xs3)
def generator_function_enumerated(xs):
    return [t * i for i, t in enumerate(_doubled(xs))]


@case(xs3)
def generator_function_under_a_generator_expression(xs):
    return sorted(t.shape[0] for t in _doubled(xs)), xs[0] + 1
