# GPU (session 23): resnet50 batch 64 bf16 training step (eager, torchferro, torch.compile) and
# one-step traces of GPT-2 124M for torchferro and torch.compile. One archive plus summary.txt.
# Run: run(command="bash scripts/gpu_session23r.sh", carry=["build/cp312"]).
set -u
. scripts/gpu_env.sh
O=/tmp/o; mkdir -p $O/trace
( timeout 200 python3 bench/train_cuda.py --model resnet50 --batch 64 --amp --steps 5 ) > $O/train_resnet50.txt 2>&1
grep -h "step median\|Error\|error" $O/train_resnet50.txt | head -8 > $O/summary.txt
( timeout 60 python3 scripts/gpu_train_trace.py $O/trace ) > $O/trace/log.txt 2>&1
( timeout 80 python3 scripts/gpu_train_trace.py $O/trace --torch-compile ) > $O/trace/log_tc.txt 2>&1
gzip $O/trace/*.json 2>/dev/null
rm -rf $O/trace/cu
cp $O/summary.txt $OUT/
tar -czf $OUT/all.tgz -C /tmp o
