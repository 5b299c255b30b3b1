"""Python values folded at trace time: int/float/bool/str/None arithmetic and comparisons (guarded
where they come from inputs), builtins over Python values, f-strings and ``str.format``,
isinstance/issubclass/getattr/hasattr, namedtuples, dataclasses and user-defined classes."""

from __future__ import annotations

import abc
import collections
import dataclasses
import inspect
import math
from typing import NamedTuple

import torch

from .harness import Call, program


def x34(r):
    return (r.randn(3, 4),)


@program(x34, 1, fullgraph=True)
def constant_arithmetic_folded(x):
    k = (2**5 // 3) % 7 - 1.5 * 2
    return x * k + (7 / 2) - abs(-3) + (-7 // 2)


@program(lambda r: (r.randn(3, 4), r.pick(3, 5)), 2, fullgraph=True)
def int_argument_guarded(x, n):
    # A different int on the second input set fails the guard and recompiles.
    return x * (n * 2 + 1) + n // 2


@program(lambda r: (r.randn(3, 4), 3, 0.5), 1, fullgraph=True)
def int_and_float_arguments_unchanged(x, n, f):
    return x**n * f + (n > 2) + float(n) / 4


@program(lambda r: (r.randn(3, 4), r.pick(True, False)), 2, fullgraph=True)
def bool_argument(x, flag):
    return x.relu() if flag else x.sigmoid(), not flag


@program(lambda r: (r.randn(3, 4), None), 1, fullgraph=True)
def none_argument(x, y):
    if y is None:
        y = torch.zeros_like(x)
    return x + y, y is None


@program(lambda r: (r.randn(3, 4), r.pick("relu", "tanh")), 2, fullgraph=True)
def str_argument_selects_op(x, act):
    if act == "relu":
        return x.relu()
    elif act.startswith("ta"):
        return x.tanh()
    return x


@program(x34, 1, fullgraph=True)
def comparisons_and_chains(x):
    a, b = 3, 4.5
    out = x
    if 1 < a < b <= 4.5 and a != b and not (a == 4) and (a is not None):  # noqa: SIM201
        out = out + 1
    return out, a >= b, (1, 2) < (1, 3)


@program(x34, 1, fullgraph=True)
def bitwise_and_shift_on_ints(x):
    n = (0b1011 & 0b0110) | (1 << 3) ^ 5
    return x * n + (n >> 1), ~n


@program(x34, 1, fullgraph=True)
def math_module_on_constants(x):
    return (
        x * math.sqrt(2.0)
        + math.pi
        + math.floor(2.7)
        + math.log(math.e)
        + math.cos(0.0)
    )


@program(x34, 1, fullgraph=True)
def builtins_min_max_abs_sum_round(x):
    vals = [3, -1, 4.5, 2]
    return (
        x * min(vals)
        + max(vals)
        + abs(vals[1])
        + sum(vals)
        + round(2.675, 2)
        + max(1, 2, 3)
    )


@program(x34, 1, fullgraph=True)
def numeric_conversions(x):
    return (
        x * int(3.9) + float("1.5") + int("7") + bool(0) + int(True),
        divmod(17, 5),
        pow(2, 10),
    )


@program(x34, 1, fullgraph=True)
def fstring_and_format_on_constants(x):
    name = f"layer_{2}_{'a' * 2}"
    key = "{}-{:.2f}".format("w", 0.5)
    table = {"layer_2_aa": 2.0, "w-0.50": 3.0}
    return x * table[name] + table[key], name, key


@program(x34, 1, fullgraph=True)
def str_methods(x):
    parts = "a,b,c".split(",")  # noqa: SIM905
    joined = "-".join(parts).upper()
    return (
        x * len(parts) + len(joined),
        joined,
        "B" in joined,
        joined.lower().replace("-", ""),
    )


@program(x34, 1, fullgraph=True)
def tensor_shape_arithmetic(x):
    n, m = x.shape
    return x.view(n * m) * (n + m), x.reshape(m, -1).shape, x.size(-1) // 2


@program(x34, 1, fullgraph=True)
def torch_size_operations(x):
    s = x.shape
    return torch.zeros(s[1:] + (2,)), tuple(s), list(s), s.numel(), s == (3, 4)


@program(lambda r: (r.randn(3, 4), r.randint(0, 3, 3)), 1, fullgraph=True)
def isinstance_checks(x, i):
    out = x
    if isinstance(x, torch.Tensor) and not isinstance(x, (int, float)):
        out = out + 1
    if isinstance(3, int) and isinstance(i, torch.Tensor) and isinstance([x], list):
        out = out * 2
    return out, isinstance(x.shape, tuple), issubclass(bool, int)


class Config:
    depth = 2
    act = "gelu"

    def __init__(self):
        self.width = 4


CONFIG = Config()


@program(x34, 1, fullgraph=True)
def getattr_hasattr(x):
    d = getattr(CONFIG, "depth")  # noqa: B009
    w = getattr(CONFIG, "missing", 10)
    out = x * d + w
    if hasattr(CONFIG, "width") and not hasattr(CONFIG, "nope"):
        out = out + CONFIG.width
    return out, getattr(torch, "relu")(x)  # noqa: B009


@program(x34, 1, fullgraph=True)
def slices_and_slice_objects(x):
    s = slice(1, None)
    a = x[s]
    b = x[:, slice(None, None, 2)]
    c = x[::-1] if False else x[-2:]
    return a, b, c, [1, 2, 3, 4][1:3]


@program(x34, 1, fullgraph=True)
def range_len_reversed_enumerate_zip(x):
    total = x * 0
    for i in reversed(range(1, 6, 2)):
        total = total + i
    for i, (a, b) in enumerate(zip([1, 2], "ab")):
        total = total * (i + 1) + len(b) + a
    return total, len(range(10)), list(range(3))


@program(x34, 1, fullgraph=True)
def enumerate_with_start(x):
    total = x * 0
    for i, a in enumerate([5, 6], start=1):
        total = total * 10 + i * a
    return total


# torch.compile: 1 graphs
@program(x34, 1, fullgraph=True)
def sorted_with_key_and_reverse(x):
    ws = {"b": 2.0, "a": 1.0, "c": 0.5}
    order = sorted(ws, key=lambda k: ws[k], reverse=True)
    out = x
    for k in order:
        out = out * ws[k] + 1
    return out, order, sorted([3, 1, 2])


@program(x34, 1, fullgraph=True)
def any_all_on_python_values(x):
    flags = [True, False, True]
    return x * any(flags) + all(flags), any(f for f in [0, 0]) if False else all([])


@program(x34, 1, fullgraph=True)
def walrus_and_ternary_and_unpacking(x):
    first, *rest = [1, 2, 3]
    if (n := len(rest)) > 1:
        y = x * n
    else:
        y = x
    a, (b, c) = 1, (2, 3)
    return y + first + a * b * c if n else y


@program(lambda r: (r.randn(3, 4), r.pick(2, -2)), 2, fullgraph=True)
def match_statement_on_int(x, n):
    match n:
        case 0:
            return x
        case 2 | 3:
            return x * n
        case _:
            return -x


class Pair(NamedTuple):
    a: torch.Tensor
    b: torch.Tensor
    tag: str = "pair"


@program(lambda r: (Pair(r.randn(3), r.randn(3)),), 1, fullgraph=True)
def namedtuple_input_and_output(p):
    q = Pair(p.a + p.b, p[1] * 2, tag=p.tag + "!")
    return q, q._replace(a=q.a.neg()), len(q), q._fields


@dataclasses.dataclass
class Batch:
    x: torch.Tensor
    y: torch.Tensor
    scale: float = 2.0


@program(lambda r: (Batch(r.randn(3, 4), r.randn(3, 4)),), 1, fullgraph=True)
def dataclass_input(b):
    return b.x * b.scale + b.y


@program(x34, 1, fullgraph=True)
def dataclass_output(x):
    return Batch(x.sin(), x.cos(), scale=0.5)


# torch.compile: 1 graphs
@program(lambda r: (Batch(r.randn(3, 4), r.randn(3, 4)),), 1, fullgraph=True)
def dataclass_fields_and_replace(b):
    c = dataclasses.replace(b, y=b.y * 3)
    return [getattr(c, f.name) for f in dataclasses.fields(c)]


class Accumulator:
    def __init__(self, t):
        self.total = t
        self.n = 0

    def add(self, t):
        self.total = self.total + t
        self.n += 1
        return self

    @property
    def mean(self):
        return self.total / self.n


# torch.compile: 1 graphs
@program(x34, 1, fullgraph=True)
def user_class_created_and_used_inside(x):
    acc = Accumulator(torch.zeros_like(x))
    acc.add(x).add(x * 2)
    return acc.mean, acc.n


@program(lambda r: (r.randn(3, 4), Accumulator(r.randn(3, 4))), 1, fullgraph=True)
def user_class_argument_attributes(x, acc):
    return x + acc.total * 2, acc.n


class Vec:
    def __init__(self, t):
        self.t = t

    def __add__(self, other):
        return Vec(self.t + other.t)

    def __mul__(self, k):
        return Vec(self.t * k)

    def __len__(self):
        return self.t.shape[0]

    def __getitem__(self, i):
        return self.t[i]


# torch.compile: 1 graphs
@program(x34, 1, fullgraph=True)
def user_class_dunder_methods(x):
    v = Vec(x) + Vec(x.cos()) * 2
    return v.t, len(v), v[1]


@program(
    lambda r: Call(r.randn(3, 4), opts={"scale": r.pick(2.0, 3.0), "name": "a"}),
    2,
    fullgraph=True,
)
def dict_of_python_values_argument(x, opts):
    return x * opts["scale"], opts["name"] * 2


@program(x34, 1, fullgraph=True)
def dtype_and_device_values(x):
    d = x.dtype
    y = x.to(torch.float64) if d == torch.float32 else x
    return y, d, x.device, str(d), x.dtype.is_floating_point, x.device.type == "cpu"


@program(x34, 1, fullgraph=True)
def hash_and_id_free_set_ops(x):
    s = {1, 2, 3} | {4}
    t = s - {1}
    return x * len(t) + (2 in t), sorted(t), frozenset({1}) <= s


@program(x34, 1, fullgraph=True)
def float_special_values(x):
    return x.clamp(min=-math.inf, max=math.inf) + (float("inf") > 1e308), math.isnan(
        float("nan")
    )


# torch.compile: 1 graphs
@program(x34, 1, fullgraph=True)
def generator_expression_sum(x):
    return sum(x * i for i in range(3)), sum(i * i for i in range(4))


SCALE = 2.0
USE_RELU = True


def _set_globals(target, seed):
    global SCALE, USE_RELU
    SCALE = 2.0 if seed == 0 else 5.0
    USE_RELU = seed == 0


@program(x34, 2, prepare=_set_globals, state=("SCALE", "USE_RELU"), fullgraph=True)
def global_python_values_change_between_calls(x):
    # Globals read by the frame are guarded: new values recompile.
    y = x * SCALE
    return y.relu() if USE_RELU else y.tanh()


WEIGHT = torch.ones(4)


def _replace_global_tensor(target, seed):
    global WEIGHT
    WEIGHT = torch.ones(4) if seed == 0 else torch.full((4,), 3.0)


@program(x34, 1, prepare=_replace_global_tensor, state=("WEIGHT",), fullgraph=True)
def global_tensor_replaced_between_calls(x):
    return x * WEIGHT


def _make_scaled(k):
    return lambda t: t * k


SCALED = _make_scaled(2)


def _rebind_closure(target, seed):
    global SCALED
    SCALED = _make_scaled(2 if seed == 0 else 7)


@program(x34, 2, prepare=_rebind_closure, state=("SCALED",), fullgraph=True)
def closure_value_changes_between_calls(x):
    return SCALED(x) + 1


# ---------------------------------------------------------------------------------------------
# super(), computed attribute names, type() and isinstance, per-call objects guarded by type.


class Scaler:
    def scale(self, x):
        return x * 2


class ScalerPlus(Scaler):
    def scale(self, x):
        return super().scale(x) + 1


class ScalerTwoArg(ScalerPlus):
    def scale(self, x):
        return super(ScalerTwoArg, self).scale(x) - 3


SCALERS = (ScalerPlus(), ScalerTwoArg())


@program(x34, 1, fullgraph=True)
def super_zero_and_two_argument_forms(x):
    return SCALERS[0].scale(x), SCALERS[1].scale(x)


class Lookup:
    table = {"a": 2.0, "b": 3.0}

    def __getattribute__(self, name):
        return super().__getattribute__(name)

    def weight(self, key):
        return super().__getattribute__("table").get(key, 1.0)


LOOKUP = Lookup()


@program(x34, 1, fullgraph=True)
def super_getattribute_in_a_method(x):
    return x * LOOKUP.weight("a") + LOOKUP.weight("zz")


class Registry(dict):
    def get(self, key):
        return super().get(str(key)) or 0


REGISTRY = Registry({"3": 5})


@program(x34, 1, fullgraph=True)
def super_of_a_dict_subclass(x):
    return x * REGISTRY.get(3) + REGISTRY.get(4)


class Weights:
    def __init__(self):
        self.w0 = 2.0
        self.w1 = 3.0
        self.act = "relu"


WEIGHTS = Weights()


@program(x34, 1, fullgraph=True)
def getattr_with_computed_names(x):
    for i in range(2):
        x = x * getattr(WEIGHTS, f"w{i}")
    fn = getattr(torch, WEIGHTS.act)
    return fn(x), getattr(WEIGHTS, "w" + str(5), -1.0)


class MaybeExtra:
    def __init__(self, t, extra):
        self.t = t
        if extra:
            self.extra = 10.0


# The second input set lacks `extra`: the HASATTR guard fails, and it recompiles once.
@program(lambda r: (MaybeExtra(r.randn(3), r.pick(True, False)),), 2, fullgraph=True)
def getattr_default_guards_the_missing_attribute(o):
    return o.t * getattr(o, "extra", 1.0), hasattr(o, "extra")


@program(lambda r: (r.randn(3, 4), [1, 2], 3), 1, fullgraph=True)
def type_of_traced_values(x, xs, n):
    a = type(x) is torch.Tensor
    b = type(xs) is list and type(n).__name__ == "int"
    c = type(x * 2) is torch.Tensor and type((x, 1)) is tuple
    return x + a + b + c, type(n)


@program(lambda r: (r.randn(3, 4), r.pick(2, 2.5)), 2, fullgraph=True)
def isinstance_with_tuples_of_types(x, v):
    out = x
    if isinstance(v, (int, float)) and not isinstance(v, (str, bytes)):
        out = out * v
    if isinstance(x, (list, torch.Tensor)):
        out = out + 1
    if isinstance([x], (tuple, list)) and isinstance({"a": x}, dict):
        out = out - 1
    return out, isinstance(v, int)


@dataclasses.dataclass
class Features:
    a: torch.Tensor
    b: torch.Tensor
    weight: float = 0.5
    tag: str = "f"


# A new dataclass object on every call: guarded by its type and the fields read, not its id.
@program(lambda r: (Features(r.randn(3), r.randn(3)),), 1, fullgraph=True)
def dataclass_fields_loop_over_an_input(f):
    total = 0
    for fld in dataclasses.fields(f):
        v = getattr(f, fld.name)
        if isinstance(v, torch.Tensor):
            total = total + v
    return total * f.weight, len(dataclasses.fields(Features)), f.tag


@dataclasses.dataclass
class OutputDict(collections.OrderedDict):
    """Like transformers' ModelOutput: an OrderedDict subclass that is a dataclass."""

    hidden: torch.Tensor = None
    pooled: torch.Tensor = None

    def __post_init__(self):
        for fld in dataclasses.fields(self):
            v = getattr(self, fld.name)
            if v is not None:
                self[fld.name] = v


@program(lambda r: (OutputDict(r.randn(3), r.randn(3)),), 1, fullgraph=True)
def ordered_dict_dataclass_input(out):
    return out.hidden + out["pooled"], len(out), list(out.keys())


@program(
    lambda r: (Pair(r.randn(3), r.randn(3), tag=r.pick("p", "p")),), 1, fullgraph=True
)
def namedtuple_input_new_object_each_call(p):
    return p.a * 2 + p[1], p.tag


class Ffn:
    def chunk(self, x):
        return x.relu()

    def chunk2(self, x, y):
        return x + y


FFN = Ffn()


def _apply_chunked(fn, *xs):
    n = len(inspect.signature(fn).parameters)
    if n != len(xs):
        raise ValueError("arity")
    return fn(*xs)


@program(x34, 1, fullgraph=True)
def inspect_signature_of_bound_methods(x):
    return _apply_chunked(FFN.chunk, x), _apply_chunked(FFN.chunk2, x, x)


@program(
    lambda r: (r.randn(3, 6), r.pick(slice(1, None), slice(0, 4))), 2, fullgraph=True
)
def slice_argument_guarded_by_value(x, s):
    # A new slice object on every call: guarded by value (a different one recompiles).
    return x[:, s], x[s.start :]


class Span(NamedTuple):
    lo: int
    hi: int = 4

    def width(self):
        return self.hi - self.lo


@program(x34, 1, fullgraph=True)
def namedtuple_built_in_the_frame(x):
    s = Span(1)
    t = s._replace(hi=3)
    p = Pair(x[0], x[1])
    d = p._asdict()
    return x[:, s.lo : s.hi] * t.width(), d, tuple(Span(0, 2)), s.count(1), t.index(3)


# Objects of plain user classes made inside the traced frame (tracked, rebuilt if they escape).
@dataclasses.dataclass(frozen=True)
class Frozen:
    a: torch.Tensor
    k: int = 3


@program(x34, 1, fullgraph=True)
def frozen_dataclass_made_and_returned(x):
    f = Frozen(x.relu())
    return Frozen(f.a * f.k, k=f.k + 1)


class Counter:
    unit = 2

    def __init__(self):
        self.n = 0

    @staticmethod
    def twice(v):
        return v * 2

    @classmethod
    def make(cls):
        return cls()

    def bump(self):
        self.n += self.unit
        return self


@program(x34, 1, fullgraph=True)
def user_object_methods_and_identity(x):
    c = Counter.make()
    d = c.bump().bump()
    e = Counter()
    return (
        x * c.n + c.twice(x),
        d is c,
        e is c,
        type(c) is Counter,
        isinstance(e, Counter),
    )


@program(x34, 1, fullgraph=True)
def user_object_not_escaping(x):
    a = Accumulator(x)
    a.add(x.sin())
    return a.total * a.n


class Slotted:
    __slots__ = ("t",)

    def __init__(self, t):
        self.t = t


# The resume after the break reads only `s` (a user object): torch-free, run natively as
# torch.compile's frame filter does, so 1 graph (torch.compile: 1, with no break).
@program(x34, 1, 2)
def slotted_class_still_breaks(x):
    s = Slotted(x + 1)
    return s.t * 2


class Layer(abc.ABC):
    @abc.abstractmethod
    def update(self, t): ...


class SumLayer(Layer):
    def __init__(self):
        self.acc = None

    def update(self, t):
        self.acc = t if self.acc is None else self.acc + t
        return self.acc


@program(x34, 1, fullgraph=True)
def abc_subclass_made_inside(x):
    layers = [SumLayer() for _ in range(2)]
    for i, layer in enumerate(layers):
        layer.update(x * i)
        layer.update(x)
    return [layer.acc for layer in layers], layers[0]


@dataclasses.dataclass
class Scaled:
    t: torch.Tensor
    k: float = 1.0
    norm: torch.Tensor = dataclasses.field(init=False)

    def __post_init__(self):
        self.norm = self.t.abs().sum()


@program(x34, 1, fullgraph=True)
def dataclass_replace_of_object_made_inside(x):
    a = Scaled(x)
    b = dataclasses.replace(a, k=3.0)
    c = dataclasses.replace(b, t=b.t * b.k)
    names = [f.name for f in dataclasses.fields(c)]
    return a, c, names, b.norm is a.norm


@program(x34, 1, fullgraph=True)
def user_object_hasattr_and_getattr_default(x):
    c = Counter()
    c.extra = x
    return (
        hasattr(c, "n"),
        hasattr(c, "extra"),
        hasattr(c, "bump"),
        hasattr(c, "missing"),
        getattr(c, "missing", 7),
        getattr(c, "extra", None) * 2,
    )


class Bag:
    def __init__(self, items):
        self.items = items

    def __len__(self):
        return len(self.items)

    def __iadd__(self, t):
        self.items.append(t)
        return self

    def __getitem__(self, i):
        return self.items[i]


@program(x34, 1, fullgraph=True)
def user_object_operators_len_and_truth(x):
    b = Bag([])
    empty = not b
    b += x
    b += x.sin()
    v = Vec(x) + Vec(x.cos()) * 2
    return empty, bool(b), len(b), b[1] - b[0], v.t, len(v), v[1]


class Gate:
    def __call__(self, t):
        return t.relu()


class GateChild(Gate):
    pass


def _and_gates(*fns):
    # transformers' masking_utils.and_masks checks its arguments this way.
    if not all(callable(f) for f in fns):
        raise RuntimeError("not callable")

    def both(t):
        out = t
        for f in fns:
            out = f(out)
        return out

    return both


@program(x34, 1, fullgraph=True)
def callable_of_values_made_in_the_frame(x):
    scale = 2.0

    def closure(t):
        return t * scale

    c = Counter()
    flags = (
        callable(closure),
        callable(lambda t: t),
        callable(c.bump),
        callable(c),
        callable(Gate()),
        callable(GateChild()),
        callable(x),
        callable([x]),
        callable((x, 1)),
        callable({"a": x}),
        callable(x.shape),
        callable(Gate),
        callable(torch.sin),
        callable(3),
    )
    return flags, _and_gates(closure, GateChild())(x)
