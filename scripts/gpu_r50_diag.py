"""Session 23: why resnet50 training under torchferro on CUDA ran 8x slower than eager (logs, counters, one profiled step)."""

import os, sys, time, torch

sys.path.insert(0, "bench")
os.environ.setdefault("TORCHFERRO_AOT_CUDA", "1")
import torchferro, train_cuda
from torchferro import _aot

m, b = train_cuda.build_resnet50(int(sys.argv[1]) if len(sys.argv) > 1 else 8)
step = train_cuda.make_step(m, torchferro.compile, amp=True)
for i in range(4):
    torch.cuda.synchronize()
    t = time.perf_counter()
    l = step(*b)
    torch.cuda.synchronize()
    print("step", i, l.item(), (time.perf_counter() - t) * 1e3, "ms", flush=True)
print(dict(_aot.counters), _aot.fallback_reasons, flush=True)
print(
    torchferro._C.counters() if hasattr(torchferro._C, "counters") else "", flush=True
)
from torch.profiler import profile, ProfilerActivity

with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
    step(*b)
    torch.cuda.synchronize()
print(
    prof.key_averages().table(
        sort_by="self_cuda_time_total", row_limit=25, max_name_column_width=70
    )
)
print(
    prof.key_averages().table(
        sort_by="self_cpu_time_total", row_limit=15, max_name_column_width=70
    )
)
