# GPU (prepared in session 34, which had no device): the whole CUDA set (session 33's review33
# attention layout rule for symbolic CUDA sizes, train33/dyn33, session 34's helpers and the
# widened no_grad write fix never ran on a GPU; CUDA training is compiled by default since
# session 33), then GPT-2's and resnet50's bf16 training steps against torch.compile.
# Expected from session 34 (unmeasured): rsqrtf in the batch-norm recompute kernels of resnet50's
# backward (kernel109 662 us, 4 sqrt+div per element, 3x its bytes), no host copies of the
# attention gradients in GPT-2's backward (0.69 ms); GPT-2 traced by kind of kernel.
# Build first: touch python/src/lib.rs; make ext312 && strip --strip-debug build/cp312/torchferro/*.so
# Run: run(command="bash scripts/gpu_session34a.sh", carry=["build/cp312"]); then 34b (resnet50).
set -u
. scripts/gpu_env.sh
O=$OUT
mkdir -p $O/set
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader;
  python3 -c 'import torch, transformers, torchferro; print(torch.__version__, transformers.__version__, torchferro._C.__file__)'; } > $O/env.txt 2>&1
. scripts/gpu_shards.sh
cuda_set $O/set 280
( timeout 150 python3 bench/train_cuda.py --model gpt2 --batch 8 --amp --steps 10 ) > $O/train_gpt2.txt 2>&1
( timeout 90 python3 scripts/gpu_train_trace.py /tmp/tg ) > /tmp/tg_ours.log 2>&1
( python3 scripts/trace_kernels.py /tmp/tg/trace.json --top 40 --classes; tail -n 2 /tmp/tg_ours.log ) > $O/gpt2_kernels.txt 2>&1
gzip -c /tmp/tg/trace.json > $O/gpt2_trace.json.gz
tar czf $O/sources.tgz -C /tmp tg/cu 2>/dev/null
