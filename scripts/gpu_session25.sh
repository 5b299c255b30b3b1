# GPU (session 25): the CUDA set in 12 shards on kernels shared between repeated layers
# (codegen::cuda::share), then where the first compiled training step's time goes (resnet50
# and GPT-2, bf16, AdamW, each in a fresh process with an empty cache), GPT-2's bf16 inference
# (bench workload gpt2_amp: 17.5 ms against torch.compile's 6.6 in session 17) profiled, and
# resnet50's step with a channels-last model and images.
# Run: run(command="bash scripts/gpu_session25.sh", carry=["build/cp312"]).
set -u
. scripts/gpu_env.sh
O=/tmp/o; mkdir -p $O
nvidia-smi --query-gpu=name --format=csv,noheader > $O/gpu.txt
J=12
FILES="tests/test_cuda.py tests/test_aot_cuda.py tests/test_cuda_dynamic.py tests/test_cuda_models.py tests/test_guards_aliased_getattr.py tests/test_dynamic_int_kernels.py"
pids=()
for ((i = 0; i < J; i++)); do
  ( TORCHFERRO_SHARD=$i TORCHFERRO_NSHARDS=$J OMP_NUM_THREADS=1 exec timeout 200 python3 -m pytest -q -p no:cacheprovider -p pytest_shard -rfEx $FILES > $O/pytest-$i.log 2>&1 ) &
  pids+=("$!")
done
for p in "${pids[@]}"; do wait $p; done
for f in $O/pytest-*.log; do tail -n 1 $f; done > $O/tests.txt
grep -h -E "^(FAILED|ERROR|XPASS)" $O/pytest-*.log >> $O/tests.txt
( timeout 100 python3 scripts/gpu_compile_profile.py $O/r50 --resnet50 --cprofile ) > $O/r50.txt 2>&1
( timeout 80 python3 scripts/gpu_compile_profile.py $O/gpt2 --cprofile ) > $O/gpt2.txt 2>&1
( timeout 80 python3 scripts/gpu_infer_profile.py $O/gpt2_amp gpt2_amp ) > $O/gpt2_amp.txt 2>&1
( timeout 80 python3 bench/train_cuda.py --model resnet50 --batch 64 --amp --steps 5 --channels-last --only eager,torchferro ) > $O/r50_cl.txt 2>&1
cat $O/gpu.txt $O/tests.txt $O/r50.txt $O/gpt2.txt $O/gpt2_amp.txt $O/r50_cl.txt | tail -120 > $OUT/summary.txt
tar -czf $OUT/all.tgz -C /tmp o
