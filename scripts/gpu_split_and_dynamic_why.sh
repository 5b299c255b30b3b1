# GPU (session 21): the split-reduction probe after the fix (expect 0 BAD), and the inductor log
# of dynamic_seq on CUDA (why NVRTC ran per length).
set -u
# Run: run(command="bash scripts/gpu_split_and_dynamic_why.sh", carry=["build/cp312"]) after
# `make ext312`; the summary comes back in $OUT/summary.txt.
. scripts/gpu_env.sh
O=/tmp/o; mkdir -p $O
( TORCHFERRO_CACHE_DIR=$(mktemp -d) timeout 110 python3 scripts/gpu_probe_split_reductions.py > $O/splitred.log 2>&1 ) &
b=$!
( TORCHFERRO_LOGS=torchferro,dynamic,recompiles timeout 110 python3 bench/dynamic_seq.py --device cuda --config tiny --batch 8 --reps 1 --variants torchferro > $O/dynlog.txt 2>&1 ) &
c=$!
wait $b $c
{ grep -c "BAD" $O/splitred.log; grep -c "^r=" $O/splitred.log; grep "BAD" $O/splitred.log | head; grep -n -i "dynamic graph\|declin\|fitting\|did not build\|symbolically\|automatic dynamic" $O/dynlog.txt | head -30 | cut -c1-800; tail -5 $O/dynlog.txt; } > $OUT/summary.txt 2>&1
