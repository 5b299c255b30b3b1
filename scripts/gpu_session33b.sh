# GPU (session 33, second call): GPT-2's bf16 training step bench (eager, torchferro,
# torch.compile in one process each), then issue 18's Llama dynamic/static per-call pairs at 8
# threads on the device's idle CPUs (GPT-2's were within 5% in session 32; Llama never measured).
# Run: run(command="bash scripts/gpu_session33b.sh", carry=["build/cp312"]).
set -u
. scripts/gpu_env.sh
O=$OUT
( timeout 170 python3 bench/train_cuda.py --model gpt2 --batch 8 --amp --steps 10 ) > $O/train_gpt2.txt 2>&1
( OMP_NUM_THREADS=8 timeout 110 python3 bench/dynamic_vs_static_pairs.py --model llama --threads 8 --reps 300 --lengths 8,9,16,33,64 ) > $O/pairs_llama_8t.txt 2>&1
( timeout 170 python3 bench/train_cuda.py --model resnet50 --batch 64 --amp --channels-last --steps 10 ) > $O/train_r50cl.txt 2>&1
