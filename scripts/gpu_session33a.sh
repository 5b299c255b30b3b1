# GPU (session 33, first call): the CUDA test set (session 32's train32/aten32/dyn32 changes and
# session 33's disable regions never ran on a GPU), then GPT-2's bf16 training step traced in
# ours and in torch.compile, summarised by kind of kernel (session 32: ours 29.39 ms of kernels
# against 27.98, with the top kernels level: where is the rest?). Traces come back gzipped.
# Run: run(command="bash scripts/gpu_session33a.sh", carry=["build/cp312"]).
set -u
. scripts/gpu_env.sh
O=$OUT
mkdir -p $O/set
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader;
  python3 -c 'import torch, transformers, torchferro; print(torch.__version__, transformers.__version__, torchferro._C.__file__)'; } > $O/env.txt 2>&1
J=12
FILES="tests/test_cuda.py tests/test_aot_cuda.py tests/test_cuda_dynamic.py tests/test_cuda_models.py tests/test_guards_aliased_getattr.py tests/test_dynamic_int_kernels.py"
pids=()
for ((i = 0; i < J; i++)); do
  ( OMP_NUM_THREADS=1 TORCHFERRO_SHARD=$i TORCHFERRO_NSHARDS=$J exec timeout 280 python3 -m pytest -q -p no:cacheprovider -p pytest_shard -rfEx $FILES > $O/set/pytest-$i.log 2>&1 ) &
  pids+=("$!")
done
for p in "${pids[@]}"; do wait $p; done
{ for f in $O/set/pytest-*.log; do tail -n 1 $f; done; grep -h -E "^(FAILED|ERROR|XPASS)" $O/set/pytest-*.log; } > $O/summary.txt
( timeout 60 python3 scripts/gpu_train_trace.py /tmp/tg ) > /tmp/tg_ours.log 2>&1
( timeout 120 python3 scripts/gpu_train_trace.py /tmp/tg --torch-compile ) > /tmp/tg_tc.log 2>&1
for t in trace trace_tc; do
  ( python3 scripts/trace_kernels.py /tmp/tg/$t.json --top 40 --classes ) > $O/gpt2_${t}_kernels.txt 2>&1
  gzip -c /tmp/tg/$t.json > $O/gpt2_$t.json.gz
done
tail -n 3 /tmp/tg_ours.log /tmp/tg_tc.log > $O/gpt2_trace_logs.txt 2>&1
