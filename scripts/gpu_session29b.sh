# GPU (session 29, call 2): resnet50's channels-last bf16 training step with channels-last CUDA
# graphs on, against eager and torch.compile; issue 18's per-call dynamic-vs-static figure on
# this machine's idle CPUs (GPT-2 and Llama small configs, batch 1).
# Run: run(command="bash scripts/gpu_session29b.sh", carry=["build/cp312"]).
set -u
. scripts/gpu_env.sh
O=$OUT
nvidia-smi --query-gpu=name --format=csv,noheader > $O/gpu.txt
( TORCHFERRO_CUDA_CHANNELS_LAST=1 timeout 170 python3 bench/train_cuda.py --model resnet50 --batch 64 --amp --channels-last --steps 5 ) > $O/train_r50cl_on.txt 2>&1
( OMP_NUM_THREADS=8 timeout 120 python3 bench/dynamic_vs_static.py --model gpt2 --reps 15 ) > $O/dvs_gpt2.txt 2>&1
( OMP_NUM_THREADS=8 timeout 100 python3 bench/dynamic_vs_static.py --model llama --reps 15 ) > $O/dvs_llama.txt 2>&1
