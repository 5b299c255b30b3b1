"""HF-style models (small configs) through model(**inputs): values vs eager, graph counts of
torchferro (eager backend and inductor) vs torch.compile(backend="eager").
Usage: PYTHONPATH=python python scripts/hunt35/hf_probe.py [name ...]"""

import sys
import warnings

import torch
import torch._dynamo as td
import torchferro
import transformers as T
from torch.utils import _pytree as pytree

warnings.filterwarnings("ignore")
torch.manual_seed(0)


def ids(b=2, s=7, v=99):
    return torch.randint(0, v, (b, s))


def mk(cls, cfg_cls, **kw):
    cfg = cfg_cls(**kw)
    cfg._attn_implementation = kw.pop("attn", "eager") if "attn" in kw else "eager"
    m = cls(cfg).eval()
    return m


SMALL = dict(
    hidden_size=32,
    num_hidden_layers=2,
    num_attention_heads=4,
    intermediate_size=64,
    vocab_size=99,
)


GPT2 = dict(n_embd=32, n_layer=2, n_head=4, vocab_size=99, n_positions=32)


def padded(row, cols, dtype=torch.long):
    """A (2, 7) attention mask with `row`'s `cols` masked out."""
    mask = torch.ones(2, 7, dtype=dtype)
    mask[row, cols] = 0
    return mask


def bert():
    m = mk(T.BertModel, T.BertConfig, **SMALL, max_position_embeddings=32)
    mask = padded(1, slice(5, None))
    return m, dict(input_ids=ids(), attention_mask=mask, output_hidden_states=True)


def bert_tuple():
    m = mk(
        T.BertForSequenceClassification,
        T.BertConfig,
        **SMALL,
        max_position_embeddings=32,
        num_labels=3,
    )
    return m, dict(
        input_ids=ids(),
        token_type_ids=torch.zeros(2, 7, dtype=torch.long),
        return_dict=False,
        labels=torch.tensor([0, 2]),
    )


def gpt2():
    m = mk(
        T.GPT2LMHeadModel,
        T.GPT2Config,
        **GPT2,
    )
    return m, dict(input_ids=ids(), labels=ids())


def gpt2_boolmask():
    m = mk(
        T.GPT2Model,
        T.GPT2Config,
        **GPT2,
    )
    mask = padded(0, slice(None, 2), torch.bool)
    return m, dict(input_ids=ids(), attention_mask=mask, output_attentions=True)


def llama():
    m = mk(
        T.LlamaForCausalLM,
        T.LlamaConfig,
        **SMALL,
        num_key_value_heads=2,
        max_position_embeddings=64,
    )
    mask = padded(0, slice(None, 3))
    return m, dict(input_ids=ids(), attention_mask=mask, use_cache=False)


def t5():
    m = mk(
        T.T5ForConditionalGeneration,
        T.T5Config,
        d_model=32,
        d_kv=8,
        d_ff=64,
        num_layers=2,
        num_heads=4,
        vocab_size=99,
    )
    return m, dict(input_ids=ids(), decoder_input_ids=ids(s=5), use_cache=False)


def vit():
    m = mk(
        T.ViTModel,
        T.ViTConfig,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=64,
        image_size=16,
        patch_size=4,
    )
    return m, dict(pixel_values=torch.randn(2, 3, 16, 16), output_hidden_states=True)


def wav2vec():
    m = mk(
        T.Wav2Vec2Model,
        T.Wav2Vec2Config,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=64,
        conv_dim=(16, 16),
        conv_stride=(5, 2),
        conv_kernel=(10, 3),
        num_conv_pos_embeddings=8,
        num_conv_pos_embedding_groups=4,
    )
    return m, dict(input_values=torch.randn(2, 400))


MODELS = dict(
    bert=bert,
    bert_tuple=bert_tuple,
    gpt2=gpt2,
    gpt2_boolmask=gpt2_boolmask,
    llama=llama,
    t5=t5,
    vit=vit,
    wav2vec=wav2vec,
)


def flat(o):
    if hasattr(o, "to_tuple"):
        o = o.to_tuple()
    return [x for x in pytree.tree_leaves(o) if isinstance(x, torch.Tensor)]


def cmp(a, b):
    fa, fb = flat(a), flat(b)
    if len(fa) != len(fb):
        return f"LEN {len(fa)} != {len(fb)}"
    bad = [
        i
        for i, (x, y) in enumerate(zip(fa, fb))
        if x.shape != y.shape or not torch.allclose(x, y, atol=1e-4, rtol=1e-4)
    ]
    return "ok" if not bad else f"MISMATCH at {bad[:5]}"


def main(names):
    for name in names or MODELS:
        m, kw = MODELS[name]()
        with torch.no_grad():
            ref = m(**kw)
            td.reset()
            try:
                e2 = td.explain(m)(**kw)
                tc = f"{e2.graph_count}g/{e2.graph_break_count}b"
            except Exception as ex:
                tc = f"ERR {type(ex).__name__}"
            torchferro.compiler.reset()
            e = torchferro.explain(m, backend="eager")(**kw)
            got = torchferro.compile(m, backend="eager")(**kw)
            got2 = torchferro.compile(m, backend="eager")(**kw)
            torchferro.compiler.reset()
            ind = torchferro.compile(m)(**kw)
            ind2 = torchferro.compile(m)(**kw)
        print(
            f"{name:14s} tc={tc:8s} ferro={e.graph_count}g/{e.graph_break_count}b eager-backend {cmp(ref, got)}/{cmp(ref, got2)} inductor {cmp(ref, ind)}/{cmp(ref, ind2)}",
            flush=True,
        )
        for b in e.break_reasons[:6]:
            print("     ", str(b)[:220])


if __name__ == "__main__":
    main(sys.argv[1:])
