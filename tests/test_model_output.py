"""transformers' `ModelOutput` dataclasses built inside a compiled frame: tracked by their field
values and built again after the graph by calling the class, so the frame stays one graph. Each
program runs under `fullgraph=True` and must match eager (type, keys, values, None fields)."""

from __future__ import annotations

import pytest
import torch

import torchferro
from conftest import CountingBackend

transformers = pytest.importorskip("transformers")
from transformers.modeling_outputs import (  # noqa: E402
    BaseModelOutputWithPast,
    CausalLMOutputWithCrossAttentions,
)

# transformers renamed the `past_key_values` field `cache` (5.2x), keeping the old name as a
# keyword and a property; the GPU machine's 5.17 has only the old name.
CACHE = (
    "cache"
    if "cache" in BaseModelOutputWithPast.__dataclass_fields__
    else "past_key_values"
)


def _same(got, want):
    assert type(got) is type(want)
    if isinstance(want, dict):
        assert list(got.keys()) == list(want.keys())
        for f in type(want).__dataclass_fields__:
            _same(getattr(got, f), getattr(want, f))
        for k in want:
            _same(got[k], want[k])
    elif isinstance(want, (tuple, list)):
        assert len(got) == len(want)
        for a, b in zip(got, want):
            _same(a, b)
    elif isinstance(want, torch.Tensor):
        torch.testing.assert_close(got, want, rtol=0, atol=0)
    else:
        assert got == want


def _check(fn, *args):
    torchferro.compiler.reset()
    backend = CountingBackend()
    compiled = torchferro.compile(fn, backend=backend, fullgraph=True)
    want = fn(*args)
    got = compiled(*args)
    _same(got, want)
    again = compiled(*args)
    _same(again, want)
    assert backend.count == 1, backend.describe()
    return got


def built_and_read(x):
    out = BaseModelOutputWithPast(last_hidden_state=x.sin(), hidden_states=(x, x * 2))
    h = out.last_hidden_state + out[0] + out["last_hidden_state"]
    first, second = out.to_tuple()
    return (
        out,
        h,
        second[1] - first,
        out.attentions is None,
        getattr(out, CACHE),
        out.past_key_values,
        len(out),
        list(out.keys()),
        "hidden_states" in out,
        "attentions" in out,
        out.get("attentions", 7),
        out[1:],
        isinstance(out, dict),
        isinstance(out, tuple),
        bool(out),
    )


def test_fields_keys_items_and_the_rebuilt_instance():
    got = _check(built_and_read, torch.randn(3, 4))
    assert got[0].attentions is None


def positional_and_old_cache_keyword(x):
    # `past_key_values` is the old name of the `cache` field (transformers 5.2x): the class
    # renames the keyword.
    a = CausalLMOutputWithCrossAttentions(None, x.cos(), past_key_values=(x,))
    items = [(k, v) for k, v in a.items()]
    values = list(a.values())
    old = getattr(a, "cache_params", None) if CACHE == "cache" else None
    return a, items, values, a.logits * 2, a[CACHE], old


def test_positional_fields_and_the_renamed_cache_keyword():
    _check(positional_and_old_cache_keyword, torch.randn(2, 5))


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x):
        return BaseModelOutputWithPast(last_hidden_state=self.lin(x).relu())


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block()

    def forward(self, x):
        h = self.block(x)
        return CausalLMOutputWithCrossAttentions(
            logits=h.last_hidden_state * 2, hidden_states=h.to_tuple()
        )


def test_output_of_an_inlined_submodule_and_of_the_frame():
    torch.manual_seed(0)
    m = Model().eval()
    with torch.no_grad():
        _check(m, torch.randn(2, 4))


def live_at_a_graph_break(x):
    out = BaseModelOutputWithPast(last_hidden_state=x + 1)
    torch._dynamo.graph_break()
    return out.last_hidden_state * 3, out


def test_live_across_a_graph_break_is_the_same_value():
    torchferro.compiler.reset()
    x = torch.randn(4)
    want = live_at_a_graph_break(x)
    got = torchferro.compile(live_at_a_graph_break)(x)
    _same(got, want)


def only_field_is_a_list(x):
    # A lone first field that is not a tensor is read as (key, value) pairs by __post_init__:
    # not modelled, so the frame breaks there (and gives eager's result).
    return BaseModelOutputWithPast([("last_hidden_state", x)])


def _refused_then_eager(fn, x, reason):
    """Under fullgraph the frame is refused with `reason`; without it, it gives eager's result
    (the frame, or the part after the break, runs eagerly). Returns that result."""
    torchferro.compiler.reset()
    with pytest.raises(torchferro.Unsupported, match=reason):
        torchferro.compile(fn, fullgraph=True)(x)
    torchferro.compiler.reset()
    want = fn(x)
    got = torchferro.compile(fn)(x)
    _same(got, want)
    return got


def test_a_lone_non_tensor_first_field_breaks_under_fullgraph():
    _refused_then_eager(
        only_field_is_a_list, torch.randn(2), "its __post_init__ iterates it"
    )


def written_after_it_is_built(x):
    # transformers' output capturing fills in hidden states this way; a key set later goes
    # last in the dict, here also its place among the fields.
    out = BaseModelOutputWithPast(last_hidden_state=x)
    out["hidden_states"] = (x, x + 1)
    out.attentions = (x * 2,)
    out["last_hidden_state"] = x.relu()  # an existing key keeps its place
    return out, list(out.keys()), out.to_tuple()[1][1], out[-1][0]


def test_item_and_attribute_writes_in_field_order():
    _check(written_after_it_is_built, torch.randn(3))


def written_out_of_field_order(x):
    out = BaseModelOutputWithPast(last_hidden_state=x)
    out.attentions = (x * 2,)
    out["hidden_states"] = (x,)
    keys = list(out.keys())
    return keys, out[1][0] + out[2][0], out


def test_keys_set_out_of_field_order_keep_their_order():
    # Read inside the frame, the order is the dict's own; returned, the object cannot be built
    # again by its class with that order, so under fullgraph the frame is refused, and without
    # it the result still matches eager.
    got = _refused_then_eager(
        written_out_of_field_order, torch.randn(3), "out of field order"
    )
    assert got[0] == ["last_hidden_state", "attentions", "hidden_states"]


def written_none(x):
    out = BaseModelOutputWithPast(last_hidden_state=x, hidden_states=(x,))
    out.hidden_states = None  # the attribute becomes None, the dict keeps its entry
    return out.hidden_states, list(out.keys())


def test_writing_none_is_refused_under_fullgraph_and_matches_eager_otherwise():
    _refused_then_eager(written_none, torch.randn(2), "to None")


def _decoder(x):
    print(end="")
    return BaseModelOutputWithPast(last_hidden_state=x + 1, **{CACHE: (x * 2,)})


def _read_across_a_break(x):
    out = _decoder(x.sin())
    return out[0] * 2 + out[1][0] + x


@pytest.mark.parametrize("grad", [True, False])
def test_a_model_output_from_a_break_read_by_position(grad):
    """Session 25 (t5fix25): T5's forward resumes after its decoder's graph break with the
    decoder's ModelOutput on its stack and reads ``decoder_outputs[0]``: the graph input's
    source read the dict raw (key 0, missing) and the first call crashed. Graph counts as
    torch.compile's; training (grad) and inference."""
    import torch._dynamo
    from programs.counting import Count

    x = torch.randn(3, requires_grad=grad)
    with torch.set_grad_enabled(grad):
        want = _read_across_a_break(x)
        torch._dynamo.reset()
        tc = Count()
        torch.testing.assert_close(
            torch.compile(_read_across_a_break, backend=tc)(x), want
        )
        torch._dynamo.reset()
        torchferro.compiler.reset()
        c = Count()
        f = torchferro.compile(_read_across_a_break, backend=c)
        torch.testing.assert_close(f(x), want)
        x2 = torch.randn(3, requires_grad=grad)
        torch.testing.assert_close(f(x2), _read_across_a_break(x2))
    assert c.n == tc.n
