# GPU (session 35, short budget): the CUDA set first (sessions 33-35 never ran on a GPU), then
# GPT-2's bf16 training step against torch.compile while device time lasts.
# Run: run(command="bash scripts/gpu_session35c.sh", carry=["build/cp312"]).
set -u
. scripts/gpu_env.sh
O=$OUT
mkdir -p $O/set
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader;
  python3 -c 'import torch, transformers, torchferro; print(torch.__version__, transformers.__version__, torchferro._C.__file__)'; } > $O/env.txt 2>&1
. scripts/gpu_shards.sh
J=14 cuda_set $O/set 170
( timeout 110 python3 bench/train_cuda.py --model gpt2 --batch 8 --amp --steps 10 ) > $O/train_gpt2.txt 2>&1
