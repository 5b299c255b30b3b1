# GPU (session 35; prepared in session 34): resnet50 channels-last bf16 training step against torch.compile,
# then traced by kind of kernel with its CUDA sources (session 34 made rsqrt CUDA's rsqrtf: the
# batch-norm recompute kernels of the backward, kernel109 662 us at 3x its bytes, should drop).
# Run after gpu_session34a.sh on the same warm machine: run(command="bash scripts/gpu_session35b.sh", carry=["build/cp312"]).
set -u
. scripts/gpu_env.sh
O=$OUT
( timeout 200 python3 bench/train_cuda.py --model resnet50 --batch 64 --amp --channels-last --steps 5 ) > $O/train_r50cl.txt 2>&1
( timeout 120 python3 scripts/gpu_train_trace.py /tmp/tr_def --resnet50 --channels-last ) > /tmp/tr_def.log 2>&1
( python3 scripts/trace_kernels.py /tmp/tr_def/trace_r50cl.json --top 12 --classes; tail -n 2 /tmp/tr_def.log ) > $O/r50cl_def.txt 2>&1
tar czf $O/sources.tgz -C /tmp tr_def/cu 2>/dev/null
# Session 35: is the pointwise chain compute-bound on this card (variants of the chain)?
( timeout 120 python3 scripts/gpu_pointwise_ceiling.py ) > $O/pointwise_ceiling.txt 2>&1
