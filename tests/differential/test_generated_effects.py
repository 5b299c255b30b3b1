"""Hypothesis-generated programs with side effects (issue 13, "the harness"): the statements of
``programs.test_generated`` (tensor ops, Python values, containers, branches, loops, graph
breaks) plus in-place ops on inputs and on views of inputs, optimizer-like parameter updates
under ``no_grad``, container and attribute mutation of inputs and of a module global, random ops
(``torch.rand`` / ``randn_like`` / dropout after the harness's seed), exceptions raised and caught
in the frame, ``torch.manual_seed`` inside the frame, ``locals()`` reads and ops that fail at run
time inside ``try``. Each program runs eagerly and through torchferro (counting backend) on two
input sets and is compared by ``programs.harness.check_results``: results, inputs after the call
(tensors, lists, dicts, attributes), the global container, stdout, RNG state, modes, aliasing.

The statement classes torchferro gets wrong today are generated behind ``EFFECT_CLASSES`` and
tested by their own xfail(strict) test each, so that a fix turns its test into an XPASS failure
(then the class moves into ``WORKING``). Examples per run: ``TORCHFERRO_GENERATED_EXAMPLES``
(default 1000 for the working classes), with a fixed seed (``derandomize=True``).

Environment classes (``test_generated_environment``) change what a call sees rather than adding a
statement: tensor-subclass inputs with ``__torch_function__``, the first call under
``torch.inference_mode()`` and the second under ``torch.no_grad()``, ``.data`` writes of weights
between calls, torch functions and ``torch.Tensor`` methods replaced between calls, and the
default dtype changed between calls (``TORCHFERRO_ENV_EXAMPLES`` per class and backend)."""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import itertools
import os

import hypothesis.strategies as st
import pytest
import torch
import torch.nn.functional as F
from hypothesis import HealthCheck, Phase, event, given, note, settings
from programs.harness import Program, _call, check_results
from programs.test_generated import NAMESPACE, ProgramWriter


# Statement classes that torchferro gets right today, and those it does not (with the reason).
WORKING = (
    "inplace_input",
    "inplace_view",
    "param_update",
    "rng",
    "container",
    "attr",
    "exception",
    "manual_seed",
    "aliasing",
    "op_error_caught",
    "locals",
    "iterator",
    "comprehension",
    "identity",
    "views",
    "generator_cm",
    "ordering",
    "inference_mode",
    "mode_decorator",
    "user_container",
    "frozen_keys",
    "attr_channel",
    "out_resize",
    "nonlocal",
    "back_refs",
)
FAILING: dict[str, str] = {}
EXAMPLES = int(os.environ.get("TORCHFERRO_GENERATED_EXAMPLES", "1000"))


class Holder:
    """An input object whose attributes the program writes."""

    def __init__(self, t):
        self.t = t
        self.count = 0


@contextlib.contextmanager
def _cm(log, k):
    log.append(("enter", k))
    try:
        yield k + 1
    finally:
        log.append(("exit", k))


class _Registry(collections.OrderedDict):
    """An ``OrderedDict`` subclass whose item setter scales what it stores (``super()`` into the
    builtin) and whose method reads through its own ``__getitem__``."""

    def __setitem__(self, k, v):
        super().__setitem__(k, v * 2)

    def total(self):
        return sum(self[k] for k in self)


class _Doubled(dict):
    """A dict subclass whose item reads go through an override."""

    def __getitem__(self, k):
        return super().__getitem__(k) + 1


class _Shifted(list):
    """A list subclass whose ``append`` stores a shifted value (``super()`` into the builtin)."""

    def append(self, v):
        super().append(v - 1)


class _Ranked:
    """Ordered through `__lt__` only."""

    def __init__(self, rank, t):
        self.rank = rank
        self.t = t

    def __lt__(self, other):
        return self.rank < other.rank


class _Pulled:
    """A user iterator (`__iter__` returns self) whose every `__next__` logs how far it got."""

    def __init__(self, items, log):
        self.items = items
        self.log = log
        self.i = 0

    def __iter__(self):
        return self

    def __next__(self):
        if self.i >= len(self.items):
            raise StopIteration
        self.i += 1
        self.log.append(self.i)
        return self.items[self.i - 1]


class _Indexed:
    """The old sequence protocol (`__getitem__` only), logging each index it is asked for."""

    def __init__(self, items, log):
        self.items = items
        self.log = log

    def __getitem__(self, i):
        self.log.append(i)
        return self.items[i]


def _make_counter():
    """A counter closed over by functions made outside the frame: ``bump`` writes the cell
    (``nonlocal``), ``peek`` reads it (session 26: the write broke the graph; now it is a cell
    write after the graph that later reads in the trace see)."""
    count = 0

    def bump(k):
        nonlocal count
        count += k
        return count

    def peek():
        return count

    return bump, peek


class _Node:
    """An object made in the frame that points back at what holds it (review33)."""

    def __init__(self, value, link):
        self.value = value
        self.link = link


@dataclasses.dataclass(frozen=True)
class _Cfg:
    """A frozen config: hashed and compared by its fields."""

    n: int = 1
    tag: str = "p"


class EffectWriter(ProgramWriter):
    """``ProgramWriter`` with side-effect statements of the enabled classes."""

    PARAMS = "x, y, n, flag, buf, p, ilst, idct, obj"

    def __init__(self, data, allow_breaks: bool, classes: tuple[str, ...]):
        super().__init__(data, allow_breaks)
        self.classes = classes
        self.kinds_used: set[str] = set()

    def statement(self, indent: str, depth: int) -> None:
        if not self.draw(st.booleans()):
            super().statement(indent, depth)
            return
        kind = self.draw(st.sampled_from(self.classes))
        self.kinds_used.add(kind)
        emit = lambda line: self.lines.append(indent + line)
        t = self.fresh("t")
        if kind == "inplace_input":
            op = self.draw(st.sampled_from(["mul_(0.5)", "add_(1)", "clamp_(-1, 1)"]))
            emit(f"{self.draw(st.sampled_from(['x', 'y']))}.{op}")
        elif kind == "inplace_view":
            view = self.draw(
                st.sampled_from(["x[1:]", "y.t()[0]", "x.view(-1)[:5]", "y[:, ::2]"])
            )
            op = self.draw(st.sampled_from(["add_(1)", "mul_(-2)", "zero_()"]))
            emit(f"{view}.{op}")
        elif kind == "param_update":
            emit("with torch.no_grad():")
            g = self.tensor_expr()
            emit(f"    p.add_({g}, alpha=-0.1)")
            if self.draw(st.booleans()):
                emit("    p.mul_(0.9)")
        elif kind == "rng":
            expr = self.draw(
                st.sampled_from(
                    [
                        "torch.rand(3, 4)",
                        "torch.randn_like({})",
                        "F.dropout({}, 0.5, training=True)",
                        "torch.empty(3, 4).bernoulli_(0.5)",
                    ]
                )
            )
            emit(f"{t} = {expr.format(self.t())} + {self.t()}")
            self.tensors.append(t)
        elif kind == "container":
            which = self.draw(st.integers(0, 3))
            if which == 0:
                emit(f"ilst.append({self.t()} * 2)")
            elif which == 1:
                emit(f"idct['k{self.draw(st.integers(0, 2))}'] = {self.t()}")
            elif which == 2:
                emit(f"G.append({self.i()})")
            else:
                emit("if ilst:")
                emit(f"    {t} = ilst.pop() + {self.t()}")
                emit("else:")
                emit(f"    {t} = {self.t()}")
                self.tensors.append(t)
        elif kind == "attr_channel":
            # An attribute written through a side door (the instance dict, vars(), setattr)
            # and read back as an attribute in the same call.
            write = self.draw(
                st.sampled_from(
                    [
                        "obj.__dict__['count'] = obj.count + {c}",
                        "vars(obj)['count'] = obj.count * {c}",
                        "setattr(obj, 'count', obj.count - {c})",
                        "obj.__dict__['t'] = obj.t + {c}",
                        "vars(obj)['t'] = obj.t * {c}",
                    ]
                )
            )
            emit(write.format(c=self.const()))
            emit(f"{t} = obj.t * obj.count + {self.t()}")
            self.tensors.append(t)
        elif kind == "out_resize":
            # `out=` a tensor of other sizes: the op resizes it in place.
            emit(
                f"{t} = torch.empty({self.draw(st.sampled_from(['0', '2', '3, 4', '12']))})"
            )
            emit(f"torch.add({self.t()}.detach(), 1, out={t})")
            emit(f"{t} = {t} * len({t}.shape)")
            self.tensors.append(t)
        elif kind == "attr":
            emit("obj.count += 1")
            emit(f"obj.t = obj.t + {self.t()}")
            emit(f"{t} = obj.t * obj.count")
            self.tensors.append(t)
        elif kind == "exception":
            c = self.const()
            emit("try:")
            emit(f"    if {self.i()} > {c}:")
            emit(f"        raise ValueError('boom {c}')")
            emit(f"    {t} = {self.t()} + 1")
            emit("except ValueError as e:")
            emit(f"    {t} = {self.t()} - len(str(e))")
            self.tensors.append(t)
        elif kind == "aliasing":
            # Values whose storage relations eager fixes: a clone of an input or of a value also
            # returned, an `out=` result, a view chain.
            src = self.draw(st.sampled_from(["x", "y", self.t()]))
            expr = self.draw(
                st.sampled_from(
                    [
                        "{}.clone()",
                        "{}.clone().clone()",
                        # `out=` refuses a source that requires grad (a mode decorator's).
                        "torch.add({}.detach(), 1, out=torch.empty(3, 4))",
                        # `reshape`: a broadcast source has no flat view.
                        "{}.reshape(-1).view(3, 4)",
                        "{}.detach()",
                        "{}.contiguous()",
                    ]
                )
            )
            emit(f"{t} = {expr.format(src)}")
            self.tensors.append(t)
        elif kind == "views":
            # Results that alias in eager's particular ways (an argument itself, a view of an
            # input or of an intermediate, or no view where the inductor writes through a
            # reshape), and writes through such aliases that must reach their base.
            src = self.draw(st.sampled_from(["x", "y", self.t()]))
            other = self.draw(st.sampled_from(["x", "y", self.t()]))
            if self.draw(st.booleans()):
                expr = self.draw(
                    st.sampled_from(
                        [
                            "{s}.view(12).view(3, 4)",
                            "{s}.t().t()",
                            "torch.broadcast_tensors({s}, {o})[0]",
                            "torch.broadcast_tensors({s}, {o}[0])[1]",
                            "{s}.expand_as({o})",
                            "{s}.view_as({o})",
                            "{s}.reshape_as({o})",
                            "{s}.type_as({o})",
                            "torch.as_tensor({s})",
                            "torch.atleast_2d({s})",
                            "F.dropout({s}, 0.5, training=False)",
                            "{s}.sum(-1, keepdim=True).expand(3, 4)",
                            "{s}.unbind(0)[1].expand(3, 4)",
                            "{s}.split(2, 1)[0].repeat(1, 2)",
                            "torch.cat({s}.chunk(2, 1)[::-1], 1)",
                            "({s} * 2).sum(0, keepdim=True) + {o}",
                            "({s} @ {o}.t()).sum(-1, keepdim=True) * {o}",
                        ]
                    )
                )
                emit(f"{t} = {expr.format(s=src, o=other)}")
                self.tensors.append(t)
            else:
                write = self.draw(
                    st.sampled_from(
                        [
                            "{s}.split(2, 1)[1].mul_(2)",
                            "{s}.chunk(2, 1)[0].add_(1)",
                            "{s}.unbind(0)[1].zero_()",
                            "torch.broadcast_tensors({s}, {o})[0].add_(1)",
                            "torch.as_tensor({s}).mul_(0.5)",
                            "{s}.view_as({o}).sub_(1)",
                        ]
                    )
                )
                emit(write.format(s=src, o=other))
        elif kind == "identity":
            # Which inputs are one object: `x is y` and identity-keyed lookups.
            test = self.draw(
                st.sampled_from(["x is y", "x is not y", "id(x) == id(y)"])
            )
            emit(f"{t} = {self.t()} + 1 if {test} else {self.t()} - 1")
            self.tensors.append(t)
        elif kind == "manual_seed":
            emit(f"torch.manual_seed({self.draw(st.integers(0, 3))})")
            emit(f"{t} = torch.rand(3, 4) + {self.t()}")
            self.tensors.append(t)
        elif kind == "locals":
            n = self.fresh("n")
            emit(f"{n} = len(locals()) + ('x' in locals())")
            self.ints.append(n)
        elif kind == "iterator" and self.draw(st.booleans()):
            # Iteration that sees what the consumer does (session 14 review): a loop over a
            # list that it grows (eager's list iterator reads the list at its index), and a
            # generator expression stored, then pulled after the variable it reads is rebound.
            acc = self.fresh("acc")
            shape = self.draw(st.sampled_from(["list", "genexpr", "user"]))
            if shape == "user":
                # A user iterator object pulled by a loop (directly or through zip /
                # enumerate), its `__next__` logging into a list the body reads: eager runs one
                # `__next__` per pass, interleaved with the body.
                log, v = self.fresh("log"), self.fresh("v")
                cls = self.draw(st.sampled_from(["_Pulled", "_Indexed"]))
                emit(f"{log} = []")
                items = f"[{self.t()}, {self.t()} * 2, {self.t()} + 1]"
                src = f"{cls}({items}, {log})"
                # Also through the lazy itertools stand-ins (session 15: `groupby` drained
                # its input when made): each pulls as far as CPython's does.
                how = self.draw(
                    st.sampled_from(
                        ["for", "zip", "enumerate", "chain", "islice", "groupby"]
                    )
                )
                item = v
                if how == "zip":
                    src = f"zip({src}, (1.0, 2.0))"
                    item = f"{v}[0]"
                elif how == "enumerate":
                    src = f"enumerate({src})"
                    item = f"{v}[1]"
                elif how == "chain":
                    src = f"itertools.chain({src}, [x])"
                elif how == "islice":
                    src = f"itertools.islice({src}, 1, None)"
                elif how == "groupby":
                    # Groups of equal row counts: the first two items share one.
                    src = f"itertools.groupby({src}, key=len)"
                    item = f"len({log}) * sum({v}[1])"
                emit(f"{acc} = x * 0")
                emit(f"for {v} in {src}:")
                emit(f"    {acc} = {acc} + {item} * len({log})")
                if self.draw(st.booleans()):
                    emit(f"    if len({log}) == {self.draw(st.integers(1, 3))}:")
                    emit("        break")
                emit(f"{t} = {acc} + len({log})")
            elif shape == "list":
                lst, v = self.fresh("lst"), self.fresh("v")
                emit(f"{lst} = [{self.t()}, {self.t()} * 2]")
                emit(f"{acc} = x * 0")
                emit(f"for {v} in {lst}:")
                # No graph break in this body: the resumed loop would walk a copy of the items
                # left (test_live_iteration's strict xfail).
                emit(f"    {acc} = {acc} + {v}")
                emit(f"    if len({lst}) < {self.draw(st.integers(2, 5))}:")
                emit(f"        {lst}.append({v} * 2)")
                emit(f"{t} = {acc} + len({lst})")
            else:
                g, k = self.fresh("g"), self.fresh("k")
                emit(f"{k} = {self.t()}")
                emit(f"{g} = (r * {k} for r in [{self.t()}, {self.t()} + 1])")
                emit(f"{k} = {k} + {self.const()}")
                emit(
                    f"{acc} = next({g})"
                    if self.draw(st.booleans())
                    else f"{acc} = x * 0"
                )
                emit(f"{t} = {acc} + sum({g})")
            self.tensors.append(t)
        elif kind == "iterator":
            # A partly consumed iterator taken whole by a statement: the rest is consumed.
            it, acc = self.fresh("it"), self.fresh("acc")
            emit(f"{it} = iter([{self.t()}, {self.t()} * 2, {self.t()} + 1])")
            emit(f"next({it})")
            how = self.draw(
                st.sampled_from(["extend", "iadd", "star", "slice", "list"])
            )
            if how == "extend":
                emit(f"{acc} = [x * 0]")
                emit(f"{acc}.extend({it})")
            elif how == "iadd":
                emit(f"{acc} = [x * 0]")
                emit(f"{acc} += {it}")
            elif how == "star":
                emit(f"{acc} = [x * 0, *{it}]")
            elif how == "slice":
                emit(f"{acc} = [x, x, x]")
                emit(f"{acc}[1:2] = {it}")
            else:
                emit(f"{acc} = list({it})")
            emit(f"{t} = sum({acc}) + len(list({it}))")
            self.tensors.append(t)
        elif kind == "comprehension":
            # On 3.12 comprehensions are inlined: a break in the body ends the graph before the
            # whole comprehension, which runs natively (its bytecode copied with its cleanup).
            brk = 'print(end="") or ' if self.allow_breaks else ""
            shape = self.draw(
                st.sampled_from(["list", "nested", "dict", "try", "statement"])
            )
            if shape == "list":
                emit(f"{t} = torch.stack([{brk}r * {self.i()} for r in {self.t()}])")
            elif shape == "nested":
                emit(
                    f"{t} = torch.stack([torch.stack([{brk}r * j for j in range(2)]).sum(0)"
                    f" for r in {self.t()}])"
                )
            elif shape == "dict":
                d = self.fresh("d")
                emit(f"{d} = {{i: {brk}r + i for i, r in enumerate({self.t()})}}")
                emit(f"{t} = torch.stack(list({d}.values()))")
            elif shape == "try":
                emit("try:")
                emit(
                    f"    {t} = torch.stack([{brk}r - {self.i()} for r in {self.t()}])"
                )
                emit("except ValueError:")
                emit(f"    {t} = {self.t()}")
            else:
                acc = self.fresh("acc")
                emit(f"{acc} = []")
                emit(f"[{acc}.append({brk}r * 2) for r in {self.t()}]")
                emit(f"{t} = torch.stack({acc})")
            self.tensors.append(t)
        elif kind == "generator_cm":
            # A @contextlib.contextmanager traced through its generator; the log is G.
            k = self.fresh("k")
            emit(f"with _cm(G, {self.i()}) as {k}:")
            emit(f"    {t} = {self.t()} * {k}")
            self.tensors.append(t)
        elif kind == "ordering":
            # min/max/sorted over user objects compared by their own `__lt__`.
            rs = self.fresh("rs")
            emit(f"{rs} = [_Ranked(k, {self.t()} * k) for k in (3, 1, {self.i()}, 2)]")
            how = self.draw(st.sampled_from(["min", "max", "sorted", "reverse"]))
            if how in ("min", "max"):
                emit(f"{t} = {how}({rs}).t")
            elif how == "sorted":
                emit(f"{t} = sorted({rs})[1].t")
            else:
                emit(f"{t} = sorted({rs}, reverse=True)[0].t")
            self.tensors.append(t)
        elif kind == "inference_mode":
            # An inference-mode region (nested `inference_mode(False)` too): its result is an
            # inference tensor, cloned outside the region into a normal one (eager refuses
            # inference tensors in autograd-recorded ops and in-place updates outside).
            r = self.fresh("r")
            shape = self.draw(st.sampled_from(["plain", "nested", "query", "off"]))
            emit("with torch.inference_mode():")
            if shape == "nested":
                emit("    with torch.inference_mode(False):")
                emit(f"        {r} = {self.tensor_expr()}")
                emit(f"    {r} = {r} * 2 + {self.t()}")
            elif shape == "query":
                emit(f"    {r} = {self.t()} * (torch.is_inference_mode_enabled() + 1)")
            elif shape == "off":
                emit(f"    {r} = {self.tensor_expr()}")
                emit("with torch.inference_mode(False):")
                emit(f"    {r} = {r} + {self.t()}")
            else:
                emit(f"    {r} = {self.tensor_expr()}")
            emit(f"{t} = {r}.clone()")
            self.tensors.append(t)
        elif kind == "mode_decorator":
            # A grad, autocast or inference-mode context called on a function in the frame
            # (`torch.no_grad()(fn)`): the call runs the function inside the mode.
            f = self.fresh("f")
            deco = self.draw(
                st.sampled_from(
                    [
                        "torch.no_grad()",
                        "torch.enable_grad()",
                        "torch.set_grad_enabled(False)",
                        "torch.inference_mode()",
                        "torch.autocast('cpu', dtype=torch.bfloat16)",
                    ]
                )
            )
            body = self.draw(
                st.sampled_from(
                    [
                        "lambda a: a * 2 + p",
                        "lambda a: (a @ torch.ones(4, 4)) / 4",
                        "_helper_pure",
                    ]
                )
            )
            emit(f"{f} = {deco}({body})")
            emit(f"{t} = {f}({self.t()}).float().clone()")
            if self.draw(st.booleans()):
                emit(f"{t} = {t} * {t}.requires_grad")
            self.tensors.append(t)
        elif kind == "user_container":
            # Instances of user subclasses of OrderedDict, dict and list made in the frame, with
            # overridden methods and `super()` calls; some escape through `dct`.
            c = self.fresh("c")
            which = self.draw(st.sampled_from(["registry", "doubled", "shifted"]))
            if which == "registry":
                emit(f"{c} = _Registry()")
                emit(f"{c}['a'] = {self.t()}")
                emit(f"{c}['b'] = {self.t()}")
                emit(f"{c}.move_to_end('a')")
                emit(f"{t} = {c}.total() + {c}['a']")
            elif which == "doubled":
                emit(f"{c} = _Doubled(k={self.t()})")
                emit(f"{c}['m'] = {self.t()}")
                emit(f"{t} = {c}['k'] + {c}.get('m') + len({c})")
            else:
                emit(f"{c} = _Shifted([{self.t()}])")
                emit(f"{c}.append({self.t()})")
                emit(f"{c}.extend([{self.t()}])")
                emit(f"{t} = {c}[0] + {c}[-1] + {c}.pop(1)")
            if self.draw(st.booleans()):
                # Escapes: rebuilt after the graph as its own class.
                emit(f"dct['{c}'] = {c}")
            self.tensors.append(t)
        elif kind == "frozen_keys":
            # Frozen dataclass instances made in the frame as dict keys and set elements,
            # looked up by equal new instances; the dict may escape through `dct`.
            d = self.fresh("d")
            a, b = self.draw(st.integers(1, 3)), self.draw(st.integers(1, 3))
            emit(f"{d} = {{_Cfg({a}): {self.t()}, _Cfg({b}, 'q'): {self.t()}}}")
            probe = self.draw(
                st.sampled_from(
                    [
                        f"_Cfg({self.draw(st.integers(1, 3))})",
                        "_Cfg(2, 'q')",
                        f"_Cfg({self.i()} % 3)",
                    ]
                )
            )
            how = self.draw(st.sampled_from(["get", "in", "set", "hash", "store"]))
            if how == "get":
                emit(f"{t} = {d}.get({probe}, {self.t()}) + len({d})")
            elif how == "in":
                emit(f"{t} = {self.t()} * (2.0 if {probe} in {d} else 0.5)")
            elif how == "set":
                emit(f"{t} = {self.t()} + len({{_Cfg({a}), _Cfg({b}), {probe}}})")
            elif how == "hash":
                emit(f"{t} = {self.t()} + (hash({probe}) == hash(_Cfg({a})))")
            else:
                emit(f"{d}[{probe}] = {self.t()}")
                emit(f"{t} = sum({d}.values()) + len({d})")
            if self.draw(st.booleans()):
                emit(f"dct['{d}'] = {d}")
            self.tensors.append(t)
        elif kind == "nonlocal":
            emit(f"{t} = {self.t()} * _bump({self.draw(st.integers(1, 3))})")
            if self.draw(st.booleans()):
                emit("G.append(_peek())")
            self.tensors.append(t)
        elif kind == "back_refs":
            # Values made in the frame that refer back to each other (review33: the rebuild
            # after the graph made a list, dict or function before the contents that refer back
            # to it, "a shared value was rebuilt out of order"); they escape through the
            # returned `dct`, the input dict or object, or the global list, or stay local (and
            # are live at a later break).
            c, o = self.fresh("c"), self.fresh("o")
            shape = self.draw(
                st.sampled_from(
                    ["registry", "children", "self_list", "self_dict", "recursive"]
                )
            )
            if shape == "registry":
                emit(f"{c} = {{'t': {self.t()}}}")
                emit(f"{o} = _Node({self.t()} * 2, {c})")
                emit(f"{c}['o'] = {o}")
                emit(f"{t} = {o}.value + {o}.link['t']")
            elif shape == "children":
                emit(f"{c} = []")
                emit(f"{c}.append(_Node({self.t()}, {c}))")
                emit(f"{c}.append(_Node({self.t()} + 1, {c}))")
                emit(f"{t} = {c}[0].value + {c}[1].link[0].value * len({c})")
            elif shape == "self_list":
                emit(f"{c} = [{self.t()}]")
                emit(f"{c}.append({c})")
                emit(f"{t} = {c}[-1][0] * len({c})")
            elif shape == "self_dict":
                emit(f"{c} = {{'t': {self.t()}}}")
                emit(f"{c}['me'] = {c}")
                emit(f"{t} = {c}['me']['t'] + 1")
            else:
                # A recursive local function (its cell holds the function itself), kept in an
                # object as transformers keeps `smart_apply` on a class.
                src, k = self.t(), self.fresh("k")
                emit(f"def {c}({k}):")
                emit(f"    return {src} if {k} <= 0 else {c}({k} - 1) * 0.5")
                emit(f"{o} = _Node({self.t()}, {c})")
                emit(f"{t} = {o}.link({self.draw(st.integers(0, 2))}) + {o}.value")
            escape = {
                "dct": f"dct['{c}'] = {c}",
                "idct": f"idct['{c}'] = {c}",
                "G": f"G.append({c})",
                "obj": f"obj.link = {c}",
                "none": None,
            }[self.draw(st.sampled_from(["dct", "idct", "G", "obj", "none"]))]
            if escape is not None:
                emit(escape)
            self.tensors.append(t)
        elif kind == "op_error_caught":
            emit("try:")
            emit(
                # Three rows, as the handler's value and every tensor of the program have.
                f"    {t} = torch.index_select({self.t()}, 0, torch.tensor([{self.i()}] * 3))"
            )
            emit("except (IndexError, RuntimeError):")
            emit(f"    {t} = {self.t()} * 3")
            self.tensors.append(t)


def _inputs(n: int, flag: bool, alias=None):
    # ``alias``: the input set (seed) in which ``y`` is ``x`` itself, one tensor passed twice.
    def make(r):
        import io

        x, y = r.randn(3, 4), r.randn(3, 4)
        return (
            x,
            x if r.seed == alias else y,
            n,
            flag,
            io.StringIO(),
            r.randn(3, 4, requires_grad=True),
            [r.randn(3, 4)],
            {"k0": r.randn(3, 4)},
            Holder(r.randn(3, 4)),
        )

    return make


_ids = itertools.count()


def run_generated(
    data, allow_breaks, n, flag, classes, backend=None, alias=None
) -> None:
    writer = EffectWriter(data, allow_breaks, classes)
    src = writer.source(data.draw(st.integers(3, 10), label="statements"))
    note(src)
    event(f"kinds: {sorted(writer.kinds_used)}")
    ns = dict(
        NAMESPACE,
        G=[],
        Holder=Holder,
        _cm=_cm,
        _Ranked=_Ranked,
        _Registry=_Registry,
        _Doubled=_Doubled,
        _Shifted=_Shifted,
        _Pulled=_Pulled,
        _Indexed=_Indexed,
        _Cfg=_Cfg,
        _Node=_Node,
        itertools=itertools,
    )
    ns["_bump"], ns["_peek"] = _make_counter()
    exec(compile(src, f"<effects-{next(_ids)}>", "exec"), ns)  # noqa: S102
    fn = ns["generated"]
    p = Program("generated", fn, _inputs(n, flag, alias), graphs=-1, state=("G",))
    import torchferro
    from conftest import CountingBackend

    torchferro.compiler.reset()
    eager = [_call(p, fn, fn, s) for s in (0, 1)]
    ns["G"].clear()
    ns["_bump"].__closure__[0].cell_contents = 0  # the compiled runs count from 0 too
    compiled = torchferro.compile(fn, backend=backend or CountingBackend())
    try:
        actual = [_call(p, fn, compiled, s) for s in (0, 1)]
    finally:
        torch.set_grad_enabled(True)
        torchferro.compiler.reset()
    check_results(p, eager, actual)


_common = {
    "deadline": None,
    "derandomize": True,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
}
_args = {
    "data": st.data(),
    "allow_breaks": st.sampled_from([False, True, True]),
    "n": st.integers(-2, 4),
    "flag": st.booleans(),
}


@settings(max_examples=EXAMPLES, **_common)
@given(**_args)
def test_generated_effects(data, allow_breaks, n, flag):
    run_generated(data, allow_breaks, n, flag, WORKING)


@settings(max_examples=40, **_common)
@given(**_args)
def test_generated_aliasing_through_the_inductor(data, allow_breaks, n, flag):
    # The inductor lowers `clone` to its operand and reuses buffers: the class of bugs where an
    # output shared storage with an input or another output (`x.clone()` returned `x`).
    run_generated(
        data,
        allow_breaks,
        n,
        flag,
        ("aliasing", "inplace_input", "views"),
        backend="inductor",
    )


@settings(max_examples=60, **_common)
@given(**_args, alias=st.sampled_from([0, 1]))
def test_generated_one_tensor_passed_twice(data, allow_breaks, n, flag, alias):
    # `x` and `y` are one object in one input set and two in the other: a graph traced for one
    # must not answer for the other (`x is y`, writes through `x` read through `y`).
    run_generated(data, allow_breaks, n, flag, WORKING, alias=alias)


@settings(max_examples=20, **_common)
@given(**_args, alias=st.sampled_from([0, 1]))
def test_generated_one_tensor_passed_twice_through_the_inductor(
    data, allow_breaks, n, flag, alias
):
    run_generated(
        data,
        allow_breaks,
        n,
        flag,
        ("aliasing", "inplace_input", "identity"),
        backend="inductor",
        alias=alias,
    )


@settings(
    max_examples=int(os.environ.get("TORCHFERRO_BACK_REF_EXAMPLES", "150")), **_common
)
@given(**_args)
def test_generated_back_references(data, allow_breaks, n, flag):
    """Only values that refer back to each other, among the base statements (review33)."""
    run_generated(data, allow_breaks, n, flag, ("back_refs",))


def _failing_class_test(kind: str):
    # A failing class stops at its first failing program: no shrinking, a few examples.
    @settings(max_examples=60, phases=[Phase.explicit, Phase.generate], **_common)
    @given(**_args)
    def test(data, allow_breaks, n, flag):
        run_generated(data, allow_breaks, n, flag, (kind,))

    return test


@pytest.mark.parametrize(
    "kind",
    [
        pytest.param(k, marks=pytest.mark.xfail(strict=True, reason=reason))
        for k, reason in FAILING.items()
    ],
)
def test_generated_failing_class(kind):
    _failing_class_test(kind)()


# ---------------------------------------------------------------------------------------------
# Environment classes: what changes between the two calls of one compiled function, or what the
# inputs are, rather than a statement. Each example draws a program (the working statement
# classes plus statements that read the changed state) and the change, runs it eagerly and
# through torchferro, and compares as above; where the base program has no graph break, the
# number of graphs torchferro compiles may not exceed torch.compile's.


class Tagged(torch.Tensor):
    """A subclass whose ``__torch_function__`` keeps its type and turns ``sin`` into ``cos``."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if func is torch.sin or func is torch.Tensor.sin:
            func = torch.cos
        return super().__torch_function__(func, types, args, kwargs or {})


def _new_state(seed: int) -> dict:
    """The module globals an environment program reads: weights written through ``.data``
    between calls, a layer called under inference mode."""
    g = torch.Generator().manual_seed(seed)
    lin = torch.nn.Linear(4, 4)
    with torch.no_grad():
        lin.weight.copy_(torch.randn(4, 4, generator=g))
        lin.bias.copy_(torch.randn(4, generator=g))
    return {
        "W": torch.randn(3, 4, generator=g),
        "W4": torch.randn(4, 4, generator=g),
        "Wc": torch.randn(2, 1, 3, 3, generator=g),
        "lin": lin,
    }


# Statements that read what each environment class changes ({t}: a tensor in scope).
ENV_STATEMENTS = {
    "tensor_subclass": [
        "torch.sin({t}) * 2",
        "{t}.sin() + {t}",
        "torch.cos({t}) - 1",
        "({t} + 1).sum(0, keepdim=True) * {t}",
    ],
    "inference_then_no_grad": [
        "lin({t})",
        "F.linear({t}, W4) + W",
        "{t}.relu() * W",
    ],
    "data_write": [
        "{t} * W",
        "F.linear({t}, W4)",
        "F.conv2d({t}.view(1, 1, 3, 4), Wc, padding=1).sum(1)[0]",
        "lin({t})",
    ],
    "monkeypatch": [
        "torch.sigmoid({t})",
        "torch.tanh({t}) * 2",
        "F.relu({t}) + 1",
        "{t}.relu()",
        "{t}.sigmoid() - {t}",
        "lin({t})",
    ],
    "default_dtype": [
        "{t} + torch.ones(3, 4)",
        "torch.full((3, 4), 0.5) * {t}",
        "{t} * torch.tensor([[1.5]])",
        "torch.arange(12.0).view(3, 4) + {t}",
        "{t}.to(torch.get_default_dtype())",
    ],
}

# Replacements a program may make between calls: (module or class, name, replacement maker).
_PATCHES = [
    (torch, "sigmoid", lambda orig: lambda t: t * 0.5 - 1),
    (torch, "tanh", lambda orig: lambda t: orig(t) + 3),
    (F, "relu", lambda orig: lambda t, inplace=False: t.abs() * 2),
    (torch.Tensor, "relu", lambda orig: lambda self: self * 3 - 1),
    (torch.Tensor, "sigmoid", lambda orig: lambda self: orig(self) * -1),
    (F, "linear", lambda orig: lambda i, w, b=None: orig(i, w, b) + 7),
]

# `.data` writes between the calls.
_DATA_WRITES = [
    "W.data.mul_(0.5)",
    "W.data[0].zero_()",
    "W.data = torch.ones(3, 4)",
    "W4.data.copy_(torch.eye(4))",
    "Wc.data.mul_(-1)",
    "Wc.data[0].zero_()",
    "Wc.data = torch.full((2, 1, 3, 3), 0.25)",
    "lin.weight.data.mul_(2)",
    "lin.bias.data = torch.zeros(4)",
]

_DTYPE_PAIRS = [
    (torch.float32, torch.float64),
    (torch.float64, torch.float32),
    (torch.float64, torch.float64),
]


class EnvWriter(EffectWriter):
    """``EffectWriter`` whose extra statements read the state environment class ``env``
    changes."""

    def __init__(self, data, allow_breaks: bool, env: str):
        super().__init__(data, allow_breaks, ("inplace_input", "container", "attr"))
        self.env = env

    def statement(self, indent: str, depth: int) -> None:
        if not self.draw(st.booleans()):
            super().statement(indent, depth)
            return
        t = self.fresh("t")
        expr = self.draw(st.sampled_from(ENV_STATEMENTS[self.env]))
        self.lines.append(f"{indent}{t} = {expr.format(t=self.t())}")
        self.tensors.append(t)


def _around(env: str, data):
    """The per-call context of ``env``: ``around(seed)`` runs call ``seed`` in it."""
    if env == "inference_then_no_grad":
        return lambda seed: torch.inference_mode() if seed == 0 else torch.no_grad()
    if env == "default_dtype":
        pair = data.draw(st.sampled_from(_DTYPE_PAIRS), label="dtypes")

        @contextlib.contextmanager
        def dtype(seed):
            previous = torch.get_default_dtype()
            torch.set_default_dtype(pair[seed])
            try:
                yield
            finally:
                torch.set_default_dtype(previous)

        return dtype
    if env == "monkeypatch":
        owner, name, make = data.draw(st.sampled_from(_PATCHES), label="patch")

        @contextlib.contextmanager
        def patched(seed):
            had = name in vars(owner)
            original = getattr(owner, name)
            if seed == 1:
                setattr(owner, name, make(original))
            try:
                yield
            finally:
                if had:
                    setattr(owner, name, original)
                elif name in vars(owner):
                    delattr(owner, name)

        return patched
    return lambda seed: contextlib.nullcontext()


def run_environment(data, allow_breaks, n, flag, env: str, backend=None) -> None:
    writer = EnvWriter(data, allow_breaks, env)
    src = writer.source(data.draw(st.integers(3, 8), label="statements"))
    around = _around(env, data)
    write = (
        data.draw(st.sampled_from(_DATA_WRITES), label="data write")
        if env == "data_write"
        else None
    )
    note(src)
    note(f"write between calls: {write}")
    ns = dict(NAMESPACE, G=[], Holder=Holder, _cm=_cm, _Ranked=_Ranked)
    exec(compile(src, f"<env-{next(_ids)}>", "exec"), ns)  # noqa: S102
    fn = ns["generated"]
    make = _inputs(n, flag)
    if env == "tensor_subclass":
        plain = make

        def make(r):
            args = list(plain(r))
            args[0] = args[0].as_subclass(Tagged)
            if flag:
                args[1] = args[1].as_subclass(Tagged)
            return tuple(args)

    def prepare(target, seed):
        if seed == 1 and write is not None:
            exec(write, ns)  # noqa: S102

    p = Program(
        "generated",
        fn,
        make,
        graphs=-1,
        state=("G", "W", "W4", "Wc", "lin"),
        prepare=prepare,
        raises=True,
    )
    import torchferro
    from conftest import CountingBackend

    def wrapped(f):
        def call(*args, **kwargs):
            with around(call.seed):
                return f(*args, **kwargs)

        return call

    def runs(f):
        ns.update(_new_state(0))
        ns["G"].clear()
        w = wrapped(f)
        out = []
        for s in (0, 1):
            w.seed = s
            out.append(_call(p, fn, w, s))
        return out

    torchferro.compiler.reset()
    eager = runs(fn)
    counting = backend or CountingBackend()
    compiled = torchferro.compile(fn, backend=counting)
    try:
        actual = runs(compiled)
    finally:
        torch.set_grad_enabled(True)
        torch.set_default_dtype(torch.float32)
        torchferro.compiler.reset()
    check_results(p, eager, actual)
    if not allow_breaks and isinstance(counting, CountingBackend):
        torch._dynamo.reset()
        tc_backend = CountingBackend()
        tc = torch.compile(fn, backend=tc_backend)
        try:
            runs(tc)
        finally:
            torch._dynamo.reset()
            torch.set_grad_enabled(True)
            torch.set_default_dtype(torch.float32)
        assert counting.count <= tc_backend.count, (
            f"{counting.count} graphs, torch.compile {tc_backend.count}"
        )


ENV_WORKING = (
    "tensor_subclass",
    "inference_then_no_grad",
    "data_write",
    "monkeypatch",
    "default_dtype",
)
ENV_FAILING: dict[str, str] = {}
ENV_EXAMPLES = int(os.environ.get("TORCHFERRO_ENV_EXAMPLES", "25"))


@pytest.mark.parametrize(
    "env",
    list(ENV_WORKING)
    + [
        pytest.param(k, marks=pytest.mark.xfail(strict=True, reason=reason))
        for k, reason in ENV_FAILING.items()
    ],
)
@pytest.mark.parametrize("backend", [None, "inductor"], ids=["counting", "inductor"])
def test_generated_environment(env, backend):
    @settings(
        max_examples=ENV_EXAMPLES if env in ENV_WORKING else 30,
        phases=[Phase.explicit, Phase.generate]
        if env not in ENV_WORKING
        else list(Phase),
        **_common,
    )
    @given(**_args)
    def test(data, allow_breaks, n, flag):
        run_environment(data, allow_breaks, n, flag, env, backend)

    test()
