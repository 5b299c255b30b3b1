"""In-place ops, views and aliasing through every backend, against eager.

The inductor computes a functionalized graph (``fx/src/passes/functionalize.rs``); the eager
runner and Python backends run the traced graph. Each program here runs eagerly and compiled on
equal, separate inputs, and must give eager's values, eager's writes into the inputs (and no
other write), and eager's aliasing: which results share memory with which inputs and with each
other (``data_ptr``), which are the very input objects, and what each result's ``._base`` is.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
import torchferro
from conftest import CountingBackend, assert_same


def python_backend(gm, example_inputs):
    return gm.forward


BACKENDS = ["inductor", "eager", "python"]


def _backend(name):
    return python_backend if name == "python" else name


def _flat(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _relations(inputs, outs):
    """For each result: the positions (inputs then results) of the tensors it is, shares a
    storage with, starts at the same address as, and its ``._base`` (``"other"`` for a tensor
    outside the lists, ``None`` when not a view)."""
    everything = [t for t in inputs if isinstance(t, torch.Tensor)] + [
        o for o in outs if isinstance(o, torch.Tensor)
    ]
    rel = []
    for o in outs:
        if not isinstance(o, torch.Tensor):
            rel.append(None)
            continue
        is_ = [i for i, t in enumerate(everything) if t is o]
        storage = [
            i
            for i, t in enumerate(everything)
            if t.untyped_storage().data_ptr() == o.untyped_storage().data_ptr()
        ]
        ptr = [i for i, t in enumerate(everything) if t.data_ptr() == o.data_ptr()]
        if o._base is None:
            base = None
        else:
            base = next((i for i, t in enumerate(everything) if t is o._base), "other")
        rel.append((is_, storage, ptr, base))
    return rel


def check(fn, make_inputs, backend, seed_before_call=False):
    """Runs ``fn`` eagerly and compiled on equal inputs and compares values, input writes and
    aliasing. ``seed_before_call``: reseed right before each call (random ops)."""
    eager_in = make_inputs()
    comp_in = make_inputs()
    if seed_before_call:
        torch.manual_seed(1234)
    expected = fn(*eager_in)
    compiled = torchferro.compile(fn, backend=_backend(backend))
    if seed_before_call:
        torch.manual_seed(1234)
    actual = compiled(*comp_in)
    assert_same(expected, actual)
    for i, (e, a) in enumerate(zip(eager_in, comp_in)):
        if isinstance(e, torch.Tensor):
            assert torch.equal(e, a), f"input {i} differs after the call"
    assert _relations(eager_in, _flat(expected)) == _relations(comp_in, _flat(actual))
    # A second call (guard hit: the compiled entry runs without tracing) behaves the same.
    eager_in, comp_in = make_inputs(), make_inputs()
    if seed_before_call:
        torch.manual_seed(99)
    expected = fn(*eager_in)
    if seed_before_call:
        torch.manual_seed(99)
    actual = compiled(*comp_in)
    assert_same(expected, actual)
    for e, a in zip(eager_in, comp_in):
        if isinstance(e, torch.Tensor):
            assert torch.equal(e, a)
    assert _relations(eager_in, _flat(expected)) == _relations(comp_in, _flat(actual))


def inputs(*shapes, gen=0):
    def make():
        g = torch.Generator().manual_seed(gen)
        return [torch.randn(*s, generator=g) for s in shapes]

    return make


IDX = torch.tensor([0, 2])
DUP = torch.tensor([1, 1, 3])


# --- in-place ops on inputs, on views and slices of inputs, on intermediates -----------------


def inplace_on_input(x, y):
    x.add_(1)
    x.mul_(y)
    return x * 2


def inplace_augmented_returns_input(x, y):
    x += y
    return x


def inplace_on_intermediate(x):
    a = x + 1
    a.mul_(2)
    a.relu_()
    return a - x


def inplace_on_select_of_input(x, y):
    x[0].mul_(2)
    x[:, 1].add_(y[0, 0])
    return x.sum(0)


def inplace_on_slice_of_input(x):
    x[1:3] += 1
    v = x[:, ::2]
    v.mul_(-1)
    return x + 0, v * 1


def inplace_on_view_read_through_base(x):
    v = x.view(-1)
    v[3:7].zero_()
    return x.clone()


def inplace_on_transposed_view(x):
    x.t().relu_()
    return x * 1


def copy_into_input(x, y):
    x.copy_(y * 2)
    return x


def out_argument(x, y):
    torch.add(x, 1, out=y)
    return y


PROGRAMS = [
    (inplace_on_input, inputs((4, 5), (4, 5))),
    (inplace_augmented_returns_input, inputs((4, 5), (4, 5))),
    (inplace_on_intermediate, inputs((16, 32))),
    (inplace_on_select_of_input, inputs((4, 5), (4, 5))),
    (inplace_on_slice_of_input, inputs((6, 8))),
    (inplace_on_view_read_through_base, inputs((3, 4))),
    (inplace_on_transposed_view, inputs((5, 7))),
    (copy_into_input, inputs((4, 3), (4, 3))),
    (out_argument, inputs((4, 3), (4, 3))),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn,make", PROGRAMS, ids=[p[0].__name__ for p in PROGRAMS])
def test_inplace(fn, make, backend):
    check(fn, make, backend)


# --- clone, then mutate: the clone is never elided into the caller's tensor -------------------


def clone_index_put(a, v):
    a = a.clone()
    a.index_put_((IDX,), v)
    return a


def clone_mask_set(a, v):
    a = a.clone()
    a[a > 0] = 5.0
    return a * 1


def clone_index_set(a, v):
    a = a.clone()
    a[IDX] = v
    return a + 1


def clone_bernoulli(a):
    a = a.clone()
    a.bernoulli_(0.5)
    return a


def clone_index_put_function(a, v):
    # The function spelling: once lowered as a plain call writing the caller's tensor.
    return torch.index_put_(a.clone(), (IDX,), v)


def write_through_maybe_views(a, v):
    # `contiguous`, `detach` and `float` of a contiguous float tensor are the tensor itself.
    a.contiguous().relu_()
    a.detach()[0].add_(1)
    a.float().mul_(2)
    return a + 0


CLONES = [
    (clone_index_put, inputs((4, 3), (2, 3))),
    (clone_index_put_function, inputs((4, 3), (2, 3))),
    (write_through_maybe_views, inputs((4, 3), (2, 3))),
    (clone_mask_set, inputs((4, 3), (2, 3))),
    (clone_index_set, inputs((4, 3), (2, 3))),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn,make", CLONES, ids=[p[0].__name__ for p in CLONES])
def test_clone_then_mutate(fn, make, backend):
    check(fn, make, backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_clone_then_random_fill(backend):
    check(clone_bernoulli, inputs((64, 64)), backend, seed_before_call=True)


# --- index_put_ / x[mask] = v / x[idx] = v on inputs, with and without accumulate -------------


def index_put_input(x, v):
    x.index_put_((IDX,), v)
    return x.sum()


def index_put_accumulate_input(x, v):
    x.index_put_((DUP,), v, accumulate=True)
    return x


def index_set_input(x, v):
    x[IDX] = v
    return x * 2


def mask_set_input(x, v):
    x[x > 0.5] = v[0, 0]
    return x


def mask_set_view_of_input(x, v):
    x[1:][x[1:] < 0] = 0.0
    return x.abs()


INDEX = [
    (index_put_input, inputs((5, 3), (2, 3))),
    (index_put_accumulate_input, inputs((5, 3), (3, 3))),
    (index_set_input, inputs((5, 3), (2, 3))),
    (mask_set_input, inputs((5, 3), (2, 3))),
    (mask_set_view_of_input, inputs((5, 3), (2, 3))),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn,make", INDEX, ids=[p[0].__name__ for p in INDEX])
def test_index_writes(fn, make, backend):
    check(fn, make, backend)


# --- in-place activations on inputs, views and temporaries -----------------------------------


def activations_on_input(x):
    x.relu_()
    return x + 1


def functional_inplace_on_input(x):
    F.relu(x, inplace=True)
    return x


def hardtanh_on_view(x):
    F.hardtanh_(x[1:], -0.5, 0.5)
    return x.sum(1)


def leaky_relu_on_view(x):
    F.leaky_relu(x[:, :2], 0.2, inplace=True)
    return x * 1


def activation_temporaries(x):
    a = (x + 1).relu_()
    b = (x + 2).relu_()
    c = (x - 3).relu_()
    d = F.hardtanh((x * 2), inplace=True)
    return a * 2 + b * 3 + c - d


ACTS = [
    (activations_on_input, inputs((8, 9))),
    (functional_inplace_on_input, inputs((8, 9))),
    (hardtanh_on_view, inputs((6, 5))),
    (leaky_relu_on_view, inputs((6, 5))),
    (activation_temporaries, inputs((64, 256))),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn,make", ACTS, ids=[p[0].__name__ for p in ACTS])
def test_inplace_activations(fn, make, backend):
    check(fn, make, backend)


# --- as_strided views of inputs ---------------------------------------------------------------


def as_strided_write(x):
    v = x.as_strided((2, 2), (1, 2))
    v.mul_(3)
    return x + 0


def as_strided_returned(x):
    v = x.as_strided((2, 3), (3, 1), 1)
    return v, x.sum()


STRIDED = [
    (as_strided_write, inputs((6,))),
    (as_strided_returned, inputs((9,))),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn,make", STRIDED, ids=[p[0].__name__ for p in STRIDED])
def test_as_strided(fn, make, backend):
    check(fn, make, backend)


# --- outputs aliasing inputs or each other ----------------------------------------------------


def outputs_view_each_other(x):
    y = x * 2
    return y, y.view(-1), y[0]


def outputs_view_a_hidden_base(x):
    y = x + 1
    return y.t(), y[1]


def outputs_view_inputs(x):
    return x, x.view(-1), x.t(), x[1:]


def output_view_of_mutated_input(x):
    x.mul_(2)
    return x.t()


ALIASES = [
    (outputs_view_each_other, inputs((4, 5))),
    (outputs_view_a_hidden_base, inputs((4, 5))),
    (outputs_view_inputs, inputs((4, 5))),
    (output_view_of_mutated_input, inputs((4, 5))),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn,make", ALIASES, ids=[p[0].__name__ for p in ALIASES])
def test_output_aliasing(fn, make, backend):
    check(fn, make, backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_write_through_one_output_seen_by_the_others(backend):
    eager = outputs_view_each_other(torch.ones(3, 4))
    compiled = torchferro.compile(outputs_view_each_other, backend=_backend(backend))
    got = compiled(torch.ones(3, 4))
    for outs in (eager, got):
        outs[1][0] = 100.0
    assert_same(eager, got)


# --- the same tensor passed for two parameters ------------------------------------------------


def write_one_read_other(x, y):
    x.add_(1)
    return y * 2


@pytest.mark.parametrize("backend", BACKENDS)
def test_aliased_inputs(backend):
    def make():
        t = torch.arange(6.0)
        return [t, t]

    check(write_one_read_other, make, backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_aliased_inputs_after_distinct_ones(backend):
    # Compiled first with distinct tensors; then one tensor for both: eager's write is seen.
    compiled = torchferro.compile(write_one_read_other, backend=_backend(backend))
    compiled(torch.zeros(3), torch.zeros(3))
    t, u = torch.arange(3.0), torch.arange(3.0)
    assert_same(write_one_read_other(t, t), compiled(u, u))
    assert torch.equal(t, u)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    "views",
    [
        # Overlapping views of one tensor: the write through one is read through the other.
        lambda t: [t[:4], t[2:]],
        lambda t: [t[2:], t[:4]],
        # Interleaved: one storage, byte ranges that overlap, no element shared.
        lambda t: [t[::2], t[1::2]],
        # Disjoint views of one storage: the compiled graph may run as is.
        lambda t: [t[:3], t[3:]],
    ],
    ids=["overlap", "overlap_reversed", "interleaved", "disjoint"],
)
def test_inputs_sharing_a_storage(backend, views):
    # The per-call check compares byte ranges (one data_ptr per input, lengths fixed at
    # compile time) rather than storages; every case must give eager's values and writes.
    check(write_one_read_other, lambda: views(torch.arange(6.0)), backend)


def test_inductor_graph_has_no_inplace_ops():
    """The inductor computes the functional graph: the traced one (what Python backends get)
    still holds the in-place ops, and the inductor reports no whole-graph fallback for them."""
    counter = CountingBackend()
    torchferro.compile(clone_index_put, backend=counter)(
        torch.randn(4, 3), torch.randn(2, 3)
    )
    targets = [str(n.target) for n in counter.op_nodes()]
    assert any("index_put_" in t for t in targets), targets
