# GPU (session 32, second call): resnet50's channels-last bf16 step traced again with the
# chunk read-ahead fix (streamed inputs before per-channel vectors), then the training bench for
# resnet50 (channels-last, bf16) and GPT-2 (bf16): eager, torchferro and torch.compile in one
# process each.
# Run: run(command="bash scripts/gpu_session32b.sh", carry=["build/cp312"]).
set -u
. scripts/gpu_env.sh
O=$OUT
( timeout 100 python3 scripts/gpu_train_trace.py /tmp/tr --resnet50 --channels-last ) > /tmp/tr_ours.log 2>&1
( python3 scripts/trace_kernels.py /tmp/tr/trace_r50cl.json --top 30; tail -n 5 /tmp/tr_ours.log ) > $O/r50cl_kernels2.txt 2>&1
( timeout 170 python3 bench/train_cuda.py --model resnet50 --batch 64 --amp --channels-last --steps 10 ) > $O/train_r50cl.txt 2>&1
# GPT-2 left for the next session (device time): ( timeout 150 python3 bench/train_cuda.py --model gpt2 --batch 8 --amp --steps 10 ) > $O/train_gpt2.txt 2>&1
