# GPU (session 25, first call): where the first compiled training step's time goes, resnet50
# and GPT-2 (bf16, AdamW), each in a fresh process with an empty cache; GPT-2's bf16 inference
# (bench workload gpt2_amp: 17.5 ms against torch.compile's 6.6 in session 17) profiled;
# resnet50's step with a channels-last model and images.
# Run: run(command="bash scripts/gpu_session25.sh", carry=["build/cp312"]).
set -u
. scripts/gpu_env.sh
O=/tmp/o; mkdir -p $O
nvidia-smi --query-gpu=name --format=csv,noheader > $O/gpu.txt
( timeout 200 python3 scripts/gpu_compile_profile.py $O/r50 --resnet50 --cprofile ) > $O/r50.txt 2>&1
( timeout 200 python3 scripts/gpu_compile_profile.py $O/gpt2 --cprofile ) > $O/gpt2.txt 2>&1
( timeout 150 python3 scripts/gpu_infer_profile.py $O/gpt2_amp gpt2_amp ) > $O/gpt2_amp.txt 2>&1
( timeout 150 python3 bench/train_cuda.py --model resnet50 --batch 64 --amp --steps 5 --channels-last --only eager,torchferro ) > $O/r50_cl.txt 2>&1
cat $O/gpu.txt $O/r50.txt $O/gpt2.txt $O/gpt2_amp.txt $O/r50_cl.txt | tail -90 > $OUT/summary.txt
tar -czf $OUT/all.tgz -C /tmp o
