"""`torch.autocast` regions on the CPU: the region is part of the graph (two autocast switches
around its ops), and the dtypes inside are torch's own (bfloat16 or float16 for matmul-class ops,
float32 where autocast keeps it, the input's dtype elsewhere)."""

from __future__ import annotations

import torch
from torch import nn

from .harness import module_program, program


def x38(r):
    return (r.randn(3, 8),)


_W = torch.randn(8, 4, generator=torch.Generator().manual_seed(7))


@program(x38, 1, fullgraph=True)
def matmul_relu_softmax_in_bfloat16(x):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = x @ _W
        z = torch.softmax(torch.relu(y) + 1, -1)
    return z, y.dtype, z.float().sum(-1)


@program(x38, 1, fullgraph=True)
def autocast_float16_keyword_form(x):
    with torch.autocast(device_type="cpu", dtype=torch.float16):
        y = torch.mm(x, _W)
    return y, y + 1


@program(x38, 1, fullgraph=True)
def default_dtype_is_bfloat16(x):
    with torch.autocast("cpu"):
        y = torch.matmul(x, _W)
    return y.dtype == torch.bfloat16, y


@program(x38, 1, fullgraph=True)
def nested_region_disabled_inside(x):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        a = x @ _W
        with torch.autocast("cpu", enabled=False):
            b = x @ _W
        c = a.float() + b
    return a, b, c


@program(x38, 1, fullgraph=True)
def branch_on_the_dtype_autocast_chose(x):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = x @ _W
    if y.dtype == torch.bfloat16:
        return y.float() * 2
    return y


@program(x38, 1, fullgraph=True)
def ops_after_the_region_run_in_float32(x):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = x @ _W
    return (y.float() @ _W.t()).dtype, y.float() @ _W.t()


class AutocastMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            h = torch.nn.functional.gelu(self.fc1(x))
            out = self.fc2(h)
        return out.float()


module_program("module_forward_under_autocast", AutocastMLP, x38, 1, fullgraph=True)


# A break inside a `with` block over autocast cannot resume yet: the frame runs eagerly
# (torch.compile: 2 graphs around the print).
@program(x38, 0, eager=1)
def print_inside_an_autocast_block(x):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = x @ _W
        print("inside autocast")
        z = y + 1
    return z


# CUDA autocast is traced as CPU autocast is (a disabled region changes no dtype):
# 1 graph, as torch.compile, on a machine without a GPU too.
@program(x38, 1, fullgraph=True)
def autocast_disabled_for_cuda_is_traced(x):
    with torch.autocast("cuda", enabled=False):
        y = x @ _W
    return y
