# GPU (session 27, call 2): the CUDA set in 12 shards after channels-last CUDA graphs and the
# column-major GEMM padding; the LM head probe; resnet50's channels-last training step against
# eager and torch.compile; GPT-2 bf16 inference side by side (bench gpt2_amp).
# Run: run(command="bash scripts/gpu_session27b.sh", carry=["build/cp312"]).
set -u
. scripts/gpu_env.sh
O=/tmp/o; mkdir -p $O
nvidia-smi --query-gpu=name --format=csv,noheader > $O/gpu.txt
J=12
FILES="tests/test_cuda.py tests/test_aot_cuda.py tests/test_cuda_dynamic.py tests/test_cuda_models.py tests/test_guards_aliased_getattr.py tests/test_dynamic_int_kernels.py tests/test_inductor_sdpa.py"
pids=()
for ((i = 0; i < J; i++)); do
  ( TORCHFERRO_SHARD=$i TORCHFERRO_NSHARDS=$J OMP_NUM_THREADS=1 exec timeout 200 python3 -X faulthandler -m pytest -q -p no:cacheprovider -p pytest_shard -rfEx $FILES > $O/pytest-$i.log 2>&1 ) &
  pids+=("$!")
done
for p in "${pids[@]}"; do wait $p; done
for f in $O/pytest-*.log; do tail -n 1 $f; done > $O/tests.txt
grep -h -E "^(FAILED|ERROR|XPASS)|Fatal Python" $O/pytest-*.log >> $O/tests.txt
( timeout 60 python3 scripts/gpu_lmhead_probe.py ) 2>&1 | grep -v Warn | tail -12 > $O/lmhead.txt
( timeout 150 python3 bench/train_cuda.py --model resnet50 --batch 64 --amp --channels-last --steps 5 ) > $O/train_r50cl.txt 2>&1
( timeout 120 python3 bench/run.py --device cuda --no-chart --no-recompile --out $O/bench --only gpt2_amp ) > $O/bench.log 2>&1
{ cat $O/gpu.txt $O/tests.txt; cat $O/lmhead.txt; tail -6 $O/train_r50cl.txt; grep "gpt2_amp" $O/bench/results.md; } > $OUT/summary.txt
tar -czf $OUT/all.tgz -C /tmp o
