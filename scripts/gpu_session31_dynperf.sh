# GPU (session 31, dynperf31): issue 18's dynamic/static per-call ratio on the device's idle
# CPUs, where session 29 read 1.139 at T=8 (8 threads) and 1.01-1.02 at T=9/16, and Llama was
# never measured. The 2-core build machine shows no gap at 1 thread pinned (0.98-1.03 at every
# length, both models; docs/dynamic-shapes.md, "Session 31"), so this call decides whether the
# T=8 gap is a thread effect: alternating pairs at 8 threads (also with the dynamic function's
# first compiles at 16/17, so no static entry of its cache sits at T=8: at 2 threads here that
# seemed to matter) and at 1 thread, then the full bench at 8 threads. Each output goes to
# $OUT as it finishes.
# Run one model per call (each call has 600 s; the timeouts below add up to 390 s a model):
# run(command="bash scripts/gpu_session31_dynperf.sh gpt2", carry=["build/cp312"]), then llama.
set -u
. scripts/gpu_env.sh
O=$OUT
for m in "${@:-gpt2}"; do
  ( OMP_NUM_THREADS=8 timeout 100 python3 bench/dynamic_vs_static_pairs.py --model $m --threads 8 --reps 300 --lengths 8,9,16,33,64 ) > $O/pairs_${m}_8t.txt 2>&1
  ( OMP_NUM_THREADS=8 timeout 80 python3 bench/dynamic_vs_static_pairs.py --model $m --threads 8 --reps 300 --lengths 8,9,16 --first 16 ) > $O/pairs_${m}_8t_first16.txt 2>&1
  ( OMP_NUM_THREADS=1 timeout 60 python3 bench/dynamic_vs_static_pairs.py --model $m --threads 1 --reps 300 --lengths 8,9,16 ) > $O/pairs_${m}_1t.txt 2>&1
  ( OMP_NUM_THREADS=8 timeout 150 python3 bench/dynamic_vs_static.py --model $m --reps 15 ) > $O/dvs_${m}.txt 2>&1
done
