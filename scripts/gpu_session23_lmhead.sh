# GPU (session 23, the LM head and cross entropy of the bf16 training step): the CUDA training
# tests (tests/test_aot_cuda.py, with the new test_cuda_bf16_lm_head_cross_entropy at padded
# shapes), then GPT-2 124M's step (`bench/train_cuda.py --amp --steps 5`: eager, torchferro,
# torch.compile in one process) and a chrome trace of one torchferro step with our sources
# (read the LM-head kernels with `python scripts/trace_kernels.py OUT/trace/trace.json`).
# Run: run(command="bash scripts/gpu_session23_lmhead.sh", carry=["build/cp312"]).
set -u
. scripts/gpu_env.sh
J=6
pids=()
for ((i = 0; i < J; i++)); do
  ( TORCHFERRO_SHARD=$i TORCHFERRO_NSHARDS=$J OMP_NUM_THREADS=1 timeout 200 python3 -m pytest -q \
      -p no:cacheprovider -p pytest_shard -rfEx tests/test_aot_cuda.py > $OUT/pytest-$i.log 2>&1 ) &
  pids+=("$!")
done
for p in "${pids[@]}"; do wait $p; done
for f in $OUT/pytest-*.log; do tail -n 1 $f; done > $OUT/summary.txt
grep -h -E "^(FAILED|ERROR|XPASS)" $OUT/pytest-*.log >> $OUT/summary.txt
( timeout 150 python3 bench/train_cuda.py --amp --steps 5 ) > $OUT/train_amp.txt 2>&1
mkdir -p $OUT/trace
timeout 90 python3 scripts/gpu_train_trace.py $OUT/trace > $OUT/trace/log.txt 2>&1
python3 scripts/trace_kernels.py $OUT/trace/trace.json > $OUT/trace/kernels.txt 2>&1
gzip $OUT/trace/trace.json 2>/dev/null
tar -czf $OUT/trace/cu.tgz -C $OUT/trace cu 2>/dev/null && rm -rf $OUT/trace/cu
grep -h -E "eager:|torchferro:|torch.compile:" $OUT/train_amp.txt >> $OUT/summary.txt
# One archive: the device call brings back at most 8 files.
tar -czf /tmp/all23.tgz -C $OUT . && find $OUT -mindepth 1 -delete && mv /tmp/all23.tgz $OUT/all.tgz
