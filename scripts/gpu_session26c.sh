# GPU (session 26, third call): the CUDA set in 12 shards after the GEMM-padding rule for
# outputs, half-precision sdpa as the extern call and per-kernel plain instances; GPT-2 bf16
# inference side by side (bench gpt2_amp); GPT-2's first training step by part; GPT-2's
# training step against eager and torch.compile.
# Run: run(command="bash scripts/gpu_session26c.sh", carry=["build/cp312"]).
set -u
. scripts/gpu_env.sh
O=/tmp/o; mkdir -p $O
nvidia-smi --query-gpu=name --format=csv,noheader > $O/gpu.txt
J=12
FILES="tests/test_cuda.py tests/test_aot_cuda.py tests/test_cuda_dynamic.py tests/test_cuda_models.py tests/test_guards_aliased_getattr.py tests/test_dynamic_int_kernels.py tests/test_inductor_sdpa.py"
pids=()
for ((i = 0; i < J; i++)); do
  ( TORCHFERRO_SHARD=$i TORCHFERRO_NSHARDS=$J OMP_NUM_THREADS=1 exec timeout 200 python3 -m pytest -q -p no:cacheprovider -p pytest_shard -rfEx $FILES > $O/pytest-$i.log 2>&1 ) &
  pids+=("$!")
done
for p in "${pids[@]}"; do wait $p; done
for f in $O/pytest-*.log; do tail -n 1 $f; done > $O/tests.txt
grep -h -E "^(FAILED|ERROR|XPASS)" $O/pytest-*.log >> $O/tests.txt
( timeout 120 python3 bench/run.py --device cuda --no-chart --no-recompile --out $O/bench --only gpt2_amp ) > $O/bench.log 2>&1
( timeout 80 python3 scripts/gpu_compile_profile.py $O/gpt2 ) > $O/gpt2.txt 2>&1
( timeout 130 python3 bench/train_cuda.py --amp --steps 5 ) > $O/train_gpt2.txt 2>&1
{ cat $O/gpu.txt $O/tests.txt; grep "gpt2_amp" $O/bench/results.md; cat $O/gpt2.txt; tail -8 $O/train_gpt2.txt; } > $OUT/summary.txt
tar -czf $OUT/all.tgz -C /tmp o
