# GPU (session 32, first call): resnet50's channels-last bf16 step traced with session 31's
# defaults (kernel summary and CUDA sources back), then issue 18's 8-thread dynamic/static
# pairs for GPT-2 (device time is short: Llama's next time) (dynperf31's question: is session 29's T=8 gap a thread effect?).
# Run: run(command="bash scripts/gpu_session32a.sh", carry=["build/cp312"]).
set -u
. scripts/gpu_env.sh
O=$OUT
( timeout 60 python3 scripts/sdpa_strides_probe.py ) > $O/sdpa_strides.txt 2>&1
( timeout 150 python3 scripts/gpu_train_trace.py /tmp/tr --resnet50 --channels-last ) > /tmp/tr_ours.log 2>&1
( python3 scripts/trace_kernels.py /tmp/tr/trace_r50cl.json --top 60; tail -n 5 /tmp/tr_ours.log ) > $O/r50cl_kernels.txt 2>&1
tar czf $O/r50cl_cu.tgz -C /tmp/tr cu
( OMP_NUM_THREADS=8 timeout 100 python3 bench/dynamic_vs_static_pairs.py --model gpt2 --threads 8 --reps 300 --lengths 8,9,16,33,64 ) > $O/pairs_gpt2_8t.txt 2>&1
