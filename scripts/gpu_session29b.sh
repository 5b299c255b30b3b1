# GPU (session 29, call 2): a kernel trace of resnet50's channels-last training step with
# channels-last CUDA graphs on (kernels by time and their CUDA sources: batch norm's backward
# column kernels, to design their split), then issue 18's per-call dynamic-vs-static figure on
# this machine's idle CPUs (GPT-2 and Llama small configs, batch 1).
# Run: run(command="bash scripts/gpu_session29b.sh", carry=["build/cp312"]).
set -u
. scripts/gpu_env.sh
O=$OUT
nvidia-smi --query-gpu=name --format=csv,noheader > $O/gpu.txt
( TORCHFERRO_CUDA_CHANNELS_LAST=1 timeout 120 python3 scripts/gpu_train_trace.py /tmp/trace_on --resnet50 --channels-last ) > $O/trace_on.log 2>&1
( python3 scripts/trace_kernels.py /tmp/trace_on/trace_r50cl.json ) > $O/trace_on_kernels.txt 2>&1
mkdir -p $O/cu; cp /tmp/trace_on/cu/*.cu $O/cu/ 2>/dev/null
( OMP_NUM_THREADS=8 timeout 120 python3 bench/dynamic_vs_static.py --model gpt2 --reps 15 ) > $O/dvs_gpt2.txt 2>&1
( OMP_NUM_THREADS=8 timeout 100 python3 bench/dynamic_vs_static.py --model llama --reps 15 ) > $O/dvs_llama.txt 2>&1
