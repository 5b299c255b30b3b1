# GPU (session 31, call 2): the defaults after session 31's changes: channels-last CUDA graphs
# on, the backward's host convolutions handed channels-last gradients (`TAKES_CHANNELS_LAST`),
# pointwise chunks as vector accesses (`CudaPolicy::vector_access`). The CUDA set under the new
# defaults, resnet50's channels-last bf16 training step against eager and torch.compile, and
# its kernel trace. Logs under /tmp, few files to $OUT.
# Run: run(command="bash scripts/gpu_session31a.sh", carry=["build/cp312"]).
set -u
. scripts/gpu_env.sh
. scripts/gpu_shards.sh
O=$OUT
nvidia-smi --query-gpu=name --format=csv,noheader > $O/gpu.txt
mkdir -p /tmp/set
cuda_set /tmp/set 200; cp /tmp/set/tests.txt $O/set.txt
( timeout 170 python3 bench/train_cuda.py --model resnet50 --batch 64 --amp --channels-last --steps 5 ) > $O/train_r50cl.txt 2>&1
( timeout 110 python3 scripts/gpu_train_trace.py /tmp/tr --resnet50 --channels-last ) > /tmp/tr_ours.log 2>&1
( python3 scripts/trace_kernels.py /tmp/tr/trace_r50cl.json --top 40; tail -n 3 /tmp/tr_ours.log ) > $O/r50cl_kernels.txt 2>&1
