"""Issue 14, bullets "torch Python-level API" and "the torch.compile namespace users call":
``torch.distributions`` (Normal, Categorical, Bernoulli, Uniform, MultivariateNormal), the
``torch.compiler`` / ``torch._dynamo`` decorators and queries (``allow_in_graph``,
``substitute_in_graph``, ``assume_constant_result``, ``graph_break``, ``is_compiling``,
``disable``) and their ``torchferro.compiler`` twins, nn modules constructed inside the frame,
grad-mode and autocast objects, ``torch.Size``, tensor metadata queries, ``type(x)``,
``torch._check`` and tensor subclasses as inputs. Programs written the way model code uses these;
each must give eager's values (and RNG state) in no more graphs than torch.compile
(``runner.STRICT_BREADTH_TOPICS``)."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
import torchferro
from torch import nn
from torch.distributions import (
    Bernoulli,
    Categorical,
    MultivariateNormal,
    Normal,
    Uniform,
    kl_divergence,
)

from .runner import TC_DIFFERS, case

# Issue 14: more graphs than torch.compile fails unless the case names the gap (breadth=).
STRICT_BREADTH = True


def x34(r):
    return (r.randn(3, 4),)


def pair(r):
    return (r.randn(3, 4), r.randn(3, 4))


def mu_logstd(r):
    return (r.randn(4, 3), r.randn(4, 3), r.randn(4, 3))


def logits(r):
    return (r.randn(5, 6),)


def probs01(r):
    return (torch.sigmoid(r.randn(4, 5)),)


# ---------------------------------------------------------------------------------------------
# torch.distributions


@case(mu_logstd)
def normal_log_prob(x, mu, log_std):
    dist = Normal(mu, log_std.exp())
    return dist.log_prob(x).sum(-1)


@case(mu_logstd)
def normal_entropy_mean_stddev(x, mu, log_std):
    dist = Normal(loc=mu, scale=F.softplus(log_std) + 1e-3)
    return dist.entropy(), dist.mean, dist.stddev, dist.variance, x + dist.mean


@case(mu_logstd)
def normal_rsample_reparam(x, mu, log_std):
    # The VAE reparameterisation trick: the noise comes from the global RNG.
    std = torch.exp(0.5 * log_std)
    z = Normal(mu, std).rsample()
    return z * x


@case(mu_logstd)
def normal_sample_shape(x, mu, log_std):
    dist = Normal(mu, log_std.exp())
    s = dist.sample((2,))
    return s.shape, s.mean(0) + x


@case(mu_logstd)
def normal_scalar_params(x, mu, log_std):
    prior = Normal(0.0, 1.0)
    return prior.log_prob(x), prior.cdf(mu), prior.icdf(torch.sigmoid(log_std))


@case(mu_logstd)
def normal_kl_to_prior(x, mu, log_std):
    q = Normal(mu, log_std.exp())
    p = Normal(torch.zeros_like(mu), torch.ones_like(mu))
    return kl_divergence(q, p).sum() + x.sum()


@case(mu_logstd)
def normal_rsample_log_prob_policy(x, mu, log_std):
    # A SAC-style squashed Gaussian policy head.
    dist = Normal(mu, log_std.clamp(-5, 2).exp())
    u = dist.rsample()
    a = torch.tanh(u)
    logp = dist.log_prob(u) - torch.log(1 - a.pow(2) + 1e-6)
    return a, logp.sum(-1, keepdim=True)


@case(logits)
def categorical_logits_sample_log_prob(lg):
    dist = Categorical(logits=lg)
    action = dist.sample()
    return action, dist.log_prob(action), dist.entropy()


@case(logits)
def categorical_probs_entropy(lg):
    dist = Categorical(probs=lg.softmax(-1))
    return dist.entropy(), dist.probs, dist.logits


@case(logits)
def categorical_log_prob_given_actions(lg):
    actions = torch.arange(lg.shape[0]) % lg.shape[1]
    return Categorical(logits=lg).log_prob(actions)


@case(logits)
def categorical_sample_many(lg):
    dist = Categorical(logits=lg)
    return dist.sample((3,)), dist.param_shape, dist.batch_shape


@case(probs01)
def bernoulli_probs_sample_log_prob(p):
    dist = Bernoulli(probs=p)
    mask = dist.sample()
    return mask, dist.log_prob(mask), dist.entropy(), dist.mean, dist.variance


@case(logits)
def bernoulli_logits_dropout_mask(lg):
    dist = Bernoulli(logits=lg)
    return lg * dist.sample() + dist.entropy().mean()


@case(probs01)
def bernoulli_scalar_prob(p):
    keep = Bernoulli(torch.tensor(0.75)).sample(p.shape)
    return p * keep


@case(pair)
def uniform_rsample_log_prob(a, b):
    low = torch.minimum(a, b)
    high = torch.maximum(a, b) + 0.1
    dist = Uniform(low, high)
    s = dist.rsample()
    return s, dist.log_prob(s), dist.entropy(), dist.mean


@case(x34)
def uniform_scalar_bounds_noise(x):
    noise = Uniform(-0.1, 0.1).sample(x.shape)
    return x + noise


@case(x34)
def mvn_scale_tril(x):
    tril = torch.eye(4) * 2.0 + torch.tril(torch.ones(4, 4), -1) * 0.1
    dist = MultivariateNormal(torch.zeros(4), scale_tril=tril)
    return dist.log_prob(x), dist.entropy(), dist.rsample((2,)).shape


@case(x34)
def mvn_covariance(x):
    cov = torch.eye(4) + 0.5
    dist = MultivariateNormal(x.mean(0), covariance_matrix=cov)
    return dist.log_prob(x), dist.mean, dist.variance


class PolicyHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(6, 8)
        self.pi = nn.Linear(8, 4)
        self.v = nn.Linear(8, 1)

    def forward(self, obs):
        h = torch.tanh(self.body(obs))
        dist = Categorical(logits=self.pi(h))
        action = dist.sample()
        return (
            action,
            dist.log_prob(action),
            dist.entropy().mean(),
            self.v(h).squeeze(-1),
        )


@case(lambda r: (r.randn(5, 6),), module=True)
def policy_head_categorical():
    torch.manual_seed(0)
    return PolicyHead()


class GaussianActor(nn.Module):
    def __init__(self):
        super().__init__()
        self.mu = nn.Linear(6, 2)
        self.log_std = nn.Parameter(torch.zeros(2))

    def forward(self, obs, act):
        dist = Normal(self.mu(obs), self.log_std.exp())
        return dist.log_prob(act).sum(-1), dist.entropy().sum(-1)


@case(lambda r: (r.randn(5, 6), r.randn(5, 2)), module=True)
def gaussian_actor_log_prob():
    torch.manual_seed(0)
    return GaussianActor()


class VAEHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(8, 6)

    def forward(self, x):
        mu, log_var = self.enc(x).chunk(2, dim=-1)
        q = Normal(mu, torch.exp(0.5 * log_var))
        z = q.rsample()
        kl = kl_divergence(q, Normal(0.0, 1.0)).sum(-1)
        return z, kl


@case(lambda r: (r.randn(4, 8),), module=True)
def vae_head_rsample_kl():
    torch.manual_seed(0)
    return VAEHead()


@case(mu_logstd)
def normal_no_validate(x, mu, log_std):
    dist = Normal(mu, log_std.exp(), validate_args=False)
    return dist.log_prob(x)


@case(mu_logstd)
def normal_sample_then_randn(x, mu, log_std):
    # Random ops before and after the distribution's draw keep eager's stream order.
    eps = torch.randn_like(x)
    s = Normal(mu, log_std.exp()).sample()
    return s + eps + torch.rand(1)


# ---------------------------------------------------------------------------------------------
# The torch.compile namespace


def _opaque_scale(t, k):
    # Opaque to the compiler: plain Python over the tensor's values is fine in a graph call.
    out = t.clone()
    for i in range(out.shape[0]):
        out[i] = out[i] * (k + i)
    return out


torch.compiler.allow_in_graph(_opaque_scale)


@case(x34)
def allow_in_graph_call(x):
    y = torch.relu(x)
    return _opaque_scale(y, 2.0) + 1


def _dyn_allowed_norm(t):
    return t / t.norm(dim=-1, keepdim=True).clamp_min(1e-6)


torch._dynamo.allow_in_graph(_dyn_allowed_norm)


@case(x34)
def dynamo_allow_in_graph_call(x):
    return _dyn_allowed_norm(x * 2).sum(0)


def _ferro_allowed(t):
    return torch.sigmoid(t) * t


torchferro.compiler.allow_in_graph(_ferro_allowed)


@case(x34)
def torchferro_allow_in_graph_call(x):
    return _ferro_allowed(x - 1)


def _host_topk_mask(t, k):
    # Reads values into Python (eager-only); the polyfill below says the same with torch ops.
    vals = sorted(t.flatten().tolist(), reverse=True)
    return t >= vals[k - 1]


@torch.compiler.substitute_in_graph(_host_topk_mask)
def _traceable_topk_mask(t, k):
    return t >= t.flatten().topk(k).values[-1]


@case(x34)
def substitute_in_graph_polyfill(x):
    keep = _host_topk_mask(x, 3)
    return x * keep


def _host_row_max(t):
    return torch.tensor([max(row) for row in t.tolist()])


@torchferro.compiler.substitute_in_graph(_host_row_max)
def _traceable_row_max(t):
    return t.max(dim=1).values


@case(x34)
def torchferro_substitute_in_graph(x):
    return x - _host_row_max(x)[:, None]


_CONFIG = {"scale": 3}


@torch._dynamo.assume_constant_result
def _scale_from_config():
    return _CONFIG["scale"]


@case(x34)
def assume_constant_result_scale(x):
    return x * _scale_from_config()


@torch.compiler.assume_constant_result
def _num_heads():
    return 2


@case(x34)
def compiler_assume_constant_result_shape(x):
    h = _num_heads()
    return x.reshape(h, -1).sum(-1)


@case(x34)
def dynamo_graph_break_in_helper(x):
    def helper(t):
        t = t + 1
        torch._dynamo.graph_break()
        return t * 2

    return helper(x.sin()).cos()


@case(x34)
def dynamo_graph_break_once(x):
    y = x.sin()
    torch._dynamo.graph_break()
    return y.cos()


def _gelu_reference(t):
    # What an eager-only debug path computes: the same values as the fused op.
    return 0.5 * t * (1.0 + torch.erf(t / math.sqrt(2.0)))


@case(x34)
def compiler_is_compiling_picks_path(x):
    # Model code picks an implementation by ``is_compiling`` (both give the same values).
    if torch.compiler.is_compiling():
        y = F.gelu(x)
    else:
        y = _gelu_reference(x)
    return y * 2


@case(x34)
def dynamo_is_compiling_skips_check(x):
    if not torch._dynamo.is_compiling():
        assert torch.isfinite(x).all()
    return x.tanh()


@case(x34)
def torchferro_is_compiling_in_helper(x):
    def fast_path():
        return torchferro.compiler.is_compiling() or torch.compiler.is_compiling()

    scale = 2.0 if fast_path() else 2
    return x * scale


@torch.compiler.disable
def _eager_only(t):
    return t.tolist()


@case(x34)
def compiler_disable_decorator(x):
    y = x * 2
    vals = _eager_only(y)
    return y + len(vals)


def _plain_helper(t):
    return t.sum().item()


@case(x34)
def dynamo_disable_call_form(x):
    y = x.abs()
    s = torch._dynamo.disable(_plain_helper)(y)
    return y / (s + 1)


@torch._dynamo.disable(recursive=True)
def _eager_cat(parts):
    return torch.cat(parts)


@case(x34)
def dynamo_disable_factory_form(x):
    return _eager_cat([x, x + 1]) * 2


@case(x34)
def torchferro_disable_call(x):
    y = x.exp()
    z = torchferro.compiler.disable(_plain_helper)(y)
    return y - z


# ---------------------------------------------------------------------------------------------
# nn modules constructed inside the frame


@case(x34)
def softmax_module_in_frame(x):
    return nn.Softmax(dim=1)(x)


@case(x34)
def activation_modules_in_frame(x):
    acts = [nn.ReLU(), nn.GELU(), nn.Tanh(), nn.LeakyReLU(0.2)]
    return [a(x) for a in acts]


@case(x34)
def dropout_module_in_frame(x):
    return nn.Dropout(p=0.0)(x) + nn.Identity()(x)


@case(x34)
def dropout_eval_module_in_frame(x):
    drop = nn.Dropout(p=0.5)
    drop.eval()
    return drop(x) + nn.Identity()(x)


@case(x34)
def layernorm_module_in_frame(x):
    ln = nn.LayerNorm(4, elementwise_affine=False)
    return ln(x)


@case(x34)
def sequential_of_param_free_modules(x):
    block = nn.Sequential(nn.Flatten(0), nn.Unflatten(0, (3, 4)), nn.Sigmoid())
    return block(x)


@case(x34)
def linear_constructed_in_frame(x):
    torch.manual_seed(0)
    lin = nn.Linear(4, 2)
    return lin(x)


# ---------------------------------------------------------------------------------------------
# grad-mode and autocast objects


@case(x34)
def set_grad_enabled_called_as_function(x):
    torch.set_grad_enabled(False)
    y = x * 2
    torch.set_grad_enabled(True)
    return y, torch.is_grad_enabled()


@case(x34)
def set_grad_enabled_as_context(x):
    with torch.set_grad_enabled(False):
        y = x + 1
    return y * 2, torch.is_grad_enabled()


@case(x34)
def no_grad_object_reused(x):
    ctx = torch.no_grad()
    with ctx:
        a = x * 2
    with ctx:
        b = a + 1
    return b


@case(x34)
def autocast_as_context_bf16(x):
    w = torch.ones(4, 4)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = x @ w
    return y.float()


@case(x34)
def autocast_disabled_region(x):
    with torch.autocast(device_type="cpu", enabled=False):
        y = x.matmul(x.t())
    return y


# ---------------------------------------------------------------------------------------------
# torch.Size


@case(x34)
def size_arithmetic(x):
    s = x.size()
    doubled = s + s
    return x.reshape(*s[::-1]), doubled, s * 2, tuple(s)


@case(x34, xfail_tc=TC_DIFFERS + ": torch.Size == list is True under torch.compile")
def size_comparisons(x):
    s = x.shape
    return (
        s == (3, 4),
        s != torch.Size([4, 3]),
        s < (3, 5),
        s == [3, 4],
        torch.Size([3, 4]) == s,
        x.new_zeros(s) + 1,
    )


@case(x34)
def size_numel_and_index(x):
    s = x.size()
    return x.view(s.numel()), s[-1], s.index(4), s.count(3), len(s)


@case(x34, xfail_tc=TC_DIFFERS + ": a starred unpack of a torch.Size gives a tuple")
def size_slicing_builds_shape(x):
    b, *rest = x.shape
    new_shape = x.shape[:-1] + (2, 2)
    return x.view(new_shape), b, rest, isinstance(new_shape, torch.Size)


@case(x34)
def size_constructed_in_frame(x):
    target = torch.Size([x.shape[1], x.shape[0]])
    return x.t().reshape(target), target, type(target).__name__


# ---------------------------------------------------------------------------------------------
# tensor metadata queries


@case(x34)
def metadata_queries(x):
    return (
        x * 2,
        x.size(),
        x.size(1),
        x.dim(),
        x.ndim,
        x.is_floating_point(),
        x.is_complex(),
        x.element_size(),
        x.numel(),
    )


@case(lambda r: (r.randn(3, 4).to(torch.float64), torch.arange(6)))
def metadata_by_dtype(a, b):
    out = []
    for t in (a, b, a.to(torch.complex64), b.to(torch.int8), a.half()):
        out.append((t.is_floating_point(), t.is_complex(), t.element_size()))
    return out, a * b.sum()


@case(x34)
def untyped_storage_size(x):
    nbytes = x.untyped_storage().size()
    return x * 2, nbytes, x.untyped_storage().nbytes()


@case(x34)
def dtype_dispatch_in_model_code(x):
    if x.is_floating_point() and x.element_size() == 4:
        return x.double().sum(-1)
    return x.sum(-1)


# ---------------------------------------------------------------------------------------------
# type(x), torch._check


@case(x34)
def type_of_tensor(x):
    return x + 1, type(x) is torch.Tensor, type(x).__name__, type(x * 2) is torch.Tensor


@case(x34)
def type_of_tensor_constructs(x):
    t = type(x)
    return x.neg(), isinstance(x, t), issubclass(t, torch.Tensor), x.__class__ is t


@case(x34)
def torch_check_shapes(x):
    torch._check(x.shape[1] == 4, lambda: "last dim must be 4")
    torch._check(x.dim() == 2)
    return x.sum(1)


@case(x34)
def torch_check_is_size(x):
    n = x.shape[0]
    torch._check_is_size(n)
    return x[:n].mean()


@case(x34, raises=True)
def torch_check_fails_like_eager(x):
    torch._check(x.shape[0] == 5, lambda: f"expected 5 rows, got {x.shape[0]}")
    return x


@case(x34)
def torch_check_with_and_value(x):
    n, d = x.shape
    torch._check_with(ValueError, d % 2 == 0, lambda: "even features")
    torch._check_value(n > 0)
    torch._check_index(0 <= n - 1)
    return x.view(n, d // 2, 2).sum(-1)


# ---------------------------------------------------------------------------------------------
# tensor subclasses as inputs


def param_input(r):
    return (nn.Parameter(r.randn(3, 4)), r.randn(3, 4))


@case(param_input)
def parameter_input_arithmetic(w, x):
    return (w * x).sum(0), type(w) is nn.Parameter, isinstance(w, torch.Tensor)


@case(param_input)
def parameter_input_no_grad_update(w, x):
    with torch.no_grad():
        w.mul_(0.5)
    return w * x


@case(param_input)
def parameter_input_metadata(w, x):
    return (
        x + w.detach(),
        w.requires_grad,
        w.is_leaf,
        w.dim(),
        w.is_floating_point(),
        isinstance(w, nn.Parameter),
    )


@case(lambda r: ([nn.Parameter(r.randn(4)) for _ in range(3)], r.randn(2, 4)))
def parameter_list_input(ws, x):
    return sum(x * w for w in ws)


class _Tagged(torch.Tensor):
    """A user tensor subclass with no ``__torch_function__`` override of its own."""


def tagged_input(r):
    return (r.randn(3, 4).as_subclass(_Tagged),)


@case(tagged_input)
def subclass_input_breaks_cleanly(t):
    return t * 2 + 1


@case(tagged_input)
def subclass_input_type_checks(t):
    return type(t).__name__, isinstance(t, torch.Tensor), isinstance(t, _Tagged)


# ---------------------------------------------------------------------------------------------
# more model-code uses


@case(x34)
def grad_enabled_decorator_off_module(x):
    @torch.no_grad()
    def infer(t):
        return t * 3

    return infer(x) + 1


@case(x34)
def set_grad_enabled_restores_after(x):
    prev = torch.is_grad_enabled()
    torch.set_grad_enabled(False)
    y = x.exp()
    torch.set_grad_enabled(prev)
    return y, torch.is_grad_enabled()


@case(x34)
def size_as_view_argument(x):
    shape = x.shape
    flat = x.flatten()
    return flat.view(shape), flat.reshape(shape[0], -1), x.new_ones(shape[1:])


@case(x34)
def size_unpack_in_model_code(x):
    bsz, dim = x.size()
    heads = 2
    return x.view(bsz, heads, dim // heads).transpose(0, 1)


@case(x34)
def size_hash_and_dict_key(x):
    cache = {x.shape: "a", torch.Size([1]): "b"}
    return x * 2, cache[torch.Size([3, 4])], hash(x.shape) == hash((3, 4))


@case(lambda r: (r.randn(2, 3, 4),))
def size_max_and_sum(x):
    s = x.shape
    return x.sum(dim=tuple(range(1, len(s)))), max(s), sum(s), math.prod(s)


@case(mu_logstd)
def normal_batch_and_event_shape(x, mu, log_std):
    dist = Normal(mu, log_std.exp())
    return dist.batch_shape, dist.event_shape, dist.log_prob(x).shape, x * 2


@case(logits)
def categorical_argmax_mode(lg):
    dist = Categorical(logits=lg)
    return dist.mode, dist.probs.argmax(-1), dist.entropy().sum()


@case(probs01)
def bernoulli_expand_and_sample(p):
    dist = Bernoulli(probs=p[0]).expand(torch.Size([3, p.shape[1]]))
    return dist.sample(), dist.batch_shape


@case(lambda r: (r.randn(4, 6), r.randn(4, 3)))
def independent_normal_log_prob(h, act):
    mu, log_std = h.chunk(2, dim=-1)
    dist = torch.distributions.Independent(Normal(mu, log_std.exp()), 1)
    return dist.log_prob(act), dist.entropy()


@case(logits)
def categorical_kl_between_policies(lg):
    old = Categorical(logits=lg.detach())
    new = Categorical(logits=lg * 0.9)
    return kl_divergence(old, new).mean()


_W44 = torch.linspace(-1, 1, 16).reshape(4, 4)


@torch.autocast("cpu", dtype=torch.bfloat16)
def _bf16_project(t):
    return t @ _W44


@case(x34)
def autocast_decorated_function(x):
    y = _bf16_project(x)
    return y.float() + 1, y.dtype


class _MixedHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)

    @torch.autocast("cpu", dtype=torch.bfloat16)
    def forward(self, x):
        return self.proj(x).relu()


@case(x34, module=True)
def autocast_decorated_forward():
    torch.manual_seed(0)
    return _MixedHead()


@case(x34)
def autocast_decorator_made_in_frame(x):
    h = torch.autocast("cpu", dtype=torch.bfloat16)(lambda t: t @ _W44)
    return h(x).float()


def _matmul_w(t):
    return t @ _W44, torch.is_autocast_enabled("cpu")


@case(x34)
def autocast_decorator_made_in_frame_on_a_global_function(x):
    h = torch.autocast("cpu", dtype=torch.bfloat16)(_matmul_w)
    y, inside = h(x)
    z = x @ _W44
    return y.float(), y.dtype, z.dtype, inside, torch.is_autocast_enabled("cpu")


@case(lambda r: (r.randn(3, 4, requires_grad=True),))
def grad_and_inference_decorators_made_in_frame(x):
    def body(t):
        return t * 2, torch.is_grad_enabled(), torch.is_inference_mode_enabled()

    a, ga, ia = torch.no_grad()(body)(x)
    b, gb, ib = torch.inference_mode()(body)(x.detach())
    c = x * 3
    return a, b.clone(), c, ga, ia, gb, ib, a.requires_grad, c.requires_grad


# torch.compile leaves autocast on after the caught exception (z comes back in bfloat16).
@case(x34, xfail_tc=TC_DIFFERS)
def autocast_decorator_made_in_frame_raise_caught(x):
    def body(t):
        y = t @ _W44
        if y.shape[0] == 3:
            raise ValueError("three")
        return y

    try:
        torch.autocast("cpu", dtype=torch.bfloat16)(body)(x)
        caught = False
    except ValueError:
        caught = True
    z = x @ _W44
    return z, z.dtype, caught, torch.is_autocast_enabled("cpu")


@case(x34)
def autocast_enabled_called_as_function(x):
    torch.set_autocast_enabled("cpu", True)
    try:
        y = x @ _W44
    finally:
        torch.set_autocast_enabled("cpu", False)
    return y
