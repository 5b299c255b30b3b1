# GPU (session 27, last call, little device time left): the CUDA set in 12 shards on the merged
# head, the LM head probe, GPT-2's bf16 training step against eager and torch.compile.
# Run: run(command="bash scripts/gpu_session27d.sh", carry=["build/cp312"]).
set -u
. scripts/gpu_env.sh
O=/tmp/o; mkdir -p $O
nvidia-smi --query-gpu=name --format=csv,noheader > $O/gpu.txt
J=12
FILES="tests/test_cuda.py tests/test_aot_cuda.py tests/test_cuda_dynamic.py tests/test_cuda_models.py tests/test_guards_aliased_getattr.py tests/test_dynamic_int_kernels.py tests/test_inductor_sdpa.py"
pids=()
for ((i = 0; i < J; i++)); do
  ( TORCHFERRO_SHARD=$i TORCHFERRO_NSHARDS=$J OMP_NUM_THREADS=1 exec timeout 170 python3 -X faulthandler -m pytest -q -p no:cacheprovider -p pytest_shard -rfEx $FILES > $O/pytest-$i.log 2>&1 ) &
  pids+=("$!")
done
for p in "${pids[@]}"; do wait $p; done
( timeout 60 python3 scripts/gpu_lmhead_probe.py ) 2>&1 | grep -v -i warn > $O/lmhead.txt
for f in $O/pytest-*.log; do tail -n 1 $f; done > $O/tests.txt
grep -h -E "^(FAILED|ERROR|XPASS)|Fatal Python" $O/pytest-*.log >> $O/tests.txt
( timeout 130 python3 bench/train_cuda.py --amp --steps 5 ) > $O/train_gpt2.txt 2>&1
{ cat $O/gpu.txt $O/tests.txt $O/lmhead.txt; tail -4 $O/train_gpt2.txt; } > $OUT/summary.txt
tar -czf $OUT/all.tgz -C /tmp o
