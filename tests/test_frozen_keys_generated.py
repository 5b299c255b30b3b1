"""Issue 14: hypothesis-generated programs keyed by frozen dataclass instances (session 16's
fixes: a frozen instance made in the frame keys dicts and sits in sets as a real instance built
from its fields; `key in {...}` of a frozen argument guards its type and fields, not its
identity).

Each example draws a program over ``(x, k)``, ``k`` an instance of one of two frozen dataclasses
with the same fields (equal fields, different types: equal hashes, unequal keys), using
instances passed as ``k`` and made in the frame as dict keys (displays, stores, ``get``,
``del``, a module-global table), in sets (displays, ``add``, ``discard``, ``frozenset``), with
``in`` / ``not in``, ``hash()`` and ``==``, and a call sequence of arguments: the same object
again, an equal new instance (which must not recompile where torch.compile does not: the guard
is on the type and the fields, not the identity), a changed field and the other type (which must
take the other path). Values against eager's; where torch.compile traces the program in one
graph (``fullgraph=True``) torchferro must too, with at most its graph count.

Examples per run: ``TORCHFERRO_FROZEN_GEN_EXAMPLES`` (default 60).
"""

from __future__ import annotations

import dataclasses
import os

import hypothesis.strategies as st
import torch
import torch._dynamo
from hypothesis import example, given, note

from programs.compare import counts_over, generated

EXAMPLES = int(os.environ.get("TORCHFERRO_FROZEN_GEN_EXAMPLES", "60"))


@dataclasses.dataclass(frozen=True)
class K:
    a: int = 1
    b: str = "p"


@dataclasses.dataclass(frozen=True)
class J:
    """K's fields under another type: the same hash for the same fields, never equal to a K."""

    a: int = 1
    b: str = "p"


TABLE = {K(): 2.0, K(2): 3.0, J(): 5.0}

# Keys: the argument, instances made in the frame (constant fields, or a field read from the
# argument), and a field of the argument.
KEYS = ["k", "K()", "K(2)", "K(1, 'q')", "J()", "K(k.a)", "J(k.a, k.b)"]
STEPS = [
    "x = x * (2.0 if {k} in d else 1.0)",
    "x = x + (0.5 if {k} not in s else 1.5)",
    "x = x + d.get({k}, 0.25)",
    "d[{k}] = 3.0",
    "x = x * d[{k}] if {k} in d else x - 1",
    "if {k} in d:\n        del d[{k}]",
    "s.add({k})",
    "s.discard({k})",
    "x = x + (hash({k}) == hash({j}))",
    "x = x * ({k} == {j}) + ({k} != {j})",
    "x = x * TABLE.get({k}, 1.0)",
    "x = x + ({k} in frozenset([{j}, K(3)]))",
    "x = x + len(d) + len(s)",
    "x = x + sum(e.a for e in s)",
    "x = x + {k}.a",
]
RETURNS = [
    "return x",
    "return x, len(d), len(s)",
    "return x, sorted(d.values()), k in s",
]

# Arguments a call sequence draws from: equal instances made anew at each call, changed fields,
# the other type.
ARGS = [
    lambda: K(),
    lambda: K(1, "p"),
    lambda: K(2),
    lambda: K(1, "q"),
    lambda: J(),
    lambda: J(2),
]


def make(dkeys, skeys, steps, ret):
    lines = ["def program(x, k):"]
    lines.append("    d = {" + ", ".join(f"{KEYS[i]}: {v}" for i, v in dkeys) + "}")
    lines.append(
        "    s = {" + ", ".join(KEYS[i] for i in skeys) + "}"
        if skeys
        else "    s = set()"
    )
    for s, k, j in steps:
        lines.append("    " + STEPS[s].format(k=KEYS[k], j=KEYS[j]))
    lines.append("    " + RETURNS[ret])
    src = "\n".join(lines)
    scope = {"torch": torch, "K": K, "J": J, "TABLE": TABLE}
    exec(compile(src, "<generated>", "exec"), scope)  # noqa: S102
    return scope["program"], src


def _run(program, args, fullgraph):
    """``program`` over ``args`` (x, k) under torchferro and (with ``fullgraph``) torch.compile,
    counting backends: values checked against eager's (torch.compile's too). Returns the two
    counters. Without ``fullgraph`` torch.compile is left out: its graph count is not compared
    then, and on some broken programs it fails internally (a dict key's index after a
    resume)."""
    x = torch.randn(3)
    calls = [(x, k) for k in args]
    tc, fc = counts_over(program, calls, oracle=fullgraph, fullgraph=fullgraph)
    assert not tc.wrong, "torch.compile's values differ from eager's"
    return tc, fc


@generated(EXAMPLES)
@given(
    dkeys=st.lists(
        st.tuples(st.integers(0, len(KEYS) - 1), st.sampled_from([0.5, 1.5, 2.0])),
        max_size=3,
    ),
    skeys=st.lists(st.integers(0, len(KEYS) - 1), max_size=3),
    steps=st.lists(
        st.tuples(
            st.integers(0, len(STEPS) - 1),
            st.integers(0, len(KEYS) - 1),
            st.integers(0, len(KEYS) - 1),
        ),
        min_size=1,
        max_size=5,
    ),
    ret=st.integers(0, len(RETURNS) - 1),
    args=st.lists(st.integers(0, len(ARGS) - 1), min_size=2, max_size=5),
)
# The generator's finds (session 17), each fixed at its mechanism:
# an argument stored as a dict key was not guarded (`K() in {k: ...}` kept its first answer
# for `K(2)`): a hashed argument is guarded by type and fields (identity for other objects);
@example(dkeys=[(0, 0.5)], skeys=[], steps=[(0, 1, 0)], ret=0, args=[0, 2])
# `K(k.a)` once automatic dynamic made `k.a` symbolic: its hash specializes the field;
@example(dkeys=[(5, 0.5)], skeys=[], steps=[(0, 0, 0)], ret=0, args=[0, 2])
# `k == K()` broke and `k == k` guarded identity (a recompile for an equal new instance):
# compared by fields;
@example(dkeys=[], skeys=[], steps=[(9, 0, 1)], ret=0, args=[0, 0])
@example(dkeys=[], skeys=[], steps=[(9, 0, 0)], ret=0, args=[0, 0])
# `s.add(K())` broke (a set method's element is hashed as a display's is);
@example(dkeys=[], skeys=[], steps=[(6, 1, 0)], ret=0, args=[0, 0])
# `K() != K()` broke (object's `__ne__` inverts the dataclass's `__eq__`), and `K() == J()`
# (both `__eq__` decline: identity decides).
@example(dkeys=[], skeys=[], steps=[(9, 1, 1)], ret=0, args=[0, 0])
@example(dkeys=[], skeys=[], steps=[(9, 1, 4)], ret=0, args=[0, 0])
def test_generated_frozen_keys_match_torch_compile(dkeys, skeys, steps, ret, args):
    program, src = make(dkeys, skeys, steps, ret)
    note(src)
    calls = [ARGS[i]() for i in args]
    note(f"calls {calls}")
    try:
        tc, fc = _run(program, calls, fullgraph=True)
    except torch._dynamo.exc.Unsupported:
        # torch.compile breaks the graph: torchferro's values only.
        _run(program, calls, fullgraph=False)
        return
    note(f"graphs: torch.compile {tc.n}, torchferro {fc.n}")
    assert fc.n <= tc.n, f"torchferro {fc.n} graphs, torch.compile {tc.n}"


def _self_equal(x, k):
    return x * (k == k)


def test_a_changing_int_field_of_a_frozen_argument_becomes_symbolic():
    """`k == k` compares field by field, as the generated `__eq__`: `k.a`, made a symbolic int
    by automatic dynamic at the recompile, equals itself whatever its value, so the third
    call reuses the second graph (as torch.compile). A strict xfail until session 18 (the
    fields were guarded by value)."""
    tc, fc = _run(_self_equal, [K(1, "q"), K(2, "p"), K(1, "p")], fullgraph=True)
    assert tc.n == 2
    assert fc.n == tc.n
