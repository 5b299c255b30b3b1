"""The small transformers configs the model tests share (``test_models.py`` runs them for
inference, ``test_aot_models.py`` for training): two layers, width 64, four heads, so that
each model traces and compiles in seconds. ``extra`` adds or overrides fields (a test that
needs dropout off, or another vocabulary, says so at its use)."""

from __future__ import annotations

VOCAB = 128  # the decoder models' and T5's vocabulary


def gpt2_config(**extra):
    import transformers

    fields = dict(n_layer=2, n_embd=64, n_head=4, vocab_size=100, n_positions=32)
    return transformers.GPT2Config(**{**fields, **extra})


def bert_config(**extra):
    import transformers

    fields = dict(
        num_hidden_layers=2,
        hidden_size=64,
        num_attention_heads=4,
        intermediate_size=128,
        vocab_size=100,
    )
    return transformers.BertConfig(**{**fields, **extra})


def decoder_config(config_class, **extra):
    """A two-layer decoder of ``config_class``'s family (``num_key_value_heads`` in ``extra``
    makes its attention grouped-query where the family has it)."""
    fields = dict(
        vocab_size=VOCAB,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
    )
    return config_class(**{**fields, **extra})
