# GPU (session 29, call 1): the CUDA test set on main's head (incl. the padded-GEMM-output
# knob's test), GPT-2 bf16 inference profiled per compiler with the knob off and torchferro
# with `TORCHFERRO_CUDA_PADDED_OUTPUTS=1` (no logits copy-out, torch.compile's layout), and a
# kernel trace of resnet50's channels-last training step with channels-last CUDA graphs on
# (kernels by time, their CUDA sources: batch norm's backward column kernels). Every output
# lands in $OUT as it finishes, so a call cut by its limit still returns what ran.
# Run: run(command="bash scripts/gpu_session29a.sh", carry=["build/cp312"]).
set -u
. scripts/gpu_env.sh
. scripts/gpu_shards.sh
O=$OUT
nvidia-smi --query-gpu=name --format=csv,noheader > $O/gpu.txt
mkdir -p $O/set; cuda_set $O/set 190
( timeout 120 python3 scripts/gpu_infer_profile.py $O/infer gpt2_amp ) > $O/infer.log 2>&1
( TORCHFERRO_CUDA_PADDED_OUTPUTS=1 timeout 50 python3 scripts/gpu_infer_profile.py $O/infer_pad gpt2_amp torchferro ) > $O/infer_pad.log 2>&1
( TORCHFERRO_CUDA_CHANNELS_LAST=1 timeout 110 python3 scripts/gpu_train_trace.py /tmp/trace_on --resnet50 --channels-last ) > $O/trace_on.log 2>&1
( python3 scripts/trace_kernels.py /tmp/trace_on/trace_r50cl.json ) > $O/trace_on_kernels.txt 2>&1
mkdir -p $O/cu; cp /tmp/trace_on/cu/*.cu $O/cu/ 2>/dev/null
