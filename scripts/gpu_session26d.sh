# GPU (session 26): the segfault in shard 1 of gpu_session26c.sh (test_cuda.py, case arccos
# after acos in one process) rerun under gdb, then GPT-2 bf16 inference profiled (14.5 ms
# in 26c against 9.9 ms before the GEMM-padding and sdpa changes).
set -u
. scripts/gpu_env.sh
O=/tmp/o; mkdir -p $O
K="acos-int8 or arccos"
if command -v gdb > /dev/null; then
  ( timeout 120 gdb -q -batch -ex run -ex bt --args python3 -m pytest -q -p no:cacheprovider -x tests/test_cuda.py -k "$K" ) > $O/gdb.txt 2>&1
else
  ( timeout 100 python3 -X faulthandler -m pytest -q -p no:cacheprovider -x tests/test_cuda.py -k "$K" ) > $O/gdb.txt 2>&1
fi
( timeout 100 python3 scripts/gpu_infer_profile.py $O/gpt2_amp gpt2_amp torchferro,eager ) > $O/gpt2_amp.txt 2>&1
{ grep -B2 -A30 "SIGSEGV\|Segmentation" $O/gdb.txt | head -50; tail -4 $O/gdb.txt; cat $O/gpt2_amp.txt | tail -5; awk -F'  +' 'NR>3 && NR<40 {print $2" | "$8" | "$(NF-1)}' $O/gpt2_amp/profile-torchferro.txt; } > $OUT/summary.txt
tar -czf $OUT/all.tgz -C /tmp o
