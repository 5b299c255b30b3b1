"""Runs torch ops on real tensors and records the metadata they produce.

The output, fx/tests/data/infer_cases.json, is what `fx::infer` must reproduce exactly (sizes,
strides, dtype, requires_grad), or refuse with `Unsupported`. Each case names a target the way the
tracer records it (a qualified function path or a tensor method name), the input tensors by
sizes/strides/dtype/requires_grad, and the arguments in an encoding both sides read:

    {"t": i}                 input tensor i
    1, 2.5, true, null        Python int, float, bool, None
    {"float": "inf"}          non-finite floats
    {"str": s} {"dtype": d} {"device": d} {"ellipsis": true}
    {"tuple": [...]} {"list": [...]} {"slice": [start, stop, step]}

Ground truth is eager CPU. Where the CPU kernel merely lacks a dtype ("not implemented for
'Half'"), the case records what meta tensors produce instead, since another device would run it.

Run: .venv/bin/python fx/tests/gen_infer_cases.py  (from the repository root)
"""

import json
import math
import operator
import os
import sys
import warnings

import torch

warnings.filterwarnings("ignore")
torch.manual_seed(0)

OUT = os.environ.get("INFER_CASES_OUT") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "data", "infer_cases.json")
# A different seed and more rounds fuzz the randomized section without touching the checked-in
# file: INFER_CASES_SEED=7 INFER_CASES_ROUNDS=10 INFER_CASES_OUT=/tmp/cases.json
SEED = int(os.environ.get("INFER_CASES_SEED", "1234"))
ROUNDS = int(os.environ.get("INFER_CASES_ROUNDS", "1"))

# ---------------------------------------------------------------- encoding helpers


def t(i):
    return {"t": i}


def tup(*items):
    return {"tuple": list(items)}


def lst(*items):
    return {"list": list(items)}


def sl(a=None, b=None, c=None):
    return {"slice": [a, b, c]}


def dt(name):
    return {"dtype": name}


def s(text):
    return {"str": text}


E = {"ellipsis": True}


def contiguous_strides(sizes):
    strides, acc = [], 1
    for n in reversed(sizes):
        strides.append(acc)
        acc *= max(n, 1)
    return list(reversed(strides))


def inp(sizes, dtype="float32", strides=None, rg=False):
    sizes = list(sizes)
    return {
        "sizes": sizes,
        "strides": list(strides) if strides is not None else contiguous_strides(sizes),
        "dtype": dtype,
        "requires_grad": rg,
    }


def transposed(sizes, dtype="float32", rg=False):
    """Sizes `sizes`, laid out as the transpose of the last two dims of a contiguous tensor."""
    sizes = list(sizes)
    if len(sizes) < 2:
        return inp(sizes, dtype, rg=rg)
    swapped = sizes[:-2] + [sizes[-1], sizes[-2]]
    st = contiguous_strides(swapped)
    st[-1], st[-2] = st[-2], st[-1]
    return inp(sizes, dtype, st, rg)


def permuted(sizes, perm, dtype="float32", rg=False):
    """Sizes `sizes`, obtained by permuting a contiguous tensor with `perm`."""
    base = [0] * len(sizes)
    for out_dim, src in enumerate(perm):
        base[src] = sizes[out_dim]
    bst = contiguous_strides(base)
    return inp(sizes, dtype, [bst[p] for p in perm], rg)


def sliced(sizes, dtype="float32", rg=False, step=2):
    """Every `step`-th element of the last dim of a contiguous tensor: not dense."""
    sizes = list(sizes)
    full = sizes[:-1] + [sizes[-1] * step]
    st = contiguous_strides(full)
    st[-1] *= step
    return inp(sizes, dtype, st, rg)


def expanded(sizes, dim, dtype="float32", rg=False):
    sizes = list(sizes)
    st = contiguous_strides(sizes[:dim] + [1] + sizes[dim + 1:])
    st[dim] = 0
    return inp(sizes, dtype, st, rg)


def channels_last(sizes, dtype="float32", rg=False):
    n, c, h, w = sizes
    return inp(sizes, dtype, [h * w * c, 1, w * c, c], rg)


# ---------------------------------------------------------------- running

DTYPES = {
    name: getattr(torch, name)
    for name in [
        "bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
        "float64", "complex64", "complex128",
    ]
}
DTYPE_NAMES = {v: k for k, v in DTYPES.items()}


def make_tensor(spec, device):
    dtype = DTYPES[spec["dtype"]]
    sizes, strides = spec["sizes"], spec["strides"]
    if device == "meta":
        x = torch.empty_strided(sizes, strides, dtype=dtype, device="meta")
    else:
        if any(n == 0 for n in sizes):
            storage = 0
        else:
            storage = 1 + sum((n - 1) * st for n, st in zip(sizes, strides))
        x = torch.ones(max(storage, 1), dtype=dtype).as_strided(sizes, strides).detach()
    if spec["requires_grad"]:
        x.requires_grad_(True)
    return x


def decode(a, tensors):
    if isinstance(a, dict):
        if "t" in a:
            return tensors[a["t"]]
        if "float" in a:
            return float(a["float"])
        if "tuple" in a:
            return tuple(decode(x, tensors) for x in a["tuple"])
        if "list" in a:
            return [decode(x, tensors) for x in a["list"]]
        if "slice" in a:
            return slice(*(decode(x, tensors) for x in a["slice"]))
        if "dtype" in a:
            return DTYPES[a["dtype"]]
        if "device" in a:
            return torch.device(a["device"])
        if "str" in a:
            return a["str"]
        if "ellipsis" in a:
            return Ellipsis
        raise ValueError(a)
    return a


def resolve(path):
    parts = path.split(".")
    obj = {"torch": torch, "operator": operator}[parts[0]]
    for p in parts[1:]:
        obj = getattr(obj, p)
    return obj


def encode_result(r):
    if isinstance(r, torch.Tensor):
        return {
            "sizes": list(r.shape),
            "strides": list(r.stride()),
            "dtype": DTYPE_NAMES[r.dtype],
            "requires_grad": r.requires_grad,
        }
    if isinstance(r, (tuple, list)):
        return {"tuple": [encode_result(x) for x in r]}
    if isinstance(r, bool):
        return {"bool": r}
    if isinstance(r, int):
        return {"int": r}
    raise TypeError(type(r))


def run(case, device):
    tensors = [make_tensor(spec, device) for spec in case["inputs"]]
    args = [decode(a, tensors) for a in case["args"]]
    kwargs = {k: decode(v, tensors) for k, v in case["kwargs"].items()}
    kind, name = case["target"]
    try:
        if kind == "method":
            r = getattr(args[0], name)(*args[1:], **kwargs)
        else:
            r = resolve(name)(*args, **kwargs)
        return encode_result(r)
    except Exception as e:  # noqa: BLE001 - any torch error is an expected outcome
        return {"error": f"{type(e).__name__}: {e}".splitlines()[0][:300]}


def expected(case):
    cpu = run(case, "cpu")
    if "error" not in cpu:
        return cpu, None
    msg = cpu["error"]
    if "leaf Variable that requires grad" in msg:
        return None, None
    if "not implemented for" in msg:
        meta = run(case, "meta")
        if "error" not in meta:
            return meta, "kernel_gap"
    return cpu, None


# ---------------------------------------------------------------- cases

CASES = []


def case(kind, name, inputs, args, kwargs=None, tag=""):
    CASES.append({
        "target": [kind, name],
        "inputs": inputs,
        "args": args,
        "kwargs": kwargs or {},
        "tag": tag,
    })


def fn(name, inputs, args, kwargs=None, tag=""):
    case("function", name, inputs, args, kwargs, tag)


def meth(name, inputs, args, kwargs=None, tag=""):
    case("method", name, inputs, args, kwargs, tag)


ALL_DTYPES = ["float32", "float16", "bfloat16", "float64", "int64", "int32", "int8", "uint8", "bool"]
FLOATS = ["float32", "float16", "bfloat16", "float64"]


def layouts(dtype="float32", rg=False):
    return [
        inp([2, 3], dtype, rg=rg),
        transposed([3, 2], dtype, rg),
        sliced([2, 3], dtype, rg),
        inp([0, 3], dtype, rg=rg),
        inp([], dtype, rg=rg),
        expanded([4, 3], 0, dtype, rg),
        permuted([2, 3, 4], [2, 0, 1], dtype, rg),
        inp([3, 1, 2], dtype, [2, 7, 1], rg),
        channels_last([2, 3, 2, 2], dtype, rg),
        transposed([0, 3], dtype, rg),
    ]


def unary_cases():
    ops = [
        "relu", "sigmoid", "tanh", "exp", "log", "sin", "cos", "abs", "neg", "sqrt", "rsqrt",
        "erf", "floor", "ceil", "round", "reciprocal", "trunc", "sign", "log1p", "expm1",
    ]
    for op in ops:
        for d in ALL_DTYPES:
            meth(op, [inp([2, 3], d)], [t(0)], tag="unary-dtype")
        for x in layouts(rg=True):
            fn("torch." + op, [x], [t(0)], tag="unary-layout")
    for op in ["gelu", "silu", "relu", "sigmoid", "tanh"]:
        for d in ALL_DTYPES:
            fn("torch.nn.functional." + op, [inp([2, 3], d)], [t(0)], tag="unary-F")
        for x in layouts(rg=True):
            fn("torch.nn.functional." + op, [x], [t(0)], tag="unary-F-layout")
    fn("torch.nn.functional.gelu", [inp([2, 3], rg=True)], [t(0)], {"approximate": s("tanh")})
    fn("torch.nn.functional.relu", [inp([2, 3])], [t(0)], {"inplace": True}, tag="unary-inplace")
    fn("torch.nn.functional.silu", [sliced([2, 3])], [t(0)], {"inplace": True})
    meth("round", [inp([2, 3])], [t(0)], {"decimals": 2})
    fn("torch.special.expit", [inp([2, 3], "int64")], [t(0)])
    fn("torch.special.erf", [transposed([3, 2], rg=True)], [t(0)])
    for op in ["neg", "abs", "invert", "pos"]:
        for d in ["float32", "int64", "bool", "float16"]:
            fn("operator." + op, [inp([2, 3], d)], [t(0)], tag="unary-operator")
        fn("operator." + op, [transposed([3, 2], "int32")], [t(0)])
    for d in ["float32", "int64", "bool", "uint8"]:
        fn("torch.logical_not", [inp([2, 3], d)], [t(0)])
        meth("bitwise_not", [transposed([3, 2], d)], [t(0)])
    for op in ["relu_", "sigmoid_", "exp_", "neg_", "abs_", "floor_", "sqrt_"]:
        for d in ["float32", "int64", "bool"]:
            meth(op, [inp([2, 3], d)], [t(0)], tag="unary-inplace")
        meth(op, [transposed([3, 2])], [t(0)])
        meth(op, [expanded([4, 3], 0)], [t(0)])
    fn("torch.relu_", [inp([2, 3])], [t(0)])


SHAPE_PAIRS = [
    ([2, 3], [2, 3]),
    ([2, 3], [3]),
    ([2, 1], [1, 3]),
    ([4, 1, 3], [2, 1]),
    ([], [2, 3]),
    ([2, 3], []),
    ([0, 3], [1, 3]),
    ([1], [0]),
    ([2, 3], [4]),
    ([5, 2, 3], [5, 1, 1]),
    ([1, 1], [1]),
]


def binary_cases():
    fns = ["add", "sub", "mul", "div", "floor_divide", "remainder", "pow", "eq", "lt", "ge",
           "maximum", "minimum", "logical_and", "bitwise_and", "fmod", "ne"]
    dtype_pairs = [
        ("float32", "float32"), ("int64", "float32"), ("int32", "int64"), ("uint8", "int8"),
        ("bool", "bool"), ("bool", "int32"), ("float16", "bfloat16"), ("float16", "float64"),
        ("int64", "int64"), ("uint8", "bool"), ("float64", "float32"), ("int8", "float16"),
    ]
    for op in fns:
        for a, b in dtype_pairs:
            fn("torch." + op, [inp([2, 3], a), inp([2, 3], b)], [t(0), t(1)], tag="binary-dtype")
        for sa, sb in SHAPE_PAIRS:
            fn("torch." + op, [inp(sa, rg=True), inp(sb)], [t(0), t(1)], tag="binary-shape")
        # Zero-dim tensors take part in promotion only by category.
        fn("torch." + op, [inp([3], "int32"), inp([], "int64")], [t(0), t(1)], tag="binary-zerodim")
        fn("torch." + op, [inp([3], "float16"), inp([], "float64")], [t(0), t(1)])
        fn("torch." + op, [inp([3], "int8"), inp([], "float64")], [t(0), t(1)])
        fn("torch." + op, [inp([], "int8"), inp([], "int64")], [t(0), t(1)])
        for scalar in [2, 2.5, True, -1, 0]:
            for d in ["float32", "int64", "uint8", "bool", "float16", "int32"]:
                fn("torch." + op, [inp([2, 3], d)], [t(0), scalar], tag="binary-scalar")
        # Layouts: the output follows the inputs' dimension order.
        for x in layouts(rg=True):
            fn("torch." + op, [x, inp([1], "float32")], [t(0), t(1)], tag="binary-layout")
            fn("torch." + op, [x, x], [t(0), t(1)], tag="binary-layout")
        fn("torch." + op, [inp([2, 3]), transposed([2, 3])], [t(0), t(1)], tag="binary-layout")
        fn("torch." + op, [transposed([2, 3]), inp([2, 3])], [t(0), t(1)], tag="binary-layout")
        fn("torch." + op, [transposed([3, 2]), inp([3, 1])], [t(0), t(1)], tag="binary-layout")
        fn("torch." + op, [inp([3, 1]), transposed([3, 2])], [t(0), t(1)], tag="binary-layout")
        fn("torch." + op, [permuted([2, 3, 4], [1, 2, 0]), permuted([2, 3, 4], [2, 0, 1])],
           [t(0), t(1)], tag="binary-layout")
        fn("torch." + op, [expanded([2, 3], 1), transposed([2, 3])], [t(0), t(1)])
        fn("torch." + op, [channels_last([2, 3, 4, 5]), channels_last([2, 3, 4, 5])], [t(0), t(1)])
        fn("torch." + op, [channels_last([2, 3, 4, 5]), inp([5])], [t(0), t(1)])
        fn("torch." + op, [inp([2, 1, 4], strides=[4, 1, 1]), transposed([2, 3, 4])], [t(0), t(1)])
        fn("torch." + op, [permuted([2, 3, 4], [2, 1, 0]), inp([3, 1])], [t(0), t(1)])
    ops = ["add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "eq", "ne", "lt", "le",
           "gt", "ge", "and_", "or_", "xor"]
    for op in ops:
        for d in ["float32", "int64", "bool", "int32"]:
            fn("operator." + op, [inp([2, 3], d, rg=d == "float32")], [t(0), 3], tag="operator")
            fn("operator." + op, [inp([2, 3], d)], [2.0, t(0)], tag="operator-reflected")
            fn("operator." + op, [inp([2, 3], d), inp([3], "float16")], [t(0), t(1)])
        fn("operator." + op, [transposed([3, 2], "int64")], [2, t(0)], tag="operator-reflected")
        fn("operator." + op, [transposed([3, 2], "int64")], [t(0), 1.5])
    for op in ["add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and", "or", "xor"]:
        meth(f"__r{op}__", [inp([2, 3])], [t(0), 2], tag="dunder")
        meth(f"__r{op}__", [inp([2, 3], "int64")], [t(0), 2.5])
        meth(f"__{op}__", [inp([2, 3], "int32")], [t(0), 2])
    for alpha in [2, 0.5, True]:
        for d in ["float32", "int64", "bool"]:
            fn("torch.add", [inp([2, 3], d), inp([3], d)], [t(0), t(1)], {"alpha": alpha})
            fn("torch.sub", [inp([2, 3], d), inp([3], d)], [t(0), t(1)], {"alpha": alpha})
    for mode in [None, "trunc", "floor"]:
        for d in ["float32", "int64", "bool", "uint8"]:
            kw = {"rounding_mode": s(mode) if mode else None}
            fn("torch.div", [inp([2, 3], d), inp([2, 3], d)], [t(0), t(1)], kw, tag="div")
            meth("div", [inp([2, 3], d)], [t(0), 3], kw)
    meth("div", [inp([2, 3])], [t(0), 3], {"rounding_mode": s("bogus")})
    for e in [2, -1, 0.5, -2.0]:
        for d in ["int64", "float32", "bool", "int8"]:
            fn("torch.pow", [inp([2, 3], d)], [t(0), e], tag="pow")
            fn("torch.pow", [inp([2, 3], d)], [e, t(0)], tag="pow-scalar-base")
    fn("torch.pow", [transposed([3, 2], "int64")], [t(0), 0.5])
    fn("torch.pow", [transposed([3, 2], "float32")], [2, t(0)])
    fn("torch.pow", [sliced([2, 3], "int64")], [t(0), 0.5])
    fn("torch.pow", [sliced([2, 3], "int64")], [t(0), 2])
    for op in ["greater", "less_equal", "not_equal", "logical_or", "logical_xor", "bitwise_or",
               "bitwise_xor", "true_divide", "multiply", "subtract", "fmax", "fmin"]:
        fn("torch." + op, [inp([2, 3], "int32"), inp([3], "float32")], [t(0), t(1)])
        meth(op, [transposed([3, 2]), inp([2])], [t(0), t(1)])


def inplace_binary_cases():
    for op in ["add_", "sub_", "mul_", "div_", "pow_", "floor_divide_", "remainder_", "eq_",
               "lt_", "logical_and_", "bitwise_and_"]:
        meth(op, [inp([2, 3]), inp([3], rg=True)], [t(0), t(1)], tag="inplace")
        meth(op, [inp([2, 3], "int64"), inp([2, 3])], [t(0), t(1)], tag="inplace")
        meth(op, [inp([2, 3], "int64")], [t(0), 2], tag="inplace")
        meth(op, [inp([3]), inp([2, 3])], [t(0), t(1)], tag="inplace")
        meth(op, [transposed([3, 2])], [t(0), 2.0], tag="inplace")
        meth(op, [expanded([4, 3], 0)], [t(0), 2.0], tag="inplace")
        meth(op, [inp([2, 3], "bool"), inp([2, 3], "bool")], [t(0), t(1)])
    for op in ["iadd", "isub", "imul", "itruediv", "ifloordiv", "imod", "ipow", "iand", "ior"]:
        fn("operator." + op, [inp([2, 3], "int64"), inp([3], "int64")], [t(0), t(1)])
        fn("operator." + op, [inp([2, 3]), inp([3], rg=True)], [t(0), t(1)])
    meth("__iadd__", [inp([2, 3])], [t(0), 1])
    meth("add_", [inp([2, 3]), inp([3])], [t(0), t(1)], {"alpha": 2})
    meth("fill_", [inp([2, 3], "int64")], [t(0), 1.5])
    meth("fill_", [inp([2, 3])], [t(0), 2])
    meth("fill_", [inp([2, 3]), inp([], rg=True)], [t(0), t(1)])
    meth("fill_", [inp([2, 3]), inp([1])], [t(0), t(1)])
    meth("zero_", [transposed([3, 2], "int32")], [t(0)])
    meth("copy_", [inp([2, 3], "int64"), inp([3], rg=True)], [t(0), t(1)])
    meth("copy_", [transposed([3, 2]), inp([3, 2], "float64")], [t(0), t(1)])
    meth("copy_", [inp([3]), inp([2, 3])], [t(0), t(1)])
    meth("clamp_", [inp([2, 3], "int64")], [t(0), 0.5])
    meth("clamp_", [inp([2, 3])], [t(0), 0, 1])
    meth("clamp_min_", [transposed([3, 2])], [t(0), 0])
    meth("masked_fill_", [inp([2, 3]), inp([3], "bool")], [t(0), t(1), 1.0])
    meth("masked_fill_", [inp([3]), inp([2, 3], "bool")], [t(0), t(1), 1.0])
    meth("masked_fill_", [inp([2, 3], "int64"), inp([2, 3], "bool")], [t(0), t(1), 2.5])


def where_clamp_cases():
    for c_d in ["bool", "uint8", "float32"]:
        fn("torch.where", [inp([2, 3], c_d), inp([2, 3]), inp([2, 3])], [t(0), t(1), t(2)])
    for x, y in [(inp([2, 3], "int64"), inp([3], "float16")), (inp([1, 3]), inp([2, 1], "float64"))]:
        fn("torch.where", [inp([2, 3], "bool"), x, y], [t(0), t(1), t(2)], tag="where")
        fn("torch.where", [inp([2, 1], "bool"), x], [t(0), t(1), 0.5], tag="where")
        fn("torch.where", [inp([2, 1], "bool"), y], [t(0), 2, t(1)], tag="where")
    fn("torch.where", [inp([2, 3], "bool")], [t(0), 1.0, 0.0])
    fn("torch.where", [inp([2, 3], "bool")], [t(0), 1, 0])
    fn("torch.where", [transposed([3, 2], "bool"), inp([3, 2], rg=True), inp([3, 2])],
       [t(0), t(1), t(2)])
    fn("torch.where", [inp([3, 2], "bool"), transposed([3, 2], rg=True), inp([2])],
       [t(0), t(1), t(2)])
    fn("torch.where", [inp([3, 2], "bool"), sliced([3, 2], "int64")], [t(0), t(1), 1.5])
    meth("where", [inp([2, 3]), inp([2, 3], "bool")], [t(0), t(1), 0.0])
    fn("torch.where", [inp([2, 3], "bool"), inp([3, 3]), inp([2, 3])], [t(0), t(1), t(2)])
    for d in ["float32", "int64", "bool", "float16", "uint8"]:
        for lo, hi in [(0, 1), (0.5, None), (None, 2), (-1.5, 2.5), (None, None)]:
            fn("torch.clamp", [inp([2, 3], d, rg=d == "float32")], [t(0)], {"min": lo, "max": hi},
               tag="clamp")
        fn("torch.clamp", [transposed([3, 2], d)], [t(0), 0, 1])
        fn("torch.clamp", [inp([2, 3], d), inp([3], "float32"), inp([2, 1], d)],
           [t(0), t(1), t(2)], tag="clamp-tensor")
    fn("torch.clamp", [transposed([3, 2]), inp([1, 2], rg=True)], [t(0), t(1)])
    fn("torch.clamp", [inp([2, 3]), inp([4])], [t(0), t(1)])
    fn("torch.clip", [inp([2, 3], "int32")], [t(0), 0.5, 1])
    meth("clamp_min", [inp([2, 3], "int32")], [t(0), 0.5])
    meth("clamp_max", [sliced([2, 3])], [t(0), 1])
    meth("clamp", [inp([2, 3])], [t(0)], {"max": 1})
    for d in ["float32", "int64", "bool"]:
        for v in [1, 2.5, True]:
            meth("masked_fill", [inp([2, 3], d, rg=d == "float32"), inp([3], "bool")],
                 [t(0), t(1), v], tag="masked_fill")
    meth("masked_fill", [transposed([3, 2]), inp([3, 2], "bool")], [t(0), t(1), 0.0])
    meth("masked_fill", [inp([3]), inp([2, 3], "bool")], [t(0), t(1), 0.0])
    meth("masked_fill", [inp([3]), inp([3], "float32")], [t(0), t(1), 0.0])
    meth("masked_fill", [inp([3]), inp([3], "bool"), inp([], rg=True)], [t(0), t(1), t(2)])
    meth("masked_fill", [inp([3]), inp([3], "bool"), inp([1])], [t(0), t(1), t(2)])
    fn("torch.masked_fill", [sliced([2, 3], "int32"), inp([2, 3], "bool")], [t(0), t(1), 1])


def reduction_cases():
    xs = [inp([2, 3, 4], rg=True), transposed([4, 3], rg=True), inp([0, 3]), inp([]),
          inp([3, 1, 2])]
    for op in ["sum", "mean", "prod", "amax", "amin", "max", "min", "argmax", "argmin", "var",
               "std", "any", "all", "logsumexp", "nansum"]:
        for x in xs:
            nd = len(x["sizes"])
            meth(op, [x], [t(0)], tag="reduce-full")
            for d in ([0, -1] if nd else [0, -1]):
                meth(op, [x], [t(0), d], tag="reduce-dim")
                meth(op, [x], [t(0), d], {"keepdim": True}, tag="reduce-dim")
            if nd >= 2:
                fn("torch." + op, [x], [t(0)], {"dim": tup(0, 1)}, tag="reduce-dims")
                fn("torch." + op, [x], [t(0)], {"dim": lst(-1, 0), "keepdim": True})
                fn("torch." + op, [x], [t(0)], {"dim": tup(1, 1)})
            meth(op, [x], [t(0), 5])
        for d in ALL_DTYPES:
            fn("torch." + op, [inp([2, 3], d)], [t(0)], tag="reduce-dtype")
            fn("torch." + op, [inp([2, 3], d)], [t(0), 1], tag="reduce-dtype")
        fn("torch." + op, [inp([3, 0])], [t(0), 1])
        fn("torch." + op, [inp([3, 0])], [t(0), 0])
        fn("torch." + op, [inp([2, 3])], [t(0)], {"dim": lst()})
    for op in ["sum", "mean", "prod", "nansum"]:
        for d in ["int64", "float16", "bool"]:
            for out in ["float64", "int32", "float16"]:
                meth(op, [inp([2, 3], d)], [t(0)], {"dtype": dt(out)}, tag="reduce-out-dtype")
                meth(op, [inp([2, 3], d, rg=d == "float16")], [t(0), 1], {"dtype": dt(out)})
    for op in ["var", "std"]:
        meth(op, [inp([2, 3], rg=True)], [t(0), 1, False], tag="var-unbiased")
        meth(op, [inp([2, 3])], [t(0), False])
        meth(op, [inp([2, 3])], [t(0), 1, True, True])
        meth(op, [inp([2, 3])], [t(0)], {"dim": 0, "correction": 0})
        meth(op, [inp([2, 3], "complex64")], [t(0), 1])
        fn("torch." + op, [inp([2, 3])], [t(0)], {"unbiased": False})
    meth("max", [inp([2, 3]), inp([3])], [t(0), t(1)])
    fn("torch.max", [inp([2, 3], "int32"), inp([3], "float32")], [t(0), t(1)])
    fn("torch.argmax", [inp([2, 3])], [t(0)], {"keepdim": True})
    fn("torch.sum", [inp([2, 3], rg=True)], [t(0)], {"dim": 1, "keepdim": True, "dtype": dt("float64")})
    meth("sum", [inp([2, 3, 4])], [t(0), 0, 2])


def matmul_cases():
    shapes = [
        ([3], [3]), ([2, 3], [3]), ([3], [3, 4]), ([2, 3], [3, 4]), ([5, 2, 3], [3]),
        ([5, 2, 3], [3, 4]), ([3], [5, 3, 4]), ([2, 3], [5, 3, 4]), ([5, 2, 3], [5, 3, 4]),
        ([5, 1, 2, 3], [4, 3, 2]), ([1, 2, 3], [6, 3, 4]), ([0, 2, 3], [3, 4]), ([2, 0], [0, 4]),
        ([2, 3], [4, 5]), ([3], [4]), ([5, 2, 3], [4, 3, 4]), ([], [3]), ([2, 3, 4], [2, 4]),
        ([4, 3], [3, 0]), ([1, 3], [3, 1]),
    ]
    for a, b in shapes:
        fn("torch.matmul", [inp(a, rg=True), inp(b)], [t(0), t(1)], tag="matmul")
        fn("operator.matmul", [transposed(a), transposed(b, rg=True)], [t(0), t(1)], tag="matmul")
    fn("torch.matmul", [permuted([2, 3, 4], [1, 0, 2]), inp([4, 5])], [t(0), t(1)])
    fn("torch.matmul", [inp([4, 3]), permuted([2, 3, 4], [1, 0, 2])], [t(0), t(1)])
    fn("torch.matmul", [inp([3]), permuted([2, 3, 4], [1, 0, 2])], [t(0), t(1)])
    fn("torch.matmul", [sliced([2, 3, 4]), sliced([4, 5])], [t(0), t(1)])
    for d in ["float64", "float16", "bfloat16", "int64", "int32", "bool"]:
        fn("torch.matmul", [inp([2, 3], d), inp([3, 4], d)], [t(0), t(1)], tag="matmul-dtype")
        fn("torch.matmul", [inp([5, 2, 3], d), inp([3, 4], d)], [t(0), t(1)])
    fn("torch.matmul", [inp([2, 3]), inp([3, 4], "float64")], [t(0), t(1)])
    fn("torch.matmul", [inp([2, 3], "int64"), inp([3, 4])], [t(0), t(1)])
    for a, b in [([2, 3], [3, 4]), ([2, 3], [4, 5]), ([3], [3, 4]), ([2, 3, 4], [2, 4, 5])]:
        fn("torch.mm", [inp(a), transposed(b, rg=True)], [t(0), t(1)], tag="mm")
        meth("bmm", [inp(a), inp(b)], [t(0), t(1)], tag="bmm")
    fn("torch.bmm", [inp([2, 3, 4]), inp([3, 4, 5])], [t(0), t(1)])
    fn("torch.mv", [inp([2, 3]), inp([3], rg=True)], [t(0), t(1)])
    fn("torch.mv", [inp([2, 3]), inp([4])], [t(0), t(1)])
    fn("torch.dot", [inp([3]), inp([3])], [t(0), t(1)])
    fn("torch.dot", [inp([3]), inp([4])], [t(0), t(1)])
    for bias in [[4], [2, 4], [1], [2, 1], [3], []]:
        fn("torch.addmm", [inp(bias), inp([2, 3]), inp([3, 4], rg=True)], [t(0), t(1), t(2)],
           tag="addmm")
    fn("torch.addmm", [inp([4]), transposed([2, 3]), inp([3, 4])], [t(0), t(1), t(2)],
       {"beta": 0.5, "alpha": 2})
    lin = [([2, 3], [4, 3], [4]), ([5, 2, 3], [4, 3], None), ([3], [4, 3], [4]),
           ([2, 3], [3], None), ([2, 3], [4, 3], [2, 4]), ([2, 3], [4, 5], None),
           ([0, 3], [4, 3], [4]), ([5, 2, 3], [4, 3], [4]), ([2, 3], [4, 3], [5])]
    for x, w, bias in lin:
        ins = [inp(x), inp(w, rg=True)] + ([inp(bias)] if bias is not None else [])
        args = [t(0), t(1)] + ([t(2)] if bias is not None else [])
        fn("torch.nn.functional.linear", ins, args, tag="linear")
    fn("torch.nn.functional.linear", [transposed([4, 3]), transposed([5, 3])], [t(0), t(1)])
    fn("torch.nn.functional.linear", [permuted([2, 4, 3], [1, 0, 2]), inp([5, 3])], [t(0), t(1)])
    fn("torch.nn.functional.linear", [sliced([2, 4, 3]), inp([5, 3]), inp([5])], [t(0), t(1), t(2)])
    fn("torch.nn.functional.linear", [inp([2, 3], "float64"), inp([5, 3])], [t(0), t(1)])
    fn("torch.nn.functional.linear", [inp([2, 3], "bfloat16"), inp([5, 3], "bfloat16")],
       [t(0), t(1)], {"bias": None})


def view_cases():
    x = inp([2, 3, 4], rg=True)
    for shape in [[6, 4], [-1], [4, -1, 2], [24], [2, 12], [3, 8], [-1, -1], [5, -1], [2, 3, 4, 1],
                  [1, 24, 1], [0, -1], [7]]:
        meth("view", [x], [t(0)] + shape, tag="view")
        meth("reshape", [x], [t(0), tup(*shape)], tag="view")
    for y in [transposed([2, 4, 3]), permuted([2, 3, 4], [2, 0, 1]), sliced([2, 3, 4]),
              inp([3, 1, 2], strides=[2, 7, 1]), expanded([3, 4], 0), inp([0, 3]), inp([])]:
        n = 1
        for v in y["sizes"]:
            n *= v
        for shape in [[-1], [n], [1, -1], list(reversed(y["sizes"])), y["sizes"] + [1],
                      [1] + y["sizes"]]:
            meth("view", [y], [t(0), tup(*shape)], tag="view-strided")
            fn("torch.reshape", [y], [t(0), tup(*shape)], tag="reshape-strided")
    fn("torch.reshape", [inp([0, 3])], [t(0), tup(3, 0)])
    fn("torch.reshape", [inp([0, 3])], [t(0), tup(0, 3)])
    meth("view", [inp([2, 0, 3], strides=[5, 7, 11])], [t(0), 0, 6])
    meth("view_as", [inp([2, 3]), inp([3, 2])], [t(0), t(1)])
    meth("reshape_as", [transposed([2, 3]), inp([6])], [t(0), t(1)])
    for y in [x, transposed([3, 2]), inp([]), permuted([2, 3, 4], [1, 2, 0])]:
        nd = len(y["sizes"])
        if nd == 3:
            for p in [(2, 0, 1), (0, 2, 1), (-1, 0, 1), (0, 0, 1)]:
                meth("permute", [y], [t(0)] + list(p), tag="permute")
            fn("torch.permute", [y], [t(0), tup(1, 0)])
        if nd == 2:
            meth("permute", [y], [t(0), 1, 0])
            meth("permute", [y], [t(0), lst(0, 1)])
        if nd == 0:
            meth("permute", [y], [t(0), tup()])
        for d0, d1 in [(0, 1), (-1, 0), (0, 0), (0, 2)]:
            meth("transpose", [y], [t(0), d0, d1], tag="transpose")
        fn("torch.swapaxes", [y], [t(0), 0, -1])
        meth("t", [y], [t(0)], tag="t")
        for d in [0, -1, 1, nd, -nd - 1, nd + 1]:
            meth("unsqueeze", [y], [t(0), d], tag="unsqueeze")
        for start, end in [(0, -1), (1, -1), (0, 1), (1, 0), (-2, -1)]:
            fn("torch.flatten", [y], [t(0), start, end], tag="flatten")
        meth("flatten", [y], [t(0)])
        meth("contiguous", [y], [t(0)], tag="contiguous")
    meth("t", [inp([3])], [t(0)])
    meth("transpose", [inp([3])], [t(0), 0, -1])
    for y in [inp([1, 3, 1, 2]), inp([1, 3, 1, 2], strides=[9, 2, 9, 1]), inp([]), inp([1]),
              inp([3, 0, 1])]:
        meth("squeeze", [y], [t(0)], tag="squeeze")
        for d in [0, -1, 2, tup(0, 2), tup()]:
            meth("squeeze", [y], [t(0), d], tag="squeeze")
    for y, target in [
        (inp([3, 1]), [3, 4]), (inp([3, 1]), [2, 3, 4]), (inp([3, 1]), [-1, 4]),
        (inp([3, 1]), [2, -1, -1]), (inp([3, 1]), [-1, 3, 4]), (inp([3, 1]), [3, 1]),
        (inp([3, 2]), [3, 4]), (inp([]), [2, 3]), (inp([]), [1]), (inp([1, 1], strides=[5, 7]), [1, 1]),
        (transposed([3, 1]), [2, 3, 5]), (inp([1]), [0]), (inp([3]), [1, 3]), (inp([3]), [2]),
        (inp([2, 3]), [1, 1, 2, 3]),
    ]:
        meth("expand", [y], [t(0)] + target, tag="expand")
        meth("expand", [y], [t(0), tup(*target)], tag="expand")
    meth("expand_as", [inp([3, 1]), inp([2, 3, 4])], [t(0), t(1)])
    for y in [sliced([3, 4]), transposed([3, 4]), inp([1, 3], strides=[1, 1]),
              expanded([3, 4], 1), permuted([2, 3, 4], [2, 0, 1]), channels_last([2, 3, 2, 2])]:
        meth("contiguous", [y], [t(0)], tag="contiguous")
    y = inp([4, 5])
    for d, start, length in [(0, 1, 2), (1, -2, 2), (1, 5, 0), (0, 3, 2), (-1, 0, 5), (0, -5, 1)]:
        meth("narrow", [y], [t(0), d, start, length], tag="narrow")
    fn("torch.narrow", [transposed([4, 5])], [t(0), 1, 1, 3])
    for d, idx in [(0, 1), (1, -1), (0, 4), (-1, 4), (1, -6)]:
        meth("select", [transposed([4, 5])], [t(0), d, idx], tag="select")
    fn("torch.select", [inp([2, 3, 4])], [t(0), 1, 2])
    for split in [2, 3, 5, lst(1, 3), lst(2, 2), 0]:
        meth("split", [inp([4, 5])], [t(0), split], tag="split")
        fn("torch.split", [transposed([4, 5])], [t(0), split, 1], tag="split")
    for chunks in [2, 3, 4, 6]:
        meth("chunk", [inp([5, 2])], [t(0), chunks], tag="chunk")
        fn("torch.chunk", [inp([0, 2])], [t(0), chunks])
    meth("unbind", [transposed([3, 2])], [t(0)], tag="unbind")
    fn("torch.unbind", [inp([3, 2])], [t(0), 1])
    meth("size", [inp([3, 2])], [t(0)])
    meth("size", [inp([3, 2])], [t(0), -1])
    meth("dim", [inp([3, 2])], [t(0)])
    meth("numel", [inp([3, 2])], [t(0)])


def getitem_cases():
    x = inp([4, 5, 6], rg=True)
    indices = [
        0, -1, 3, 4, -5, sl(), sl(1, 3), sl(None, None, 2), sl(-3, None), sl(2, 100), sl(5, 1),
        sl(1, None, 3), None, E, tup(0, 1), tup(sl(), 0), tup(E, 0), tup(None, E, None),
        tup(0, None, sl(1, 4, 2), -1), tup(sl(), sl(), sl(), sl()), tup(E, E), tup(1, 2, 3),
        tup(sl(None, None, -1)), tup(sl(None, None, 0)), tup(E, sl(1, 2), None),
        tup(None, 0, None, sl(-2, None)), tup(), tup(-4, -5, -6), tup(0, 5),
        sl(-100, 100), sl(0, 0), tup(sl(3, 100, 4), sl(None, -1, 2)),
    ]
    for idx in indices:
        fn("operator.getitem", [x], [t(0), idx], tag="getitem")
    for y in [transposed([3, 4]), sliced([3, 4]), expanded([3, 4], 0), inp([]), inp([0, 3])]:
        for idx in [0, -1, sl(1, None), tup(sl(), 1), None, E, tup(E, None),
                    tup(sl(None, None, 2), sl(1, None, 2))]:
            fn("operator.getitem", [y], [t(0), idx], tag="getitem-strided")
    meth("__getitem__", [inp([3, 4])], [t(0), tup(1, sl(1, 3))])
    fn("operator.getitem", [inp([3, 4])], [t(0), lst(0, 1)])
    fn("operator.getitem", [inp([3, 4]), inp([2], "int64")], [t(0), t(1)])
    fn("operator.getitem", [inp([3, 4])], [t(0), True])


def join_cases():
    for dim in [0, 1, -1, 2]:
        fn("torch.cat", [inp([2, 3], rg=True), inp([2, 3])], [lst(t(0), t(1)), dim], tag="cat")
        fn("torch.stack", [inp([2, 3]), inp([2, 3], rg=True)], [tup(t(0), t(1))],
           {"dim": dim}, tag="stack")
    fn("torch.cat", [inp([2, 3], "int64"), inp([4, 3], "float16")], [lst(t(0), t(1))])
    fn("torch.cat", [inp([2, 3], "bool"), inp([1, 3], "uint8"), inp([2, 3], "int8")],
       [lst(t(0), t(1), t(2))])
    fn("torch.cat", [inp([2, 3]), inp([0])], [lst(t(0), t(1)), 1])
    fn("torch.cat", [inp([0]), inp([0])], [lst(t(0), t(1))])
    fn("torch.cat", [inp([2, 3]), inp([2, 4])], [lst(t(0), t(1))])
    fn("torch.cat", [inp([2, 3]), inp([2, 4])], [lst(t(0), t(1)), 1])
    fn("torch.cat", [inp([2, 3]), inp([3])], [lst(t(0), t(1))])
    fn("torch.cat", [inp([2, 3]), inp([])], [lst(t(0), t(1))])
    fn("torch.cat", [], [lst()])
    fn("torch.cat", [transposed([3, 2]), sliced([3, 2])], [lst(t(0), t(1)), 1])
    fn("torch.cat", [transposed([3, 2]), transposed([3, 2])], [lst(t(0), t(1))])
    fn("torch.cat", [channels_last([2, 3, 2, 2]), inp([2, 3, 2, 2])], [lst(t(0), t(1))])
    fn("torch.concat", [inp([2]), inp([3])], [tup(t(0), t(1))])
    fn("torch.concatenate", [inp([2]), inp([3])], [tup(t(0), t(1))], {"axis": 0})
    fn("torch.stack", [inp([2, 3]), inp([3, 2])], [lst(t(0), t(1))])
    fn("torch.stack", [transposed([3, 2]), transposed([3, 2])], [lst(t(0), t(1)), 1])
    fn("torch.stack", [inp([]), inp([], "int64")], [lst(t(0), t(1))])
    fn("torch.stack", [transposed([2, 3, 2]), inp([2, 3, 2])], [lst(t(0), t(1))])
    fn("torch.stack", [], [lst()])


def nn_cases():
    for d in FLOATS + ["int64"]:
        for dim in [0, -1, 1, 2]:
            fn("torch.softmax", [inp([2, 3], d, rg=True if d != "int64" else False)], [t(0), dim],
               tag="softmax")
            meth("log_softmax", [transposed([3, 2], d)], [t(0), dim], tag="softmax")
        fn("torch.nn.functional.softmax", [inp([2, 3], d)], [t(0)], {"dim": -1, "dtype": dt("float64")})
        fn("torch.nn.functional.log_softmax", [inp([2, 3, 4], d)], [t(0)])
    fn("torch.nn.functional.softmax", [inp([])], [t(0), 0])
    fn("torch.nn.functional.softmax", [sliced([2, 3, 4])], [t(0)], {"dim": 1})
    fn("torch.softmax", [inp([2, 3], "float16")], [t(0), 1, dt("float32")])
    for x, shape, w, b in [
        ([2, 3, 4], [4], [4], [4]), ([2, 3, 4], [3, 4], [3, 4], None), ([2, 3, 4], [4], None, None),
        ([2, 3], [4], None, None), ([2, 3], [3], [4], None), ([2, 3], [], None, None),
        ([0, 4], [4], [4], [4]), ([4], [4], [4], [4]),
    ]:
        ins = [inp(x)] + [inp(v, rg=True) for v in (w, b) if v is not None]
        args = [t(0), tup(*shape)]
        kw = {}
        k = 1
        if w is not None:
            kw["weight"] = t(k)
            k += 1
        if b is not None:
            kw["bias"] = t(k)
        fn("torch.nn.functional.layer_norm", ins, args, kw, tag="layer_norm")
    fn("torch.nn.functional.layer_norm", [transposed([3, 4])], [t(0), lst(4)], {"eps": 1e-6})
    fn("torch.layer_norm", [inp([3, 4], "float64", rg=True)], [t(0), lst(4)])
    fn("torch.nn.functional.layer_norm", [inp([3, 4], "bfloat16"), inp([4])], [t(0), lst(4), t(1)])
    for x in [inp([2, 3], rg=True), transposed([3, 2]), sliced([2, 3]), inp([0, 3]),
              permuted([2, 3, 4], [2, 0, 1]), expanded([4, 3], 0), inp([2, 3], "float16")]:
        for p in [0.0, 0.5, 1.0, 1.5]:
            for training in [True, False]:
                fn("torch.nn.functional.dropout", [x], [t(0)], {"p": p, "training": training},
                   tag="dropout")
        fn("torch.dropout", [x], [t(0), 0.3, True], tag="dropout")
        fn("torch.nn.functional.dropout", [x], [t(0)])
    fn("torch.nn.functional.dropout", [inp([2, 3])], [t(0), 0.5, True, True])


def cl_weight(sizes, dtype="float32", rg=False):
    return channels_last(sizes, dtype, rg)


def batch_norm_cases():
    F = "torch.nn.functional.batch_norm"
    for d in ["float32", "float64", "bfloat16"]:
        for x in [inp([8, 4, 5, 5], d), channels_last([8, 4, 5, 5], d), inp([1, 4, 3, 3], d),
                  channels_last([1, 4, 3, 3], d), inp([2, 4], d), inp([2, 4, 3], d),
                  inp([2, 4, 2, 3, 2], d), inp([2, 4, 1, 1], d), channels_last([2, 4, 1, 1], d)]:
            stats = [inp([4], d), inp([4], d)]
            for training in [False, True]:
                fn(F, [x] + stats, [t(0), t(1), t(2)], {"training": training}, tag="batch_norm")
                fn(F, [x] + stats + [inp([4], d, rg=True), inp([4], d)],
                   [t(0), t(1), t(2), t(3), t(4), training, 0.1, 1e-5], tag="batch_norm")
                fn("torch.batch_norm", [x] + stats + [inp([4], d), inp([4], d)],
                   [t(0), t(3), t(4), t(1), t(2), training, 0.1, 1e-5, False], tag="batch_norm")
    x = inp([2, 3, 4, 4], rg=True)
    fn(F, [x, inp([3]), inp([3])], [t(0), t(1), t(2)], tag="batch_norm")
    fn(F, [x], [t(0), None, None], {"training": True})
    fn(F, [x], [t(0), None, None])
    fn(F, [x, inp([4]), inp([4])], [t(0), t(1), t(2)])
    fn(F, [x, inp([3]), inp([3]), inp([4])], [t(0), t(1), t(2), t(3)])
    fn(F, [inp([1, 3, 1, 1]), inp([3]), inp([3])], [t(0), t(1), t(2)], {"training": True})
    fn(F, [inp([1, 3, 1, 1]), inp([3]), inp([3])], [t(0), t(1), t(2)])
    fn(F, [inp([2, 3, 4, 4], "bfloat16"), inp([3]), inp([3])], [t(0), t(1), t(2)])
    fn(F, [inp([2, 3, 4, 4], "float64"), inp([3]), inp([3])], [t(0), t(1), t(2)])
    fn(F, [inp([2, 3, 4, 4], "int64"), inp([3]), inp([3])], [t(0), t(1), t(2)])
    fn(F, [inp([2, 3, 4, 4]), inp([3], rg=True), inp([3])], [t(0), t(1), t(2)])
    for x in [transposed([2, 3, 4, 5]), sliced([2, 3, 4, 5]), permuted([2, 3, 4, 5], [0, 2, 1, 3]),
              permuted([2, 3, 4, 5], [3, 1, 2, 0]), inp([2, 1, 4, 4]), channels_last([2, 1, 4, 4]),
              inp([2, 3, 4, 4], strides=[48, 16, 4, 1]), inp([2, 1, 1, 1]), transposed([2, 3, 4]),
              expanded([2, 3, 4, 4], 2), expanded([2, 3, 4, 4], 0), sliced([2, 3, 4, 4, 2]),
              permuted([2, 3, 4, 5], [0, 2, 3, 1]), permuted([1, 2, 7, 5], [2, 3, 0, 1]),
              inp([2, 3, 4, 4, 2], strides=[96, 1, 24, 6, 3]), sliced([2, 3, 4]),
              permuted([2, 3, 4], [2, 0, 1]), expanded([2, 3], 0), transposed([3, 2]),
              sliced([2, 3])]:
        for training in [False, True]:
            c = x["sizes"][1]
            fn(F, [x, inp([c]), inp([c])], [t(0), t(1), t(2)], {"training": training},
               tag="batch_norm-layout")


def conv_cases():
    C = "torch.nn.functional.conv2d"
    for d in ["float32", "float64", "bfloat16", "float16"]:
        for x in [inp([2, 4, 8, 8], d), channels_last([2, 4, 8, 8], d), inp([1, 4, 8, 8], d),
                  channels_last([1, 4, 8, 8], d)]:
            for w in [inp([6, 4, 3, 3], d), cl_weight([6, 4, 3, 3], d)]:
                fn(C, [x, w], [t(0), t(1)], tag="conv2d")
                fn(C, [x, w, inp([6], d)], [t(0), t(1), t(2)], {"padding": 1}, tag="conv2d")
                fn("torch.conv2d", [x, w, inp([6], d)], [t(0), t(1), t(2), 2, 1], tag="conv2d")
            for w in [inp([4, 1, 3, 3], d), cl_weight([4, 1, 3, 3], d)]:
                fn(C, [x, w], [t(0), t(1)], {"groups": 4, "padding": 1}, tag="conv2d-dw")
            fn(C, [x, inp([6, 2, 1, 1], d)], [t(0), t(1)], {"groups": 2}, tag="conv2d")
            fn(C, [x, cl_weight([8, 4, 1, 1], d)], [t(0), t(1)], {"stride": 2}, tag="conv2d")
    for x in [inp([16, 3, 10, 10]), channels_last([16, 3, 10, 10])]:
        for w in [inp([8, 3, 3, 3]), cl_weight([8, 3, 3, 3])]:
            for d in ["float32", "float64"]:
                xx = dict(x, dtype=d)
                ww = dict(w, dtype=d)
                fn(C, [xx, ww], [t(0), t(1)], tag="conv2d-batch16")
                fn(C, [xx, ww], [t(0), t(1)], {"padding": tup(1, 1)}, tag="conv2d-batch16")
    x = inp([2, 4, 9, 7])
    for kw in [{"stride": (2, 1)}, {"padding": (2, 0)}, {"dilation": 2}, {"dilation": (1, 2)},
               {"stride": 3, "padding": 1, "dilation": 2}, {"padding": s("same")},
               {"padding": s("valid")}, {"stride": lst(2)}, {"stride": 0}, {"groups": 3},
               {"padding": 5}, {"padding": -1}]:
        fn(C, [x, inp([4, 4, 3, 3])], [t(0), t(1)], {k: tup(*v) if isinstance(v, tuple) else v
                                                     for k, v in kw.items()}, tag="conv2d-args")
    fn(C, [x, inp([4, 4, 10, 3])], [t(0), t(1)])
    fn(C, [x, inp([4, 4, 3, 3]), inp([5])], [t(0), t(1), t(2)])
    fn(C, [x, inp([4, 4, 3, 3]), inp([4], "float64")], [t(0), t(1), t(2)])
    fn(C, [x, inp([4, 4, 3, 3], "float64")], [t(0), t(1)])
    fn(C, [inp([4, 9, 7]), inp([4, 4, 3, 3])], [t(0), t(1)])
    fn(C, [inp([0, 4, 9, 7]), inp([4, 4, 3, 3])], [t(0), t(1)])
    fn(C, [inp([2, 4, 9, 7], "int64"), inp([4, 4, 3, 3], "int64")], [t(0), t(1)])
    for rgs in [(True, False, False), (False, True, False), (False, False, True)]:
        fn(C, [inp([2, 4, 6, 6], rg=rgs[0]), inp([4, 4, 3, 3], rg=rgs[1]), inp([4], rg=rgs[2])],
           [t(0), t(1), t(2)], tag="conv2d-grad")
    for x in [transposed([2, 3, 6, 6]), sliced([2, 3, 6, 6]), permuted([2, 3, 6, 6], [0, 2, 1, 3]),
              inp([2, 1, 6, 6]), channels_last([2, 1, 6, 6]), inp([2, 3, 1, 1]),
              channels_last([2, 3, 1, 1]), inp([2, 1, 1, 1]), permuted([2, 3, 6, 6], [3, 1, 2, 0])]:
        c = x["sizes"][1]
        fn(C, [x, inp([5, c, 1, 1])], [t(0), t(1)], tag="conv2d-layout")
        fn(C, [x, cl_weight([5, c, 1, 1])], [t(0), t(1)], tag="conv2d-layout")


def pool_cases():
    M = "torch.nn.functional.max_pool2d"
    A = "torch.nn.functional.adaptive_avg_pool2d"
    for d in ["float32", "float64", "bfloat16"]:
        for rg in [False, True] if d != "bfloat16" else [False]:
            for x in [inp([2, 4, 9, 9], d, rg=rg), channels_last([2, 4, 9, 9], d, rg),
                      inp([1, 3, 7, 8], d, rg=rg), channels_last([1, 3, 7, 8], d, rg)]:
                fn(M, [x], [t(0), 3, 2, 1], tag="max_pool2d")
                fn(M, [x], [t(0), 2], tag="max_pool2d")
                fn(M, [x], [t(0), tup(3, 2)], {"stride": tup(2, 1), "ceil_mode": True},
                   tag="max_pool2d")
                fn("torch.max_pool2d", [x], [t(0), lst(3, 3), lst(2, 2), lst(1, 1)],
                   tag="max_pool2d")
                for os in [1, tup(1, 1), 3, tup(2, 5), tup(7, 1)]:
                    fn(A, [x], [t(0), os], tag="adaptive_avg_pool2d")
    x = inp([2, 3, 10, 11])
    for k, st, p, dil, ceil in [(3, 2, 1, 1, True), (3, 3, 0, 1, True), (2, 2, 1, 1, True),
                                (3, 2, 1, 2, False), (3, 2, 1, 2, True), (4, 3, 2, 1, True),
                                (5, 1, 2, 1, False), (3, None, 0, 1, True), (3, 2, 2, 1, False),
                                (0, 1, 0, 1, False), (3, 0, 0, 1, False), (11, 1, 0, 1, False),
                                (tup(3, 5), tup(2, 3), tup(1, 2), tup(1, 1), True)]:
        fn(M, [x], [t(0), k], {"stride": st, "padding": p, "dilation": dil, "ceil_mode": ceil},
           tag="max_pool2d-args")
    fn(M, [x], [t(0), 2], {"return_indices": True})
    fn(M, [x], [t(0), lst(2)], {"stride": lst()})
    fn("torch.max_pool2d", [x], [t(0), 2, lst()])
    fn(M, [inp([3, 10, 11])], [t(0), 2])
    fn(M, [inp([2, 3, 10, 11], "int64")], [t(0), 2])
    fn(A, [x], [t(0), tup(None, 3)])
    fn(A, [x], [t(0), 0])
    fn(A, [inp([3, 10, 11])], [t(0), 1])
    fn(A, [inp([2, 3, 10, 11], "int64")], [t(0), 1])
    for x in [transposed([2, 3, 6, 6]), sliced([2, 3, 6, 6]), permuted([2, 3, 6, 6], [0, 2, 1, 3]),
              inp([2, 1, 6, 6]), channels_last([2, 1, 6, 6]), inp([2, 3, 1, 1]),
              channels_last([2, 3, 1, 1]), inp([2, 1, 1, 1]), permuted([2, 3, 6, 6], [3, 1, 2, 0])]:
        fn(M, [x], [t(0), 1], tag="max_pool2d-layout")
        fn(A, [x], [t(0), 1], tag="adaptive_avg_pool2d-layout")
        fn(A, [x], [t(0), 2], tag="adaptive_avg_pool2d-layout")


def convert_cases():
    for src in ALL_DTYPES:
        for x in [inp([2, 3], src, rg=src in FLOATS), transposed([3, 2], src), sliced([2, 3], src),
                  expanded([4, 3], 0, src)]:
            for m in ["float", "double", "half", "bfloat16", "int", "long", "bool", "byte"]:
                meth(m, [x], [t(0)], tag="convert")
    for x in [inp([2, 3], rg=True), transposed([3, 2], "int64"), sliced([2, 3]),
              channels_last([2, 3, 2, 2]), inp([3, 1], strides=[1, 9])]:
        for target in [dt("float64"), dt("float32"), dt("int32")]:
            meth("to", [x], [t(0), target], tag="to")
        meth("to", [x], [t(0)], {"dtype": dt("float16")})
        meth("to", [x], [t(0), {"device": "cpu"}])
        meth("to", [x], [t(0), s("cpu"), dt("float64")])
        meth("to", [x], [t(0), dt("float32")], {"copy": True})
        meth("to", [x, inp([1], "bfloat16")], [t(0), t(1)])
        meth("type_as", [x, inp([1], "int16")], [t(0), t(1)])
        meth("type_as", [x, inp([1], x["dtype"])], [t(0), t(1)])
        meth("clone", [x], [t(0)], tag="clone")
        meth("detach", [x], [t(0)])
        meth("cpu", [x], [t(0)])


def factory_cases():
    for name in ["zeros", "ones", "empty", "rand", "randn"]:
        fn("torch." + name, [], [2, 3], tag="factory")
        fn("torch." + name, [], [tup(2, 3)], {"dtype": dt("float64")})
        fn("torch." + name, [], [lst()], {"dtype": dt("int64")})
        fn("torch." + name, [], [0, 4], {"requires_grad": True})
        fn("torch." + name, [], [3], {"dtype": dt("int32"), "requires_grad": True})
        fn("torch." + name, [], [-1, 2])
        fn("torch." + name, [], [], {"size": tup(4, 1), "device": s("cpu")})
        fn("torch." + name, [], [5], {"dtype": dt("float16")})
    for fill in [1, 1.5, True, -2]:
        fn("torch.full", [], [tup(2, 3), fill], tag="full")
        fn("torch.full", [], [lst(2), fill], {"dtype": dt("float64")})
    fn("torch.full", [], [tup(2, 3), 1.0], {"requires_grad": True})
    for args, kw in [
        ([5], {}), ([2, 7], {}), ([1, 10, 3], {}), ([0.5, 3], {}), ([10, 0, -3], {}),
        ([0, 1, 0.1], {}), ([5], {"dtype": dt("float64")}), ([0, 5, 2], {"dtype": dt("int32")}),
        ([1, 0], {}), ([0, 5, 0], {}), ([0], {}), ([3.0], {}), ([-5, 5, 2.5], {}),
        ([0, 5], {"dtype": dt("float16")}), ([0.5, 3], {"dtype": dt("int64")}),
        ([5], {"requires_grad": True, "dtype": dt("float32")}), ([1, 2, 0.3], {"dtype": dt("float64")}),
    ]:
        fn("torch.arange", [], args, kw, tag="arange")
    for name in ["zeros_like", "ones_like", "empty_like", "rand_like", "randn_like"]:
        for x in [inp([2, 3], rg=True), transposed([3, 2], "int64"), sliced([2, 3]),
                  expanded([4, 3], 0), channels_last([2, 3, 2, 2])]:
            fn("torch." + name, [x], [t(0)], tag="like")
            fn("torch." + name, [x], [t(0)], {"dtype": dt("float64"), "requires_grad": True})
    fn("torch.full_like", [transposed([3, 2], "int64")], [t(0), 2.5])
    fn("torch.full_like", [inp([3, 2], rg=True)], [t(0), 7], {"dtype": dt("int32")})
    for name in ["new_zeros", "new_ones", "new_empty"]:
        meth(name, [transposed([3, 2], "int64")], [t(0), tup(2, 5)], tag="new")
        meth(name, [inp([3], "float16", rg=True)], [t(0), 4, 2], {"dtype": dt("float64")})
        meth(name, [inp([3], "float16", rg=True)], [t(0), lst()], {"requires_grad": True})
    meth("new_full", [inp([3], "int32")], [t(0), tup(2,), 1.5])
    meth("new_full", [inp([3])], [t(0), lst(2, 2), True])


# ---------------------------------------------------------------- randomized layouts

import random  # noqa: E402

RNG = random.Random(SEED)


def random_layout(max_ndim=4, dtype=None, rg=None, allow_zero=True):
    """A tensor reached by real view ops (permute, step slicing, expand, unsqueeze) from a
    contiguous base, so its sizes/strides are ones torch code actually produces."""
    ndim = RNG.randint(0, max_ndim)
    sizes = [RNG.choice([1, 2, 3, 4, 5] + ([0] if allow_zero and RNG.random() < 0.3 else []))
             for _ in range(ndim)]
    base = torch.empty([n * RNG.choice([1, 1, 2]) for n in sizes])
    x = base
    for d, n in enumerate(sizes):
        step = x.shape[d] // n if n else 1
        x = x.narrow(d, 0, x.shape[d]) if step <= 1 else x[(slice(None),) * d + (slice(None, None, step),)]
        x = x.narrow(d, 0, n)
    if ndim >= 2 and RNG.random() < 0.6:
        x = x.permute(RNG.sample(range(ndim), ndim))
    if ndim >= 1 and RNG.random() < 0.25:
        d = RNG.randrange(ndim)
        if x.shape[d] == 1:
            shape = list(x.shape)
            shape[d] = RNG.choice([2, 3])
            x = x.expand(shape)
    if RNG.random() < 0.2 and x.dim() < 4:
        x = x.unsqueeze(RNG.randint(0, x.dim()))
    dtype = dtype or RNG.choice(["float32", "float32", "float16", "int64", "bool", "float64"])
    if rg is None:
        rg = dtype in ("float32", "float64") and RNG.random() < 0.4
    return inp(list(x.shape), dtype, list(x.stride()), rg)


def broadcast_partner(spec):
    sizes = list(spec["sizes"])
    drop = RNG.randint(0, len(sizes)) if RNG.random() < 0.5 else 0
    sizes = sizes[drop:]
    sizes = [1 if RNG.random() < 0.3 else n for n in sizes]
    if RNG.random() < 0.2:
        sizes = [RNG.choice([1, 2])] + sizes
    partner = inp(sizes, RNG.choice(["float32", "int32", "float64"]))
    if len(sizes) >= 2 and RNG.random() < 0.5:
        partner = transposed(sizes, partner["dtype"])
    return partner


def random_cases():
    for _ in range(200):
        x = random_layout()
        op = RNG.choice(["exp", "neg", "relu", "sigmoid", "abs", "floor"])
        meth(op, [x], [t(0)], tag="random-unary")
    for _ in range(300):
        x = random_layout()
        y = broadcast_partner(x) if RNG.random() < 0.7 else random_layout()
        if RNG.random() < 0.5:
            x, y = y, x
        op = RNG.choice(["add", "mul", "lt", "maximum", "sub", "div"])
        fn("torch." + op, [x, y], [t(0), t(1)], tag="random-binary")
    for _ in range(100):
        x = random_layout(dtype="float32")
        y = broadcast_partner(x)
        c = broadcast_partner(x)
        c["dtype"] = "bool"
        order = RNG.sample([0, 1, 2], 3)
        ins = [[c, x, y][i] for i in order]
        args = [t(order.index(0)), t(order.index(1)), t(order.index(2))]
        fn("torch.where", ins, args, tag="random-where")
    for _ in range(60):
        x = random_layout()
        fn("torch.clamp", [x, broadcast_partner(x)], [t(0), t(1)], tag="random-clamp")
    for _ in range(150):
        x = random_layout(dtype="float32")
        n = 1
        for v in x["sizes"]:
            n *= v
        shape = []
        rest = n
        while rest > 1 and len(shape) < 4:
            f = RNG.choice([d for d in range(1, rest + 1) if rest % d == 0])
            shape.append(f)
            rest //= f
        if rest != 1 or n == 0:
            shape.append(rest)
        RNG.shuffle(shape)
        if shape and RNG.random() < 0.3:
            shape[RNG.randrange(len(shape))] = -1
        if RNG.random() < 0.3:
            shape.insert(RNG.randint(0, len(shape)), 1)
        meth(RNG.choice(["view", "reshape"]), [x], [t(0), tup(*shape)], tag="random-view")
    for _ in range(150):
        x = random_layout(dtype="float32")
        nd = len(x["sizes"])
        items = []
        dim = 0
        while dim < nd and RNG.random() < 0.8:
            r = RNG.random()
            n = x["sizes"][dim]
            if r < 0.25 and n > 0:
                items.append(RNG.randint(-n, n - 1))
                dim += 1
            elif r < 0.7:
                a = RNG.choice([None, RNG.randint(-n - 1, n + 1)])
                b = RNG.choice([None, RNG.randint(-n - 1, n + 1)])
                c = RNG.choice([None, 1, 2, 3])
                items.append(sl(a, b, c))
                dim += 1
            elif r < 0.85:
                items.append(None)
            else:
                items.append(E)
                dim = nd
        idx = items[0] if len(items) == 1 and RNG.random() < 0.5 else tup(*items)
        fn("operator.getitem", [x], [t(0), idx], tag="random-getitem")
    for _ in range(80):
        x = random_layout()
        nd = len(x["sizes"])
        op = RNG.choice(["sum", "mean", "amax", "argmax", "prod", "any"])
        if nd and RNG.random() < 0.7:
            d = RNG.randint(-nd, nd - 1)
            meth(op, [x], [t(0), d], {"keepdim": RNG.random() < 0.5}, tag="random-reduce")
        else:
            meth(op, [x], [t(0)], tag="random-reduce")
    for _ in range(80):
        a = random_layout(max_ndim=4, dtype="float32", allow_zero=False)
        if not a["sizes"]:
            continue
        k = a["sizes"][-1]
        nb = RNG.randint(1, 4)
        bsizes = [RNG.choice([1, 2, 3]) for _ in range(nb)]
        if nb >= 2:
            bsizes[-2] = k
        else:
            bsizes[0] = k
        b = inp(bsizes) if RNG.random() < 0.5 else transposed(bsizes)
        fn("torch.matmul", [a, b], [t(0), t(1)], tag="random-matmul")
    for _ in range(60):
        x = random_layout(dtype=None, allow_zero=True)
        nd = len(x["sizes"])
        if nd == 0:
            continue
        d = RNG.randrange(nd)
        ys = []
        for _ in range(RNG.randint(1, 3)):
            sizes = list(x["sizes"])
            sizes[d] = RNG.randint(0, 3)
            ys.append(inp(sizes, RNG.choice(["float32", "int64", x["dtype"]])))
        ins = [x] + ys
        fn("torch.cat", ins, [lst(*[t(i) for i in range(len(ins))]), d], tag="random-cat")
    for _ in range(60):
        x = random_layout()
        target = [RNG.choice([1, 2, 3]) for _ in range(RNG.randint(0, 2))]
        for n in x["sizes"]:
            target.append(RNG.choice([-1, n, 3]) if n == 1 else RNG.choice([-1, n]))
        meth("expand", [x], [t(0), tup(*target)], tag="random-expand")
    for _ in range(60):
        x = random_layout()
        nd = len(x["sizes"])
        op = RNG.random()
        if op < 0.4 and nd:
            meth("permute", [x], [t(0), tup(*RNG.sample(range(nd), nd))], tag="random-permute")
        elif op < 0.7 and nd:
            meth("transpose", [x], [t(0), RNG.randint(-nd, nd - 1), RNG.randint(-nd, nd - 1)])
        else:
            meth("unsqueeze", [x], [t(0), RNG.randint(-nd - 1, nd)], tag="random-unsqueeze")
    for _ in range(60):
        x = random_layout(dtype="float32", rg=False)
        y = broadcast_partner(x)
        meth(RNG.choice(["add_", "mul_", "copy_"]), [x, y], [t(0), t(1)], tag="random-inplace")
    for _ in range(80):
        x = random_layout()
        op = RNG.choice(["contiguous", "clone", "float", "long", "half", "flatten", "squeeze"])
        meth(op, [x], [t(0)], tag="random-copy")
        fn("torch.zeros_like", [x], [t(0)], tag="random-like")
    for _ in range(120):
        x = random_layout()
        y = broadcast_partner(x) if RNG.random() < 0.6 else random_layout()
        y["dtype"] = RNG.choice(["int64", "float16", "bool", "int32", "float64", "uint8"])
        y["requires_grad"] = False
        op = RNG.choice(["add", "mul", "eq", "logical_or", "pow", "div", "remainder", "minimum"])
        fn("torch." + op, [x, y], [t(0), t(1)], tag="random-mixed")
    for _ in range(80):
        x = random_layout()
        op = RNG.choice(["sqrt", "sin", "reciprocal", "tanh"])
        fn("torch." + op, [x], [t(0)], tag="random-tofloat")
        fn("torch.pow", [x], [t(0), RNG.choice([2, 0.5, 3.0])], tag="random-pow")
        fn("torch.clamp", [x], [t(0), RNG.choice([0, 0.5, -1])], tag="random-clamp-scalar")
        fn("torch.where", [broadcast_partner(x) | {"dtype": "bool"}, x], [t(0), t(1), 1.5],
           tag="random-where-scalar")
    for _ in range(60):
        x = random_layout(dtype=RNG.choice(["float32", "float64", "float16"]))
        nd = len(x["sizes"])
        fn("torch.softmax", [x], [t(0), RNG.randint(-max(nd, 1), max(nd, 1) - 1)],
           tag="random-softmax")
        if nd:
            k = RNG.randint(1, nd)
            shape = x["sizes"][nd - k:]
            fn("torch.nn.functional.layer_norm", [x], [t(0), tup(*shape)], tag="random-ln")
        fn("torch.nn.functional.dropout", [x], [t(0)], {"p": RNG.choice([0.0, 0.3, 1.0])},
           tag="random-dropout")
    for _ in range(60):
        x = random_layout()
        nd = len(x["sizes"])
        if not nd:
            continue
        d = RNG.randint(-nd, nd - 1)
        n = x["sizes"][d]
        r = RNG.random()
        if r < 0.25:
            meth("split", [x], [t(0), RNG.randint(1, 3), d], tag="random-split")
        elif r < 0.5:
            meth("chunk", [x], [t(0), RNG.randint(1, 4), d], tag="random-chunk")
        elif r < 0.75 and n:
            meth("narrow", [x], [t(0), d, RNG.randint(-n, n - 1), RNG.randint(0, 1)],
                 tag="random-narrow")
        elif n:
            meth("select", [x], [t(0), d, RNG.randint(-n, n - 1)], tag="random-select")
    for _ in range(60):
        x = random_layout()
        nd = len(x["sizes"])
        meth("squeeze", [x], [t(0)] + ([RNG.randint(-nd, nd - 1)] if nd else []),
             tag="random-squeeze")
        if nd:
            a = RNG.randint(0, nd - 1)
            meth("flatten", [x], [t(0), a, RNG.randint(a, nd - 1)], tag="random-flatten")
        y = inp(x["sizes"], x["dtype"])
        fn("torch.stack", [x, y], [lst(t(0), t(1)), RNG.randint(-nd - 1, nd)], tag="random-stack")
    for _ in range(80):
        a = random_layout(dtype="float32", allow_zero=False)
        b = random_layout(dtype="float32", allow_zero=False)
        if not a["sizes"] or not b["sizes"]:
            continue
        bs = list(b["sizes"])
        if len(bs) >= 2:
            bs[-2] = a["sizes"][-1]
        else:
            bs[0] = a["sizes"][-1]
        b = inp(bs, "float32", None, RNG.random() < 0.5)
        if len(bs) >= 2 and RNG.random() < 0.5:
            b = transposed(bs, "float32", b["requires_grad"])
        fn("torch.matmul", [a, b], [t(0), t(1)], tag="random-matmul2")
        fn("torch.matmul", [b, a], [t(0), t(1)], tag="random-matmul2")
    for _ in range(60):
        x = random_layout()
        meth("to", [x], [t(0), dt(RNG.choice(["float32", "int64", "float16", "bool"]))],
             tag="random-to")
        fn("torch.empty_like", [x], [t(0)], tag="random-like")


CONV_RNG = random.Random(SEED + 1)


def random_conv_cases():
    """Convolution, pooling and batch norm over batched 4-d inputs in the layouts view ops
    produce. A separate generator keeps the other randomized cases unchanged."""
    R = CONV_RNG
    for _ in range(80):
        n, c, h, w = (R.choice([1, 2, 3]), R.choice([1, 2, 3, 4]), R.randint(1, 7),
                      R.randint(1, 7))
        perm = R.choice([[0, 1, 2, 3], [0, 1, 2, 3], [0, 2, 3, 1], [0, 3, 1, 2], [2, 3, 0, 1],
                         [1, 0, 2, 3]])
        dtype = R.choice(["float32", "float32", "float64", "bfloat16"])
        x = permuted([n, c, h, w], perm, dtype, dtype != "bfloat16" and R.random() < 0.3)
        g = R.choice([1, 1, c])
        cout = g * R.randint(1, 3)
        k = (R.randint(1, 3), R.randint(1, 3))
        wt = inp([cout, c // g, *k], dtype) if R.random() < 0.6 else \
            channels_last([cout, c // g, *k], dtype)
        kw = {"stride": R.randint(1, 2), "padding": R.randint(0, 1), "dilation": R.randint(1, 2),
              "groups": g}
        fn("torch.nn.functional.conv2d", [x, wt], [t(0), t(1)], kw, tag="random-conv2d")
        kk = R.randint(1, 3)
        fn("torch.nn.functional.max_pool2d", [x], [t(0), kk],
           {"stride": R.randint(1, 3), "padding": R.randint(0, kk // 2),
            "ceil_mode": R.random() < 0.5}, tag="random-max_pool2d")
        fn("torch.nn.functional.adaptive_avg_pool2d", [x],
           [t(0), R.choice([1, tup(R.randint(1, 4), R.randint(1, 4))])], tag="random-aap2d")
        stats = [inp([c], dtype), inp([c], dtype)]
        fn("torch.nn.functional.batch_norm", [x] + stats, [t(0), t(1), t(2)],
           {"training": R.random() < 0.5}, tag="random-batch_norm")


def generate():
    unary_cases()
    binary_cases()
    inplace_binary_cases()
    where_clamp_cases()
    reduction_cases()
    matmul_cases()
    view_cases()
    getitem_cases()
    join_cases()
    nn_cases()
    batch_norm_cases()
    conv_cases()
    pool_cases()
    convert_cases()
    factory_cases()
    for _ in range(ROUNDS):
        random_cases()
        random_conv_cases()


def main():
    generate()
    out = []
    gaps = 0
    meta_diff = 0
    for i, c in enumerate(CASES):
        exp, note = expected(c)
        if exp is None:
            continue
        c = dict(c)
        c["id"] = i
        c["expected"] = exp
        if note:
            c["note"] = note
            gaps += 1
        elif "error" not in exp:
            meta = run(c, "meta")
            if meta != exp:
                c["meta_differs"] = meta
                meta_diff += 1
        out.append(c)
    with open(OUT, "w") as f:
        json.dump({"torch": torch.__version__, "cases": out}, f, separators=(",", ":"))
        f.write("\n")
    errors = sum("error" in c["expected"] for c in out)
    print(f"{len(out)} cases ({errors} expect an error, {gaps} from meta for CPU kernel gaps, "
          f"{meta_diff} where meta tensors disagree with CPU) -> {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
