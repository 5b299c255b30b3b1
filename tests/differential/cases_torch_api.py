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
import operator

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

from .runner import case

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
        return action, dist.log_prob(action), dist.entropy().mean(), self.v(h).squeeze(-1)


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
