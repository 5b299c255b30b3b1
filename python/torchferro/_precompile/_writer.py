"""Writes a capture's compiled entries as an artifact (Python source) and a cache directory.

The entries come from ``_C.precompile_export`` (guards as leaf checks on source paths, the
graph's input sources, the output template, the serialized graph and its kernels). Each entry
becomes one function of the artifact: its guards as plain Python conditions, in the guard
trie's order, each value read once; then the graph inputs read by the same paths, one call of
the graph, and the return value rebuilt as an expression. Anything the artifact cannot express
exactly is refused here (``CaptureError``), never approximated.
"""

from __future__ import annotations

import json
import marshal
import os
import re
import shutil
import types

from .. import _C
from . import _cache, _runtime
from ._breaks import (
    global_reads,
    importable_module,
    globals_module,
    portable_code,
    resume_functions,
    transformed_code,
)
from ._names import literal, name_of, need_name
from ._render import Parts as _Parts
from ._render import render as _render
from ._render import unique as _unique
from ._runtime import CaptureError, code_key

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class _Module:
    """The artifact being written: names it imports (resolved once at load), graphs."""

    def __init__(self):
        self.names: dict[str, str] = {}  # path -> variable
        self.graphs: list[dict] = []

    def name(self, obj, what: str, hint: str | None = None) -> str:
        path = need_name(obj, what, hint)
        return self.path(path)

    def path(self, path: str) -> str:
        if path not in self.names:
            if path.startswith("module:"):
                base = path[len("module:") :].split(".")[-1]
            else:
                base = path.split(".")[-1]
            base = re.sub(r"[^A-Za-z0-9_]", "_", base)
            self.names[path] = f"{base}_{len(self.names)}"
        return self.names[path]

    def const(self, v, what: str) -> str:
        lit = literal(v)
        if lit is not None:
            return lit
        n = name_of(v)
        if n is not None:
            return self.path(n)
        raise CaptureError(
            f"precompile: {what} is the constant {v!r}, which an artifact cannot spell in "
            "source (only literals, torch dtypes/devices and importable objects)"
        )


class _Entry:
    """Code generation for one compiled entry."""

    def __init__(
        self,
        mod: _Module,
        entry: dict,
        params: list[str],
        index: int,
        fn_globals: dict,
        fn_module: str | None = None,
    ):
        self.fn_globals = fn_globals
        # The captured function's module, when importable by name: its globals are then read
        # (and guarded) through that module, as any other module's.
        self.fn_module = fn_module
        self.mod = mod
        self.e = entry
        self.params = params
        self.index = index
        self.lines: list[str] = []
        self.vars: dict[tuple, str] = {}
        # The `_at = ...` line of the guard being emitted (see `check`).
        self.at_line: int | None = None

    def _frozen_global(self, steps) -> str | None:
        """The artifact's name for the value at a source rooted at the captured function's
        globals, if that value has an importable name; else None."""
        import builtins

        g = self.fn_globals
        name = steps[0][1]
        if name in g:
            v = g[name]
        elif hasattr(builtins, name):
            v = getattr(builtins, name)
        else:
            return None
        try:
            for st in steps[1:]:
                if st[0] == "attr":
                    v = getattr(v, st[1])
                elif st[0] == "item":
                    v = v[st[1]]
                else:
                    return None
        except Exception:  # noqa: BLE001 - an unreadable path has no name
            return None
        n = name_of(v)
        return None if n is None else self.mod.path(n)

    def _step_key(self, step) -> tuple:
        kind = step[0]
        if kind == "item":
            return ("item", type(step[1]).__name__, repr(step[1]))
        return tuple(step)

    def _rebase(self, steps):
        """A source rooted at the captured function's globals, rooted at its module instead
        when that module is importable by name (see ``fn_module``)."""
        if steps and steps[0][0] == "global" and self.fn_module is not None:
            return [("module_global", self.fn_module, steps[0][1]), *steps[1:]]
        return steps

    def expr(self, steps, what: str) -> str:
        """A variable holding the value at ``steps`` (assigned on first use, in order)."""
        steps = self._rebase(steps)
        key = tuple(self._step_key(s) for s in steps)
        if key in self.vars:
            return self.vars[key]
        root = steps[0]
        if root[0] == "local":
            if len(steps) == 1:
                # By position: a resume function's parameter names may have been made
                # distinct (`_unique`).
                return self.params[root[2]] if root[2] < len(self.params) else root[1]
            parent = self.expr(steps[:-1], what)
        elif root[0] == "module_global" and len(steps) == 1:
            # A global of a module the traced code inlined a function from (a model's own
            # module): read through that module, importable in the loading process too.
            modvar = self.mod.path(f"module:{root[1]}")
            text = f"_rt.module_global({modvar}, {root[2]!r})"
            var = f"v{len(self.vars)}"
            self.vars[key] = var
            self.lines.append(f"        {var} = {text}")
            return var
        elif root[0] == "module_global":
            parent = self.expr(steps[:-1], what)
        elif root[0] == "global" and self._frozen_global(steps) is not None:
            # A global of the captured function that is an importable object (a builtin such
            # as `print` on the stack at a graph break): the artifact names it.
            return self._frozen_global(steps)
        elif root[0] == "global":
            raise CaptureError(
                f"precompile: {what} reads a global of the captured function; pass the value "
                "as an argument instead (an artifact does not carry the function's globals)"
            )
        elif root[0] == "cell":
            raise CaptureError(
                f"precompile: {what} reads the captured function's closure variable "
                f"{root[1]!r}; pass the value as an argument instead"
            )
        else:
            raise CaptureError(f"precompile: {what}: unsupported source {root!r}")
        step = steps[-1]
        if step[0] == "attr":
            text = (
                f"{parent}.{step[1]}"
                if _IDENT.match(step[1])
                else f"getattr({parent}, {step[1]!r})"
            )
        elif step[0] == "item":
            key_lit = literal(step[1])
            if key_lit is None:
                raise CaptureError(
                    f"precompile: {what}: subscript {step[1]!r} has no literal"
                )
            text = f"{parent}[{key_lit}]"
        elif step[0] == "storage_nbytes":
            text = f"{parent}.untyped_storage().nbytes()"
        elif step[0] == "weakref_call":
            text = f"_rt.weakref_referent({parent})"
        elif step[0] == "from_numpy":
            raise CaptureError(
                f"precompile: {what}: numpy array inputs are not supported yet"
            )
        else:
            raise CaptureError(f"precompile: {what}: unsupported source step {step!r}")
        var = f"v{len(self.vars)}"
        self.vars[key] = var
        self.lines.append(f"        {var} = {text}")
        return var

    def check(self, text: str, cond: str, value: str):
        """Emits: when ``cond`` is false, fail with guard ``text`` and what ``value`` was."""
        at = f"        _at = {text!r}"
        if self.at_line is not None:
            # The guard's reads were emitted under its short name: name it in full once.
            self.lines[self.at_line] = at
            self.at_line = None
        else:
            self.lines.append(at)
        self.lines.append(f"        if not ({cond}):")
        self.lines.append(f"            return _rt.Fail(_at, {value})")

    def guards(self):
        e = self.e
        mod = self.mod
        if e["autocast"] is not None:
            raise CaptureError(
                "precompile: the computation was captured under autocast; not supported yet"
            )
        grad = "True" if e["grad_enabled"] else "False"
        self.check(
            f"GRAD_MODE torch.is_grad_enabled() == {grad}",
            f"torch.is_grad_enabled() is {grad}",
            "'grad mode is ' + str(torch.is_grad_enabled())",
        )
        # Captured with autocast off (checked above): under an autocast region eager would
        # compute in other dtypes than the graph does.
        self.check(
            "AUTOCAST off",
            "not torch._C._is_any_autocast_enabled()",
            "'autocast is on'",
        )
        for fact in e["global"]:
            if fact[0] == "value":
                _, f, expected, label = fact
                fname = mod.name(f, f"the global-state guard {label}")
                exp = mod.const(expected, f"the global-state guard {label}")
                self.check(
                    f"GLOBAL_STATE {label} is {exp}",
                    f"{fname}() is {exp}",
                    f"_rt.describe({fname}())",
                )
            else:
                _, d, attr, value = fact
                owner = _owner_of(d)
                if owner is None:
                    raise CaptureError(
                        f"precompile: a guard reads attribute {attr!r} of a dict that belongs "
                        "to no importable module or class"
                    )
                ov = mod.path(owner)
                text = f"ATTRS {owner.removeprefix('module:')}.{attr}"
                if value is None:
                    self.check(
                        f"{text} is absent",
                        f"{attr!r} not in vars({ov})",
                        f"'present: ' + _rt.describe(vars({ov})[{attr!r}])",
                    )
                else:
                    hint = f"{owner.removeprefix('module:')}.{attr}"
                    vv = mod.name(value, f"the guard on {hint}", hint)
                    self.check(
                        f"{text} is {need_name(value, hint, hint)}",
                        f"vars({ov}).get({attr!r}) is {vv}",
                        f"_rt.describe(vars({ov}).get({attr!r}))",
                    )
        for kind, steps, source, payload in e["guards"]:
            steps = self._rebase(steps)
            if steps[0][0] == "global":
                # The captured function's own globals (a module it names, a constant) are part
                # of the captured computation: the artifact runs without that function.
                self.lines.append(
                    f"        # {kind} {source}: a global of the captured function"
                )
                continue
            what = f"the guard {kind} {source}"
            self.at_line = len(self.lines)
            self.lines.append(f"        _at = {(kind + ' ' + source)!r}")
            v = self.expr(steps, what)
            text = f"{kind} {source}"
            actual = f"_rt.describe({v})"
            if kind == "TENSOR":
                ty, dtype, device, sizes, strides, rg, layout, dynamic = payload
                t = mod.name(ty, what)
                dt = mod.const(dtype, what)
                dv = mod.const(device, what)
                lay = mod.const(layout, what)
                if any(dynamic):
                    # Dynamic dimensions: their sizes are the shape guards' (ranges and
                    # relations, below); the tensor must be laid out as the symbolic strides
                    # the graph was traced with say: contiguous for its own sizes, or, from
                    # a tensor dense in no order (a column slice), of the same stride rules
                    # (a stride symbol's value is a shape guard's).
                    shown = tuple(
                        None if d else n for n, d in zip(sizes, dynamic, strict=True)
                    )
                    fixed = "".join(
                        f" and {v}.shape[{i}] == {n}"
                        for i, (n, d) in enumerate(zip(sizes, dynamic, strict=True))
                        if not d
                    )
                    if _runtime.dense_order(sizes, strides) == list(range(len(sizes))):
                        layout, laid = "contiguous", f"_rt.dense({v})"
                    else:
                        rec = (tuple(sizes), tuple(strides))
                        layout = f"laid out as {rec[1]}"
                        laid = f"_rt.laid_out_as({v}, {rec!r})"
                    exp = (
                        f"{ty.__name__}(dtype={dtype}, size={shown}, stride={layout}, "
                        f"device={device}, requires_grad={rg})"
                    )
                    shape = f"{v}.dim() == {len(sizes)}{fixed} and {laid}"
                else:
                    exp = (
                        f"{ty.__name__}(dtype={dtype}, size={tuple(sizes)}, "
                        f"stride={tuple(strides)}, device={device}, requires_grad={rg})"
                    )
                    shape = (
                        f"{v}.shape == {tuple(sizes)!r} and "
                        f"{v}.stride() == {tuple(strides)!r}"
                    )
                self.check(
                    f"TENSOR_MATCH {source} (expected {exp})",
                    f"type({v}) is {t} and {v}.dtype is {dt} and {v}.device == {dv} and "
                    f"{shape} and {v}.requires_grad is {rg!r} and {v}.layout is {lay}",
                    actual,
                )
            elif kind == "TYPE":
                t = mod.name(payload, what)
                self.check(
                    f"TYPE_MATCH {source} (expected {need_name(payload, what)})",
                    f"type({v}) is {t}",
                    actual,
                )
            elif (
                kind == "ID"
                and steps[0][0] == "module_global"
                and name_of(payload) is None
            ):
                # An unnamed object held by a module (a registry dict): in a fresh process it is
                # whatever that module made; the guards on what the trace read from it stay.
                self.lines.append(
                    f"        # {kind} {source}: a module's own object; its contents are guarded"
                )
            elif (
                kind == "ID"
                and isinstance(payload, types.CodeType)
                and name_of(payload) is None
            ):
                # The code of a function made inside a frame (new on every call of its maker):
                # compared by structure, as the artifact cannot name the code object itself.
                key = code_key(payload)
                self.check(
                    f"CODE_MATCH {source} has the structure of {payload.co_qualname}",
                    f"_rt.code_key({v}) == {key!r}",
                    actual,
                )
            elif kind == "ID":
                o = mod.name(payload, what)
                self.check(
                    f"ID_MATCH {source} is {need_name(payload, what)}",
                    f"{v} is {o}",
                    actual,
                )
            elif kind == "DEAD":
                raise CaptureError(
                    f"precompile: {what} guards an object that no longer exists"
                )
            elif kind == "EQUALS":
                c = mod.const(payload, what)
                tn = type(payload).__name__
                if type(payload) not in (int, float, str, bytes, bool, tuple):
                    tn = mod.name(type(payload), what)
                self.check(
                    f"EQUALS_MATCH {source} == {c}",
                    f"type({v}) is {tn} and {v} == {c}",
                    actual,
                )
            elif kind == "NONE":
                self.check(f"NONE_MATCH {source} is None", f"{v} is None", actual)
            elif kind == "LEN":
                self.check(
                    f"LENGTH_CHECK len({source}) == {payload}",
                    f"len({v}) == {payload}",
                    actual,
                )
            elif kind == "DICT_KEYS":
                keys = mod.const(list(payload), what)
                self.check(
                    f"DICT_KEYS {source} == {keys}",
                    f"list({v}.keys()) == {keys}",
                    actual,
                )
            elif kind == "HASATTR":
                name, present = payload
                self.check(
                    f"HASATTR hasattr({source}, {name!r}) == {present}",
                    f"hasattr({v}, {name!r}) is {present!r}",
                    actual,
                )
            elif kind == "NOT_IN_DICT":
                self.check(
                    f"NOT_PRESENT_IN_GENERIC_DICT {source}: {payload!r} not in __dict__",
                    f"{payload!r} not in getattr({v}, '__dict__', {{}})",
                    actual,
                )
            else:
                raise CaptureError(f"precompile: unknown guard kind {kind}")
        self.shape_guards()
        for a, b, ta, tb, same in e["identities"]:
            va = self.expr(a, f"the aliasing guard on {ta}")
            vb = self.expr(b, f"the aliasing guard on {tb}")
            op = "is" if same else "is not"
            self.check(
                f"OBJECT_ALIASING {ta} {op} {tb}", f"{va} {op} {vb}", "'it is not'"
            )

    def shape_guards(self):
        """Dynamic shapes: each size symbol read once into ``_sK`` and kept in its range,
        duck-sized dimensions equal to their symbol, and the relations between sizes the trace
        relied on, as the compiled entry's ``SHAPE_ENV`` guards check them."""
        shape = self.e.get("shape")
        if not shape:
            return
        for k, (steps, source, dim, lo, hi, stride) in enumerate(shape["symbols"]):
            v = self.expr(steps, f"the size guard on {source}")
            # `dim` None: the symbol is the int at the source (an int made dynamic);
            # `stride`: the stride of `dim` (a column slice of a parent whose width moves).
            name = _symbol_name(source, dim, stride)
            rng = f"{lo} <= {name}" + ("" if hi is None else f" <= {hi}")
            if dim is None:
                read = v
            elif stride:
                read = f"{v}.stride()[{dim}]"
            else:
                read = f"{v}.shape[{dim}]"
            self.lines.append(f"        _s{k} = {read}")
            if dim is None and lo < -(2**62):
                continue  # an int with no range (its bound, if any, is a relation)
            cond = f"{lo} <= _s{k}" + ("" if hi is None else f" <= {hi}")
            self.check(f"SHAPE_ENV {rng}", cond, f"str(_s{k})")
        for steps, source, dim, k in shape["duck"]:
            v = self.expr(steps, f"the size guard on {source}")
            _, sym_source, sym_dim = shape["symbols"][k][:3]
            self.check(
                f"SHAPE_ENV {source}.size({dim}) == "
                f"{_symbol_name(sym_source, sym_dim, False)}",
                f"{v}.dim() > {dim} and {v}.shape[{dim}] == _s{k}",
                f"str({v}.shape[{dim}]) + ' vs ' + str(_s{k})",
            )
        sizes = " + ', ' + ".join(
            f"{(_symbol_name(src, d, st) + ' = ')!r} + str(_s{k})"
            for k, (_, src, d, _, _, st) in enumerate(shape["symbols"])
        )
        for cond, text in shape["relations"]:
            self.check(f"SHAPE_ENV {text}", cond, f"'sizes ' + {sizes}")

    def template(self, t) -> str:
        kind = t[0]
        mod = self.mod
        if kind == "graph":
            return f"outs[{t[1]}]"
        if kind == "const":
            return mod.const(t[1], "the return value")
        if kind == "tuple":
            return "(" + "".join(self.template(x) + ", " for x in t[1]) + ")"
        if kind == "list":
            return "[" + ", ".join(self.template(x) for x in t[1]) + "]"
        if kind == "dict":
            return (
                "{"
                + ", ".join(
                    f"{mod.const(k, 'a returned dict key')}: {self.template(v)}"
                    for k, v in t[1]
                )
                + "}"
            )
        if kind == "namedtuple":
            ty = mod.name(t[1], "the returned named tuple")
            items = "(" + "".join(self.template(x) + ", " for x in t[2]) + ")"
            return f"_rt.build_named_tuple({ty}, {items})"
        if kind == "attr":
            inner = self.template(t[1])
            return (
                f"{inner}.{t[2]}"
                if _IDENT.match(t[2])
                else f"getattr({inner}, {t[2]!r})"
            )
        if kind == "input":
            return self.expr(t[1], "the return value")
        if kind == "keep":
            return f"(k{t[1]} := {self.template(t[2])})"
        if kind == "again":
            return f"k{t[1]}"
        if kind == "call" and isinstance(
            getattr(t[1], "_torchferro_source", None), str
        ):
            # A symbolic int's expression over this call's sizes, as the tracer wrote it.
            args = ", ".join(self.template(x) for x in t[2])
            return f"({t[1]._torchferro_source})({args})"
        if kind == "call":
            f = mod.name(t[1], "the return value's constructor")
            return f"{f}(" + ", ".join(self.template(x) for x in t[2]) + ")"
        if kind == "effects":
            # The value, then every call's arguments (all seeing the state before the calls),
            # then the calls in order; the value is the result.
            value = self.template(t[1])
            parts = [f"(r := {value})"]
            calls = []
            for i, (f, args) in enumerate(t[2]):
                fn = mod.name(f, "a side effect of the computation")
                parts.append(
                    f"(a{i} := ("
                    + "".join(self.template(x) + ", " for x in args)
                    + "))"
                )
                calls.append(f"{fn}(*a{i})")
            return "(" + ", ".join(parts + calls + ["r"]) + ")[-1]"
        if kind == "cell":
            raise CaptureError(
                "precompile: the result rebuilds a closure cell (not supported)"
            )
        raise CaptureError(f"precompile: unknown result template {kind}")

    def generate(self) -> list[str]:
        e = self.e
        if e["runner"] not in ("eager", "inductor"):
            raise CaptureError(
                f"precompile: entry {e['compile_id']} runs on the {e['runner']} runner; only "
                "graphs of the inductor and eager backends without autograd can be precompiled"
            )
        if e.get("graph_json") is None:
            raise CaptureError(
                f"precompile: entry {e['compile_id']} was compiled before the capture began, "
                "so its graph was not recorded; call torchferro.compiler.reset() first"
            )
        if e["switches_autocast"]:
            raise CaptureError(
                "precompile: graphs with autocast regions are not supported yet"
            )
        self.guards()
        head = [
            f"def _entry_{self.index}({', '.join(self.params)}):",
            f'    """Compiled entry {e["compile_id"]}: the guards, then graph {self.index}."""',
            "    _at = None",
            "    try:",
        ]
        fail = [
            "    except Exception as exc:  # a path that cannot be read fails its guard",
            "        return _rt.Fail(_at, f'could not be read ({type(exc).__name__}: {exc})')",
        ]
        if e["direct"]:
            body = self._graph_call()
            # The template may read inputs by path: those reads sit inside the `try`.
            return head + self.lines + fail + body
        guards = head + self.lines + fail
        guards += [
            "    # A graph break: the transformed code runs graph_call_N, the breaking",
            "    # instruction natively, and returns a tail call of the resume function.",
            f"    return transformed_{self.index}({', '.join(self.params)})",
            "",
            "",
        ]
        self.lines = []
        self.vars = {}
        body = self._graph_call()
        return (
            guards
            + [
                f"def graph_call_{self.index}({', '.join(self.params)}):",
                f'    """Graph {self.index}; called by the transformed code of entry '
                f'{e["compile_id"]}."""',
            ]
            + [line[4:] for line in self.lines]
            + body
        )

    def _graph_call(self) -> list[str]:
        e = self.e
        inputs = [
            self.expr(s, f"graph input {txt}")
            for s, txt in zip(e["inputs"], e["input_texts"])
        ]
        n = len(self.lines)
        result = self.template(e["template"])
        extra = self.lines[n:]
        del self.lines[n:]
        return [
            *[line[4:] for line in extra],
            f"    outs = graph_{self.index}(",
            *[f"        {v},  # {txt}" for v, txt in zip(inputs, e["input_texts"])],
            "    )",
            f"    return {result}",
        ]


def _symbol_name(source: str, dim, stride: bool) -> str:
    """A size symbol's name in guard listings: ``L['x'].size(1)``, ``L['x'].stride(0)`` or
    ``L['n']`` (an int)."""
    if dim is None:
        return source
    return f"{source}.{'stride' if stride else 'size'}({dim})"


def _owner_of(d) -> str | None:
    """The module (``module:NAME``) or class whose ``__dict__`` is ``d``."""
    import sys

    name = d.get("__name__") if isinstance(d, dict) else None
    if isinstance(name, str):
        m = sys.modules.get(name)
        if m is not None and getattr(m, "__dict__", None) is d:
            return f"module:{name}"
    import torch

    for cls in (torch.Tensor, torch._C.TensorBase):
        if d is not None and dict(vars(cls)) == d:
            return name_of(cls)
    qual = d.get("__qualname__") if isinstance(d, dict) else None
    modname = d.get("__module__") if isinstance(d, dict) else None
    if qual is None and isinstance(modname, str):
        # A class's own dict holds its `__module__` but not its `__qualname__` (the type keeps
        # that): the class is the type that refers to this very dict (a module's class whose
        # `forward` is guarded through the MRO).
        import gc

        for r in gc.get_referrers(d):
            if isinstance(r, type) and any(x is d for x in gc.get_referents(r)):
                qual = r.__qualname__
                break
    if isinstance(qual, str) and isinstance(modname, str):
        path = f"{modname}.{qual}"
        try:
            from ._runtime import resolve

            cls = resolve(path)
            if dict(vars(cls)) == d:
                return path
        except Exception:
            return None
    return None


def _params_of(fn) -> list[str]:
    import inspect

    code = getattr(fn, "__code__", None)
    if code is None:
        raise CaptureError(
            "precompile.capture expects a Python function (for a model, "
            "`lambda model, x: model(x)`), got " + type(fn).__name__
        )
    sig = inspect.signature(fn)
    params = []
    for p in sig.parameters.values():
        if p.kind is not p.POSITIONAL_OR_KEYWORD or p.default is not p.empty:
            raise CaptureError(
                "precompile: the captured function may only have plain positional parameters "
                f"(no defaults, *args, keyword-only or **kwargs); {p.name!r} is {p.kind.description}"
            )
        params.append(p.name)
    if code.co_freevars:
        raise CaptureError(
            "precompile: the captured function closes over "
            f"{', '.join(code.co_freevars)}; pass those values as arguments"
        )
    return params


def write(fn, codes: list, artifact_path: str, cache_path: str) -> None:
    """``codes``: the code objects compiled during the capture (``fn``'s own first)."""
    params = _params_of(fn)
    entries_by_code = [(fn.__code__, _C.precompile_export(fn.__code__))]
    if not entries_by_code[0][1]:
        raise CaptureError(
            "precompile: the capture compiled nothing (was `cap` called inside the block? "
            "did the function run eagerly? see TORCHFERRO_LOGS=graph_breaks)"
        )
    # Resume functions, found through the transformed code that tail-calls them (and theirs).
    seen = {fn.__code__}
    while True:
        resumes = resume_functions(entries_by_code)
        new = [c for c in resumes if c not in seen]
        if not new:
            break
        for c in new:
            seen.add(c)
            entries_by_code.append((c, _C.precompile_export(c)))
    # Code the artifact runs natively: transformed code at breaks, and resume functions with
    # no compiled entry (their frame ran eagerly during the capture, so it runs natively after
    # loading too). It runs with the captured function's module globals if it needs any.
    reads = []
    for c, entries in entries_by_code:
        if c is not fn.__code__ and not entries:
            what = f"the code after a graph break ({c.co_name}, run natively)"
            reads += [(what, *r) for r in global_reads(c, what)]
        for e in entries:
            if not e["direct"]:
                what = f"the graph break of entry {e['compile_id']}"
                reads += [(what, *r) for r in global_reads(e["transformed_code"], what)]
    code_globals = globals_module(fn, reads)
    fn_module = importable_module(fn)
    # Frames compiled on their own (a function the breaking instruction calls): the artifact
    # calls them natively, i.e. they run eagerly in the loading process.
    native = sorted(
        {
            f"{c.co_name} ({c.co_filename}:{c.co_firstlineno})"
            for c in codes
            if c not in seen
        }
    )
    parts = _Parts(fn, _Module(), native, code_globals)
    mod = parts.mod
    members: dict[str, bytes] = {}
    index = 0
    for k, (code, entries) in enumerate(entries_by_code):
        code_params = (
            params if k == 0 else _unique(code.co_varnames[: code.co_argcount])
        )
        if k > 0 and not entries:
            name = f"resume_{resumes[code]}"
            member = f"code/{name}.marshal"
            members[member] = portable_code(code, f"the code of {code.co_name}")
            parts.transformed[f"native_{name}"] = member
            parts.dispatchers.append((name, code_params, [], code, []))
            continue
        first = index
        for e in entries:
            i = index
            index += 1
            parts.bodies.extend(
                _Entry(mod, e, code_params, i, fn.__globals__, fn_module).generate()
            )
            parts.bodies.append("")
            parts.bodies.append("")
            if not e["direct"]:
                member = f"code/transformed_{i}.marshal"
                members[member] = transformed_code(e, i, resumes)
                parts.transformed[f"transformed_{i}"] = member
            nodes = json.loads(e["graph_json"])["nodes"]
            callables = []
            for pos, obj in e["callables"]:
                hint = nodes[pos]["kind"][1][1]
                callables.append(
                    [pos, need_name(obj, f"graph node {nodes[pos]['name']}", hint)]
                )
            library = None
            if e["runner"] == "inductor" and e["library"] is not None:
                so_name = _C.precompile_library_name(e["c_source"])
                library = f"kernels/{so_name}"
                with open(e["library"], "rb") as f:
                    members[library] = f.read()
            meta = {
                "graph": e["graph_json"],
                "callables": callables,
                "runner": e["runner"],
                "library": library,
                "grad_enabled": e["grad_enabled"],
                "passthrough": [list(p) for p in e["passthrough"]],
                "functional": e["functional"],
            }
            if e["runner"] == "inductor" and e["symbolic"] is not None:
                # Kernels with the size symbols as arguments: the loader rebuilds the graph at
                # the capture's sizes against this library and runs it at any size in range.
                hints, bounds = e["symbolic"]
                meta["symbolic"] = [list(hints), [list(b) for b in bounds]]
            member = f"graphs/graph_{i}.json"
            members[member] = json.dumps(meta, sort_keys=True).encode()
            runner = e["runner"] + (" (symbolic sizes)" if "symbolic" in meta else "")
            parts.graph_meta.append((member, e["compile_id"], runner, len(nodes)))
        name = "call" if k == 0 else f"resume_{resumes[code]}"
        parts.dispatchers.append(
            (name, code_params, list(range(first, index)), code, entries)
        )
    cache_id = _cache.sha256(
        json.dumps(
            {
                n: {"sha256": _cache.sha256(b), "size": len(b)}
                for n, b in sorted(members.items())
            },
            sort_keys=True,
        ).encode()
    )
    text = _render(parts, cache_id)
    artifact = text.encode()
    if os.path.isdir(cache_path):
        shutil.rmtree(cache_path)
    code = marshal.dumps(compile(artifact, artifact_path, "exec"))
    _cache.write_manifest(cache_path, members, artifact, code)
    tmp = artifact_path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(artifact)
    os.replace(tmp, artifact_path)
