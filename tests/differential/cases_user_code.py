"""Issue 14, code the way users write it around models (session 16): config dataclasses read,
copied with ``dataclasses.replace`` and walked with ``fields``/``asdict``; ``enum`` switches;
``typing`` helpers (``Optional`` arguments, ``cast``, ``TYPE_CHECKING``); ``contextlib``
helpers (``nullcontext``, ``suppress``, ``ExitStack``); ``functools`` on methods (``partial``
attributes, ``wraps`` decorators, ``cached_property``, ``reduce``); shapes formatted in asserts
and in logging guarded by flags; torchvision's feature getters and transformers' mask and output
helpers; training-loop utilities (EMA, accuracy, label smoothing)."""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import enum
import functools
import itertools
import logging
import math
import operator
import typing
import warnings
from typing import Optional

import torch
import torch.nn.functional as F
from torch import nn

from .runner import TC_DIFFERS, case

# Issue 14: more graphs than torch.compile fails unless the case names the gap (breadth=).
STRICT_BREADTH = True

DEBUG = False
VERBOSE = 0
_log = logging.getLogger("torchferro_tests.user_code")


def x34(r):
    return (r.randn(3, 4),)


def x_seq(r):
    return (r.randn(2, 5, 8),)


def x_img(r):
    return (r.randn(2, 4, 6, 6),)


# ---------------------------------------------------------------------------------------------
# Config dataclasses


@dataclasses.dataclass(frozen=True)
class BlockConfig:
    hidden: int = 8
    scale: float = 0.5
    act: str = "gelu"
    bias: bool = True


@case(x_seq)
def dataclass_replace_of_a_frozen_config(x):
    cfg = BlockConfig()
    wide = dataclasses.replace(cfg, scale=2.0, act="relu")
    act = F.relu if wide.act == "relu" else F.gelu
    return act(x * wide.scale) + cfg.scale, wide.hidden, wide == cfg


@case(x34)
def dataclass_fields_walked_into_a_dict(x):
    cfg = BlockConfig(scale=3.0)
    numeric = {
        f.name: getattr(cfg, f.name)
        for f in dataclasses.fields(cfg)
        if f.type in ("int", "float")
    }
    return x * numeric["scale"] + numeric["hidden"], sorted(numeric)


@case(x34)
def dataclass_asdict_drives_the_computation(x):
    d = dataclasses.asdict(BlockConfig(hidden=4))
    out = x
    if d["bias"]:
        out = out + d["hidden"]
    return out * d["scale"], len(d)


@dataclasses.dataclass
class Stats:
    values: list = dataclasses.field(default_factory=list)
    count: int = 0

    def add(self, t):
        self.values.append(t)
        self.count += 1


@case(x34)
def dataclass_with_default_factory_made_in_the_frame(x):
    s = Stats()
    for k in range(3):
        s.add(x * k)
    return torch.stack(s.values).sum(0), s.count


class ConfiguredBlock(nn.Module):
    def __init__(self, cfg: BlockConfig):
        super().__init__()
        self.cfg = cfg
        self.fc = nn.Linear(cfg.hidden, cfg.hidden, bias=cfg.bias)

    def forward(self, x):
        cfg = self.cfg
        if cfg.act == "gelu":
            h = F.gelu(self.fc(x))
        else:
            h = F.relu(self.fc(x))
        return x + cfg.scale * h


@case(x_seq, module=True)
def module_reads_a_frozen_config_attribute():
    return ConfiguredBlock(BlockConfig())


# ---------------------------------------------------------------------------------------------
# enum


class Act(enum.Enum):
    GELU = "gelu"
    SILU = "silu"
    TANH = "tanh"


_ACTS = {Act.GELU: F.gelu, Act.SILU: F.silu, Act.TANH: torch.tanh}


@case(x34)
def enum_value_lookup_and_dispatch_table(x):
    act = Act("silu")
    by_name = Act["TANH"]
    return _ACTS[act](x) + _ACTS[by_name](x), act.name, by_name.value


class Phase(enum.Flag):
    TRAIN = enum.auto()
    EVAL = enum.auto()
    LOG = enum.auto()


@case(x34)
def enum_flags_combined_and_tested(x):
    phase = Phase.EVAL | Phase.LOG
    out = x
    if Phase.TRAIN in phase:
        out = out * 2
    if phase & Phase.LOG:
        out = out + 1
    return out, bool(phase & Phase.TRAIN)


class Pool(enum.IntEnum):
    MEAN = 0
    MAX = 1


@case(x34)
def int_enum_compared_with_ints_and_members_walked(x):
    outs = []
    for p in Pool:
        outs.append(x.mean(1) if p == 0 else x.amax(1))
    return torch.stack(outs), [m for m in Pool.__members__], int(Pool.MAX) + 1


# ---------------------------------------------------------------------------------------------
# typing


def _maybe_bias(x: torch.Tensor, bias: Optional[torch.Tensor] = None) -> torch.Tensor:
    if bias is not None:
        x = x + bias
    return x


@case(lambda r: (r.randn(3, 4), r.randn(4)))
def optional_arguments_and_typing_cast(x, b):
    y = typing.cast(torch.Tensor, _maybe_bias(x, b))
    z = _maybe_bias(x)
    if typing.TYPE_CHECKING:
        raise AssertionError("unreachable")
    return y - z, isinstance(y, torch.Tensor)


class Features(typing.NamedTuple):
    low: torch.Tensor
    high: torch.Tensor
    scale: float = 1.0


@case(x_img)
def typing_namedtuple_replaced_and_unpacked(x):
    f = Features(x.mean(1), x.amax(1))
    g = f._replace(scale=0.5)
    low, high, scale = g
    return low * scale + high, f.scale, g._asdict()["scale"]


# ---------------------------------------------------------------------------------------------
# contextlib


@case(x34)
def nullcontext_or_no_grad_chosen_by_a_flag(x):
    ctx = torch.no_grad() if DEBUG else contextlib.nullcontext()
    with ctx:
        y = x * 2
    return y.sin(), torch.is_grad_enabled()


@case(x34)
def suppress_around_a_missing_key(x):
    cache = {"a": x}
    out = x
    with contextlib.suppress(KeyError):
        out = out + cache["b"]
    return out * 3


@case(lambda r: (r.randn(3, 4, requires_grad=True),))
def exit_stack_entering_no_grad(x):
    with contextlib.ExitStack() as stack:
        stack.enter_context(torch.no_grad())
        y = x * 2
    return y, y.requires_grad, (x * 3).requires_grad


# ---------------------------------------------------------------------------------------------
# functools on methods


def _logged(fn):
    @functools.wraps(fn)
    def wrapper(self, *args, **kwargs):
        if VERBOSE > 1:
            print(f"{type(self).__name__}.{fn.__name__}")
        return fn(self, *args, **kwargs)

    return wrapper


class WrappedForward(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.act = functools.partial(F.gelu, approximate="tanh")

    @_logged
    def forward(self, x):
        return self.act(self.fc(x)), self.forward.__name__


@case(x_seq, module=True)
def wraps_decorated_forward_with_a_partial_activation():
    return WrappedForward()


class CachedRope(nn.Module):
    def __init__(self, dim=8, base=10000.0):
        super().__init__()
        self.dim, self.base = dim, base

    @functools.cached_property
    def inv_freq(self):
        return 1.0 / (self.base ** (torch.arange(0, self.dim, 2).float() / self.dim))

    def forward(self, x):
        t = torch.arange(x.shape[1], dtype=torch.float32)
        freqs = torch.outer(t, self.inv_freq)
        return x * freqs.cos().repeat(1, 2) + x.flip(-1) * freqs.sin().repeat(1, 2)


def _cached_rope():
    m = CachedRope()
    _ = m.inv_freq  # computed at construction, as models warm it
    return m


@case(x_seq, module=True)
def cached_property_read_in_forward():
    return _cached_rope()


@case(lambda r: ([r.randn(3, 4) for _ in range(4)],))
def reduce_over_a_list_of_tensors(xs):
    total = functools.reduce(operator.add, xs)
    prod = functools.reduce(lambda a, b: a * b, xs, torch.ones(3, 4))
    return total, prod


class Scaler:
    def __init__(self, k):
        self.k = k

    def scale(self, x, *, shift=0.0):
        return x * self.k + shift


@case(x34)
def partial_of_a_bound_method_with_keywords(x):
    s = Scaler(3.0)
    f = functools.partial(s.scale, shift=1.0)
    g = functools.partial(f, shift=-1.0)
    return f(x), g(x), f.keywords


# ---------------------------------------------------------------------------------------------
# Shapes in asserts and logging behind flags


@case(x_seq)
def assert_with_an_fstring_of_the_shape(x):
    assert x.dim() == 3, f"expected (batch, seq, dim), got {tuple(x.shape)}"
    b, t, d = x.shape
    assert d % 2 == 0, "dim {} must be even".format(d)
    return x.view(b, t, 2, d // 2).sum(2)


@case(x_seq)
def logging_guarded_by_a_flag_and_a_level(x):
    if DEBUG:
        print(f"x: {x.shape} {x.dtype}")
    if VERBOSE > 2:
        warnings.warn(f"shape {x.shape}")
    if _log.isEnabledFor(logging.DEBUG):
        _log.debug("x %s", x.shape)
    return x.softmax(-1)


@case(x_img)
def shape_formatted_into_a_module_dict_key(x):
    key = "{}x{}".format(*x.shape[-2:])
    table = {"6x6": 2.0, "8x8": 3.0}
    return x * table[key], key, f"{x.shape[1]:03d}", str(x.dtype), x.device.type


# ---------------------------------------------------------------------------------------------
# torchvision idioms


class FeatureGetter(nn.Module):
    """torchvision's IntermediateLayerGetter: children run in order, chosen outputs kept."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(4, 4, 3, padding=1)
        self.layer1 = nn.Conv2d(4, 4, 3, padding=1)
        self.layer2 = nn.Conv2d(4, 4, 3, stride=2, padding=1)
        self.return_layers = {"layer1": "feat1", "layer2": "feat2"}

    def forward(self, x):
        out = collections.OrderedDict()
        for name, module in self.named_children():
            x = module(x)
            if name in self.return_layers:
                out[self.return_layers[name]] = x
        return out


@case(x_img, module=True)
def intermediate_layer_getter_over_named_children():
    return FeatureGetter()


class SqueezeExcite(nn.Module):
    def __init__(self, c=4, squeeze=2):
        super().__init__()
        self.fc1 = nn.Conv2d(c, squeeze, 1)
        self.fc2 = nn.Conv2d(squeeze, c, 1)

    def forward(self, x):
        s = F.adaptive_avg_pool2d(x, 1)
        s = self.fc2(F.relu(self.fc1(s)))
        return x * torch.sigmoid(s)


class StochasticDepthBlock(nn.Module):
    def __init__(self, p=0.2):
        super().__init__()
        self.p = p
        self.se = SqueezeExcite()

    def forward(self, x):
        out = self.se(x)
        if not self.training or self.p == 0.0:
            return x + out
        keep = torch.empty(x.shape[0], 1, 1, 1).bernoulli_(1 - self.p)
        return x + out * keep / (1 - self.p)


def _eval_block():
    return StochasticDepthBlock().eval()


@case(x_img, module=True)
def squeeze_excite_with_stochastic_depth_in_eval():
    return _eval_block()


def _pair(v):
    return v if isinstance(v, (tuple, list)) else (v, v)


@case(x_img)
def int_or_pair_normalized_like_torchvision(x):
    kh, kw = _pair(3)
    sh, sw = _pair([2, 1])
    return F.avg_pool2d(x, (kh, kw), (sh, sw), padding=1), (kh, kw, sh, sw)


class Stages(nn.Module):
    def __init__(self):
        super().__init__()
        for i in range(3):
            setattr(self, f"layer{i + 1}", nn.Linear(8, 8))

    def forward(self, x):
        for i in range(1, 4):
            x = getattr(self, f"layer{i}")(x).relu()
        return x


@case(x_seq, module=True)
def layers_fetched_by_formatted_names():
    return Stages()


@case(x_img)
def jit_scripting_checks_as_torchvision_writes_them(x):
    if not torch.jit.is_scripting() and not torch.jit.is_tracing():
        x = x * 2
    return torch.flatten(F.adaptive_avg_pool2d(x, 1), 1)


# ---------------------------------------------------------------------------------------------
# transformers idioms


@case(lambda r: (r.randn(2, 5, 8), (r.randn(2, 5) > 0).long()))
def extended_attention_mask_from_finfo_min(x, mask):
    dtype = x.dtype
    ext = mask[:, None, None, :].to(dtype=dtype)
    ext = (1.0 - ext) * torch.finfo(dtype).min
    scores = torch.einsum("bqd,bkd->bqk", x, x)[:, None] + ext
    return scores.softmax(-1)


@dataclasses.dataclass
class EncoderOutput:
    last_hidden_state: torch.Tensor
    hidden_states: Optional[tuple] = None
    attentions: Optional[tuple] = None

    def to_tuple(self):
        return tuple(
            getattr(self, f.name)
            for f in dataclasses.fields(self)
            if getattr(self, f.name) is not None
        )


class TinyEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(8, 8) for _ in range(2)])

    def forward(self, x, output_hidden_states=True, return_dict=False):
        all_hidden = () if output_hidden_states else None
        for layer in self.layers:
            if output_hidden_states:
                all_hidden = all_hidden + (x,)
            x = layer(x).tanh()
        out = EncoderOutput(last_hidden_state=x, hidden_states=all_hidden)
        return out if return_dict else out.to_tuple()


@case(x_seq, module=True)
def output_dataclass_to_tuple_skipping_nones():
    return TinyEncoder()


@case(x_seq)
def kwargs_popped_with_defaults(x):
    def block(x, **kwargs):
        scale = kwargs.pop("scale", 1.0)
        use_cache = kwargs.pop("use_cache", False)
        assert not kwargs, f"unexpected {sorted(kwargs)}"
        return x * scale, use_cache

    return block(x, scale=0.5, use_cache=True), block(x)


@functools.lru_cache(maxsize=None)
def _causal_shape(t: int, window: int) -> tuple:
    return (t, t), max(0, t - window)


@case(x_seq)
def lru_cached_helper_of_ints(x):
    shape, offset = _causal_shape(x.shape[1], 3)
    mask = torch.ones(shape, dtype=torch.bool).tril(diagonal=-offset)
    return x.masked_fill(~mask[None, :, :1].expand(2, 5, 8), 0.0)


# ---------------------------------------------------------------------------------------------
# Training-loop utilities


@case(lambda r: (r.randn(6, 5), r.randint(0, 5, 6)))
def accuracy_and_label_smoothed_loss(logits, y):
    acc = (logits.argmax(-1) == y).float().mean()
    n = logits.shape[-1]
    eps = 0.1
    logp = logits.log_softmax(-1)
    smooth = -logp.mean(-1)
    nll = -logp.gather(-1, y[:, None]).squeeze(-1)
    loss = ((1 - eps) * nll + eps * smooth).mean()
    return loss, acc, F.cross_entropy(logits, y, label_smoothing=eps), n


class EMA:
    def __init__(self, model, decay=0.9):
        self.decay = decay
        self.shadow = {k: v.detach().clone() for k, v in model.state_dict().items()}

    @torch.no_grad()
    def update(self, model):
        for k, v in model.state_dict().items():
            self.shadow[k].mul_(self.decay).add_(v, alpha=1 - self.decay)


def _ema_inputs(r):
    m = nn.Linear(4, 3)
    return (m, EMA(m), r.randn(2, 4))


@case(_ema_inputs)
def ema_update_over_a_state_dict(m, ema, x):
    out = m(x)
    ema.update(m)
    return out, sorted(ema.shadow), ema.shadow["weight"] * 1


@case(lambda r: ([r.randn(4, 3) for _ in range(3)], [2, 3, 4]))
def offsets_from_accumulate_and_split(xs, sizes):
    flat = torch.cat([x.flatten() for x in xs])
    offsets = list(itertools.accumulate(sizes, initial=0))
    parts = [flat[a:b] for a, b in zip(offsets, offsets[1:])]
    names, vals = zip(*[(f"p{i}", p.sum()) for i, p in enumerate(parts)])
    return list(names), torch.stack(vals), math.prod(xs[0].shape)


class Regularized(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 4)
        self.fc2 = nn.Linear(4, 2)

    def forward(self, x):
        penalty = sum(
            p.pow(2).sum()
            for name, p in self.named_parameters()
            if name.endswith("weight") and not name.startswith("fc2")
        )
        return self.fc2(self.fc1(x).relu()), penalty


@case(x34, module=True)
def l2_penalty_over_named_parameters_filtered_by_name():
    return Regularized()


# ---------------------------------------------------------------------------------------------
# More configs and helpers


@dataclasses.dataclass
class AttnConfig:
    hidden: int = 8
    heads: int = 2
    dropout: float = dataclasses.field(default=0.0, metadata={"tunable": True})

    def __post_init__(self):
        self.head_dim = self.hidden // self.heads


@case(x_seq)
def dataclass_post_init_and_field_metadata(x):
    cfg = AttnConfig(heads=4)
    tunable = [f.name for f in dataclasses.fields(cfg) if f.metadata.get("tunable")]
    b, t, _ = x.shape
    h = x.view(b, t, cfg.heads, cfg.head_dim).transpose(1, 2)
    return h.softmax(-1), tunable, cfg.head_dim


@case(lambda r: ([r.randn(3) for _ in range(4)], ["a", "b", "a", "c"]))
def defaultdict_of_lists_grouping_tensors(xs, keys):
    groups = collections.defaultdict(list)
    for k, x in zip(keys, xs):
        groups[k].append(x)
    return {k: torch.stack(v).mean(0) for k, v in sorted(groups.items())}


class Task(enum.Enum):
    CLS = "cls"
    REG = "reg"


class MultiHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Linear(8, 8)
        self.heads = nn.ModuleDict(
            {Task.CLS.value: nn.Linear(8, 3), Task.REG.value: nn.Linear(8, 1)}
        )

    def forward(self, x, task=Task.CLS):
        return self.heads[task.value](self.trunk(x).relu())


@case(x_seq, module=True)
def module_dict_indexed_by_an_enum_value():
    return MultiHead()


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self._scale = 1.0

    @property
    def scale(self):
        return self._scale

    @scale.setter
    def scale(self, v):
        self._scale = float(v)

    @staticmethod
    def _act(x):
        return x * torch.sigmoid(x)

    def forward(self, x):
        return self._act(self.fc(x)) * self.scale


def _scaled_block():
    b = Block()
    b.scale = 2
    return b


@case(x_seq, module=True)
def property_setter_and_staticmethod_through_self():
    return _scaled_block()


@case(x_img)
def shape_joined_into_a_string_key(x):
    key = "x".join(map(str, x.shape[1:]))
    sizes = {"4x6x6": (2, 3), "4x8x8": (4, 4)}
    h, w = sizes[key]
    return F.adaptive_avg_pool2d(x, (h, w)), key


@case(x_seq)
def new_zeros_and_new_full_from_computed_shapes(x):
    b, t, d = x.shape
    pad = x.new_zeros((b, 2, d))
    cls = x.new_full((b, 1, d), 0.5)
    return torch.cat([cls, x, pad], dim=1), math.isclose(0.5, 1 / 2)


class Scorer(nn.Module):
    """An abstract base with a template method, as libraries write their heads."""

    def score(self, h):
        raise NotImplementedError

    def forward(self, x):
        h = x.mean(1)
        return self.score(h).log_softmax(-1)


class DotScorer(Scorer):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(8, 3))

    def score(self, h):
        return h @ self.w


@case(x_seq, module=True)
def template_method_overridden_in_a_subclass():
    return DotScorer()


@contextlib.contextmanager
def _maybe_profile(enabled):
    if enabled:
        print("start")
    try:
        yield
    finally:
        if enabled:
            print("stop")


@case(x34)
def user_contextmanager_off_by_a_flag(x):
    with _maybe_profile(DEBUG):
        y = x.relu() * 2
    return y


@case(lambda r: (r.randn(3, 4),))
def chain_from_iterable_over_parameter_lists(x):
    groups = [[x, x * 2], [x + 1]]
    flat = list(itertools.chain.from_iterable(groups))
    return sum(t.sum() for t in flat), len(flat)


@functools.lru_cache(maxsize=None)
def _warn_once(msg):
    warnings.warn(msg)


@case(x34)
def warning_once_helper_behind_a_flag(x):
    if VERBOSE > 0:
        _warn_once("slow path")
    return x.cumsum(0)


class Norm(enum.Enum):
    LAYER = "layer"
    RMS = "rms"

    def apply(self, x):
        if self is Norm.LAYER:
            return F.layer_norm(x, x.shape[-1:])
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)


@case(x_seq)
def enum_member_by_value_with_a_method(x):
    kind = "rms" if x.shape[-1] % 2 == 0 else "layer"
    return Norm(kind).apply(x), Norm(kind).name


@dataclasses.dataclass
class Nested:
    cfg: BlockConfig = dataclasses.field(default_factory=BlockConfig)
    sizes: list = dataclasses.field(default_factory=lambda: [2, 4])


# torch.compile (2.11) raises an AssertionError inside its polyfill that constructs the nested
# default (`instantiate_user_defined_class_object`).
@case(x34, xfail_tc=TC_DIFFERS)
def dataclass_astuple_of_a_nested_config(x):
    t = dataclasses.astuple(Nested())
    (hidden, scale, act, bias), sizes = t
    return x * scale + hidden + sum(sizes), act, bias


def _field_kind(hint):
    origin = typing.get_origin(hint)
    if origin is typing.Union and type(None) in typing.get_args(hint):
        return "optional"
    return "plain"


@case(x34)
def typing_hints_inspected_to_pick_a_path(x):
    kinds = [_field_kind(h) for h in (Optional[int], int, typing.List[int])]
    return x * kinds.count("plain"), kinds


# ---------------------------------------------------------------------------------------------
# Frozen configs as keys, and known gaps (strict xfails with the reason)


@dataclasses.dataclass(frozen=True)
class ShapeKey:
    rows: int = 3
    cols: int = 4


# A frozen dataclass made in the frame keys the dict by a real instance built from its constant
# fields (hashed and compared as the object is).
@case(x34)
def dict_keyed_by_frozen_configs_made_in_the_frame(x):
    scales = {ShapeKey(): 2.0, ShapeKey(4, 4): 3.0}
    return x * scales[ShapeKey(*x.shape)]


# contextlib.ExitStack is inlined (session 17): one graph each, as torch.compile.
@case(x34)
def exit_stack_with_a_callback(x):
    with contextlib.ExitStack() as stack:
        stack.callback(lambda: None)
        y = x + 1
    return y


class _Logged:
    """A context manager that logs its enter and exit (and whether an exception reached it);
    ``swallow`` makes its exit suppress the exception."""

    def __init__(self, log, k, swallow=False):
        self.log, self.k, self.swallow = log, k, swallow

    def __enter__(self):
        self.log.append(("enter", self.k))
        return self.k

    def __exit__(self, et, e, tb):
        self.log.append(("exit", self.k, None if et is None else et.__name__))
        return self.swallow


@case(x34)
def exit_stack_unwinds_callbacks_contexts_and_pushed_exits_last_in_first_out(x):
    log = []
    with contextlib.ExitStack() as stack:
        stack.callback(log.append, "first callback")
        a = stack.enter_context(_Logged(log, 2))
        stack.push(lambda et, e, tb: log.append(("pushed", et is None)))
        stack.push(_Logged(log, 3))
        stack.callback(log.append, "last callback")
        y = x * a
    return y + 1, log


# torch.compile 2.11 returns `x - 2` here (eager: `str(KeyError('missing'))` is 9 long).
@case(x34, xfail_tc=TC_DIFFERS)
def exit_stack_propagates_an_exception_through_its_exits(x):
    log = []
    try:
        with contextlib.ExitStack() as stack:
            stack.enter_context(_Logged(log, 1))
            stack.callback(log.append, "callback")
            raise KeyError("missing")
    except KeyError as e:
        return x - len(str(e)), log
    return x, log


@case(x34)
def exit_stack_exit_that_suppresses_the_exception(x):
    log = []
    with contextlib.ExitStack() as stack:
        stack.enter_context(_Logged(log, 1, swallow=True))
        stack.enter_context(_Logged(log, 2))
        raise ValueError("swallowed")
    return x * 7, log


@case(x34)
def exit_stack_callback_that_raises_replaces_the_exit(x):
    log = []

    def failing():
        raise RuntimeError("in a callback")

    try:
        with contextlib.ExitStack() as stack:
            stack.callback(failing)
            stack.callback(log.append, "runs first")
            y = x + 1
    except RuntimeError as e:
        return x - 1, str(e), log
    return y, "", log


@case(x34)
def exit_stack_pop_all_and_close_by_hand(x):
    log = []
    with contextlib.ExitStack() as stack:
        stack.enter_context(_Logged(log, 8))
        later = stack.pop_all()
    log.append("between")
    later.close()
    stack = contextlib.ExitStack()

    @stack.callback
    def done():
        log.append("decorated callback")

    y = x * 3
    stack.close()
    return y, log


class _Registered(nn.Module):
    registry = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        _Registered.registry[cls.__name__.lower()] = cls


class Swish(_Registered):
    def forward(self, x):
        return x * torch.sigmoid(x)


@case(x34)
def module_class_from_a_registry_built_in_forward(x):
    # torchferro breaks at the construction of the user module (1 graph each).
    return _Registered.registry["swish"]()(x) + 1


@dataclasses.dataclass(frozen=True)
class PoolKey:
    size: int = 2


@case(lambda r: (r.randn(3, 4), PoolKey()))
def frozen_argument_in_a_set_of_configs(x, key):
    return x * (2.0 if key in {PoolKey(), PoolKey(3)} else 1.0)
