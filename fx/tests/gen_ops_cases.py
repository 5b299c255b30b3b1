"""Runs torch ops on real tensors and records the catalog facts they show.

The output, fx/tests/data/ops_cases.json, is what the op catalog (`fx/src/ops/table.rs`) must
agree with (`fx/tests/ops_torch.rs`). For each op name it records, from eager CPU runs:

    "view":   for each recipe, whether the result (every element of a tuple result) shares the
              input's storage: all true for a view, some for an op that returns its input or a
              view only for some layouts or dtypes (`reshape`, `to`), none for anything else;
    "random": whether one call advances the global generator's state;
    "spellings": where torch exports the name (the catalog's `spell` bits: T torch.X,
              TI torch.X_, M Tensor.X called, A Tensor.X an attribute, MI Tensor.X_,
              F torch.nn.functional.X, NN torch._C._nn.X, S torch.special.X);
    "aten":   the primary aten overload (the first functional overload whose first parameter is
              a tensor, in the order Tensor, self, default, ...), "" for a Python-only op;
    "sig":    the parameter names torch's Python binding takes (from that overload's schema, or
              from the Python function's signature where torch.X or Tensor.X is one), `self`
              spelled `input`, "*" before keyword-only ones;
    "shape_inplace": whether `x.X_(...)` changes x's sizes or strides;
    "twin":   whether the in-place form (`x.add_(y)`, or `F.relu(x, inplace=True)`) returns `x`,
              with its sizes and strides, holding exactly the out-of-place result (`x.add(y)`),
              which has `x`'s dtype, without drawing random numbers.

Run: .venv/bin/python fx/tests/gen_ops_cases.py  (from the repository root)
"""

import inspect
import json
import os
import warnings

import torch
import torch.nn.functional as F

warnings.filterwarnings("ignore")
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "ops_cases.json")


def x0():
    return torch.arange(24.0).reshape(4, 6) / 7 - 1.5


def shares(inp, out):
    outs = out if isinstance(out, (tuple, list)) else [out]
    ptr = inp.untyped_storage().data_ptr()
    return all(o.untyped_storage().data_ptr() == ptr for o in outs)


# The dtype-cast methods: `x.float()` and friends.
CASTS = {
    torch.float32: "float",
    torch.float64: "double",
    torch.float16: "half",
    torch.bfloat16: "bfloat16",
    torch.int32: "int",
    torch.int64: "long",
    torch.bool: "bool",
    torch.int16: "short",
    torch.int8: "char",
    torch.uint8: "byte",
}


def cast_pair(dtype):
    """(input of `dtype`, same dtype → alias) and (float32 input → a copy)."""
    name = CASTS[dtype]
    same = x0().to(dtype)
    other = x0().to(torch.float64 if dtype != torch.float64 else torch.float32)
    return [
        lambda: (same, getattr(same, name)()),
        lambda: (other, getattr(other, name)()),
    ]


def one(f, make=x0):
    def run():
        x = make()
        return x, f(x)

    return run


cplx = lambda: torch.randn(4, 6, dtype=torch.cfloat)  # noqa: E731
VIEW = {
    "view": [one(lambda x: x.view(24))],
    "view_as": [one(lambda x: x.view_as(torch.empty(24)))],
    "permute": [one(lambda x: x.permute(1, 0))],
    "transpose": [one(lambda x: x.transpose(0, 1))],
    "swapaxes": [one(lambda x: x.swapaxes(0, 1))],
    "swapdims": [one(lambda x: x.swapdims(0, 1))],
    "t": [one(lambda x: x.t())],
    "T": [one(lambda x: x.T)],
    "mT": [one(lambda x: x.mT)],
    "H": [one(lambda x: x.H)],
    "mH": [one(lambda x: x.mH)],
    "adjoint": [one(lambda x: x.adjoint())],
    "unsqueeze": [one(lambda x: x.unsqueeze(0))],
    "squeeze": [
        one(lambda x: x.squeeze()),
        one(lambda x: x.squeeze(), lambda: torch.randn(4, 1)),
    ],
    "expand": [one(lambda x: x.expand(2, 4, 6))],
    "expand_as": [one(lambda x: x.expand_as(torch.empty(3, 4, 6)))],
    "broadcast_to": [one(lambda x: x.broadcast_to((2, 4, 6)))],
    "narrow": [one(lambda x: x.narrow(0, 1, 2))],
    "select": [one(lambda x: x.select(0, 1))],
    "getitem": [
        one(lambda x: x[1:3]),
        one(lambda x: x[0]),
        one(lambda x: x[None, ..., 1]),
    ],
    "diagonal": [one(lambda x: x.diagonal())],
    "movedim": [one(lambda x: x.movedim(0, 1))],
    "moveaxis": [one(lambda x: x.moveaxis(0, 1))],
    "unfold": [one(lambda x: x.unfold(1, 2, 2))],
    "as_strided": [one(lambda x: x.as_strided((2, 2), (1, 2)))],
    "detach": [one(lambda x: x.detach())],
    "alias": [one(lambda x: torch.ops.aten.alias.default(x))],
    "unflatten": [one(lambda x: x.unflatten(1, (2, 3)))],
    "real": [one(lambda x: x.real), one(lambda x: x.real, cplx)],
    "imag": [one(lambda x: x.imag, cplx)],
    "view_as_real": [one(torch.view_as_real, cplx)],
    "view_as_complex": [one(torch.view_as_complex, lambda: torch.randn(4, 6, 2))],
    "split": [one(lambda x: x.split(2))],
    "chunk": [one(lambda x: x.chunk(2))],
    "unbind": [one(lambda x: x.unbind())],
    "tensor_split": [one(lambda x: x.tensor_split(2))],
    "hsplit": [one(lambda x: x.hsplit(2))],
    "vsplit": [one(lambda x: x.vsplit(2))],
    "dsplit": [one(lambda x: x.dsplit(2), lambda: torch.randn(2, 2, 4))],
    "split_with_sizes": [one(lambda x: x.split_with_sizes([1, 3]))],
    "reshape": [one(lambda x: x.reshape(24)), one(lambda x: x.t().reshape(24))],
    "reshape_as": [
        one(lambda x: x.reshape_as(torch.empty(24))),
        one(lambda x: x.t().reshape_as(torch.empty(24))),
    ],
    "flatten": [one(lambda x: x.flatten()), one(lambda x: x.t().flatten())],
    "ravel": [one(lambda x: x.ravel()), one(lambda x: x.t().ravel())],
    "contiguous": [one(lambda x: x.contiguous()), one(lambda x: x.t().contiguous())],
    "to": [one(lambda x: x.to(torch.float32)), one(lambda x: x.to(torch.float64))],
    "type": [
        one(lambda x: x.type(torch.float32)),
        one(lambda x: x.type(torch.float64)),
    ],
    "type_as": [one(lambda x: x.type_as(x)), one(lambda x: x.type_as(x.double()))],
    "cpu": [one(lambda x: x.cpu())],
    "dropout": [
        one(lambda x: F.dropout(x, 0.5, False)),
        one(lambda x: F.dropout(x, 0.5, True)),
    ],
    "positive": [one(torch.positive)],
    "pos": [one(lambda x: +x)],
    "data": [one(lambda x: x.data)],
    # Controls: fresh results.
    "add": [one(lambda x: x + 1)],
    "clone": [one(lambda x: x.clone())],
    "relu": [one(torch.relu)],
}
for dt, cast in CASTS.items():
    VIEW[cast] = cast_pair(dt)

x = x0
RANDOM = {
    "rand": lambda: torch.rand(3),
    "randn": lambda: torch.randn(3),
    "randint": lambda: torch.randint(0, 5, (3,)),
    "randperm": lambda: torch.randperm(5),
    "rand_like": lambda: torch.rand_like(x()),
    "randn_like": lambda: torch.randn_like(x()),
    "randint_like": lambda: torch.randint_like(x(), 5),
    "bernoulli": lambda: torch.bernoulli(x().sigmoid()),
    "multinomial": lambda: torch.multinomial(torch.ones(4), 2),
    "normal": lambda: torch.normal(x(), 1.0),
    "poisson": lambda: torch.poisson(x().abs()),
    "dropout": lambda: F.dropout(x(), 0.5, True),
    "dropout1d": lambda: F.dropout1d(torch.ones(2, 3, 4), 0.5, True),
    "dropout2d": lambda: F.dropout2d(torch.ones(2, 3, 4, 4), 0.5, True),
    "dropout3d": lambda: F.dropout3d(torch.ones(2, 3, 2, 2, 2), 0.5, True),
    "alpha_dropout": lambda: F.alpha_dropout(x(), 0.5, True),
    "feature_alpha_dropout": lambda: F.feature_alpha_dropout(
        torch.ones(2, 3, 4), 0.5, True
    ),
    "rrelu": lambda: F.rrelu(x(), training=True),
    "gumbel_softmax": lambda: F.gumbel_softmax(x()),
    "native_dropout": lambda: torch.native_dropout(x(), 0.5, True),
    "uniform": lambda: x().uniform_(),
    "exponential": lambda: x().exponential_(),
    "geometric": lambda: x().geometric_(0.5),
    "cauchy": lambda: x().cauchy_(),
    "log_normal": lambda: x().log_normal_(),
    "random": lambda: x().random_(),
}

y0 = lambda: torch.arange(24.0).reshape(4, 6).flip(0) / 5 + 0.25  # noqa: E731
mask = lambda: x0() > 0  # noqa: E731
idx = lambda: torch.tensor([0, 2])  # noqa: E731
idx2 = lambda: torch.tensor([[0, 1, 2, 3, 0, 1]] * 4)  # noqa: E731
i32 = lambda: torch.arange(24, dtype=torch.int32).reshape(4, 6)  # noqa: E731
TWIN_ARGS = {
    "add": lambda: (y0(),),
    "sub": lambda: (y0(),),
    "mul": lambda: (y0(),),
    "div": lambda: (y0(),),
    "true_divide": lambda: (y0(),),
    "floor_divide": lambda: (y0(),),
    "remainder": lambda: (y0(),),
    "fmod": lambda: (y0(),),
    "pow": lambda: (2,),
    "clamp": lambda: (-0.5, 0.5),
    "clamp_min": lambda: (0.0,),
    "clamp_max": lambda: (0.0,),
    "clip": lambda: (-0.5, 0.5),
    "masked_fill": lambda: (mask(), 1.0),
    "masked_scatter": lambda: (mask(), y0()),
    "index_put": lambda: ((idx(),), y0()[:2]),
    "index_add": lambda: (0, idx(), y0()[:2]),
    "index_fill": lambda: (0, idx(), 1.0),
    "index_copy": lambda: (0, idx(), y0()[:2]),
    "scatter": lambda: (1, idx2(), y0()),
    "scatter_add": lambda: (1, idx2(), y0()),
    "scatter_reduce": lambda: (1, idx2(), y0(), "sum"),
    "lerp": lambda: (y0(), 0.3),
    "addcmul": lambda: (y0(), y0()),
    "addcdiv": lambda: (y0(), y0() + 1),
    "atan2": lambda: (y0(),),
    "arctan2": lambda: (y0(),),
    "hypot": lambda: (y0(),),
    "copysign": lambda: (y0(),),
    "xlogy": lambda: (y0(),),
    "tril": lambda: (),
    "triu": lambda: (),
    "nan_to_num": lambda: (),
    "logit": lambda: (0.1,),
}
FUNCTIONAL = {
    "hardtanh": (),
    "leaky_relu": (0.2,),
    "elu": (),
    "selu": (),
    "celu": (),
    "threshold": (0.1, 2.0),
    "silu": (),
    "hardsigmoid": (),
    "hardswish": (),
    "mish": (),
}
INT_OPS = {"bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not"}


def twin(name):
    """In-place form vs out-of-place form; `None` where no in-place form exists."""
    if name in INT_OPS:
        make, args = i32, ((i32() + 3,) if name != "bitwise_not" else ())
    elif name in FUNCTIONAL:
        a = x0()
        before = torch.get_rng_state()
        got = getattr(F, name)(a, *FUNCTIONAL[name], inplace=True)
        want = getattr(F, name)(x0(), *FUNCTIONAL[name])
        same_rng = torch.equal(before, torch.get_rng_state())
        return got is a and same_values(got, want) and same_rng
    else:
        make = x0 if name not in ("acosh",) else (lambda: x0().abs() + 1)
        if name in ("asin", "acos", "atanh", "arcsin", "arccos", "erfinv"):
            make = lambda: x0() / 4  # noqa: E731
        if name in (
            "log",
            "log2",
            "log10",
            "log1p",
            "sqrt",
            "rsqrt",
            "lgamma",
            "digamma",
        ):
            make = lambda: x0().abs() + 0.5  # noqa: E731
        args = TWIN_ARGS.get(name, lambda: ())()
    a = make()
    if not hasattr(a, name + "_"):
        return None
    layout = (a.shape, a.stride())
    before = torch.get_rng_state()
    got = getattr(a, name + "_")(*args)
    same_rng = torch.equal(before, torch.get_rng_state())
    want = getattr(make(), name)(*args)
    return (
        got is a
        and (a.shape, a.stride()) == layout
        and same_values(got, want)
        and same_rng
    )


def same_values(got, want):
    """Bit-equal values (NaN equal to NaN) and the same dtype: the out-of-place form is the
    in-place one's value, with nothing to cast."""
    return (
        got.dtype == want.dtype
        and got.shape == want.shape
        and torch.allclose(got, want, rtol=0, atol=0, equal_nan=True)
    )


def fn(ns, n):
    v = getattr(ns, n, None)
    return v if callable(v) and not isinstance(v, (torch.dtype, type)) else None


def builtin(v):
    return v is not None and type(v).__name__ in (
        "builtin_function_or_method",
        "method_descriptor",
    )


def spellings(n):
    bits = []
    if fn(torch, n):
        bits.append("T")
    if fn(torch, n + "_"):
        bits.append("TI")
    a = getattr(torch.Tensor, n, None)
    if a is not None and not isinstance(a, torch.dtype):
        bits.append("M" if callable(a) else "A")
    if fn(torch.Tensor, n + "_"):
        bits.append("MI")
    for ns, bit in ((F, "F"), (torch._C._nn, "NN"), (torch.special, "S")):
        if fn(ns, n):
            bits.append(bit)
    return bits


OVERLOAD_ORDER = [
    "Tensor",
    "self",
    "default",
    "int",
    "dim",
    "Scalar",
    "dim_IntList",
    "input",
]


def aten_sig(n):
    packet = getattr(torch.ops.aten, n, None)
    try:
        overloads = packet.overloads()
    except Exception:
        return None
    cands = [
        o
        for o in overloads
        if "out" not in o and not o.startswith("names") and "dimname" not in o.lower()
    ]
    cands.sort(key=lambda o: OVERLOAD_ORDER.index(o) if o in OVERLOAD_ORDER else 99)
    schemas = {o: getattr(packet, o)._schema for o in cands}
    tensor_first = lambda s: bool(s.arguments) and str(s.arguments[0].type) == "Tensor"  # noqa: E731
    any_tensor_first = any(tensor_first(s) for s in schemas.values())
    for o in cands:
        s = schemas[o]
        if any(a.alias_info is not None and a.alias_info.is_write for a in s.arguments):
            continue
        first = str(s.arguments[0].type) if s.arguments else ""
        if (
            first not in ("Tensor", "Tensor?", "List[Tensor]", "Tensor[]")
            and any_tensor_first
        ):
            continue
        names, star = [], False
        for a in s.arguments:
            if a.kwarg_only and not star:
                names.append("*")
                star = True
            names.append("input" if a.name == "self" else a.name)
        return f"{n}.{o}", names
    return None


def py_sig(v):
    try:
        sig = inspect.signature(v)
    except Exception:
        return None
    names, star = [], False
    for p in sig.parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            return None
        if p.kind == p.KEYWORD_ONLY and not star:
            names.append("*")
            star = True
        first = not names and p.name in ("self", "tensor")
        names.append("input" if first else p.name)
    return names


def signature(n):
    """(aten overload or "", parameter names or None)."""
    for ns in (torch, torch.Tensor):
        v = fn(ns, n)
        if v is not None and not builtin(v):
            s = py_sig(v)
            if s is not None:
                return "", s
    if builtin(fn(torch, n)) or builtin(fn(torch.Tensor, n)) or fn(torch._C._nn, n):
        r = aten_sig(n)
        if r:
            return r
    v = fn(F, n)
    if v is not None and not builtin(v):
        s = py_sig(v)
        if s is not None:
            return "", s
    r = aten_sig(n)
    return r if r else ("", None)


# `x.X_(*args)` for the in-place forms that may change a tensor's geometry.
SHAPE_ARGS = {
    "permute": ((1, 0),),
    "transpose": (0, 1),
    "swapaxes": (0, 1),
    "swapdims": (0, 1),
    "t": (),
    "unsqueeze": (0,),
    "squeeze": (),
    "as_strided": ((2, 2), (1, 2)),
    "resize": (3,),
    "resize_as": (torch.empty(3),),
    "set": (torch.empty(3),),
    "detach": (),
    "requires_grad": (),
    "share_memory": (),
}


def shape_inplace(n):
    a = torch.randn(4, 1) if n == "squeeze" else x0()
    if not hasattr(a, n + "_"):
        return None
    layout = (a.shape, a.stride())
    getattr(a, n + "_")(*SHAPE_ARGS[n])
    return (a.shape, a.stride()) != layout


def rng_moves(f):
    before = torch.get_rng_state()
    f()
    return not torch.equal(before, torch.get_rng_state())


def main():
    import re

    table = open(
        os.path.join(
            os.path.dirname(os.path.abspath(__file__)), "..", "src", "ops", "table.rs"
        )
    ).read()
    names = re.findall(r'(?:row|bare)\("([^"]+)"', table)
    cases = {}
    for name in sorted(set(names) | set(VIEW) | set(RANDOM)):
        c = {}
        if name in VIEW:
            obs = []
            for r in VIEW[name]:
                try:
                    inp, out = r()
                except Exception:
                    continue
                obs.append(shares(inp, out))
            c["view"] = obs
        if name in RANDOM:
            c["random"] = rng_moves(RANDOM[name])
        t = (
            twin(name)
            if name in TWIN_ARGS or name in FUNCTIONAL or name in INT_OPS
            else None
        )
        if t is None:
            try:
                t = twin(name)
            except Exception:
                t = None
        if t is not None:
            c["twin"] = bool(t)
        c["spellings"] = spellings(name)
        c["aten"], c["sig"] = signature(name)
        if name in SHAPE_ARGS:
            c["shape_inplace"] = shape_inplace(name)
        cases[name] = c
    with open(OUT, "w") as f:
        json.dump(
            {"torch": torch.__version__, "ops": cases}, f, indent=1, sort_keys=True
        )
        f.write("\n")


if __name__ == "__main__":
    main()
