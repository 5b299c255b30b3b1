"""Probe batch A: module idioms and data-ish code (inference)."""

import torch
from differential.runner import case, register
from torch import nn
from torch.nn import functional as F

STRICT_BREADTH = True


def x48(r):
    return (r.randn(4, 8),)


def seq(r):
    return (r.randn(3, 5, 8),)


# ---- parametrizations
class Ortho(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.utils.parametrizations.orthogonal(nn.Linear(8, 8))

    def forward(self, x):
        return self.fc(x).relu().sum(1)


register("a_orthogonal_forward", Ortho, x48, module=True)


class OrthoNoGrad(Ortho):
    def forward(self, x):
        with torch.no_grad():
            return self.fc(x) * 2


register("a_orthogonal_nograd", OrthoNoGrad, x48, module=True)


class Spectral(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.utils.parametrizations.spectral_norm(nn.Linear(8, 6))

    def forward(self, x):
        return self.fc(x)


register("a_spectral_train_forward", Spectral, x48, module=True)


def _eval(m, seed):
    m.train(seed == 0)


register("a_spectral_train_then_eval", Spectral, x48, module=True, prepare=_eval)


class WeightNorm(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.utils.parametrizations.weight_norm(nn.Linear(8, 6), dim=0)

    def forward(self, x):
        return self.fc(x).tanh()


register("a_weight_norm_forward", WeightNorm, x48, module=True)


class CachedParam(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.utils.parametrizations.orthogonal(nn.Linear(8, 8))

    def forward(self, x):
        with nn.utils.parametrize.cached():
            return self.fc(x) + self.fc(x * 2)


register("a_parametrize_cached", CachedParam, x48, module=True)


# ---- hooks
class HookedKw(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.calls = 0

        def pre(mod, args, kwargs):
            kwargs = dict(kwargs)
            kwargs["scale"] = kwargs.get("scale", 1.0) * 2
            return args, kwargs

        def post(mod, args, kwargs, out):
            self.calls += 1
            return out + kwargs["scale"]

        self.inner = Scaled()
        self.inner.register_forward_pre_hook(pre, with_kwargs=True)
        self.inner.register_forward_hook(post, with_kwargs=True)

    def forward(self, x):
        return self.inner(self.fc(x), scale=3.0)


class Scaled(nn.Module):
    def forward(self, x, scale=1.0):
        return x * scale


register("a_hooks_with_kwargs", HookedKw, x48, module=True)


class HookPrepend(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.log = []
        self.fc.register_forward_hook(
            lambda m, a, o: self.log.append("second") or o * 2
        )
        self.fc.register_forward_hook(
            lambda m, a, o: self.log.append("first") or o + 1, prepend=True
        )
        self.fc.register_forward_pre_hook(lambda m, a: (a[0] - 1,), prepend=True)

    def forward(self, x):
        return self.fc(x)


register("a_hooks_prepend", HookPrepend, x48, module=True)


class HookAlwaysCall(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.n = 0

        def h(m, a, o):
            self.n += 1

        self.fc.register_forward_hook(h, always_call=True)

    def forward(self, x):
        return self.fc(x).sum()


register("a_hook_always_call", HookAlwaysCall, x48, module=True)


# ---- buffers in forward
class BnCumulative(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm1d(8, momentum=None)
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        return self.fc(self.bn(x))


register("a_bn_cumulative_train_eval", BnCumulative, x48, module=True, prepare=_eval)


class BnToggleInside(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm1d(8, momentum=0.3)

    def forward(self, x):
        a = self.bn(x)
        self.bn.eval()
        b = self.bn(x)
        self.bn.train()
        return a, b


register("a_bn_toggle_inside", BnToggleInside, x48, module=True)


class BnNoTrack(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm1d(8, track_running_stats=False)
        self.ln = nn.InstanceNorm1d(8, track_running_stats=True, affine=True)

    def forward(self, x):
        return self.bn(x), self.ln(x.unsqueeze(0).transpose(1, 2))


register("a_bn_no_track_instnorm_track", BnNoTrack, x48, module=True, prepare=_eval)


# ---- containers
class Dicts(nn.Module):
    def __init__(self):
        super().__init__()
        self.heads = nn.ModuleDict({"b": nn.Linear(8, 2), "a": nn.Linear(8, 3)})
        self.ps = nn.ParameterList([nn.Parameter(torch.randn(8)) for _ in range(3)])
        self.pd = nn.ParameterDict({"s": nn.Parameter(torch.ones(1))})

    def forward(self, x):
        for p in self.ps:
            x = x * p
        x = x * self.pd["s"]
        out = {k: m(x) for k, m in self.heads.items()}
        out["n"] = len(self.ps) + len(self.heads)
        return out, [k for k in self.heads], self.ps[-1].sum()


register("a_module_dict_param_list", Dicts, x48, module=True)


class ParamListAppend(nn.Module):
    def __init__(self):
        super().__init__()
        self.ps = nn.ParameterList([nn.Parameter(torch.randn(8))])

    def forward(self, x):
        total = x
        for i, p in enumerate(self.ps):
            total = total + p * i
        return total.sum(0), sum(p.numel() for p in self.parameters())


register("a_param_list_enumerate", ParamListAppend, x48, module=True)


# ---- embedding
def emb_max_norm(idx, w):
    return F.embedding(idx, w, max_norm=1.0, padding_idx=0) * 2


case(lambda r: (r.randint(0, 6, 2, 5), r.randn(6, 4) * 3))(emb_max_norm)


def emb_max_norm_after(idx, w):
    a = w.sum()
    e = F.embedding(idx, w, max_norm=0.5, norm_type=1.0)
    return e, a, w.sum()


case(lambda r: (r.randint(0, 6, 7), r.randn(6, 4) * 3))(emb_max_norm_after)


# ---- attention
class MhaMasks(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = nn.MultiheadAttention(8, 2, batch_first=True)

    def forward(self, x):
        am = torch.triu(torch.full((5, 5), float("-inf")), 1)
        kpm = torch.zeros(3, 5, dtype=torch.bool)
        kpm[1, 3:] = True
        o, w = self.attn(
            x, x, x, attn_mask=am, key_padding_mask=kpm, average_attn_weights=False
        )
        return o, w


register("a_mha_masks_per_head_weights", MhaMasks, seq, module=True)


class MhaEvalNoGrad(MhaMasks):
    def forward(self, x):
        kpm = torch.zeros(3, 5, dtype=torch.bool)
        kpm[2, 4:] = True
        with torch.no_grad():
            o, w = self.attn(x, x, x, key_padding_mask=kpm, need_weights=False)
        return o, w


def _evl(m, seed):
    m.eval()


register("a_mha_eval_nograd_fastpath", MhaEvalNoGrad, seq, module=True, prepare=_evl)


class EncEval(nn.Module):
    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(8, 2, 16, batch_first=True, dropout=0.0)
        self.enc = nn.TransformerEncoder(layer, 2)

    def forward(self, x):
        kpm = torch.zeros(3, 5, dtype=torch.bool)
        kpm[1, 3:] = True
        with torch.no_grad():
            return self.enc(x, src_key_padding_mask=kpm)


register("a_encoder_eval_nograd_padding", EncEval, seq, module=True, prepare=_evl)


class EncCausal(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(
            8, 2, 16, batch_first=True, dropout=0.0, norm_first=True
        )

    def forward(self, x):
        m = nn.Transformer.generate_square_subsequent_mask(5)
        return self.layer(x, src_mask=m, is_causal=True)


register("a_encoder_causal_norm_first", EncCausal, seq, module=True)


# ---- recurrent
class Lstm(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(8, 6, num_layers=2, batch_first=True, bidirectional=True)

    def forward(self, x):
        h0 = torch.zeros(4, 3, 6)
        c0 = torch.ones(4, 3, 6)
        out, (h, c) = self.lstm(x, (h0, c0))
        return out[:, -1], h.sum(0), c


register("a_lstm_bidir_two_layers", Lstm, seq, module=True)


class GruPacked(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(8, 6, batch_first=True)

    def forward(self, x):
        lengths = torch.tensor([5, 3, 2])
        packed = nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=True)
        out, h = self.gru(packed)
        pad, lens = nn.utils.rnn.pad_packed_sequence(out, batch_first=True)
        return pad, lens, h


register("a_gru_packed", GruPacked, seq, module=True)


class LstmProj(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(8, 6, proj_size=3)

    def forward(self, x):
        out, (h, c) = self.lstm(x)
        return out, h, c


register("a_lstm_proj", LstmProj, seq, module=True)


# ---- data-ish
@case(lambda r: (r.randint(0, 5, 12),))
def unique_all(x):
    u, inv, cnt = torch.unique(x, sorted=True, return_inverse=True, return_counts=True)
    return u, inv, cnt, u.float().mean()


@case(lambda r: (r.randint(0, 3, 6, 2),))
def unique_dim(x):
    u, inv = torch.unique(x, dim=0, return_inverse=True)
    return u, inv


@case(lambda r: (r.randint(0, 4, 10),))
def unique_consecutive(x):
    return torch.unique_consecutive(x, return_counts=True)


@case(lambda r: (r.randn(5, 4),))
def mask_select_assign(x):
    m = x > 0
    y = x.clone()
    y[m] = 0.0
    z = x[m] * 2
    idx = torch.nonzero(m, as_tuple=True)
    return y, z, idx, m.sum()


@case(lambda r: (r.randn(5, 4),))
def mask_assign_input(x):
    x[x < 0] = -1.0
    x[:, 0][x[:, 1] > 0] += 10
    return x.sum()


@case(lambda r: (r.randn(6), r.randint(0, 3, 6)))
def scatter_reduce_variants(src, idx):
    a = torch.zeros(3).scatter_reduce(0, idx, src, "amax", include_self=False)
    b = torch.ones(3).scatter_reduce(0, idx, src, "mean", include_self=True)
    c = torch.zeros(3).scatter_reduce(0, idx, src, "prod", include_self=False)
    d = torch.full((3,), 5.0).scatter_reduce(0, idx, src, "amin")
    return a, b, c, d


@case(lambda r: (r.randn(5, 3), r.randn(4, 3), r.randint(0, 5, 4)))
def index_add_input(acc, src, idx):
    acc.index_add_(0, idx, src, alpha=0.5)
    out = torch.zeros(5, 3).index_add(0, idx, src)
    return out, acc * 1


@case(
    lambda r: (
        r.randn(10),
        r.pick(torch.tensor([-1.0, 0.0, 0.5]), torch.tensor([0.0, 1.0, 2.0])),
    )
)
def bucketize_right(x, b):
    return (
        torch.bucketize(x, b),
        torch.bucketize(x, b, right=True, out_int32=True),
        torch.searchsorted(b, x.sort().values, side="right"),
    )


@case(lambda r: (r.randint(0, 5, 9), r.randn(9)))
def bincount_weights(x, w):
    return (
        torch.bincount(x, weights=w, minlength=7),
        torch.bincount(x),
        x.histc(5, 0, 5),
    )


@case(lambda r: (r.randn(4, 6),))
def topk_sort_stable(x):
    v, i = x.topk(3, dim=1, largest=False, sorted=True)
    s, si = torch.sort(x.round(), dim=1, stable=True, descending=True)
    return v, i, s, si, x.argmax(1), torch.gather(x, 1, i)


# ---- RNG
@case(lambda r: (r.randn(4),))
def normal_rsample(mu):
    d = torch.distributions.Normal(mu, mu.abs() + 0.1)
    s = d.rsample()
    return s, d.log_prob(s).sum(), d.entropy()


@case(lambda r: (r.randn(3, 5),))
def categorical_sample_seed(logits):
    torch.manual_seed(7)
    d = torch.distributions.Categorical(logits=logits)
    a = d.sample()
    b = d.sample((2,))
    return a, b, d.log_prob(a)


@case(lambda r: (r.randn(3),))
def generator_explicit(x):
    g = torch.Generator().manual_seed(3)
    a = torch.randn(3, generator=g)
    b = torch.rand(3, generator=g)
    c = torch.randint(0, 10, (3,), generator=g)
    return x + a, b, c, torch.randperm(5, generator=g)


G = torch.Generator().manual_seed(5)


@case(lambda r: (r.randn(3),), state=("G",))
def generator_global(x):
    return x + torch.randn(3, generator=G), torch.multinomial(
        x.softmax(0), 2, generator=G
    )


@case(lambda r: (r.randn(3), torch.Generator().manual_seed(r.seed)))
def generator_argument(x, g):
    a = torch.randn(3, generator=g)
    p = torch.bernoulli(torch.full((3,), 0.5), generator=g)
    return x * a, p, g.get_state().sum()


@case(lambda r: (r.randn(4, 4),))
def dropout_with_fork(x):
    with torch.random.fork_rng():
        torch.manual_seed(1)
        a = F.dropout(x, 0.5)
    b = F.dropout(x, 0.5)
    return a, b
