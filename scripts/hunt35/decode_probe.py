"""A manual greedy decode loop with past_key_values (DynamicCache) through a compiled model:
values vs eager, graphs and recompiles vs torch.compile(backend="eager")."""
import warnings

import torch
import torch._dynamo as td
import torchferro
import transformers as T
from torch._dynamo.testing import CompileCounter

warnings.filterwarnings("ignore")
torch.manual_seed(0)
cfg = T.LlamaConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                    intermediate_size=64, vocab_size=99, max_position_embeddings=64)
cfg._attn_implementation = "eager"
m = T.LlamaForCausalLM(cfg).eval()


def decode(model, ids, steps=4):
    cache = T.DynamicCache(config=cfg)
    out = model(input_ids=ids, past_key_values=cache, use_cache=True)
    toks = []
    for _ in range(steps):
        nxt = out.logits[:, -1].argmax(-1, keepdim=True)
        toks.append(nxt)
        out = model(input_ids=nxt, past_key_values=out.past_key_values, use_cache=True)
    return torch.cat(toks, 1), out.logits


ids = torch.randint(0, 99, (2, 5))
with torch.no_grad():
    ref = decode(m, ids)
    cc = CompileCounter()
    td.reset()
    tc = decode(torch.compile(m, backend=cc), ids)
    events = []
    torchferro.compiler.reset()
    from torchferro import _events
    _events.subscribe(events.append)
    got = decode(torchferro.compile(m, backend="eager"), ids)
    _events.unsubscribe(events.append)
    torchferro.compiler.reset()
    ind = decode(torchferro.compile(m), ids)
kinds = {}
for e in events:
    kinds[e.get("kind")] = kinds.get(e.get("kind"), 0) + 1
print("tc frames", cc.frame_count, "tc ok", torch.equal(ref[0], tc[0]))
print("ferro events", kinds, "ok", torch.equal(ref[0], got[0]), torch.allclose(ref[1], got[1], atol=1e-5))
print("inductor ok", torch.equal(ref[0], ind[0]), torch.allclose(ref[1], ind[1], atol=1e-4))
for e in events:
    if e.get("kind") in ("graph_break", "recompile", "eager"):
        print("   ", e.get("kind"), str(e.get("reason") or e)[:250])
