"""torchferro demo: compile a small model, check it against eager, and watch a recompile."""

import logging
import time

import torch

import torchferro

logging.basicConfig(format="%(name)s: %(message)s")
logging.getLogger("torchferro.recompiles").setLevel(logging.INFO)


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(64, 128)
        self.norm = torch.nn.LayerNorm(128)
        self.fc2 = torch.nn.Linear(128, 10)

    def forward(self, x):
        h = torch.relu(self.norm(self.fc1(x)))
        return self.fc2(h).softmax(dim=-1)


graphs = []


def counting_backend(gm, example_inputs):
    graphs.append(gm)
    return gm.forward


def main():
    torch.manual_seed(0)
    model = MLP().eval()
    compiled = torchferro.compile(model, backend=counting_backend, fullgraph=True)

    x = torch.randn(8, 64)
    t0 = time.perf_counter()
    out = compiled(x)
    t1 = time.perf_counter()
    torch.testing.assert_close(out, model(x))
    print(f"first call (trace + compile): {(t1 - t0) * 1e3:.1f} ms; matches eager")
    print(f"captured graph ({len(graphs)} graph):")
    print(graphs[0].code.strip())

    compiled(torch.randn(8, 64))
    print(f"same shapes again: still {len(graphs)} graph (guards passed)")

    print("\nnow a batch of 16 instead of 8:")
    out = compiled(torch.randn(16, 64))
    assert out.shape == (16, 10)
    print(f"-> {len(graphs)} graphs; the log line above says why it recompiled")


if __name__ == "__main__":
    main()
