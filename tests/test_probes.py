"""Crash probes: each runs a small program in a child process (so a SIGSEGV or a hang fails
the test, not the pytest run) and checks its exit code and output against eager's."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

PKG = os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python"
)


def _run(
    src: str, timeout: float = 120, stdin: str = ""
) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = PKG + os.pathsep + env.get("PYTHONPATH", "")
    env["PYTHONFAULTHANDLER"] = "1"
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(src)],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


def _ok(r: subprocess.CompletedProcess, want: str):
    assert r.returncode == 0, f"exit {r.returncode}\n{r.stdout}\n{r.stderr[-3000:]}"
    assert want in r.stdout, r.stdout + r.stderr[-3000:]


def test_sparse_input_does_not_crash():
    r = _run(
        """
        import torch, torchferro
        def f(x):
            return x * 2
        for make in (lambda: torch.eye(3).to_sparse(), lambda: torch.eye(3).to_sparse_csr()):
            got = torchferro.compile(f)(make()).to_dense()
            assert torch.equal(got, f(make()).to_dense())
        print("OK")
        """
    )
    _ok(r, "OK")


def test_pdb_set_trace_inside_a_compiled_function():
    # pdb imports modules from site-packages whose finders call `format(**locals())`; with the
    # hook active those frames are traced too.
    r = _run(
        """
        import torch, torchferro, pdb
        def f(x):
            y = x + 1
            pdb.set_trace()
            return y * 2
        print("RESULT", torchferro.compile(f)(torch.ones(2)).tolist())
        """,
        stdin="p sorted(locals())\nc\n",
    )
    _ok(r, "RESULT [4.0, 4.0]")
    assert "['x', 'y']" in r.stdout, r.stdout


def test_breakpoint_builtin_inside_a_compiled_function():
    r = _run(
        """
        import torch, torchferro
        def f(x):
            y = x + 1
            breakpoint()
            return y * 2
        print("RESULT", torchferro.compile(f)(torch.ones(2)).tolist())
        """,
        stdin="p sorted(locals())\nc\n",
    )
    _ok(r, "RESULT [4.0, 4.0]")
    assert "['x', 'y']" in r.stdout, r.stdout


def test_format_of_locals_and_call_with_locals():
    r = _run(
        """
        import torch, torchferro
        def h(x, a):
            return x * a.sum()
        def f(x):
            a = x + 1
            return "{a}".format(**locals()), h(**locals())
        s, t = torchferro.compile(f)(torch.ones(2))
        s0, t0 = f(torch.ones(2))
        assert s == s0 and torch.equal(t, t0), (s, s0)
        print("OK")
        """
    )
    _ok(r, "OK")


@pytest.mark.parametrize("hook", ["settrace", "setprofile"])
def test_trace_and_profile_functions_reading_frame_locals(hook):
    r = _run(
        f"""
        import sys, torch, torchferro
        seen = []
        def tr(frame, event, arg):
            seen.append(sorted(frame.f_locals))
            return tr
        def f(x):
            y = x + 1
            print("break")
            return y * 2
        cf = torchferro.compile(f)
        sys.{hook}(tr)
        out = [cf(torch.ones(2)).tolist() for _ in range(3)]
        sys.{hook}(None)
        assert all(o == [4.0, 4.0] for o in out), out
        internal = [n for names in seen for n in names if n.startswith("___")]
        assert not internal, internal
        print("OK")
        """
    )
    _ok(r, "OK")


def test_frame_introspection_in_compiled_code():
    r = _run(
        """
        import inspect, sys, torch, torchferro
        def f(x):
            y = x + 1
            a = sorted(inspect.currentframe().f_locals)
            b = sorted(sys._getframe().f_locals)
            return y * 2, a, b
        got = torchferro.compile(f)(torch.ones(2))
        want = f(torch.ones(2))
        assert got[1:] == want[1:] == (["x", "y"], ["a", "x", "y"]), got
        print("OK")
        """
    )
    _ok(r, "OK")


def test_compiled_objects_alive_at_interpreter_shutdown():
    r = _run(
        """
        import torch, torchferro
        class M(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.l = torch.nn.Linear(3, 3)
            def forward(self, x):
                print("break")
                return self.l(x).relu()
        m = torchferro.compile(M())
        f = torchferro.compile(lambda x: x.sin() + 1)
        m(torch.ones(2, 3)); f(torch.ones(3))
        keep = [m, f]
        class Late:
            def __del__(self):
                f(torch.ones(3)); m(torch.ones(2, 3))
        late = Late()
        keep.append(late)
        print("OK")
        """
    )
    _ok(r, "OK")


def test_self_holding_containers_do_not_overflow_the_stack():
    r = _run(
        """
        import torch, torchferro
        def f(x, a):
            return x + len(a)
        a = [1]
        a.append(a)
        d = {}
        d["me"] = d
        print(torchferro.compile(f)(torch.ones(2), a).tolist(),
              torchferro.compile(f)(torch.ones(2), d).tolist())
        """
    )
    _ok(r, "[3.0, 3.0] [2.0, 2.0]")
