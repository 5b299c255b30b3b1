# GPU (session 28, call 1): resnet50's channels-last bf16 training step with CUDA channels-last
# graphs on (TORCHFERRO_CUDA_CHANNELS_LAST=1) and the column veto (`columns::keeps_apart`),
# against eager and torch.compile; a trace of the flag-on step (kernels by time, sources);
# GPT-2 bf16 inference (bench gpt2_amp) profiled per compiler; issue 18's per-call
# dynamic-vs-static figure on this machine's idle CPUs. Every output is written to $OUT as it
# finishes, so a call cut by its limit still returns what ran.
# Run: run(command="bash scripts/gpu_session28a.sh", carry=["build/cp312"]).
set -u
. scripts/gpu_env.sh
O=$OUT
nvidia-smi --query-gpu=name --format=csv,noheader > $O/gpu.txt
( TORCHFERRO_CUDA_CHANNELS_LAST=1 timeout 170 python3 bench/train_cuda.py --model resnet50 --batch 64 --amp --channels-last --steps 5 ) > $O/train_r50cl_on.txt 2>&1
( TORCHFERRO_CUDA_CHANNELS_LAST=1 timeout 100 python3 scripts/gpu_train_trace.py /tmp/trace_on --resnet50 --channels-last ) > $O/trace_on.log 2>&1
( python3 scripts/trace_kernels.py /tmp/trace_on/trace_r50cl.json ) > $O/trace_on_kernels.txt 2>&1
mkdir -p $O/cu; cp /tmp/trace_on/cu/*.cu $O/cu/ 2>/dev/null
( timeout 130 python3 scripts/gpu_infer_profile.py $O/infer gpt2_amp ) > $O/infer.log 2>&1
# Issue 18's per-call 5%-of-static goal on idle CPUs (the 2-core build machine's load put its
# noise floor at ~10%): GPT-2 and Llama small configs, batch 1, on the CPU.
( OMP_NUM_THREADS=8 timeout 90 python3 bench/dynamic_vs_static.py --model gpt2 --reps 15 ) > $O/dvs_gpt2.txt 2>&1
( OMP_NUM_THREADS=8 timeout 80 python3 bench/dynamic_vs_static.py --model llama --reps 15 ) > $O/dvs_llama.txt 2>&1
