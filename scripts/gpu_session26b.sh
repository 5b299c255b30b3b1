# GPU (session 26, second call): the inference workloads never measured on the CUDA inductor
# since session 17 (transformer block, GPT-2 bf16, resnet50), eager / torch.compile /
# torchferro side by side in one bench run, then the two training steps with torch.compile.
# Run: run(command="bash scripts/gpu_session26b.sh", carry=["build/cp312"]).
set -u
. scripts/gpu_env.sh
O=/tmp/o; mkdir -p $O
END=$(( $(date +%s) + 560 ))
nvidia-smi --query-gpu=name --format=csv,noheader > $O/gpu.txt
( timeout 330 python3 bench/run.py --device cuda --no-chart --no-recompile --out $O/bench \
    --only transformer_block,gpt2_amp,resnet50 ) > $O/bench.log 2>&1
( timeout $(( END - $(date +%s) )) python3 bench/train_cuda.py --model resnet50 --batch 64 --amp --steps 5 ) > $O/train_resnet50.txt 2>&1
{ cat $O/gpu.txt; cat $O/bench/results.md; tail -5 $O/bench.log; tail -20 $O/train_resnet50.txt; } > $OUT/summary.txt
tar -czf $OUT/all.tgz -C /tmp o
