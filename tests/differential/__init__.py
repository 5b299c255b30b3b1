"""The differential harness (issue 13): every program runs eagerly, through ``torch.compile``
(a counting backend that runs the GraphModule as is, like torch's "eager" backend), through
torchferro with the same counting backend, and through torchferro with the ``inductor`` backend,
on fresh clones of two input sets (``programs.harness.Inputs`` seeds 0 and 1; one compiled
callable for both, so the second call goes through the cache and its guards). Each compiled run
is compared with the eager run by ``programs.harness.check_results``:

- values, dtypes, shapes, requires_grad, the sign of float zeros, and the output structure;
- aliasing: the relation graph among input and output tensors (same object, shared storage by
  ``untyped_storage().data_ptr()``, views by ``_base``);
- input mutations (tensors, containers, objects) and Python side effects (named globals,
  module state: parameters, buffers, attributes), stdout;
- the global RNG state after the call (the RNG is seeded before each call), the grad / inference /
  autocast modes and the default dtype after the call;
- the exception type and message where eager raises.

torchferro's graph count must be no higher than torch.compile's: in issue 13's files a higher
count is an xfail (the breadth issue), not a failure. A cases file that sets ``STRICT_BREADTH =
True`` (issue 14's, starting with ``cases_builtins.py``) makes it a failure: where torch.compile
makes N >= 1 graphs, torchferro must give eager's values in <= N graphs without running more
frames eagerly than torch.compile gave up on (``runner.captured``; torch.compile's count is its
``counters["frames"]`` attempted minus converted), unless the case names the gap with ``breadth="..."`` (a strict
xfail). ``conftest.py`` prints, per topic and in total, how many programs torch.compile captures
in N graphs and how many of those torchferro captures in <= N; ``-k builtins`` selects a topic. ``torch._dynamo.reset()`` and ``torchferro.compiler.reset()`` run
before every mode. A program torchferro gets wrong today is ``xfail(strict=True)`` with a
``BUG_*`` reason naming its issue-13 item; a fix turns it into an XPASS failure, and the mark is
removed at merge. Programs that may crash the interpreter run in a child process
(``child=True``), as do the probes of ``test_probes_child.py``.

Files: ``runner.py`` (modes, registry, child runs), ``cases_*.py`` (the corpus),
``test_differential.py`` (the parametrized test), ``test_generated_effects.py`` (the hypothesis
generator with side effects), ``test_probes_child.py`` (pdb, tracing, signals, threads, shutdown).
"""
