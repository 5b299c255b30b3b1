"""Probe batch F: vision/audio-ish functional ops on the inductor."""

import torch
from differential.runner import case
from torch.nn import functional as F

STRICT_BREADTH = True


def img(r):
    return (r.randn(2, 3, 6, 7),)


@case(img)
def f_interpolate_modes(x):
    return (
        F.interpolate(x, scale_factor=2, mode="nearest"),
        F.interpolate(x, size=(5, 9), mode="bilinear", align_corners=False),
        F.interpolate(x, scale_factor=1.5, mode="bicubic", align_corners=True),
        F.interpolate(x, size=(4, 4), mode="area"),
        F.interpolate(x, scale_factor=0.5, mode="nearest-exact"),
    )


@case(img)
def f_pad_modes(x):
    return (
        F.pad(x, (1, 2, 0, 1), mode="reflect"),
        F.pad(x, (2, 2, 2, 2), mode="replicate"),
        F.pad(x, (1, 1, 1, 1), mode="circular"),
        F.pad(x, (1, -1, 0, 2), value=3.0),
    )


@case(img)
def f_pool_unpool(x):
    y, idx = F.max_pool2d(x, 2, return_indices=True, ceil_mode=True)
    return (
        y,
        idx,
        F.max_unpool2d(y, idx, 2, output_size=x.shape[-2:]),
        F.adaptive_avg_pool2d(x, (4, 3)),
        F.adaptive_max_pool2d(x, 3),
        F.avg_pool2d(x, 3, 2, 1, count_include_pad=False),
        F.lp_pool2d(x, 2, 2),
    )


@case(img)
def f_unfold_fold_pixelshuffle(x):
    u = F.unfold(x, 3, padding=1)
    f = F.fold(u, x.shape[-2:], 3, padding=1)
    return (
        u,
        f,
        F.pixel_shuffle(x[:, :1].repeat(1, 4, 1, 1), 2),
        F.pixel_unshuffle(x[..., :6], 2),
    )


@case(lambda r: (r.randn(2, 3, 5, 5), r.rand(2, 4, 4, 2) * 2 - 1))
def f_grid_sample(x, g):
    theta = torch.tensor([[[0.9, 0.1, 0.0], [-0.1, 0.9, 0.1]]]).repeat(2, 1, 1)
    grid = F.affine_grid(theta, (2, 3, 4, 4), align_corners=False)
    return (
        F.grid_sample(x, g, align_corners=True),
        F.grid_sample(
            x, grid, mode="nearest", padding_mode="border", align_corners=False
        ),
        F.grid_sample(
            x, g, mode="bilinear", padding_mode="reflection", align_corners=False
        ),
    )


@case(img)
def f_conv_variants(x):
    w = torch.ones(6, 1, 3, 3) * 0.1
    return (
        F.conv2d(x, w[:3], groups=3, padding="same"),
        F.conv2d(x, w[:, :1].expand(6, 3, 3, 3).contiguous(), stride=2, dilation=2),
        F.conv_transpose2d(
            x,
            w[:3].transpose(0, 1).expand(3, 2, 3, 3).contiguous(),
            stride=2,
            output_padding=1,
        ),
        F.conv1d(x.flatten(2), torch.ones(4, 3, 5) * 0.05, padding=2),
    )


@case(img)
def f_norms(x):
    return (
        F.group_norm(x, 3, torch.ones(3), torch.zeros(3), eps=1e-3),
        F.instance_norm(x),
        F.local_response_norm(x, 2),
        F.normalize(x, dim=1),
        F.layer_norm(x, x.shape[-2:]),
        F.rms_norm(x, (7,), eps=1e-6),
    )


@case(lambda r: (r.randn(2, 400),))
def f_stft(x):
    w = torch.hann_window(64)
    s = torch.stft(x, 64, 16, window=w, return_complex=True)
    return s.abs(), torch.istft(s, 64, 16, window=w, length=400)


@case(lambda r: (r.randn(4, 10),))
def f_fft(x):
    return (
        torch.fft.rfft(x).abs(),
        torch.fft.irfft(torch.fft.rfft(x), n=10),
        torch.fft.fftshift(x, dim=1),
    )


@case(lambda r: (r.randn(5, 2, 6).log_softmax(2), r.randint(1, 6, 2, 3)))
def f_ctc_and_losses(lp, tg):
    il = torch.tensor([5, 4])
    tl = torch.tensor([3, 2])
    x = lp[0]
    return (
        F.ctc_loss(lp, tg, il, tl, reduction="sum", zero_infinity=True),
        F.kl_div(x, x.exp().flip(1), reduction="batchmean", log_target=False),
        F.huber_loss(x, x.flip(0), delta=0.5),
        F.smooth_l1_loss(x, x * 0.5, beta=0.3),
        F.poisson_nll_loss(x, x.exp(), log_input=True),
        F.binary_cross_entropy_with_logits(
            x, (x > -1.8).float(), pos_weight=torch.full((6,), 2.0)
        ),
        F.cosine_embedding_loss(x, x.flip(1), torch.tensor([1, -1])),
        F.triplet_margin_loss(x, x * 0.9, x.flip(0)),
        F.cross_entropy(x, torch.tensor([1, 2]), label_smoothing=0.1, ignore_index=2),
    )
