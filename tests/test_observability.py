"""Observability: the exact text of recompile, guard and graph-break messages (plain, and as the
richer ``TORCHFERRO_LOGS`` artifacts) and the other artifacts. The programs and helpers here are
shared with ``test_observability_output.py`` (log routing, ``torchferro.explain``, trace files
and the HTML report); messages are computed from the programs' own line numbers in this file."""

from __future__ import annotations

import contextlib
import inspect
import logging
import os
import re

import pytest
import torch
import torchferro
from torchferro import _events

HERE = os.path.abspath(__file__)
SCALE = 2
MS = r"\d+\.\d{3} ms"


# ---------------------------------------------------------------------------------------------
# Programs. Messages are computed from these functions' own line numbers.


def add_one(x):
    return x + 1


def scaled(x):
    return x * SCALE


class Scaler(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(3, 3)
        self.scale = 2

    def forward(self, x):
        y = self.lin(x) * self.scale
        if self.training:
            y = y + 1
        return y


def mul_n(x, n):
    return x * n


def sum_list(xs):
    out = xs[0]
    for t in xs[1:]:
        out = out + t
    return out


def sum_dict(d):
    return d["a"] + d["b"]


def branch(x):
    y = x * 2
    if y.sum() > 0:
        return y + 1
    return y - 1


def printing(x):
    y = x * 2
    print("value:", y.shape)
    return y + 1


def builtin_id(x):
    y = x * 2
    n = id(x)  # noqa: F841
    return y + 1


def inner(t):
    u = t + 1
    print("inner")
    return u * 2


def middle(t):
    return inner(t * 3)


def outer(x):
    return middle(x) - 1


def in_loop(x):
    # A break inside a loop runs the frame eagerly, as torch.compile gives such frames up.
    scale = lambda t, *, k=2: t * k
    for _ in range(2):
        x = scale(x)
        print("step")
    return x


def in_try(x):
    scale = lambda t, *, k=2: t * k
    try:
        y = scale(x)
        print("hi")
    except ValueError:
        y = x
    return y


# ---------------------------------------------------------------------------------------------
# Helpers.


def _code(fn):
    return fn.forward.__code__ if isinstance(fn, type) else fn.__code__


def _line(fn, text: str) -> int:
    """The line number of the (first) line of ``fn`` that contains ``text``."""
    lines, start = inspect.getsourcelines(fn.forward if isinstance(fn, type) else fn)
    return start + next(i for i, line in enumerate(lines) if text in line)


def _at(fn, text: str) -> str:
    return f"{HERE}:{_line(fn, text)}"


def _loc(fn, text: str) -> dict:
    """The location record (as events and trace files carry it) of ``fn``'s line with ``text``."""
    return {"filename": HERE, "lineno": _line(fn, text)}


def recompile_msg(fn, *failures) -> str:
    """The tracer's recompile text; each failure is ``(compile_id, reason)``."""
    code = _code(fn)
    msg = f"Recompiling function {code.co_name} in {code.co_filename}:{code.co_firstlineno}\n    triggered by the following guard failure(s):"
    for cid, reason, *_ in failures:
        msg += f"\n    - {cid}: {reason}"
    return msg


def rich_recompile_msg(fn, *failures, hint: str | None = None) -> str:
    """The ``recompiles`` artifact: each failure is ``(compile_id, reason, text on the user line)``."""
    code = _code(fn)
    msg = f"Recompiling function {code.co_name} in {code.co_filename}:{code.co_firstlineno}\n    triggered by the following guard failure(s):"
    for cid, reason, text in failures:
        line = _line(fn, text)
        source = inspect.getsourcelines(fn.forward if isinstance(fn, type) else fn)
        stripped = source[0][line - source[1]].strip()
        msg += f"\n    - {cid}: {reason}\n        first used at {HERE}:{line}\n            {stripped}"
    if hint:
        msg += "\n    " + hint
    return msg


class Capture(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record):
        self.records.append(record)

    def messages(self, artifact: str, level: int | None = None) -> list[str]:
        return [
            r.getMessage()
            for r in self.records
            if r.name == f"torchferro.{artifact}"
            and (level is None or r.levelno == level)
        ]


@contextlib.contextmanager
def captured(spec: str | None = None):
    """Captures what the ``torchferro`` logger tree emits: the plain records at INFO when
    ``spec`` is None, else the artifacts ``spec`` turns on (through ``set_logs``)."""
    root = logging.getLogger("torchferro")
    cap = Capture()
    old_level = root.level
    if spec:
        torchferro.set_logs(spec)
    else:
        root.setLevel(logging.INFO)
    root.addHandler(cap)
    try:
        yield cap
    finally:
        root.removeHandler(cap)
        if spec:
            torchferro.set_logs()
        else:
            root.setLevel(old_level)


def observe(make, calls, spec: str | None = None) -> Capture:
    """Compiles afresh (``make()``), makes each call (``call()`` gives its arguments) and returns
    what was logged."""
    torchferro.compiler.reset()
    compiled = make()
    with captured(spec) as cap:
        for call in calls:
            compiled(*call())
    return cap


@pytest.fixture(autouse=True)
def _clean_state():
    torchferro.config.recompile_limit = 8
    yield
    torchferro.set_logs()
    torchferro.set_trace_dir(None)
    torchferro.config.recompile_limit = 8
    assert not _events.active(), "a listener was left subscribed"


def _eager(fn):
    return lambda: torchferro.compile(fn, backend="eager")


def _static(fn):
    """Compiled with dynamic=False: every new size recompiles (no automatic dynamic)."""
    return lambda: torchferro.compile(fn, backend="eager", dynamic=False)


# ---------------------------------------------------------------------------------------------
# Recompile messages: the plain record and the `recompiles` artifact, word for word.

TENSOR_CASES = [
    (
        "shape",
        lambda: torch.randn(8, 3),
        lambda: torch.randn(16, 3),
        "tensor 'x' size mismatch at index 0. expected 8, actual 16",
    ),
    (
        "dtype",
        lambda: torch.randn(4),
        lambda: torch.randn(4, dtype=torch.float64),
        "tensor 'x' dtype mismatch. expected torch.float32, actual torch.float64",
    ),
    (
        "device",
        lambda: torch.randn(4),
        lambda: torch.empty(4, device="meta"),
        "tensor 'x' device mismatch. expected cpu, actual meta",
    ),
    (
        "requires_grad",
        lambda: torch.randn(4),
        lambda: torch.randn(4, requires_grad=True),
        "tensor 'x' requires_grad mismatch. expected requires_grad=False, actual requires_grad=True",
    ),
]


@pytest.mark.parametrize(
    "name,first,second,reason", TENSOR_CASES, ids=[c[0] for c in TENSOR_CASES]
)
def test_tensor_recompile_messages(name, first, second, reason):
    calls = [lambda: (first(),), lambda: (second(),)]
    plain = observe(_eager(add_one), calls)
    assert plain.messages("recompiles") == [recompile_msg(add_one, ("0/0", reason))]
    rich = observe(_eager(add_one), calls, "recompiles")
    assert rich.messages("recompiles") == [
        rich_recompile_msg(add_one, ("0/0", reason, "return x + 1"))
    ]


def test_global_changed_recompile_message():
    global SCALE
    try:
        for spec in (None, "recompiles"):
            SCALE = 2
            torchferro.compiler.reset()
            compiled = torchferro.compile(scaled, backend="eager")
            with captured(spec) as cap:
                compiled(torch.randn(3))
                SCALE = 3
                compiled(torch.randn(3))
            reason = "G['SCALE'] == 2 failed. actual 3"
            if spec is None:
                assert cap.messages("recompiles") == [
                    recompile_msg(scaled, ("0/0", reason))
                ]
            else:
                assert cap.messages("recompiles") == [
                    rich_recompile_msg(scaled, ("0/0", reason, "return x * SCALE"))
                ]
    finally:
        SCALE = 2


def _module_run(change, spec):
    torchferro.compiler.reset()
    m = Scaler()
    compiled = torchferro.compile(m, backend="eager")
    with captured(spec) as cap:
        compiled(torch.randn(2, 3))
        change(m)
        compiled(torch.randn(2, 3))
    return cap


def test_module_attribute_changed_recompile_message():
    reason = "L['self'].scale == 2 failed. actual 5"

    def change(m):
        m.scale = 5

    assert _module_run(change, None).messages("recompiles") == [
        recompile_msg(Scaler, ("0/0", reason))
    ]
    assert _module_run(change, "recompiles").messages("recompiles") == [
        rich_recompile_msg(Scaler, ("0/0", reason, "y = self.lin(x) * self.scale"))
    ]


def test_training_flag_flipped_recompile_message():
    # m.eval() flips every module's flag; the only guard on one is where the traced code
    # reads it (`if self.training`): the Linear's forward does not, so its flag is not
    # guarded (as torch.compile).
    reason = "L['self'].training == True failed. actual False"
    assert _module_run(lambda m: m.eval(), None).messages("recompiles") == [
        recompile_msg(Scaler, ("0/0", reason))
    ]
    assert _module_run(lambda m: m.eval(), "recompiles").messages("recompiles") == [
        rich_recompile_msg(Scaler, ("0/0", reason, "if self.training:"))
    ]


def test_python_constant_argument_recompile_message():
    calls = [lambda: (torch.randn(3), 2), lambda: (torch.randn(3), 3)]
    reason = "L['n'] == 2 failed. actual 3"
    assert observe(_eager(mul_n), calls).messages("recompiles") == [
        recompile_msg(mul_n, ("0/0", reason))
    ]
    assert observe(_eager(mul_n), calls, "recompiles").messages("recompiles") == [
        rich_recompile_msg(mul_n, ("0/0", reason, "return x * n"))
    ]


def test_list_length_recompile_message():
    calls = [
        lambda: ([torch.randn(3), torch.randn(3)],),
        lambda: ([torch.randn(3), torch.randn(3), torch.randn(3)],),
    ]
    reason = "len(L['xs']) mismatch. expected 2, actual 3"
    assert observe(_eager(sum_list), calls).messages("recompiles") == [
        recompile_msg(sum_list, ("0/0", reason))
    ]
    assert observe(_eager(sum_list), calls, "recompiles").messages("recompiles") == [
        rich_recompile_msg(sum_list, ("0/0", reason, "out = xs[0]"))
    ]


def test_dict_keys_recompile_message():
    calls = [
        lambda: ({"a": torch.randn(3), "b": torch.randn(3)},),
        lambda: ({"a": torch.randn(3), "b": torch.randn(3), "c": 1},),
    ]
    reason = "L['d'] keys mismatch. expected ['a', 'b'], actual ['a', 'b', 'c']"
    assert observe(_eager(sum_dict), calls).messages("recompiles") == [
        recompile_msg(sum_dict, ("0/0", reason))
    ]
    assert observe(_eager(sum_dict), calls, "recompiles").messages("recompiles") == [
        rich_recompile_msg(sum_dict, ("0/0", reason, 'return d["a"] + d["b"]'))
    ]


def test_recompile_limit_message():
    torchferro.config.recompile_limit = 2
    calls = [lambda n=n: (torch.randn(n),) for n in range(1, 5)]
    code = add_one.__code__
    limit = (
        f"torchferro hit the recompile limit (2) for function add_one in {code.co_filename}:{code.co_firstlineno}; "
        "it runs eagerly from now on. Last guard failure(s):\n"
        "    - 0/1: tensor 'x' size mismatch at index 0. expected 2, actual 3\n"
        "    - 0/0: tensor 'x' size mismatch at index 0. expected 1, actual 3"
    )
    with pytest.warns(RuntimeWarning) as warned:
        cap = observe(_static(add_one), calls)
    assert [
        str(w.message) for w in warned if issubclass(w.category, RuntimeWarning)
    ] == [limit]
    assert cap.messages("recompiles", logging.INFO) == [
        recompile_msg(
            add_one,
            ("0/0", "tensor 'x' size mismatch at index 0. expected 1, actual 2"),
        )
    ]
    assert cap.messages("recompiles", logging.WARNING) == [limit]
    # The artifact keeps the warning as it is (it is not replaced by anything).
    with pytest.warns(RuntimeWarning):
        rich = observe(_static(add_one), calls, "recompiles")
    assert rich.messages("recompiles", logging.WARNING) == [limit]


def test_recompiles_hint_when_the_same_dimension_keeps_changing():
    calls = [lambda n=n: (torch.randn(n, 3),) for n in (2, 4, 8)]
    reason = "tensor 'x' size mismatch at index 0. expected {}, actual {}"
    hint = (
        "hint: dimension 0 of 'x' keeps changing (sizes 2, 4, 8); call torchferro.mark_dynamic(x, 0) before calling add_one, "
        "or compile with dynamic=True, to compile one graph for every size"
    )
    assert observe(_static(add_one), calls, "recompiles").messages("recompiles") == [
        rich_recompile_msg(add_one, ("0/0", reason.format(2, 4), "return x + 1")),
        rich_recompile_msg(
            add_one,
            ("0/1", reason.format(4, 8), "return x + 1"),
            ("0/0", reason.format(2, 8), "return x + 1"),
            hint=hint,
        ),
    ]


def test_plus_recompiles_lists_the_guards_of_each_failing_entry():
    calls = [lambda: (torch.randn(2, 3),), lambda: (torch.randn(4, 3),)]
    (msg,) = observe(_eager(add_one), calls, "+recompiles").messages("recompiles")
    assert msg.endswith(
        "        guards of 0/0:\n"
        "            GRAD_MODE torch.is_grad_enabled() == True\n"
        f"            TENSOR_MATCH L['x']: torch.float32, cpu, size=[2, 3], stride=[3, 1], requires_grad=False  # {_at(add_one, 'return x + 1')}"
    )


# ---------------------------------------------------------------------------------------------
# Guards: the `guards` artifact, one guard per line with its user line.


def _guards_title(fn, cid="0/0"):
    code = _code(fn)
    return f"GUARDS of {code.co_name} (compile {cid}) in {code.co_filename}:{code.co_firstlineno}:"


def test_guards_artifact_for_a_tensor_and_a_global():
    cap = observe(_eager(scaled), [lambda: (torch.randn(2, 3),)], "guards")
    at = _at(scaled, "return x * SCALE")
    assert cap.messages("guards") == [
        "\n".join(
            [
                _guards_title(scaled),
                "  GRAD_MODE torch.is_grad_enabled() == True",
                f"  TENSOR_MATCH L['x']: torch.float32, cpu, size=[2, 3], stride=[3, 1], requires_grad=False  # {at}: return x * SCALE",
                f"  EQUALS_MATCH G['SCALE'] == 2  # {at}: return x * SCALE",
            ]
        )
    ]


def test_guards_artifact_for_containers():
    cap = observe(
        _eager(sum_list), [lambda: ([torch.randn(3), torch.randn(3)],)], "guards"
    )
    at = f"{_at(sum_list, 'out = xs[0]')}: out = xs[0]"
    meta = "torch.float32, cpu, size=[3], stride=[1], requires_grad=False"
    assert cap.messages("guards") == [
        "\n".join(
            [
                _guards_title(sum_list),
                "  GRAD_MODE torch.is_grad_enabled() == True",
                f"  TYPE_MATCH L['xs']: list  # {at}",
                f"  LENGTH_CHECK len(L['xs']) == 2  # {at}",
                f"  TENSOR_MATCH L['xs'][0]: {meta}  # {at}",
                f"  TENSOR_MATCH L['xs'][1]: {meta}  # {at}",
            ]
        )
    ]
    cap = observe(
        _eager(sum_dict),
        [lambda: ({"a": torch.randn(3), "b": torch.randn(3)},)],
        "guards",
    )
    at = f'{_at(sum_dict, "return d")}: return d["a"] + d["b"]'
    assert cap.messages("guards") == [
        "\n".join(
            [
                _guards_title(sum_dict),
                "  GRAD_MODE torch.is_grad_enabled() == True",
                f"  TYPE_MATCH L['d']: dict  # {at}",
                f"  DICT_KEYS L['d'] == ['a', 'b']  # {at}",
                f"  TENSOR_MATCH L['d']['a']: {meta}  # {at}",
                f"  TENSOR_MATCH L['d']['b']: {meta}  # {at}",
            ]
        )
    ]


def _module_guards():
    torchferro.compiler.reset()
    # The model must outlive the read: an entry goes with the model it was compiled for.
    model = Scaler()
    torchferro.compile(model, backend="eager")(torch.randn(2, 3))
    (entry,) = torchferro.compiler.cache_entries(Scaler.forward)
    return entry["guards"]


def test_guards_of_a_module():
    lin = f"{_at(Scaler, 'y = self.lin(x)')}"
    flag = f"{_at(Scaler, 'if self.training')}"
    w = "torch.float32, cpu, size=[3, 3], stride=[3, 1], requires_grad=True"
    guards = _module_guards()
    # As torch.compile: modules by type, and what is read from them through its own source
    # (a submodule's hooks too, since another instance of the class may have some).
    hooks = [
        f"LENGTH_CHECK len(L['self']._modules['lin'].{h}) == 0  # {lin}"
        for h in (
            "_forward_hooks",
            "_forward_pre_hooks",
            "_backward_hooks",
            "_backward_pre_hooks",
        )
    ]
    # nn.Linear runs as `F.linear`, read when its forward runs: a replacement must be seen.
    assert guards[1] == (
        "MODULE_ATTRS torch.nn.functional: linear are the objects read (checked when its dict "
        "changes)"
    )
    assert guards[2] == f"TYPE_MATCH L['self']: Scaler  # {lin}"
    assert guards[3:] == [
        f"TYPE_MATCH L['self']._modules['lin']: Linear  # {lin}",
        # No `forward` set on the instance (accelerate/PEFT patch it there), as torch.compile.
        f"NOT_PRESENT_IN_GENERIC_DICT L['self']._modules['lin']: \"forward\" not in __dict__  # {lin}",
        *hooks,
        f"TENSOR_MATCH L['self']._modules['lin']._parameters['weight']: {w}  # {lin}",
        f"TENSOR_MATCH L['self']._modules['lin']._parameters['bias']: torch.float32, cpu, size=[3], stride=[1], requires_grad=True  # {lin}",
        f"EQUALS_MATCH L['self'].scale == 2  # {lin}",
        f"EQUALS_MATCH L['self'].training == True  # {flag}",
        f"TENSOR_MATCH L['x']: torch.float32, cpu, size=[2, 3], stride=[3, 1], requires_grad=False  # {lin}",
    ]
    assert guards[0] == "GRAD_MODE torch.is_grad_enabled() == True"


SCALER = Scaler()


def is_the_scaler(m, x):
    if m is SCALER:
        return x + 1
    return x - 1


def test_guard_of_a_module_with_a_multiline_repr_reads_well():
    # A module's identity is guarded where the code relies on it (`is`).
    torchferro.compiler.reset()
    torchferro.compile(is_the_scaler, backend="eager")(SCALER, torch.randn(2))
    (entry,) = torchferro.compiler.cache_entries(is_the_scaler)
    at = _at(is_the_scaler, "if m is SCALER")
    assert f"ID_MATCH L['m']: Scaler(...)  # {at}" in entry["guards"]


# ---------------------------------------------------------------------------------------------
# Graph breaks: the plain record and the `graph_breaks` artifact.


def test_data_dependent_branch_break_message():
    at = _at(branch, "if y.sum() > 0")
    reason = (
        f"data-dependent control flow: branching on the value of a tensor (at {at})"
    )
    calls = [lambda: (torch.ones(3),)]
    assert observe(_eager(branch), calls).messages("graph_breaks") == [
        f"Graph break in function branch: {reason}"
    ]
    assert observe(_eager(branch), calls, "graph_breaks").messages("graph_breaks") == [
        f"Graph break in function branch: {reason}\n    branch at {at}\n        if y.sum() > 0:"
    ]


def test_print_break_message(capsys):
    at = _at(printing, 'print("value:"')
    calls = [lambda: (torch.ones(3),)]
    assert observe(_eager(printing), calls).messages("graph_breaks") == [
        f"Graph break in function printing: call to builtins.print (at {at})"
    ]
    assert observe(_eager(printing), calls, "graph_breaks").messages(
        "graph_breaks"
    ) == [
        f'Graph break in function printing: call to builtins.print (at {at})\n    printing at {at}\n        print("value:", y.shape)'
    ]
    assert capsys.readouterr().out == "value: torch.Size([3])\n" * 2


def test_unsupported_builtin_break_message():
    at = _at(builtin_id, "n = id(x)")
    calls = [lambda: (torch.ones(3),)]
    assert observe(_eager(builtin_id), calls).messages("graph_breaks") == [
        f"Graph break in function builtin_id: call to builtins.id (at {at})"
    ]
    assert observe(_eager(builtin_id), calls, "graph_breaks").messages(
        "graph_breaks"
    ) == [
        f"Graph break in function builtin_id: call to builtins.id (at {at})\n    builtin_id at {at}\n        n = id(x)  # noqa: F841"
    ]


def test_unsupported_builtin_does_not_recompile_on_every_call():
    inputs = [torch.ones(3) for _ in range(3)]  # alive together: three different id()s
    cap = observe(_eager(builtin_id), [lambda t=t: (t,) for t in inputs])
    assert cap.messages("recompiles") == []


def test_nested_inlined_break_message(capsys):
    at_print = _at(inner, 'print("inner")')
    at_middle = _at(middle, "return inner(t * 3)")
    at_outer = _at(outer, "return middle(x) - 1")
    stack = "\n  inlined call stack (innermost first):"
    calls = [lambda: (torch.ones(3),)]
    assert observe(_eager(outer), calls).messages("graph_breaks") == [
        (
            f"Graph break in function outer: call to builtins.print (at {at_print}){stack}\n"
            f"    inner at {at_print}\n    middle at {at_middle}\n    outer at {at_outer}"
        ),
        f"Graph break in function middle: call to builtins.print (at {at_print}){stack}\n    inner at {at_print}\n    middle at {at_middle}",
        f"Graph break in function inner: call to builtins.print (at {at_print})",
    ]
    assert observe(_eager(outer), calls, "graph_breaks").messages("graph_breaks") == [
        (
            f"Graph break in function outer: call to builtins.print (at {at_print}){stack}\n"
            f'    inner at {at_print}\n        print("inner")\n'
            f"    middle at {at_middle}\n        return inner(t * 3)\n"
            f"    outer at {at_outer}\n        return middle(x) - 1"
        ),
        (
            f"Graph break in function middle: call to builtins.print (at {at_print}){stack}\n"
            f'    inner at {at_print}\n        print("inner")\n'
            f"    middle at {at_middle}\n        return inner(t * 3)"
        ),
        f'Graph break in function inner: call to builtins.print (at {at_print})\n    inner at {at_print}\n        print("inner")',
    ]
    capsys.readouterr()


def test_plus_graph_breaks_shows_the_source_around_the_break():
    at = _line(branch, "if y.sum() > 0")
    (msg,) = observe(
        _eager(branch), [lambda: (torch.ones(3),)], "+graph_breaks"
    ).messages("graph_breaks")
    assert msg.splitlines()[1:] == [
        f"    branch at {HERE}:{at}",
        f"        {at - 2:5d} | def branch(x):",
        f"        {at - 1:5d} |     y = x * 2",
        f"      > {at:5d} |     if y.sum() > 0:",
        f"        {at + 1:5d} |         return y + 1",
        f"        {at + 2:5d} |     return y - 1",
    ]


def test_break_inside_a_loop_says_why_once(capsys):
    at = _at(in_loop, 'print("step")')
    msgs = observe(_eager(in_loop), [lambda: (torch.ones(3),)]).messages("graph_breaks")
    expected = (
        "Graph break: running function in_loop eagerly: call to builtins.print; a graph break "
        "inside a for/while loop: the frame runs eagerly, as torch.compile gives such frames up "
        f"(the functions it calls are compiled as frames of their own) (at {at})"
    )
    assert msgs == [expected]


def test_eager_fallback_message(capsys):
    # A break that cannot resume: the whole frame runs eagerly, and says why.
    at = _at(in_try, 'print("hi")')
    calls = [lambda: (torch.ones(3),)]
    reason = (
        "call to builtins.print; it cannot resume there: returning a function <lambda> "
        f"(at {at})"
    )
    assert observe(_eager(in_try), calls).messages("graph_breaks") == [
        f"Graph break: running function in_try eagerly: {reason}"
    ]
    assert observe(_eager(in_try), calls, "graph_breaks").messages("graph_breaks") == [
        (
            f"Graph break: running function in_try eagerly: {reason}\n"
            f'    in_try at {at}\n        print("hi")'
        )
    ]
    assert capsys.readouterr().out == "hi\n" * 2


def test_eager_fallback_says_why_the_break_cannot_resume(capsys):
    (msg,) = observe(_eager(in_try), [lambda: (torch.ones(3),)]).messages(
        "graph_breaks"
    )
    assert "it cannot resume there: " in msg.split(" eagerly: ", 1)[1]


# ---------------------------------------------------------------------------------------------
# The other artifacts.


def test_graph_graph_code_perf_bytecode_and_output_code_artifacts():
    cap = observe(
        _eager(add_one),
        [lambda: (torch.randn(2, 3),)],
        "graph,graph_code,perf,bytecode,output_code",
    )
    title = f"add_one (compile 0/0) in {HERE}:{add_one.__code__.co_firstlineno}"
    assert cap.messages("graph") == [
        (
            f"TRACED GRAPH of {title}\n"
            "name    target        inputs  meta\n"
            "l_x     placeholder           f32[2, 3]\n"
            "add     operator.add  l_x     f32[2, 3]\n"
            "output  output        add"
        )
    ]
    assert cap.messages("graph_code") == [
        f"TRACED GRAPH of {title}\ndef forward(self, l_x):\n    # l_x: f32[2, 3]\n    add = l_x + 1  # f32[2, 3]\n    return (add,)"
    ]
    (perf,) = cap.messages("perf")
    # The eager backend reports no phases of its own.
    assert re.fullmatch(
        rf"Compile time of {re.escape(title)}: trace {MS}, guard_build {MS}, backend {MS}, "
        rf"bytecode {MS}, total {MS}",
        perf,
    ), perf
    (bytecode,) = cap.messages("bytecode")
    original, modified = bytecode.split("\nMODIFIED BYTECODE of ")
    assert (
        original.startswith(f"ORIGINAL BYTECODE of {title}\n")
        and "BINARY_OP" in original
    )
    assert modified.startswith(title) and "CompiledGraph" in modified
    assert cap.messages("output_code") == [
        f"OUTPUT CODE of {title}\n(none: the backend runs the captured graph as it is)"
    ]


def test_plus_graph_adds_the_dot_and_replaces_the_plain_record():
    cap = observe(_eager(add_one), [lambda: (torch.randn(2, 3),)], "+graph")
    (msg,) = cap.messages("graph")
    assert msg.startswith("TRACED GRAPH of add_one") and msg.endswith(
        '"add" -> "output";\n}'
    )


def test_plus_perf_adds_running_totals():
    (first, second) = observe(
        _eager(add_one), [lambda: (torch.randn(2),), lambda: (torch.randn(3),)], "+perf"
    ).messages("perf")
    assert (
        "\n    add_one so far: 1 compile(s), " in first
        and "\n    add_one so far: 2 compile(s), " in second
    )
