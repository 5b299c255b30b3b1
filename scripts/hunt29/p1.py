import torch, torch.nn as nn, torch.nn.functional as F
from dyn import program

B = [4, 7, 1, 9, 4, 0, 3]
BNZ = [4, 7, 1, 9, 4, 3]


def train_prog(name, model_fn, data, opt="sgd", sizes=BNZ):
    @program(name, sizes)
    def make():
        m = model_fn()
        o = (
            torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
            if opt == "sgd"
            else torch.optim.AdamW(m.parameters(), lr=1e-2, eps=1e-3)
        )

        def fn(*a):
            return data["loss"](m, *a)

        def post(loss):
            loss.backward()
            o.step()
            o.zero_grad(set_to_none=True)

        return {
            "fn": fn,
            "args": data["args"],
            "post": post,
            "snap": lambda: {k: v.detach().clone() for k, v in m.state_dict().items()},
        }


mlp = lambda: nn.Sequential(nn.Linear(5, 8), nn.GELU(), nn.Linear(8, 3))
cls = {
    "args": lambda b: [torch.randn(b, 5), torch.randint(0, 3, (b,))],
    "loss": lambda m, x, y: F.cross_entropy(m(x), y),
}
mse = {
    "args": lambda b: [torch.randn(b, 5), torch.randn(b, 3)],
    "loss": lambda m, x, y: F.mse_loss(m(x), y),
}
train_prog("train_mlp_ce_sgd", mlp, cls)
train_prog("train_mlp_ce_adamw", mlp, cls, "adamw")
train_prog("train_mlp_mse_adamw", mlp, mse, "adamw")
bnm = lambda: nn.Sequential(
    nn.Linear(5, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 3)
)
train_prog("train_bn_mlp_sgd", bnm, cls, sizes=[4, 7, 2, 9, 4, 3])


class Seq(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(11, 8)
        self.proj = nn.Linear(8, 8)
        self.out = nn.Linear(8, 11)

    def forward(self, ids, lengths):
        h = self.emb(ids)
        T = ids.size(1)
        mask = torch.arange(T)[None, :] < lengths[:, None]
        h = torch.tanh(self.proj(h)) * mask[..., None]
        att = (h @ h.transpose(1, 2)) / (h.size(-1) ** 0.5)
        att = att.masked_fill(~mask[:, None, :], float("-inf")).softmax(-1)
        return self.out(att @ h), mask


seqdata = {
    "args": lambda t: [
        torch.randint(0, 11, (3, t)),
        torch.tensor([t, max(t - 1, 1), 1]),
    ],
    "loss": lambda m, ids, lengths: (
        lambda o, mask: (
            (
                F.cross_entropy(o.reshape(-1, 11), ids.reshape(-1), reduction="none")
                * mask.reshape(-1)
            ).sum()
            / mask.sum()
        )
    )(*m(ids, lengths)),
}
train_prog("train_seq_mask_sgd", Seq, seqdata, sizes=[5, 8, 1, 6, 5, 2])
train_prog("train_seq_mask_adamw", Seq, seqdata, "adamw", sizes=[5, 8, 1, 6, 5, 2])


class Conv(nn.Module):
    def __init__(self):
        super().__init__()
        self.c = nn.Conv2d(2, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        h = F.relu(self.bn(self.c(x)))
        return self.fc(h.mean((2, 3)))


train_prog(
    "train_conv_bn_images",
    Conv,
    {
        "args": lambda s: [torch.randn(2, 2, s, s + 1), torch.randint(0, 3, (2,))],
        "loss": lambda m, x, y: F.cross_entropy(m(x), y),
    },
    sizes=[6, 8, 5, 6, 9],
)


# in-place writes on inputs and buffers
@program("inplace_input_add", B)
def make():
    def fn(x, y):
        x.add_(y.sum(0, keepdim=True) if y.numel() else 1.0)
        return x * 2

    return {"fn": fn, "args": lambda b: [torch.randn(b, 3), torch.randn(b, 3)]}


@program("inplace_buffer_running_mean", B)
def make():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("mean", torch.zeros(3))
            self.register_buffer("n", torch.zeros((), dtype=torch.long))

        def forward(self, x):
            if x.size(0) > 0:
                self.mean.mul_(0.9).add_(x.mean(0), alpha=0.1)
            self.n += x.size(0)
            return x - self.mean

    m = M()
    return {
        "fn": m,
        "args": lambda b: [torch.randn(b, 3)],
        "snap": lambda: {k: v.clone() for k, v in m.state_dict().items()},
    }


@program("inplace_slice_write_by_size", B)
def make():
    def fn(x):
        n = x.size(0)
        x[: n // 2] = 0
        x[n // 2 :].mul_(3)
        return x.sum(1)

    return {"fn": fn, "args": lambda b: [torch.randn(b, 4)]}


@program("index_put_by_arange", B)
def make():
    def fn(x, buf):
        idx = torch.arange(x.size(0))
        buf[idx % buf.size(0)] += x
        return buf.clone(), idx

    return {"fn": fn, "args": lambda b: [torch.randn(b, 2), torch.zeros(3, 2)]}


# views and aliasing of outputs
@program("views_of_output", B)
def make():
    def fn(x):
        y = x * 2
        return y, y.view(-1), y[1:], y.t()

    return {
        "fn": fn,
        "args": lambda b: [torch.randn(b, 3)],
        "post": lambda o: o[1].add_(1),
    }


@program("view_of_input_returned_then_written", B)
def make():
    def fn(x):
        return x[:, :2], x.narrow(0, 0, x.size(0) // 2)

    def post(o):
        o[0].mul_(2)
        o[1].add_(1)

    return {"fn": fn, "args": lambda b: [torch.randn(b, 3)], "post": post}


@program("reshape_flatten_unflatten", B)
def make():
    def fn(x):
        b, t = x.shape[:2]
        y = x.reshape(b * t, -1).relu()
        return y.view(b, t, -1).sum(1), y.shape[0]

    return {"fn": fn, "args": lambda b: [torch.randn(b, 3, 4)]}


# size-dependent control flow
@program("branch_on_size", B)
def make():
    def fn(x):
        if x.size(0) > 4:
            return x.cumsum(0)
        elif x.size(0) == 1:
            return x * 10
        return x.flip(0)

    return {"fn": fn, "args": lambda b: [torch.randn(b, 2)]}


@program("loop_over_size", [1, 3, 5, 3, 2])
def make():
    def fn(x):
        acc = torch.zeros(x.size(1))
        for i in range(x.size(0)):
            acc = acc * 0.5 + x[i]
        return acc

    return {"fn": fn, "args": lambda b: [torch.randn(b, 3)]}


@program("numel_and_len", B)
def make():
    def fn(x):
        n = len(x)
        return x.sum() / max(n, 1), x.numel(), n * 2, x.shape

    return {"fn": fn, "args": lambda b: [torch.randn(b, 3)]}


# size ints stored on self
@program("size_stored_on_self", B)
def make():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 3)
            self.seen = 0
            self.last = None

        def forward(self, x):
            self.seen += x.size(0)
            self.last = x.shape[0]
            return self.lin(x) * self.seen

    m = M()
    return {
        "fn": m,
        "args": lambda b: [torch.randn(b, 3)],
        "snap": lambda: {"seen": m.seen, "last": m.last},
    }


@program("size_in_list_state", B)
def make():
    log = []

    def fn(x):
        log.append(x.size(0))
        return x.mean(0) if x.size(0) else x.sum(0)

    return {
        "fn": fn,
        "args": lambda b: [torch.randn(b, 3)],
        "snap": lambda: {"log": list(log)},
    }


# padding/masking from sizes
@program("pad_to_multiple", B)
def make():
    def fn(x):
        n = x.size(0)
        pad = (-n) % 4
        y = F.pad(x, (0, 0, 0, pad))
        return y.view(-1, 4, x.size(1)).sum(1), pad

    return {"fn": fn, "args": lambda b: [torch.randn(b, 3)]}


@program("causal_mask_from_T", [3, 5, 1, 6, 3])
def make():
    def fn(q):
        T = q.size(1)
        mask = torch.ones(T, T, dtype=torch.bool).tril()
        s = (q @ q.transpose(-1, -2)).masked_fill(~mask, float("-inf"))
        return s.softmax(-1) @ q

    return {"fn": fn, "args": lambda t: [torch.randn(2, t, 4)]}


@program("sdpa_is_causal", [3, 5, 1, 6, 3])
def make():
    def fn(q, k):
        return F.scaled_dot_product_attention(q, k, k, is_causal=q.size(-2) > 1)

    return {
        "fn": fn,
        "args": lambda t: [torch.randn(2, 2, t, 4), torch.randn(2, 2, t, 4)],
    }


@program("lengths_to_mask_mean", [3, 5, 1, 6])
def make():
    def fn(x, lengths):
        mask = torch.arange(x.size(1)) < lengths[:, None]
        return (x * mask[..., None]).sum(1) / lengths[:, None].clamp(min=1)

    return {
        "fn": fn,
        "args": lambda t: [torch.randn(3, t, 2), torch.tensor([t, 0, max(t - 2, 0)])],
    }


# sizes 0 and 1
@program("zero_and_one_sizes_reductions", [0, 1, 2, 5, 0, 1])
def make():
    def fn(x):
        return (
            x.sum(0),
            x.amax(1) if x.size(1) else x.sum(1),
            x.mean(0, keepdim=True).expand_as(x) if x.size(0) else x,
            torch.cat([x, x], 0),
        )

    return {"fn": fn, "args": lambda b: [torch.randn(b, 3)]}


@program("broadcast_with_one", [1, 3, 1, 4])
def make():
    def fn(x, y):
        return x + y, (x * y).sum(-1)

    return {"fn": fn, "args": lambda b: [torch.randn(b, 1, 3), torch.randn(1, b, 3)]}


@program("split_by_size", [2, 5, 1, 6, 4])
def make():
    def fn(x):
        a, b = x.split([x.size(0) // 2, x.size(0) - x.size(0) // 2])
        return a.sum(0) - b.sum(0), a.shape[0]

    return {"fn": fn, "args": lambda b: [torch.randn(b, 3)]}


@program("new_zeros_from_shape", B)
def make():
    def fn(x):
        z = x.new_zeros(x.shape[0] + 1, x.shape[1])
        z[1:] = x
        return z.cumsum(0)

    return {"fn": fn, "args": lambda b: [torch.randn(b, 3)]}
