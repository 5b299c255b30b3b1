"""Found by session 32's hunt (outside dynamic shapes): a transformers model built and cached
in a global dict inside a compiled function made torchferro raise "a shared value was rebuilt
out of order" (`OutputTemplate::Again` before its `Keep`: the recursive local function
`smart_apply` rebuilt before its cell); eager runs. Fixed in session 33
(`tracer/src/reconstruct/cycles.rs`; `tests/test_rebuilt_cycles.py`): 16 graphs, logits equal
to eager's. Run: PYTHONPATH=python:tests python THIS_FILE
"""

import torch
import torchferro
import transformers as T
from programs.counting import Count

HF = {}


def hf():
    if "m" not in HF:
        torch.manual_seed(0)
        cfg = T.GPT2Config(
            n_layer=2, n_head=2, n_embd=32, vocab_size=100, n_positions=128
        )
        HF["m"] = T.GPT2LMHeadModel(cfg).eval()
    return HF["m"]


def f(ids):
    with torch.no_grad():
        return hf()(ids, use_cache=False).logits


c = Count()
g = torchferro.compile(f, backend=c)
got = g(torch.randint(0, 100, (1, 8)))  # raised RuntimeError before session 33
print("ok", c.n)
