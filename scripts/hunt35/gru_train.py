"""GRU training step: count graphs and break reasons (typing_extensions frames)."""

import torch, torchferro
from torch import nn

torch.manual_seed(0)
m = nn.GRU(4, 6, batch_first=True)
head = nn.Linear(6, 1)
opt = torch.optim.SGD(list(m.parameters()) + list(head.parameters()), lr=0.1)


def step(x, y):
    opt.zero_grad()
    out, h = m(x)
    loss = nn.functional.mse_loss(head(out[:, -1]), y)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
    opt.step()
    return loss


x, y = torch.randn(3, 5, 4), torch.randn(3, 1)
e = torchferro.explain(step, x, y, backend="eager")
print(e.graph_count, e.graph_break_count)
for b in e.break_reasons:
    print("  ", b)
import torch._dynamo as td

td.reset()
e2 = td.explain(step)(x, y)
print("tc", e2.graph_count, e2.graph_break_count)
for b in e2.break_reasons:
    print("  ", b.reason[:200])
