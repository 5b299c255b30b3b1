# GPU (session 31, one call for 31a + 31b when device time is short): the CUDA set under the
# new defaults, resnet50's channels-last bf16 step against eager and torch.compile, the vector
# access A/B on the memory-bound workloads and GPT-2 bf16 inference, SDPA result strides.
# Run: run(command="bash scripts/gpu_session31c.sh", carry=["build/cp312"]).
set -u
. scripts/gpu_env.sh
. scripts/gpu_shards.sh
O=$OUT
nvidia-smi --query-gpu=name --format=csv,noheader > $O/gpu.txt
( timeout 30 python3 scripts/gpu_sdpa_strides.py ) > $O/sdpa_strides.txt 2>&1
mkdir -p /tmp/set
cuda_set /tmp/set 140; cp /tmp/set/tests.txt $O/set.txt
( timeout 150 python3 bench/train_cuda.py --model resnet50 --batch 64 --amp --channels-last --steps 5 ) > $O/train_r50cl.txt 2>&1
( SWEEP_CHILD_TIMEOUT=110 SWEEP_TC=1 SWEEP_ONLY=copy,pointwise,gpt2_amp python3 scripts/gpu_cuda_sweep.py default ) > $O/sweep_default.txt 2>&1
( SWEEP_CHILD_TIMEOUT=60 SWEEP_ONLY=copy,pointwise,gpt2_amp python3 scripts/gpu_cuda_sweep.py VECTOR_ACCESS=0 ) > $O/sweep_off.txt 2>&1
