"""Probes in child processes (issue 13, "crashes, hangs, lost signals"): a snippet runs in a fresh
interpreter (``run_snippet``) and the test asserts its exit status (0: no SIGSEGV/SIGABRT, no
Python fatal error), that it finished before its timeout (no hang), and its output (each snippet
prints what it checked, and the expected lines are asserted). The snippets: a real pdb session
inside a compiled function, ``sys.settrace`` / ``sys.setprofile`` (installed before and inside the
call, with a tracer that reads ``f_locals``), frame introspection, KeyboardInterrupt delivered
while compiled code runs (every one must reach the user's ``except``, with grad mode restored),
``__del__`` / weakref callbacks calling compiled code, shutdown with live compiled objects, and 8
threads making their first calls and recompiles at the same moment in fresh processes."""

from __future__ import annotations

import signal
import subprocess
import textwrap

import pytest

from .runner import run_child

PRELUDE = """\
import os, sys, signal, threading, gc, weakref, faulthandler
# A child of a process that ignores SIGINT (any job a shell starts in the background, such as
# scripts/gpu_suite.sh's shards) inherits the ignored SIGINT, and Python then installs no
# KeyboardInterrupt handler: the probes' interrupts would be dropped by the kernel. Eager's
# default handler is put back.
signal.signal(signal.SIGINT, signal.default_int_handler)
import torch, torchferro
def same(a, b):
    # Compiled kernels may round transcendentals and sums differently from eager by an ulp
    # (as eager's own vector body and scalar tail do), so values compare with a tight tolerance.
    return a.dtype == b.dtype and a.shape == b.shape and torch.allclose(a, b, rtol=1e-6, atol=1e-6)
"""

# Snippets that may hang dump their stacks and exit (status 1) after this many seconds.
HANG_GUARD = "faulthandler.dump_traceback_later({}, exit=True)\n"

BUG_FINALIZERS = (
    "issue 13 item 8: __del__ / weakref callbacks run inside a compiled frame are lost "
    "(their effects do not happen)"
)


def run_snippet(
    code: str,
    *,
    timeout: float = 120,
    stdin: str | None = None,
    hang_after: float | None = None,
):
    """Runs ``PRELUDE + code`` with ``python -c`` in a fresh process; returns the completed
    process. A timeout fails the test as a hang; with ``hang_after`` the child itself dumps its
    stacks and exits after that many seconds (a hang then shows where it is)."""
    guard = HANG_GUARD.format(hang_after) if hang_after else ""
    src = PRELUDE + guard + textwrap.dedent(code)
    try:
        return run_child(
            ["-X", "faulthandler", "-c", src], timeout=timeout, stdin=stdin
        )
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"the snippet hung ({type(e).__name__}: {e})")


def assert_clean(r, *expected: str) -> None:
    """Exit status 0, no fatal error, and every expected line in stdout."""
    status = r.returncode
    if status < 0:
        status = f"{status} ({signal.Signals(-status).name})"
    assert r.returncode == 0 and "Fatal Python error" not in r.stderr, (
        f"exit status {status}\n--- stdout\n{r.stdout[-3000:]}\n--- stderr\n"
        f"{r.stderr[-3000:]}"
    )
    lines = r.stdout.splitlines()
    for e in expected:
        assert e in lines, f"missing {e!r} in stdout:\n{r.stdout[-3000:]}"


# ---------------------------------------------------------------------------------------------
# Debugger, tracing, profiling, introspection


PDB_SESSION = """
import pdb
def g(t):
    z = t * 3
    return z
def f(x):
    y = x + 1
    pdb.set_trace()
    w = g(y)
    k = w - 1
    return k * 2
fn = torchferro.compile(f) if COMPILE else f
for _ in range(2):
    out = fn(torch.ones(3))
    print("result", out.tolist())
"""

# Every command the issue names, stepping into a callee and back out, and a second call that
# stops again (its frame compiled or not, the session must be the same).
PDB_COMMANDS = (
    "p sorted(locals())\np y.tolist()\nwhere\nn\np sorted(locals())\ns\ns\nwhere\n"
    "p sorted(locals())\nup\np sorted(locals())\ndown\nn\np z.tolist()\nr\nn\n"
    "locals\np sorted(locals().keys())\nc\np sorted(locals())\nn\nn\nc\n"
)


def _pdb_transcript(code: str, commands: str, compiled: bool) -> str:
    r = run_snippet(f"COMPILE = {compiled}\n" + code, stdin=commands, timeout=90)
    assert_clean(r)
    return r.stdout


def test_pdb_session_inside_compiled_function():
    """A real pdb session driven through stdin stops inside a compiled function: every command
    (p, n, s, where, up, down, locals, r, c) prints what it prints eagerly, line for line: the
    user's frames, their variables only, no torchferro frame stepped into."""
    eager = _pdb_transcript(PDB_SESSION, PDB_COMMANDS, False)
    compiled = _pdb_transcript(PDB_SESSION, PDB_COMMANDS, True)
    assert "(Pdb) ['x', 'y']" in eager and "result [10.0, 10.0, 10.0]" in eager, eager
    assert compiled == eager


PDB_STEP_INTO = """
import pdb
def f(x):
    y = x.sin() + 1
    return y * 2
cf = torchferro.compile(f) if COMPILE else f
x = torch.ones(3)
first = cf(x)  # compiled and cached before the debugger starts
pdb.set_trace()
out = cf(x)
print("same", same(out, first))
"""


def test_pdb_steps_into_a_compiled_function_as_into_eager():
    """`s` on a call of a function already compiled and cached steps into the user's frame, as
    eagerly (under a trace function every frame runs as it is), and `n` then walks its lines."""
    commands = "s\nwhere\nn\np sorted(locals())\np y.tolist()\nn\nc\n"
    eager = _pdb_transcript(PDB_STEP_INTO, commands, False)
    compiled = _pdb_transcript(PDB_STEP_INTO, commands, True)
    assert "--Call--" in eager and "same True" in eager, eager
    assert compiled == eager


SETTRACE = """
events = []
def tracer(frame, event, arg):
    frame.f_locals  # what coverage tools and debuggers read
    events.append((frame.f_code.co_name, event))
    return tracer
def g(x):
    return torch.relu(x) * 2
def f(x):
    y = g(x) + 1
    {inside}
    return y.sum()
cf = torchferro.compile(f)
x = torch.randn(8)
{before}
a = cf(x); b = cf(x)
sys.settrace(None)
print("equal", bool(a == f(x)) and bool(b == f(x)))
print("traced", len(events) > 0 or {expect_none})
"""


@pytest.mark.parametrize("where", ["before", "inside"])
def test_settrace(where):
    code = SETTRACE.format(
        inside="sys.settrace(tracer)" if where == "inside" else "",
        before="sys.settrace(tracer)" if where == "before" else "",
        expect_none=True,
    )
    assert_clean(run_snippet(code), "equal True", "traced True")


def test_setprofile():
    r = run_snippet(
        """
        calls = []
        def prof(frame, event, arg):
            frame.f_locals
            calls.append(event)
        def f(x):
            y = torch.sin(x) + 1
            print("in f", len(str(y.shape)))
            return y * 2
        cf = torchferro.compile(f)
        x = torch.randn(5)
        sys.setprofile(prof)
        a = cf(x); b = cf(x)
        sys.setprofile(None)
        print("equal", same(a, f(x)) and same(b, f(x)))
        print("profiled", len(calls) > 0)
        """
    )
    assert_clean(r, "equal True", "profiled True")


def test_profile_function_never_sees_torchferro_frames():
    """A profile function sees the user's program only: the guards, the compiler and the
    graph's runner are torchferro's own Python code (``torchferro._amp`` in an autocast or
    grad-mode region, ``_events``, ``_functional``), run unseen, as eager has no such frames."""
    r = run_snippet(
        """
        seen = set()
        pkg = os.path.dirname(torchferro.__file__)
        def prof(frame, event, arg):
            if frame.f_code.co_filename.startswith(pkg):
                seen.add((os.path.basename(frame.f_code.co_filename), frame.f_code.co_name))
        def f(x):
            with torch.no_grad():
                y = x.sin() * 2
            with torch.autocast("cpu", dtype=torch.bfloat16):
                z = y @ y.t()
            print("between", file=sys.stderr)
            return z.float().sum() + y.sum()
        for backend in ("eager", "inductor"):
            cf = torchferro.compile(f, backend=backend)
            x = torch.randn(4, 4)
            sys.setprofile(prof)
            a = cf(x); b = cf(x)
            sys.setprofile(None)
            print(backend, "equal", same(a, f(x)) and same(b, f(x)))
        print("torchferro frames", sorted(seen))
        """
    )
    assert_clean(r, "eager equal True", "inductor equal True", "torchferro frames []")


def test_frame_introspection_does_not_crash():
    r = run_snippet(
        """
        import inspect, traceback
        def f(x):
            y = x * 2
            names = [fi.function for fi in inspect.stack()[:2]]
            stack = traceback.extract_stack(limit=3)
            back = sys._getframe().f_back.f_locals
            return y + 1, names, len(stack), "cf" in back
        cf = torchferro.compile(f)
        x = torch.randn(3)
        for _ in range(3):
            out = cf(x)
        print("names", out[1][0])
        print("equal", same(out[0], x * 2 + 1))
        """
    )
    assert_clean(r, "names f", "equal True")


# ---------------------------------------------------------------------------------------------
# Signals, finalizers, shutdown


def test_keyboard_interrupt_reaches_user_every_time():
    r = run_snippet(
        """
        def f(x):
            with torch.no_grad():
                y = (x @ x).relu() + 1
            return (y * 2).sum()
        cf = torchferro.compile(f)
        x = torch.randn(64, 64)
        N, caught, grad_ok = 40, 0, 0
        for i in range(N):
            running = threading.Event()
            def interrupt(delay=0.002 + (i % 5) * 0.001):
                running.wait()
                threading.Event().wait(delay)
                os.kill(os.getpid(), signal.SIGINT)
            t = threading.Thread(target=interrupt)
            t.start()
            try:
                running.set()
                while True:  # only the interrupt ends it: a lost one hangs (the timeout)
                    cf(x)
            except KeyboardInterrupt:
                caught += 1
            t.join()
            grad_ok += torch.is_grad_enabled()
        print("caught", caught, "of", N)
        print("grad mode restored", grad_ok == N)
        """,
        timeout=120,
        hang_after=30,
    )
    assert_clean(r, "caught 40 of 40", "grad mode restored True")


@pytest.mark.parametrize("where", ["handler", "isEnabledFor"])
def test_keyboard_interrupt_inside_torchferro_logging_reaches_user(where):
    """A signal whose handler runs inside Python code torchferro calls and cannot raise from
    (here its logging: a handler's filter, or `Logger.isEnabledFor`) still
    reaches the user: the interrupt is kept and raised when the hook returns to Python, instead
    of being printed as unraisable and lost (the mechanism behind the lost interrupts)."""
    r = run_snippet(
        f"WHERE = {where!r}\n"
        + textwrap.dedent(
            """
        import io, logging
        fired = []
        class Interrupt(logging.Filter):
            def filter(self, record):
                if not fired:
                    fired.append(record.name)
                    os.kill(os.getpid(), signal.SIGINT)
                    for _ in range(1000):  # the eval breaker runs the handler in here
                        pass
                return True
        lg = logging.getLogger("torchferro")
        lg.setLevel(logging.DEBUG)
        h = logging.StreamHandler(io.StringIO())
        if WHERE == "handler":
            h.addFilter(Interrupt())
        else:
            enabled = logging.Logger.isEnabledFor
            def is_enabled_for(self, level):
                Interrupt().filter(self)
                return enabled(self, level)
            logging.Logger.isEnabledFor = is_enabled_for
        lg.addHandler(h)
        def f(x):
            return x.sin() + 1
        cf = torchferro.compile(f)
        x = torch.randn(4)
        try:
            cf(x)
            print("interrupt lost")
        except KeyboardInterrupt:
            print("interrupted")
        print("fired", len(fired))
        print("then", same(cf(x), f(x)))
        """
        ),
        timeout=90,
    )
    assert_clean(r, "interrupted", "fired 1", "then True")
    assert "Exception ignored" not in r.stderr, r.stderr[-2000:]


def test_python_signal_handler_runs_as_is():
    """A Python signal handler runs at arbitrary points, also while compiled code runs: it must
    run as it is (not be traced and compiled, not hit the recompile limit)."""
    r = run_snippet(
        """
        hits = []
        def handler(signum, frame):
            hits.append(torch.ones(1).item())
            raise KeyboardInterrupt
        signal.signal(signal.SIGUSR1, handler)
        def f(x):
            return (x.sin() * 2 + x.cos()).sum()
        cf = torchferro.compile(f)
        x = torch.randn(256)
        n = 0
        for i in range(30):
            running = threading.Event()
            def interrupt():
                running.wait()
                threading.Event().wait(0.002)
                os.kill(os.getpid(), signal.SIGUSR1)
            t = threading.Thread(target=interrupt)
            t.start()
            try:
                running.set()
                while True:
                    cf(x)
            except KeyboardInterrupt:
                n += 1
            t.join()
        print("handled", n, len(hits))
        """,
        timeout=120,
        hang_after=30,
    )
    assert_clean(r, "handled 30 30")
    assert "recompile" not in r.stderr.lower(), r.stderr[-2000:]


def test_finalizers_calling_compiled_code():
    r = run_snippet(
        """
        def g(x):
            return x * 3 + 1
        cg = torchferro.compile(g)
        seen = []
        class Res:
            def __del__(self):
                seen.append(float(cg(torch.ones(1)).item()))
        def f(x):
            r = Res()
            wr = weakref.ref(r, lambda _: seen.append(float(cg(torch.ones(1) * 2).item())))
            del r
            gc.collect()
            return x + 1
        cf = torchferro.compile(f)
        for _ in range(3):
            out = cf(torch.zeros(2))
        print("seen", sorted(set(seen)))
        print("out", out.tolist())
        """
    )
    assert_clean(r, "seen [4.0, 7.0]", "out [1.0, 1.0]")


def test_shutdown_with_live_compiled_objects():
    r = run_snippet(
        """
        import atexit
        m = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU())
        cm = torchferro.compile(m)
        cf = torchferro.compile(lambda x: x.sin() + 1)
        ci = torchferro.compile(lambda x: x.cos() * 2, backend="inductor")
        x = torch.randn(2, 4)
        cm(x); cf(x); ci(x)
        class Late:
            def __del__(self):
                cf(torch.ones(1))  # called while the interpreter tears down
        keep = Late()
        atexit.register(lambda: print("atexit", cf(torch.zeros(1)).item()))
        holder = [cm, cf, ci, Late()]
        print("ready")
        """
    )
    assert_clean(r, "ready", "atexit 1.0")


# ---------------------------------------------------------------------------------------------
# Threads

THREADS = """
faulthandler.dump_traceback_later(20, exit=True)  # a deadlock shows its stacks
N = 8
barrier = threading.Barrier(N)
errors, results = [], {}
def body(i):
    return (x_of(i).relu() * 2 + 1).sum(dim=-1)
def x_of(i):
    g = torch.Generator().manual_seed(i)
    return torch.randn(2 + i % 3, 16, generator=g)  # 3 shapes: recompiles while others run
cf = torchferro.compile(body, backend=BACKEND)
def worker(i):
    try:
        barrier.wait()
        for _ in range(5):
            results[i] = cf(i)
    except BaseException as e:
        errors.append(repr(e))
ts = [threading.Thread(target=worker, args=(i,)) for i in range(N)]
for t in ts: t.start()
for t in ts: t.join(60)
print("alive", sum(t.is_alive() for t in ts))
print("errors", errors)
print("equal", all(same(results[i], body(i)) for i in range(N)))
os._exit(0 if not any(t.is_alive() for t in ts) else 3)
"""


@pytest.mark.parametrize("backend", ["eager", "inductor"])
def test_threads_first_calls_and_recompiles(backend):
    """8 threads make their first compiled call (and 3 recompiles) at the same moment in a
    fresh process; a deadlock dumps the stacks after 20 s (seen today: one thread inside an
    import's find_spec, the others waiting in their first compiled call)."""
    r = run_snippet(f"BACKEND = {backend!r}\n" + THREADS, timeout=50)
    assert_clean(r, "alive 0", "errors []", "equal True")
