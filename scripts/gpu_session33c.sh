# GPU (session 33, third call): masked half-precision attention in training (8 failures in the
# CUDA set of call 1): the probe (scripts/gpu_sdpa_cudnn_bwd.py), then test_aot_cuda.py's
# attention and default-on tests with the fix (`_aot_helpers._like`).
# Run: run(command="bash scripts/gpu_session33c.sh", carry=["build/cp312"]).
set -u
. scripts/gpu_env.sh
O=$OUT
( timeout 60 python3 scripts/gpu_sdpa_cudnn_bwd.py ) > $O/sdpa_cudnn_bwd.txt 2>&1 &
J=8
pids=()
for ((i = 0; i < J; i++)); do
  ( OMP_NUM_THREADS=1 TORCHFERRO_SHARD=$i TORCHFERRO_NSHARDS=$J exec timeout 100 python3 -m pytest -q -p no:cacheprovider -p pytest_shard -rfEx tests/test_aot_cuda.py -k "sdpa or attention or default" > /tmp/s-$i.log 2>&1 ) &
  pids+=("$!")
done
for p in "${pids[@]}"; do wait $p; done
wait
{ for f in /tmp/s-*.log; do tail -n 1 $f; done; grep -h -E "^(FAILED|ERROR|XPASS)|^E  " /tmp/s-*.log | head -60; } > $O/summary.txt
