# GPU (session 29, call 1): the CUDA test set on main's head (incl. the padded-GEMM-output
# knob's test), GPT-2 bf16 inference profiled per compiler with the knob off and torchferro
# with `TORCHFERRO_CUDA_PADDED_OUTPUTS=1` (no logits copy-out, torch.compile's layout), and
# resnet50's channels-last bf16 training step with channels-last CUDA graphs on. Every output
# lands in $OUT as it finishes, so a call cut by its limit still returns what ran.
# Run: run(command="bash scripts/gpu_session29a.sh", carry=["build/cp312"]).
set -u
. scripts/gpu_env.sh
. scripts/gpu_shards.sh
O=$OUT
nvidia-smi --query-gpu=name --format=csv,noheader > $O/gpu.txt
mkdir -p $O/set; cuda_set $O/set 200
( timeout 130 python3 scripts/gpu_infer_profile.py $O/infer gpt2_amp ) > $O/infer.log 2>&1
( TORCHFERRO_CUDA_PADDED_OUTPUTS=1 timeout 60 python3 scripts/gpu_infer_profile.py $O/infer_pad gpt2_amp torchferro ) > $O/infer_pad.log 2>&1
( TORCHFERRO_CUDA_CHANNELS_LAST=1 timeout 150 python3 bench/train_cuda.py --model resnet50 --batch 64 --amp --channels-last --steps 5 ) > $O/train_r50cl_on.txt 2>&1
