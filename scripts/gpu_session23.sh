# GPU (session 23, first batch): attention masks on the fused backends in training
# (test_aot_cuda.py's mask tests and GPT-2's fused-attention test), the GPT-2 124M bf16 step
# (eager, torchferro) and a one-step trace with our sources; one archive at the end.
# Run: run(command="bash scripts/gpu_session23.sh", carry=["build/cp312"]).
set -u
. scripts/gpu_env.sh
python3 -c "import torch, torch.backends.cudnn as c; print(torch.__version__, c.version(), torch.cuda.get_device_name())" > $OUT/summary.txt 2>&1
( OMP_NUM_THREADS=4 timeout 240 python3 -m pytest -q -p no:cacheprovider -rfEx tests/test_aot_cuda.py \
    -k "sdpa_mask or attention_backward_is_fused" > $OUT/pytest-mask.log 2>&1 )
tail -n 1 $OUT/pytest-mask.log >> $OUT/summary.txt
grep -h -E "^(FAILED|ERROR|XPASS)" $OUT/pytest-mask.log >> $OUT/summary.txt
( timeout 100 python3 bench/train_cuda.py --amp --steps 5 --only eager,torchferro ) > $OUT/train_amp.txt 2>&1
grep -h "torchferro:\|eager:" $OUT/train_amp.txt >> $OUT/summary.txt
( timeout 90 python3 scripts/gpu_step_host.py ) > $OUT/step_host.txt 2>&1
grep -h "host" $OUT/step_host.txt >> $OUT/summary.txt
mkdir -p $OUT/trace
timeout 90 python3 scripts/gpu_train_trace.py $OUT/trace > $OUT/trace/log.txt 2>&1
gzip $OUT/trace/trace.json 2>/dev/null
tar -czf $OUT/trace/cu.tgz -C $OUT/trace cu 2>/dev/null && rm -rf $OUT/trace/cu
# One archive: the device call brings back at most 8 files.
cp $OUT/summary.txt /tmp/summary.txt
tar -czf /tmp/all23.tgz -C $OUT . && find $OUT -mindepth 1 -delete && mv /tmp/all23.tgz $OUT/all.tgz && mv /tmp/summary.txt $OUT/
