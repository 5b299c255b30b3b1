# GPU (session 33, second call): GPT-2's bf16 training step bench (eager, torchferro,
# torch.compile in one process each), issue 18's Llama dynamic/static per-call pairs at 8
# threads on the device's idle CPUs (GPT-2's were within 5% in session 32; Llama never
# measured), then resnet50's channels-last bf16 step traced three ways: the defaults, fewer
# registers for read-ahead loads (TORCHFERRO_CUDA_CHUNK_REGS=32: the BN-recompute kernel
# 92 -> 74 registers, 2 -> 3 blocks an SM, ptxas here) and pointwise kernels bounded to 3
# blocks an SM (TORCHFERRO_CUDA_PW_MIN_BLOCKS=3): does occupancy close the backward's
# pointwise kernels' gap to their bytes' time?
# Run: run(command="bash scripts/gpu_session33b.sh", carry=["build/cp312"]).
set -u
. scripts/gpu_env.sh
O=$OUT
( timeout 170 python3 bench/train_cuda.py --model gpt2 --batch 8 --amp --steps 10 ) > $O/train_gpt2.txt 2>&1
( OMP_NUM_THREADS=8 timeout 110 python3 bench/dynamic_vs_static_pairs.py --model llama --threads 8 --reps 300 --lengths 8,9,16,33,64 ) > $O/pairs_llama_8t.txt 2>&1
for cfg in def:X=0 cr32:TORCHFERRO_CUDA_CHUNK_REGS=32 mb3:TORCHFERRO_CUDA_PW_MIN_BLOCKS=3; do
  n=${cfg%%:*}; e=${cfg#*:}
  ( env $e timeout 80 python3 scripts/gpu_train_trace.py /tmp/tr_$n --resnet50 --channels-last ) > /tmp/tr_$n.log 2>&1
  ( python3 scripts/trace_kernels.py /tmp/tr_$n/trace_r50cl.json --top 12; tail -n 2 /tmp/tr_$n.log ) > $O/r50cl_$n.txt 2>&1
done
