# GPU (session 24, first batch): where resnet50's compiled bf16 training step (batch 64) spends
# its 279 ms: a profiled step of torchferro and of torch.compile, their kernel tables
# (scripts/trace_kernels.py), our CUDA sources, and the step times of eager/torchferro.
# Run: run(command="bash scripts/gpu_session24.sh", carry=["build/cp312"]).
set -u
. scripts/gpu_env.sh
O=/tmp/o; mkdir -p $O
( timeout 200 python3 scripts/gpu_train_trace.py $O --resnet50 ) > $O/trace_tf.log 2>&1
python3 scripts/trace_kernels.py $O/trace_r50.json --top 60 > $O/kernels_tf.txt 2>&1
( timeout 200 python3 scripts/gpu_train_trace.py $O --resnet50 --torch-compile ) > $O/trace_tc.log 2>&1
python3 scripts/trace_kernels.py $O/trace_tc_r50.json --top 60 > $O/kernels_tc.txt 2>&1
( timeout 150 python3 bench/train_cuda.py --model resnet50 --batch 64 --amp --steps 5 --only eager,torchferro ) > $O/train_resnet50.txt 2>&1
gzip -f $O/trace_r50.json $O/trace_tc_r50.json 2>/dev/null
head -30 $O/kernels_tf.txt > $OUT/summary.txt
head -30 $O/kernels_tc.txt >> $OUT/summary.txt
tail -5 $O/trace_tf.log $O/trace_tc.log >> $OUT/summary.txt
grep -h "step median\|Error\|error" $O/train_resnet50.txt | head -5 >> $OUT/summary.txt
tar -czf $OUT/all.tgz -C /tmp o
