"""Found by session 32's hunt, not fixed (outside dynamic shapes): a transformers model built
and cached in a global dict inside a compiled function makes torchferro raise "a shared value
was rebuilt out of order" (reconstruct.rs, `OutputTemplate::Again` before its `Keep`); eager
runs. Reproduces on main's build too. Run: PYTHONPATH=python:tests python THIS_FILE
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
got = g(torch.randint(0, 100, (1, 8)))  # raises RuntimeError on the current build
print("ok", c.n)
