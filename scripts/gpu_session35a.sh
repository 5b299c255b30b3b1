# GPU (session 35): one call for everything, since device starts were scarce (budget for one).
# The CUDA set (nothing of sessions 33-35 since session 33's fifth call has run on a GPU:
# review33's symbolic attention layout rule, train33/dyn33/train34/dyn34/hunt34, the widened
# no_grad write fix, session 34's rsqrtf / attention gradient layout / row cache changes, and
# session 35's max-pool backward gather), then GPT-2's and resnet50's bf16 training steps
# against torch.compile in the same call.
# Build first: touch python/src/lib.rs; make ext312 && strip --strip-debug build/cp312/torchferro/*.so
# Run: run(command="bash scripts/gpu_session35a.sh", carry=["build/cp312"]).
set -u
. scripts/gpu_env.sh
O=$OUT
mkdir -p $O/set
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader;
  python3 -c 'import torch, transformers, torchferro; print(torch.__version__, transformers.__version__, torchferro._C.__file__)'; } > $O/env.txt 2>&1
. scripts/gpu_shards.sh
J=14 cuda_set $O/set 200
( timeout 125 python3 bench/train_cuda.py --model gpt2 --batch 8 --amp --steps 10 ) > $O/train_gpt2.txt 2>&1
( timeout 150 python3 bench/train_cuda.py --model resnet50 --batch 64 --amp --channels-last --steps 5 ) > $O/train_r50cl.txt 2>&1
