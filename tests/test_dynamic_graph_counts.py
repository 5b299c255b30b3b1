"""Issue 18: no more graphs than torch.compile (session 30, dyngraphs30).

Session 29's hunt (docs/dynamic-shapes.md, "Session 29 (hunt29)") found programs where
torchferro traced more graphs than torch.compile, values right:

- a loss between two inputs' sizes (``F.mse_loss(x @ w, y)``): the probes of
  ``fx/src/infer/symbolic.rs`` moved the two batch symbols apart, the loss refused, and both
  were specialized; torch.compile guards their equality and keeps one symbol. What a loss
  requires of its input and target sizes is now known before probing
  (``Sym::loss_relations``), as broadcasting's and a matrix product's were; so is ``addmm``'s
  bias against the product, and the fitted ops that broadcast (``lerp``, ``addcmul``,
  ``cosine_similarity``, ``triplet_margin_loss``, ...: found next to it, each with no symbolic
  rule, specializing every size it read);
- writes whose sizes come from the input's (``x[: n // 2] = 0``, ``buf[arange(n) % 3] += x``,
  ``z[1:] = x`` of ``z = x.new_zeros(n + 1, 3)``): ``operator.setitem`` had no symbolic rule
  and specialized every size it read (now fitted, its value broadcast to the indexed view as
  required relations, ``Sym::setitem_relations``); an in-place op on a view of a moving length
  guarded the length ``!= 1`` as an out-of-place broadcast does (torch does not);
- ``x.reshape(b * t, -1)`` of a call with 0 rows: eager raises; the symbolic rule's refusal was a
  graph break, an entry of its own (torch.compile raises from its trace and keeps nothing); an
  op torch refuses at the call's sizes now raises as with static sizes.

Each program runs eagerly, under torch.compile (counting backend) and under torchferro (the
counting backend, then the inductor) over sizes including 0 and 1: values and the inputs after
the call (in-place writes) are eager's, and the graph counts are asserted exactly.
"""

from __future__ import annotations

import hypothesis.strategies as st
import pytest
import torch
import torch._dynamo
import torch.nn.functional as F
import torchferro
import torchferro.compiler
from hypothesis import given, note
from programs.compare import (
    assert_inductor_entries,
    compiled_pair,
    generated,
    graph_counts_over_sizes,
    run_over_sizes,
    same,
)
from programs.counting import Count

SIZES = [4, 7, 1, 9, 4, 0, 3]
NONZERO = [4, 7, 1, 9, 4, 3]


def mse_of_a_product(x, w, y):
    return F.mse_loss(x @ w, y)


def l1_of_a_product(x, w, y):
    return F.l1_loss(x @ w, y)


def bce_with_logits_of_a_product(x, w, y):
    return F.binary_cross_entropy_with_logits(x @ w, y)


def cross_entropy_of_a_product(x, w, y):
    return F.cross_entropy(x @ w, y)


def slice_writes_by_size(x):
    n = x.size(0)
    x[: n // 2] = 0
    x[n // 2 :].mul_(3)
    return x.sum(1)


def index_put_by_arange(x, buf):
    idx = torch.arange(x.size(0))
    buf[idx % buf.size(0)] += x
    return buf.clone(), idx


def new_zeros_then_write(x):
    z = x.new_zeros(x.shape[0] + 1, x.shape[1])
    z[1:] = x
    return z.cumsum(0)


def reshape_flatten_unflatten(x):
    b, t = x.shape[:2]
    y = x.reshape(b * t, -1).relu()
    return y.view(b, t, -1).sum(1), y.shape[0]


def lerp_of_a_product(x, w, y):
    return torch.lerp(x @ w, y, 0.25)


def addcmul_of_a_product(x, w, y):
    return torch.addcmul(y, x @ w, y, value=0.5)


def cosine_similarity_of_a_product(x, w, y):
    return F.cosine_similarity(x @ w, y)


def triplet_margin_of_a_product(x, w, y):
    return F.triplet_margin_loss(x @ w, y, y.flip(0))


def addmm_of_a_bias(x, w, y):
    return torch.addmm(y, x * 2, w)


def einsum_batched_product(a, b):
    return torch.einsum("bij,bjk->bik", a, b)


def einsum_attention_scores(q, k):
    return torch.einsum("bhqd,bhkd->bhqk", q, k)


def index_add_method(x, idx, src):
    return x.index_add(0, idx, src)


def index_add_function(x, idx, src):
    return torch.index_add(x, 0, idx, src, alpha=2)


def cosine_embedding_of_a_product(x, w, y, t):
    return F.cosine_embedding_loss(x @ w, y, t)


def norm_over_a_dim(x):
    return torch.norm(x, dim=1) + torch.linalg.vector_norm(x, ord=1, dim=0).sum()


def tensordot_contracting(a, b):
    return torch.tensordot(a, b, dims=([1], [0]))


def cdist_of_rows(a, b):
    return torch.cdist(a, b)


def broadcast_then_meshgrid(a, b):
    x, y = torch.broadcast_tensors(a, b)
    i, j = torch.meshgrid(a[:, 0], b[0], indexing="ij")
    u, v = torch.meshgrid(a[:, 0], b[0], indexing="xy")
    return x * y + i * j, u - v


def block_diag_of_a_size(a, b):
    return torch.block_diag(a, b, b[0])


def atleast_of_a_vector(x):
    return torch.atleast_1d(x) + 1, torch.atleast_2d(x) * 2, torch.atleast_3d(x) * 3


def repeat_interleave_by_an_int(x):
    return torch.repeat_interleave(x, 2, dim=0), x.repeat_interleave(3)


def bucketize_rows(x, b):
    return torch.bucketize(x, b)


def unfold_then_fold(x):
    cols = F.unfold(x, kernel_size=2)
    return cols, F.fold(cols, output_size=x.shape[2:], kernel_size=2)


def selections_of_rows(x, y, b):
    """Ops whose result sizes are the inputs' (fitted; no rule before session 31)."""
    v = x[:, 0]
    out = [
        torch.outer(v, y[0]).sum(1),
        torch.inner(x, y).sum(1),
        torch.linalg.cross(x, y).sum(1),
        torch.diag_embed(x).sum((1, 2)),
        torch.rot90(x, 1, (0, 1)).sum(0),
        torch.movedim(x.unsqueeze(2), 0, -1).sum((0, 1)),
        torch.cummax(x, 0).values.sum(1),
        torch.logcumsumexp(x, 0).sum(1),
        torch.kthvalue(x, 1, 1).values,
        torch.median(x, 1).values,
        sum(torch.aminmax(x, dim=1)),
        torch.searchsorted(b, x).sum(1).float(),
        torch.renorm(x, 2, 0, 1.0).sum(1),
        F.softmin(x, 0).sum(1),
        torch.nan_to_num(x.log()).sum(1),
    ]
    return torch.stack(out), torch.trace(x @ y.T), torch.trapezoid(x, dim=0)


def products_of_rows(x):
    """Ops whose result sizes are products, quotients or differences (`symbolic/shaped.rs`)."""
    return (
        torch.tile(x, (2, 1)),
        F.glu(x, -1),
        F.pixel_shuffle(x.reshape(1, 4, -1, 1), 2),
        torch.cumulative_trapezoid(x, dim=0),
        torch.cartesian_prod(x[:, 0], x[0]),
    )


def sampled_rows(x, grid, m, u, w):
    return F.grid_sample(x, grid, align_corners=False), torch.addr(m, u, w)


def _index_add_args(b, gen):
    return [
        torch.randn(b, 3, generator=gen),
        torch.randint(0, b, (b,), generator=gen),
        torch.randn(b, 3, generator=gen),
    ]


def _product_args(target):
    def make(b, gen):
        x, w = torch.randn(b, 5, generator=gen), torch.randn(5, 3, generator=gen)
        if target == "classes":
            return [x, w, torch.randint(0, 3, (b,), generator=gen)]
        return [x, w, torch.rand(b, 3, generator=gen)]

    return make


# name: (program, inputs of a size, sizes, {dynamic: (torch.compile's graphs, ours)}).
# Ours are fewer under automatic dynamic where torch.compile traces the size-1 call again
# (its 0/1 specialization) and our size-oblivious symbols verify the graph at 1.
PROGRAMS = {
    "mse": (
        mse_of_a_product,
        _product_args("floats"),
        NONZERO,
        {None: (3, 2), True: (2, 2)},
    ),
    "l1": (
        l1_of_a_product,
        _product_args("floats"),
        NONZERO,
        {None: (3, 2), True: (2, 2)},
    ),
    "bce_with_logits": (
        bce_with_logits_of_a_product,
        _product_args("floats"),
        NONZERO,
        {None: (3, 2), True: (2, 2)},
    ),
    "cross_entropy": (
        cross_entropy_of_a_product,
        _product_args("classes"),
        NONZERO,
        {None: (3, 2), True: (2, 2)},
    ),
    # Fitted ops that broadcast their tensors (no symbolic rule before: every size read was
    # specialized, 5 graphs under automatic dynamic).
    **{
        name: (program, _product_args("floats"), NONZERO, {None: (3, 2), True: (2, 2)})
        for name, program in [
            ("lerp", lerp_of_a_product),
            ("addcmul", addcmul_of_a_product),
            ("cosine_similarity", cosine_similarity_of_a_product),
            ("triplet_margin", triplet_margin_of_a_product),
        ]
    },
    # The bias of `addmm` broadcast to the product (5 graphs under automatic dynamic before).
    "addmm": (
        addmm_of_a_bias,
        lambda b, gen: [
            torch.randn(b, 4, generator=gen),
            torch.randn(4, 3, generator=gen),
            torch.randn(b, 3, generator=gen),
        ],
        NONZERO,
        {None: (3, 2), True: (3, 3)},
    ),
    # Ops with no symbolic relations before (session 30, dynrules30): 5 graphs under
    # automatic dynamic. `torch.einsum` is recorded as `torch.functional.einsum`, a path the
    # rules did not name; its subscripts now say which sizes are one (`Sym::einsum_relations`).
    "einsum_bmm": (
        einsum_batched_product,
        lambda b, gen: [
            torch.randn(b, 3, 5, generator=gen),
            torch.randn(b, 5, 2, generator=gen),
        ],
        NONZERO,
        {None: (3, 2), True: (2, 2)},
    ),
    "einsum_attention": (
        einsum_attention_scores,
        lambda b, gen: [
            torch.randn(2, 3, b, 4, generator=gen),
            torch.randn(2, 3, b, 4, generator=gen),
        ],
        NONZERO,
        {None: (3, 2), True: (3, 3)},
    ),
    # The source's sizes against the input's and the index's (`Sym::index_add_relations`).
    "index_add_method": (
        index_add_method,
        _index_add_args,
        NONZERO,
        {None: (3, 2), True: (2, 2)},
    ),
    "index_add_function": (
        index_add_function,
        _index_add_args,
        NONZERO,
        {None: (3, 2), True: (2, 2)},
    ),
    # The two inputs broadcast, the target meets their batch (`Sym::cosine_embedding_relations`).
    "cosine_embedding": (
        cosine_embedding_of_a_product,
        lambda b, gen: [
            *_product_args("floats")(b, gen),
            torch.randint(0, 2, (b,), generator=gen) * 2 - 1,
        ],
        NONZERO,
        {None: (3, 2), True: (2, 2)},
    ),
    # Ops with no symbolic rule before (session 31, dynrules31): every size they read was
    # specialized (6 graphs over 6 sizes). Fitted (`norm`, `tensordot` and `cdist` with the
    # sizes they contract or broadcast required equal, `broadcast_tensors`, `meshgrid`,
    # `atleast_*d`, `bucketize`) or ruled (`repeat_interleave` by an int, `block_diag`,
    # `F.unfold`/`F.fold`: sizes that are products and sums, `symbolic/shaped.rs`).
    "norm": (
        norm_over_a_dim,
        lambda b, gen: [torch.randn(b, 5, generator=gen)],
        NONZERO,
        {None: (3, 2), True: (2, 2)},
    ),
    "tensordot": (
        tensordot_contracting,
        lambda b, gen: [
            torch.randn(b, 5, generator=gen),
            torch.randn(5, b, 2, generator=gen),
        ],
        NONZERO,
        {None: (3, 2), True: (2, 2)},
    ),
    "cdist": (
        cdist_of_rows,
        lambda b, gen: [
            torch.randn(b, 4, generator=gen),
            torch.randn(3, 4, generator=gen),
        ],
        NONZERO,
        {None: (3, 2), True: (3, 3)},
    ),
    "broadcast_meshgrid": (
        broadcast_then_meshgrid,
        lambda b, gen: [
            torch.randn(b, 1, generator=gen),
            torch.randn(1, 5, generator=gen),
        ],
        NONZERO,
        {None: (3, 3), True: (2, 2)},
    ),
    "block_diag": (
        block_diag_of_a_size,
        lambda b, gen: [
            torch.randn(b, 3, generator=gen),
            torch.randn(2, b, generator=gen),
        ],
        NONZERO,
        {None: (3, 2), True: (2, 2)},
    ),
    "atleast": (
        atleast_of_a_vector,
        lambda b, gen: [torch.randn(b, generator=gen)],
        NONZERO,
        {None: (3, 2), True: (2, 2)},
    ),
    "repeat_interleave": (
        repeat_interleave_by_an_int,
        lambda b, gen: [torch.randn(b, 3, generator=gen)],
        NONZERO,
        {None: (3, 2), True: (2, 2)},
    ),
    "bucketize": (
        bucketize_rows,
        lambda b, gen: [torch.randn(b, 3, generator=gen), torch.linspace(-1, 1, 5)],
        NONZERO,
        {None: (3, 2), True: (2, 2)},
    ),
    "unfold_fold": (
        unfold_then_fold,
        lambda b, gen: [torch.randn(2, 3, b + 2, 5, generator=gen)],
        NONZERO,
        {None: (2, 2), True: (1, 1)},
    ),
    # A third probe list (dynrules31): fitted ops, then ops with computed sizes (each op
    # alone made a graph per size before). Ours equal torch.compile's 3 where an op answers
    # differently at size 1 (a cross product's or a sampler's strides): both trace size 1
    # again.
    "selections": (
        selections_of_rows,
        lambda b, gen: [
            torch.randn(b, 3, generator=gen),
            torch.randn(b, 3, generator=gen),
            torch.linspace(-1, 1, 5),
        ],
        NONZERO,
        {None: (3, 3), True: (2, 2)},
    ),
    "products": (
        products_of_rows,
        lambda b, gen: [torch.randn(b, 4, generator=gen)],
        NONZERO,
        {None: (3, 3), True: (3, 3)},
    ),
    "sampled": (
        sampled_rows,
        lambda b, gen: [
            torch.randn(b, 3, 4, 4, generator=gen),
            torch.rand(b, 2, 3, 2, generator=gen) * 2 - 1,
            torch.randn(b, 5, generator=gen),
            torch.randn(b, generator=gen),
            torch.randn(5, generator=gen),
        ],
        NONZERO,
        {None: (3, 3), True: (3, 3)},
    ),
    "slice_writes": (
        slice_writes_by_size,
        lambda b, gen: [torch.randn(b, 4, generator=gen)],
        SIZES,
        {None: (4, 3), True: (4, 4)},
    ),
    "index_put": (
        index_put_by_arange,
        lambda b, gen: [torch.randn(b, 2, generator=gen), torch.zeros(3, 2)],
        SIZES,
        {None: (4, 3), True: (3, 3)},
    ),
    "new_zeros_write": (
        new_zeros_then_write,
        lambda b, gen: [torch.randn(b, 3, generator=gen)],
        SIZES,
        {None: (4, 3), True: (3, 3)},
    ),
}


_run = run_over_sizes
_counts = graph_counts_over_sizes


@pytest.mark.parametrize("dynamic", [None, True])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_graph_counts_against_torch_compile(name, dynamic):
    program, make, sizes, counts = PROGRAMS[name]
    tc, fc = _counts(program, make, sizes, dynamic)
    assert (tc, fc) == counts[dynamic], f"torch.compile {tc}, torchferro {fc}"
    assert fc <= tc


@pytest.mark.parametrize("dynamic", [None, True])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_values_and_entries_on_the_inductor(name, dynamic):
    """The default backend: as many cache entries as graphs above, each on the inductor."""
    program, make, sizes, counts = PROGRAMS[name]
    assert_inductor_entries(program, make, sizes, dynamic, counts[dynamic][1])


def test_an_in_place_op_on_a_view_reaching_length_1_shares_the_graph():
    """`x[n // 2:].mul_(3)` at n = 2 writes a 1-row view: torch.compile keeps one graph over
    2..9 (an in-place op with a number operand asks nothing of the receiver's sizes); the
    out-of-place `x[n // 2:] * 3` is guarded `!= 1` by both, and traced again at 2."""

    def in_place(x):
        n = x.size(0)
        x = x.clone()
        x[n // 2 :].mul_(3)
        return x

    def out_of_place(x):
        n = x.size(0)
        return x[n // 2 :] * 3

    for program, want in ((in_place, 1), (out_of_place, 2)):
        torch._dynamo.reset()
        torchferro.compiler.reset()
        tc, fc = Count(), Count()
        t = torch.compile(program, backend=tc, dynamic=True)
        f = torchferro.compile(program, backend=fc, dynamic=True)
        for n in range(2, 10):
            x = torch.randn(n, 3)
            same(t(x), program(x))
            same(f(x), program(x))
        assert (tc.n, fc.n) == (want, want), program.__name__
    torch._dynamo.reset()
    torchferro.compiler.reset()


def test_an_op_torch_refuses_at_the_sizes_raises_without_an_entry():
    """`reshape(b * t, -1)` of a call with 0 rows: eager raises; torchferro raises eager's error
    and keeps no entry for it (torch.compile: 3 graphs over the sizes, its trace raising at 0),
    so the inductor's entries are torch.compile's graphs (was 4 entries: a graph break before the
    reshape, compiled)."""
    program = reshape_flatten_unflatten
    with compiled_pair(program, True) as (tc, t, f, gen):
        for s in SIZES:
            x = torch.randn(s, 3, 4, generator=gen)
            if s == 0:
                message = "cannot reshape tensor of 0 elements"
                with pytest.raises(RuntimeError, match=message):
                    program(x)
                with pytest.raises(RuntimeError, match=message):
                    f(x)
                with pytest.raises(RuntimeError):
                    t(x)
                continue
            same(f(x), program(x))
            same(t(x), program(x))
        entries = torchferro.compiler.cache_entries(f)
    assert (len(entries), tc.n) == (3, 3)
    assert all(e["runner"] == "inductor" for e in entries)


# --- generated: losses between two inputs whose sizes the loss needs equal -----------------------

LOSSES = {
    "mse": lambda a, y: F.mse_loss(a, y),
    "l1": lambda a, y: F.l1_loss(a, y),
    "smooth_l1": lambda a, y: F.smooth_l1_loss(a, y),
    "huber": lambda a, y: F.huber_loss(a, y),
    "bce": lambda a, y: F.binary_cross_entropy(a.sigmoid(), y),
    "bce_with_logits": lambda a, y: F.binary_cross_entropy_with_logits(a, y),
    "kl_div": lambda a, y: F.kl_div(a.log_softmax(-1), y, reduction="batchmean"),
    "cross_entropy_probs": lambda a, y: F.cross_entropy(a, y.softmax(-1)),
    "cross_entropy_classes": lambda a, y: F.cross_entropy(a, (y[:, 0] * 2.9).long()),
    "nll_weighted": lambda a, y: F.nll_loss(
        a.log_softmax(-1), (y[:, 0] * 2.9).long(), weight=y[0]
    ),
}


@generated(12)
@given(
    loss=st.sampled_from(sorted(LOSSES)),
    rows=st.lists(st.integers(1, 9), min_size=2, max_size=5),
    dynamic=st.sampled_from([None, True]),
    product=st.booleans(),
)
def test_generated_losses_between_inputs(loss, rows, dynamic, product):
    """A loss of a value made from one input (a product with a weight, or a scaled copy) and a
    target input with the same row count, each input its own symbol: torchferro's values are
    eager's and its graph count at most torch.compile's."""
    fn = LOSSES[loss]

    def program(x, w, y):
        return fn(x @ w if product else x * 2, y)

    note(f"{loss} rows {rows} dynamic {dynamic} product {product}")

    def make(b, gen):
        x = torch.randn(b, 5 if product else 3, generator=gen)
        return [x, torch.randn(5, 3, generator=gen), torch.rand(b, 3, generator=gen)]

    tc, fc = _counts(program, make, rows, dynamic)
    note(f"graphs: torch.compile {tc}, torchferro {fc}")
    assert fc <= tc, f"torchferro {fc} graphs, torch.compile {tc}"


# --- generated: einsum subscripts whose shared letters are one size ---------------------------


@generated(10)
@given(
    x_order=st.permutations("bij"),
    y_order=st.permutations("bjk"),
    out_order=st.permutations("bik"),
    ellipsis=st.booleans(),
    contract_rows=st.booleans(),
    rows=st.lists(st.integers(1, 9), min_size=2, max_size=5),
    dynamic=st.sampled_from([None, True]),
)
def test_generated_einsum_of_two_inputs(
    x_order, y_order, out_order, ellipsis, contract_rows, rows, dynamic
):
    """`torch.einsum` of two inputs sharing a batch letter (the row count, each input its own
    symbol) and a contracted one (the row count too, or a constant), subscripts in any order,
    with or without `...` leading: values are eager's and the graph count at most torch.compile's
    (was 5 over 5 sizes: the recorded `torch.functional.einsum` had no rule)."""
    lead = "..." if ellipsis else ""
    equation = (
        f"{lead}{''.join(x_order)},{lead}{''.join(y_order)}->{lead}{''.join(out_order)}"
    )
    note(f"{equation} rows {rows} dynamic {dynamic} contract_rows {contract_rows}")

    def program(x, y):
        return torch.einsum(equation, x, y)

    def make(n, gen):
        size = {"b": n, "i": 2, "j": n if contract_rows else 3, "k": 4}
        pre = [2] if ellipsis else []
        return [
            torch.randn(pre + [size[c] for c in x_order], generator=gen),
            torch.randn(pre + [size[c] for c in y_order], generator=gen),
        ]

    tc, fc = _counts(program, make, rows, dynamic)
    note(f"graphs: torch.compile {tc}, torchferro {fc}")
    assert fc <= tc, f"torchferro {fc} graphs, torch.compile {tc}"


@pytest.mark.parametrize("name", ["slice_writes", "new_zeros_write"])
def test_setitem_writes_are_one_library_over_sizes(name, monkeypatch, caplog):
    """`x[: n // 2] = 0` and `z[1:] = x` lower as a scatter of the value broadcast to the
    indexed view (`on_clone(operator.setitem)`, `lower/view_scatter.rs::setitem`): one graph
    and one C compile over rows 2..33 (a fresh kernel cache), torch.compile's one graph, values
    and written inputs eager's. (Before: the graph was declined by the symbolic lowering and ran
    on kernels fitted over sizes, two libraries for `slice_writes`.)"""
    import logging
    import tempfile

    from programs.dynamic import inductor_log
    from torchferro import _C

    monkeypatch.setenv("TORCHFERRO_CACHE_DIR", tempfile.mkdtemp(prefix="tf-dg30-"))
    program, make, _, _ = PROGRAMS[name]
    sizes = [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 16, 17, 33]
    torch._dynamo.reset()
    torchferro.compiler.reset()
    tc = Count()
    _run(program, make, sizes, torch.compile(program, backend=tc, dynamic=True))
    f = torchferro.compile(program, dynamic=True)
    before = _C.precompile_counters()[1]
    try:
        with (
            caplog.at_level(logging.INFO, logger="torchferro.inductor"),
            torch.no_grad(),
        ):
            _run(program, make, sizes, f)
        entries = torchferro.compiler.cache_entries(f)
    finally:
        torchferro.compiler.reset()
        torch._dynamo.reset()
    compiles = _C.precompile_counters()[1] - before
    text = "\n".join(inductor_log(caplog.records))
    assert (tc.n, len(entries), compiles) == (1, 1, 1), text
    assert "lowered symbolically: one library" in text, text


# --- generated: ops whose sizes had no symbolic rule (session 31) -------------------------------


def _op_cases(n, gen, p):
    """``(program, inputs)`` of op ``p["op"]`` with its drawn parameters, at size ``n``."""

    def r(*shape):
        return torch.randn(*shape, generator=gen)

    op = p["op"]
    if op == "norm":
        dim, keep, order = p["dim"], p["flag"], p["order"]
        return (
            lambda x: (
                torch.linalg.vector_norm(x, ord=order, dim=dim, keepdim=keep)
                + torch.norm(x, dim=dim, keepdim=keep)
            ),
            [r(n, 4)],
        )
    if op == "tensordot":
        return (lambda a, b: torch.tensordot(a, b, dims=([1], [0])), [r(n, 3), r(3, n)])
    if op == "cdist":
        return (lambda a, b: torch.cdist(a, b), [r(2, n, 3), r(1, p["k"], 3)])
    if op == "broadcast_tensors":
        return (
            lambda a, b: torch.broadcast_tensors(a, b)[int(p["flag"])] * 2,
            [r(n, 1), r(p["k"])],
        )
    if op == "meshgrid":
        ix = "ij" if p["flag"] else "xy"
        return (
            lambda a, b: torch.stack(torch.meshgrid(a, b, indexing=ix)),
            [r(n), r(p["k"])],
        )
    if op == "atleast":
        fn = [torch.atleast_1d, torch.atleast_2d, torch.atleast_3d][p["k"] - 1]
        return (lambda x: fn(x) + 1, [r(n, 2) if p["flag"] else r(n)])
    if op == "repeat_interleave":
        dim = p["dim"] if p["dim"] in (0, 1) else None
        return (lambda x: x.repeat_interleave(p["k"], dim=dim), [r(n, 2)])
    if op == "block_diag":
        return (lambda a, b: torch.block_diag(a, b), [r(n, p["k"]), r(2, n)])
    if op == "bucketize":
        return (
            lambda x, b: torch.bucketize(x, b, right=p["flag"]),
            [r(n, 2), torch.linspace(-1, 1, p["k"] + 2)],
        )
    if op == "tile":
        reps = (p["k"], 1) if p["flag"] else (p["k"],)
        return (lambda x: torch.tile(x, reps), [r(n, 2)])
    if op == "glu":
        return (lambda x: F.glu(x, p["dim"] if p["dim"] != 1 else 0), [r(2 * n, 4)])
    if op == "cumulative_trapezoid":
        return (lambda x: torch.cumulative_trapezoid(x, dim=p["dim"]), [r(n, 3)])
    if op == "cartesian_prod":
        return (lambda a, b: torch.cartesian_prod(a, b), [r(n), r(p["k"])])
    if op == "outer_inner":
        return (
            lambda a, b: (torch.outer(a[:, 0], b[0]), torch.inner(a, b)),
            [r(n, 3), r(p["k"], 3)],
        )
    assert op == "unfold"
    k = p["k"]
    return (
        lambda x: F.unfold(x, kernel_size=k, padding=int(p["flag"]), stride=p["order"]),
        [r(1, 2, n + 3, 4)],
    )


@generated(20)
@given(
    op=st.sampled_from(
        [
            "norm",
            "tensordot",
            "cdist",
            "broadcast_tensors",
            "meshgrid",
            "atleast",
            "repeat_interleave",
            "block_diag",
            "bucketize",
            "unfold",
            "tile",
            "glu",
            "cumulative_trapezoid",
            "cartesian_prod",
            "outer_inner",
        ]
    ),
    dim=st.sampled_from([0, 1, -1]),
    flag=st.booleans(),
    order=st.sampled_from([1, 2]),
    k=st.integers(1, 3),
    rows=st.lists(st.integers(1, 9), min_size=2, max_size=5),
    dynamic=st.sampled_from([None, True]),
)
def test_generated_ops_given_rules_in_session_31(
    op, dim, flag, order, k, rows, dynamic
):
    """Each op that had no symbolic rule (every size it read was specialized: a graph per size)
    with drawn parameters, its input's rows over a drawn size sequence: values are eager's and
    torchferro's graph count at most torch.compile's."""
    params = {"op": op, "dim": dim, "flag": flag, "order": order, "k": k}
    note(f"{params} rows {rows} dynamic {dynamic}")
    program = _op_cases(2, torch.Generator(), params)[0]

    def make(n, gen):
        return _op_cases(n, gen, params)[1]

    tc, fc = _counts(program, make, rows, dynamic)
    note(f"graphs: torch.compile {tc}, torchferro {fc}")
    assert fc <= tc, f"torchferro {fc} graphs, torch.compile {tc}"
