# GPU (session 33, last try, little device time left): test_aot_cuda's masked attention tests
# (8 failures in call 1) with the cuDNN layout fix, then the probe.
set -u
. scripts/gpu_env.sh
O=$OUT
J=10
pids=()
for ((i = 0; i < J; i++)); do
  ( OMP_NUM_THREADS=1 TORCHFERRO_SHARD=$i TORCHFERRO_NSHARDS=$J exec timeout 70 python3 -m pytest -q -p no:cacheprovider -p pytest_shard -rfEx tests/test_aot_cuda.py -k "sdpa_mask or default" > $O/s-$i.log 2>&1 ) &
  pids+=("$!")
done
for p in "${pids[@]}"; do wait $p; done
( timeout 40 python3 scripts/gpu_sdpa_cudnn_bwd.py ) > $O/sdpa_cudnn_bwd.txt 2>&1
