# GPU (session 27, call 1): does session 26's shard-1 segfault reproduce (shard 1 of 12 twice,
# side by side, under faulthandler)? Then the bf16 LM head probe (which operand layouts cuBLAS
# runs aligned) and traces of resnet50's channels-last training step, ours and torch.compile's
# (why our batch-norm kernels on NHWC are slow).
# Run: run(command="bash scripts/gpu_session27a.sh", carry=["build/cp312"]).
set -u
. scripts/gpu_env.sh
O=/tmp/o; mkdir -p $O
FILES="tests/test_cuda.py tests/test_aot_cuda.py tests/test_cuda_dynamic.py tests/test_cuda_models.py tests/test_guards_aliased_getattr.py tests/test_dynamic_int_kernels.py tests/test_inductor_sdpa.py"
for r in a b; do
  ( TORCHFERRO_SHARD=1 TORCHFERRO_NSHARDS=12 OMP_NUM_THREADS=1 exec timeout 110 python3 -X faulthandler -m pytest -q -p no:cacheprovider -p pytest_shard -rfEx $FILES > $O/shard1-$r.log 2>&1 ) &
done
( timeout 100 python3 scripts/gpu_lmhead_probe.py > $O/lmhead.txt 2>&1 )
wait
for r in a b; do echo "== shard1 $r"; grep -E "passed|failed|Fatal|line [0-9]+ in" $O/shard1-$r.log | head -8; done > $OUT/summary.txt
( timeout 150 python3 scripts/gpu_train_trace.py $O/r50cl --resnet50 --channels-last ) > $O/r50cl.txt 2>&1
( timeout 150 python3 scripts/gpu_train_trace.py $O/r50cl --resnet50 --channels-last --torch-compile ) >> $O/r50cl.txt 2>&1
for t in trace_r50cl trace_tc_r50cl; do echo "== $t"; python3 scripts/trace_kernels.py $O/r50cl/$t.json --top 25 2>&1 | head -60; gzip $O/r50cl/$t.json; done > $O/r50cl_kernels.txt
tar -czf $O/r50cl/cu.tgz -C $O/r50cl cu 2>/dev/null && rm -rf $O/r50cl/cu
cat $O/lmhead.txt >> $OUT/summary.txt
tar -czf $OUT/all.tgz -C /tmp o
