# GPU (session 27, last call, little device time left): the CUDA set in 12 shards on the merged
# head, the LM head probe, GPT-2's bf16 training step against eager and torch.compile.
# Run: run(command="bash scripts/gpu_session27d.sh", carry=["build/cp312"]).
set -u
. scripts/gpu_env.sh
. scripts/gpu_shards.sh
O=/tmp/o; mkdir -p $O
nvidia-smi --query-gpu=name --format=csv,noheader > $O/gpu.txt
cuda_set $O 170
( timeout 60 python3 scripts/gpu_lmhead_probe.py ) 2>&1 | grep -v -i warn > $O/lmhead.txt
( timeout 130 python3 bench/train_cuda.py --amp --steps 5 ) > $O/train_gpt2.txt 2>&1
{ cat $O/gpu.txt $O/tests.txt $O/lmhead.txt; tail -4 $O/train_gpt2.txt; } > $OUT/summary.txt
tar -czf $OUT/all.tgz -C /tmp o
