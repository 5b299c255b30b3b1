"""Issue 14, session 28 (breadth28): transformers' generation utilities as transformers writes
them, by hand: logits processors and warpers called through a ``list`` subclass with a
``__call__`` (``LogitsProcessorList``, which reads ``inspect.signature`` of each processor's
``__call__``), stopping criteria and their ``list`` subclass with a property, a
``GenerationConfig``-like dataclass read with ``getattr`` defaults and ``dataclasses.replace``,
a greedy decoding loop, ``torch.finfo(dtype).min`` masks (causal, padding, sliding window,
cache positions). Timm, torchvision, einops-style and dataclass-config idioms are in
``cases_library_idioms``. Each must give eager's values in no more graphs than torch.compile
(``STRICT_BREADTH``)."""

# The programs spell these idioms as the library writes them, on purpose:
# ruff: noqa: UP045

from __future__ import annotations

import dataclasses
import inspect
import math
from typing import Optional

import torch
from torch import nn

from .runner import TC_DIFFERS, case, register

# Issue 14: more graphs than torch.compile fails unless the case names the gap (breadth=).
STRICT_BREADTH = True


def logits_and_ids(r):
    return (r.randn(2, 11), r.randint(0, 11, 2, 5))


def x_tokens(r):
    return (r.randn(2, 6, 8),)


# ---------------------------------------------------------------------------------------------
# transformers' generation utilities


class TemperatureLogitsWarper:
    def __init__(self, temperature: float):
        if not isinstance(temperature, float) or not (temperature > 0):
            raise ValueError(
                f"`temperature` has to be a strictly positive float, got {temperature}"
            )
        self.temperature = temperature

    def __call__(self, input_ids, scores):
        return scores / self.temperature


class TopKLogitsWarper:
    def __init__(
        self,
        top_k: int,
        filter_value: float = -float("Inf"),
        min_tokens_to_keep: int = 1,
    ):
        self.top_k = max(top_k, min_tokens_to_keep)
        self.filter_value = filter_value

    def __call__(self, input_ids, scores):
        top_k = min(self.top_k, scores.size(-1))
        indices_to_remove = scores < torch.topk(scores, top_k)[0][..., -1, None]
        return scores.masked_fill(indices_to_remove, self.filter_value)


class TopPLogitsWarper:
    def __init__(
        self,
        top_p: float,
        filter_value: float = -float("Inf"),
        min_tokens_to_keep: int = 1,
    ):
        self.top_p = float(top_p)
        self.filter_value = filter_value
        self.min_tokens_to_keep = min_tokens_to_keep

    def __call__(self, input_ids, scores):
        sorted_logits, sorted_indices = torch.sort(scores, descending=False)
        cumulative_probs = sorted_logits.softmax(dim=-1).cumsum(dim=-1)
        sorted_indices_to_remove = cumulative_probs <= (1 - self.top_p)
        sorted_indices_to_remove[..., -self.min_tokens_to_keep :] = 0
        indices_to_remove = sorted_indices_to_remove.scatter(
            1, sorted_indices, sorted_indices_to_remove
        )
        return scores.masked_fill(indices_to_remove, self.filter_value)


class RepetitionPenaltyLogitsProcessor:
    def __init__(self, penalty: float):
        self.penalty = penalty

    def __call__(self, input_ids, scores):
        score = torch.gather(scores, 1, input_ids)
        score = torch.where(score < 0, score * self.penalty, score / self.penalty)
        return scores.scatter(1, input_ids, score)


class MinLengthLogitsProcessor:
    def __init__(self, min_length: int, eos_token_id):
        if not isinstance(eos_token_id, torch.Tensor):
            if isinstance(eos_token_id, int):
                eos_token_id = [eos_token_id]
            eos_token_id = torch.tensor(eos_token_id)
        self.min_length = min_length
        self.eos_token_id = eos_token_id

    def __call__(self, input_ids, scores):
        vocab_tensor = torch.arange(scores.shape[-1], device=scores.device)
        eos_token_mask = torch.isin(vocab_tensor, self.eos_token_id)
        scores_processed = scores.clone()
        if input_ids.shape[-1] < self.min_length:
            scores_processed = torch.where(eos_token_mask, -math.inf, scores)
        return scores_processed


class LogitsProcessorList(list):
    """transformers' list subclass: calls each processor in turn, passing extra keyword
    arguments only to those whose ``__call__`` takes them."""

    def __call__(self, input_ids, scores, **kwargs):
        for processor in self:
            function_args = inspect.signature(processor.__call__).parameters
            if len(function_args) > 2:
                scores = processor(input_ids, scores, **kwargs)
            else:
                scores = processor(input_ids, scores)
        return scores


@case(logits_and_ids)
def logits_processor_list_made_in_frame(scores, input_ids):
    processors = LogitsProcessorList()
    processors.append(RepetitionPenaltyLogitsProcessor(1.3))
    processors.extend([TemperatureLogitsWarper(0.7), TopKLogitsWarper(top_k=4)])
    return processors(input_ids, scores), len(processors)


PROCESSORS = LogitsProcessorList(
    [
        MinLengthLogitsProcessor(8, eos_token_id=2),
        TopPLogitsWarper(0.8),
        TemperatureLogitsWarper(1.5),
    ]
)


@case(logits_and_ids)
def logits_processor_list_global(scores, input_ids):
    return PROCESSORS(input_ids, scores)


@case(logits_and_ids)
def top_k_then_top_p_with_finfo_filter(scores, input_ids):
    fill = torch.finfo(scores.dtype).min
    scores = TopKLogitsWarper(5, filter_value=fill)(input_ids, scores)
    return TopPLogitsWarper(0.9, filter_value=fill, min_tokens_to_keep=2)(
        input_ids, scores
    )


@case(logits_and_ids)
def temperature_rejects_int_like_transformers(scores, input_ids):
    try:
        TemperatureLogitsWarper(1)
    except ValueError as e:
        msg = str(e)
    return scores / 2, msg


class StoppingCriteria:
    def __call__(self, input_ids, scores, **kwargs):
        raise NotImplementedError("StoppingCriteria needs to be subclassed")


class MaxLengthCriteria(StoppingCriteria):
    def __init__(self, max_length: int, max_position_embeddings: Optional[int] = None):
        self.max_length = max_length
        self.max_position_embeddings = max_position_embeddings

    def __call__(self, input_ids, scores, **kwargs):
        cur_len = input_ids.shape[-1]
        is_done = cur_len >= self.max_length
        return torch.full(
            (input_ids.shape[0],), is_done, device=input_ids.device, dtype=torch.bool
        )


class EosTokenCriteria(StoppingCriteria):
    def __init__(self, eos_token_id):
        if not isinstance(eos_token_id, torch.Tensor):
            if isinstance(eos_token_id, int):
                eos_token_id = [eos_token_id]
            eos_token_id = torch.tensor(eos_token_id)
        self.eos_token_id = eos_token_id

    def __call__(self, input_ids, scores, **kwargs):
        return torch.isin(input_ids[:, -1], self.eos_token_id)


class StoppingCriteriaList(list):
    def __call__(self, input_ids, scores, **kwargs):
        is_done = torch.full(
            (input_ids.shape[0],), False, device=input_ids.device, dtype=torch.bool
        )
        for criteria in self:
            is_done = is_done | criteria(input_ids, scores, **kwargs)
        return is_done

    @property
    def max_length(self):
        for stopping_criterium in self:
            if isinstance(stopping_criterium, MaxLengthCriteria):
                return stopping_criterium.max_length
        return None


@case(logits_and_ids)
def stopping_criteria_list_and_its_max_length(scores, input_ids):
    criteria = StoppingCriteriaList(
        [EosTokenCriteria(eos_token_id=[3, 7]), MaxLengthCriteria(6)]
    )
    done = criteria(input_ids, scores)
    return done, criteria.max_length, StoppingCriteriaList().max_length


@dataclasses.dataclass
class GenerationConfigLike:
    max_new_tokens: int = 3
    do_sample: bool = False
    temperature: float = 1.0
    top_k: Optional[int] = 50
    repetition_penalty: float = 1.0
    eos_token_id: Optional[list] = None
    pad_token_id: Optional[int] = None
    extra: dict = dataclasses.field(default_factory=dict)

    def get_warpers(self):
        warpers = LogitsProcessorList()
        if self.temperature is not None and self.temperature != 1.0:
            warpers.append(TemperatureLogitsWarper(self.temperature))
        if self.top_k is not None and self.top_k != 0:
            warpers.append(TopKLogitsWarper(top_k=self.top_k))
        return warpers


GEN_CONFIG = GenerationConfigLike(
    temperature=0.5, top_k=3, eos_token_id=[1], pad_token_id=0
)


@case(logits_and_ids)
def generation_config_reads_with_getattr_defaults(scores, input_ids):
    cfg = GEN_CONFIG
    pad = getattr(cfg, "pad_token_id", None)
    eos = getattr(cfg, "eos_token_id", None) or []
    penalty = getattr(cfg, "no_such_option", 1.0)
    scores = cfg.get_warpers()(input_ids, scores) * penalty
    attention_mask = (
        input_ids.ne(pad).long() if pad is not None else torch.ones_like(input_ids)
    )
    return scores, attention_mask, len(eos), cfg.extra.get("x", "default")


@case(logits_and_ids)
def generation_config_replaced_in_frame(scores, input_ids):
    cfg = dataclasses.replace(GEN_CONFIG, top_k=None, temperature=2.0)
    fields = {f.name for f in dataclasses.fields(cfg)}
    return cfg.get_warpers()(input_ids, scores), cfg.top_k, "do_sample" in fields


class TinyLM(nn.Module):
    def __init__(self, vocab=11, d=8):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.head = nn.Linear(d, vocab)

    def forward(self, input_ids):
        return self.head(self.emb(input_ids).mean(1, keepdim=True))


class GreedyGenerate(nn.Module):
    """transformers' ``_sample`` loop, greedy: processors, argmax, padding of finished rows,
    the stopping criteria, ``unfinished_sequences`` kept as a long tensor."""

    def __init__(self):
        super().__init__()
        self.model = TinyLM().eval()
        self.pad_token_id = 0

    def forward(self, input_ids):
        processors = LogitsProcessorList([RepetitionPenaltyLogitsProcessor(1.2)])
        criteria = StoppingCriteriaList(
            [MaxLengthCriteria(input_ids.shape[-1] + 3), EosTokenCriteria(5)]
        )
        unfinished = torch.ones(
            input_ids.shape[0], dtype=torch.long, device=input_ids.device
        )
        this_peer_finished = False
        steps = 0
        while not this_peer_finished:
            logits = self.model(input_ids)[:, -1, :].float()
            next_token_scores = processors(input_ids, logits)
            next_tokens = torch.argmax(next_token_scores, dim=-1)
            next_tokens = next_tokens * unfinished + self.pad_token_id * (
                1 - unfinished
            )
            input_ids = torch.cat([input_ids, next_tokens[:, None]], dim=-1)
            unfinished = unfinished & ~criteria(input_ids, next_token_scores)
            this_peer_finished = input_ids.shape[-1] >= criteria.max_length
            steps += 1
        return input_ids, unfinished, steps


register(
    "greedy_generate_loop_with_processors",
    GreedyGenerate,
    lambda r: (r.randint(0, 11, 2, 4),),
    module=True,
)


@case(x_tokens)
def causal_and_padding_mask_from_finfo_min(x):
    b, t, _ = x.shape
    dtype = x.dtype
    min_dtype = torch.finfo(dtype).min
    causal = torch.full((t, t), fill_value=min_dtype, dtype=dtype)
    causal = torch.triu(causal, diagonal=1)
    causal = causal[None, None, :, :].expand(b, 1, -1, -1).clone()
    padding = (x[..., 0] > -1.0)[:, None, None, :]
    causal = causal.masked_fill(~padding, min_dtype)
    scores = (x @ x.transpose(1, 2))[:, None] + causal
    return scores.softmax(-1)


@case(x_tokens)
def sliding_window_mask_in_half(x):
    t = x.shape[1]
    window = 3
    xh = x.to(torch.float16)
    ones = torch.ones(t, t, dtype=torch.bool)
    allowed = torch.tril(ones) & ~torch.tril(ones, diagonal=-window)
    bias = torch.zeros(t, t, dtype=xh.dtype).masked_fill(
        ~allowed, torch.finfo(xh.dtype).min
    )
    return bias, (xh.float() @ x.transpose(1, 2) + bias.float()).softmax(-1)


def prepare_4d_causal_mask_with_cache_position(
    attention_mask, sequence_length, target_length, dtype, cache_position, batch_size
):
    """transformers' (<= 4.4x) helper, as Llama and Qwen2 wrote it."""
    if attention_mask is not None and attention_mask.dim() == 4:
        return attention_mask
    min_dtype = torch.finfo(dtype).min
    causal_mask = torch.full(
        (sequence_length, target_length), fill_value=min_dtype, dtype=dtype
    )
    if sequence_length != 1:
        causal_mask = torch.triu(causal_mask, diagonal=1)
    causal_mask *= torch.arange(target_length) > cache_position.reshape(-1, 1)
    causal_mask = causal_mask[None, None, :, :].expand(batch_size, 1, -1, -1)
    if attention_mask is not None:
        causal_mask = causal_mask.clone()
        mask_length = attention_mask.shape[-1]
        padding_mask = (
            causal_mask[:, :, :, :mask_length] + attention_mask[:, None, None, :]
        )
        padding_mask = padding_mask == 0
        causal_mask[:, :, :, :mask_length] = causal_mask[
            :, :, :, :mask_length
        ].masked_fill(padding_mask, min_dtype)
    return causal_mask


@case(lambda r: (r.randint(0, 11, 2, 5), r.bool(2, 5)))
def causal_mask_with_cache_position_like_llama(input_ids, pad):
    attention_mask = (~pad).long()
    attention_mask[:, -1] = 1
    past_seen = 0
    cache_position = torch.arange(past_seen, past_seen + input_ids.shape[1])
    position_ids = attention_mask.long().cumsum(-1) - 1
    position_ids = position_ids.masked_fill(attention_mask == 0, 1)
    mask = prepare_4d_causal_mask_with_cache_position(
        attention_mask,
        input_ids.shape[1],
        input_ids.shape[1],
        torch.float32,
        cache_position,
        input_ids.shape[0],
    )
    return (
        mask,
        position_ids,
        torch.ones_like(input_ids[0, :], dtype=torch.int64).cumsum(0) - 1,
    )


# ---------------------------------------------------------------------------------------------
# transformers' own classes (the library is in the venv; left out where it is not)

try:
    from transformers import masking_utils as mu
    from transformers.activations import ACT2FN
    from transformers.generation import logits_process as lp
    from transformers.generation import stopping_criteria as sc
    from transformers.pytorch_utils import apply_chunking_to_forward

    @case(logits_and_ids)
    def hf_logits_processor_list_sampling_warpers(scores, input_ids):
        processors = lp.LogitsProcessorList(
            [
                lp.RepetitionPenaltyLogitsProcessor(1.2),
                lp.TemperatureLogitsWarper(0.7),
                lp.TopKLogitsWarper(top_k=5),
                lp.TopPLogitsWarper(top_p=0.9),
            ]
        )
        return processors(input_ids, scores)

    @case(logits_and_ids)
    def hf_min_p_typical_epsilon_warpers(scores, input_ids):
        out = lp.MinPLogitsWarper(min_p=0.1)(input_ids, scores)
        out = lp.EpsilonLogitsWarper(epsilon=3e-2)(input_ids, out)
        return out, lp.TypicalLogitsWarper(mass=0.8)(input_ids, scores)

    # ForcedEOSTokenLogitsProcessor.__init__ breaks on `(eos_token_id < 0).any()`: its frame
    # (`L['self']`) and the caller's resume function (the new instance on its stack) get a
    # callable processor made afresh per call, guarded by type (was by identity until session
    # 29: 5 graphs to torch.compile's 3).
    @case(logits_and_ids)
    def hf_min_length_and_suppress_tokens(scores, input_ids):
        out = lp.MinLengthLogitsProcessor(min_length=8, eos_token_id=2)(
            input_ids, scores
        )
        out = lp.SuppressTokensLogitsProcessor([0, 4])(input_ids, out)
        return lp.ForcedEOSTokenLogitsProcessor(max_length=6, eos_token_id=[3])(
            input_ids, out
        )

    @case(logits_and_ids)
    def hf_stopping_criteria_list(scores, input_ids):
        criteria = sc.StoppingCriteriaList(
            [
                sc.MaxLengthCriteria(max_length=6),
                sc.EosTokenCriteria(eos_token_id=[3, 7]),
            ]
        )
        return criteria(input_ids, scores), criteria.max_length

    # ACT2FN[name] builds NewGELUActivation/QuickGELUActivation on each read: a module the
    # trace builds (a tracked object, `nn.Module.__init__` inlined on it), in the graph.
    @case(x_tokens)
    def hf_act2fn_lookup_in_forward(x):
        return [ACT2FN[name](x) for name in ("gelu_new", "silu", "quick_gelu", "relu")]

    @case(x_tokens)
    def hf_eager_mask_sliding_and_padding(x):
        pad = x[..., 0] > -1.0
        pad[:, -1] = True
        fn = mu.and_masks(
            mu.sliding_window_causal_mask_function(3), mu.padding_mask_function(pad)
        )
        n = x.shape[1]
        return mu.eager_mask(
            x.shape[0], n, n, mask_function=fn, dtype=torch.float32
        ), mu.sdpa_mask(
            x.shape[0], n, n, attention_mask=pad, allow_is_causal_skip=False
        )

    class ChunkedFF(nn.Module):
        def __init__(self):
            super().__init__()
            self.ff = nn.Linear(8, 8)
            self.chunk_size_feed_forward = 2
            self.seq_len_dim = 1

        def feed_forward_chunk(self, h):
            return self.ff(h).relu()

        def forward(self, x):
            return apply_chunking_to_forward(
                self.feed_forward_chunk,
                self.chunk_size_feed_forward,
                self.seq_len_dim,
                x,
            )

    register("hf_apply_chunking_to_forward", ChunkedFF, x_tokens, module=True)

except ImportError:
    pass


# ---------------------------------------------------------------------------------------------
# Session 29 (breadth29): callable objects (a Python ``__call__``) made afresh per call, as
# ``generate`` makes its processors; guarded by type and by what is read from them, by identity
# only where the code relies on it.


class _CheckedEos:
    """A processor whose ``__init__`` checks a tensor's values (a graph break)."""

    def __init__(self, eos_token_id, max_length):
        self.max_length = max_length
        eos = torch.tensor(eos_token_id)
        if (eos < 0).any():
            raise ValueError("negative eos")
        self.eos = eos

    def __call__(self, input_ids, scores):
        if input_ids.shape[-1] == self.max_length - 1:
            out = torch.full_like(scores, -math.inf)
            out[:, self.eos] = 0
            return out
        return scores


@case(logits_and_ids)
def callable_processor_made_per_call_breaks_in_init(scores, input_ids):
    return _CheckedEos([3], max_length=6)(input_ids, scores)


class _Penalty:
    def __init__(self, penalty):
        self.penalty = penalty

    def __call__(self, input_ids, scores):
        picked = torch.gather(scores, 1, input_ids)
        picked = torch.where(picked < 0, picked * self.penalty, picked / self.penalty)
        return scores.scatter(1, input_ids, picked)


@case(lambda r: (*logits_and_ids(r), _Penalty(r.pick(1.5, 2.0))))
def callable_object_argument_new_per_call(scores, input_ids, proc):
    # A new processor per call with another attribute value: the value guard decides.
    return proc(input_ids, scores)


_DEFAULT_PENALTY = _Penalty(1.0)


@case(lambda r: (*logits_and_ids(r), r.pick(_DEFAULT_PENALTY, _Penalty(1.0))))
def callable_object_compared_by_identity(scores, input_ids, proc):
    # `is` observes identity: the default object and an equal new one take other branches.
    if proc is _DEFAULT_PENALTY:
        return scores
    return proc(input_ids, scores)


class _Criteria:
    def __init__(self, max_length, eos):
        self.max_length = max_length
        self.eos = eos

    def __call__(self, input_ids):
        done = input_ids[:, -1] == self.eos
        if input_ids.shape[-1] >= self.max_length:
            done = torch.ones_like(done)
        return done


@case(logits_and_ids)
def callable_criteria_list_made_per_call(scores, input_ids):
    criteria = [_Criteria(6, 3), _Criteria(4, 7)]
    done = torch.zeros(input_ids.shape[0], dtype=torch.bool)
    for c in criteria:
        done = done | c(input_ids)
    return done, scores.masked_fill(done[:, None], 0.0)


_PENALTY_NAMES = {_DEFAULT_PENALTY: "default"}


# torch.compile (2.11) answers the second call with the first call's name: a wrong value.
@case(
    lambda r: (*logits_and_ids(r), r.pick(_DEFAULT_PENALTY, _Penalty(1.0))),
    xfail_tc=TC_DIFFERS,
)
def callable_object_as_dict_key(scores, input_ids, proc):
    # Hashed by identity (no `__eq__`): the lookup observes which object it is, so the identity
    # guard stays (2 graphs for the 2 objects, eager's values).
    name = _PENALTY_NAMES.get(proc, "custom")
    return proc(input_ids, scores) + (0.0 if name == "default" else 1.0), name
