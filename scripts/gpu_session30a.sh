# GPU (session 30, call 1): the CUDA set with channels-last CUDA graphs and padded GEMM outputs
# both on (to decide their defaults), resnet50's channels-last bf16 step traced for ours and
# eager (the backward's element kernels against cuDNN's batch-norm backward), and GPT-2 bf16
# inference profiled with both knobs on against torch.compile. Logs under /tmp, few files to
# $OUT (a call's files come back only under a count limit).
# Run: run(command="bash scripts/gpu_session30a.sh", carry=["build/cp312"]).
set -u
. scripts/gpu_env.sh
. scripts/gpu_shards.sh
O=$OUT
nvidia-smi --query-gpu=name --format=csv,noheader > $O/gpu.txt
mkdir -p /tmp/set
export TORCHFERRO_CUDA_CHANNELS_LAST=1 TORCHFERRO_CUDA_PADDED_OUTPUTS=1
cuda_set /tmp/set 200; cp /tmp/set/tests.txt $O/set_knobs.txt
( timeout 110 python3 scripts/gpu_train_trace.py /tmp/tr --resnet50 --channels-last ) > /tmp/tr_ours.log 2>&1
( timeout 80 python3 scripts/gpu_train_trace.py /tmp/tr --eager --resnet50 --channels-last ) > /tmp/tr_eager.log 2>&1
( python3 scripts/trace_kernels.py /tmp/tr/trace_r50cl.json --top 60; python3 scripts/trace_kernels.py /tmp/tr/trace_eager_r50cl.json --top 40 ) > $O/r50cl_kernels.txt 2>&1
tail -3 /tmp/tr_ours.log /tmp/tr_eager.log >> $O/r50cl_kernels.txt
tar czf $O/r50cl_cu.tgz -C /tmp/tr cu
( timeout 120 python3 scripts/gpu_infer_profile.py /tmp/infer gpt2_amp torchferro,torch.compile ) > /tmp/infer.log 2>&1
cat /tmp/infer.log /tmp/infer/*.txt > $O/gpt2_amp_profile.txt 2>&1
