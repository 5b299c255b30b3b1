# GPU (session 31, call 3): pointwise chunks as vector accesses (`CudaPolicy::vector_access`,
# new) against the old per-lane accesses, on the bench's memory-bound workloads and GPT-2 bf16
# inference, torch.compile beside both (`scripts/gpu_cuda_sweep.py`, one process per config).
# Run: run(command="bash scripts/gpu_session31b.sh", carry=["build/cp312"]).
set -u
. scripts/gpu_env.sh
O=$OUT
nvidia-smi --query-gpu=name --format=csv,noheader > $O/gpu.txt
( SWEEP_TC=1 SWEEP_ONLY=copy,pointwise,softmax,layer_norm,rms_norm,gpt2_amp timeout 280 python3 scripts/gpu_cuda_sweep.py default ) > $O/sweep_default.txt 2>&1
( SWEEP_ONLY=copy,pointwise,softmax,layer_norm,rms_norm,gpt2_amp timeout 200 python3 scripts/gpu_cuda_sweep.py VECTOR_ACCESS=0 ) > $O/sweep_off.txt 2>&1
( timeout 60 python3 scripts/gpu_sdpa_strides.py ) > $O/sdpa_strides.txt 2>&1
