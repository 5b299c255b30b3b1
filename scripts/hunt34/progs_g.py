"""Probe batch G: complex tensors (spectral code, rotary embeddings as complex numbers)."""

import torch
from differential.runner import case

STRICT_BREADTH = True


@case(lambda r: (r.randn(4, 10),))
def g_fft_magnitude_phase(x):
    c = torch.fft.rfft(x)
    return c.abs(), c.angle(), torch.abs(c) * 2, c.real + c.imag, torch.view_as_real(c)


@case(lambda r: (r.randn(2, 5, 8),))
def g_rotary_complex(x):
    freqs = 1.0 / (10000 ** (torch.arange(0, 8, 2).float() / 8))
    t = torch.arange(5).float()
    f = torch.outer(t, freqs)
    cis = torch.polar(torch.ones_like(f), f)
    xc = torch.view_as_complex(x.reshape(2, 5, 4, 2))
    out = torch.view_as_real(xc * cis).flatten(2)
    return out, (xc * cis).abs().sum(), xc.conj().imag


@case(lambda r: (r.randn(3, 4),))
def g_complex_math(x):
    z = torch.complex(x, x.flip(1))
    return (
        z.abs(),
        z.exp(),
        z * z.conj(),
        (z / (z + 1)).real,
        z.sum(1),
        z.mean(),
        torch.sgn(z),
        z.pow(2),
        z.sigmoid().imag,
        torch.isfinite(z),
    )


@case(lambda r: (r.randn(8),))
def g_fft_filter(x):
    X = torch.fft.fft(x)
    X[3:6] = 0
    return torch.fft.ifft(X).real, X.abs().max()
