# GPU (session 22): one call for the whole batch, in order of value: the split-reduction probe
# and the dynamic-CUDA inductor log (scripts/gpu_split_and_dynamic_why.sh, into $OUT/why), the
# CUDA test set and benches (scripts/gpu_cuda_set.sh, $OUT/summary.txt and $OUT/all.tgz), then
# a profile of the GPT-2 bf16 training step (eager, torchferro, torch.compile; $OUT/prof) in
# the time left of the 600 s call.
# Run: run(command="bash scripts/gpu_session22.sh", carry=["build/cp312"]) after `make ext312`
# and `strip --strip-debug build/cp312/torchferro/*.so`.
set -u
T0=$(date +%s)
mkdir -p $OUT/why $OUT/prof
( OUT=$OUT/why bash scripts/gpu_split_and_dynamic_why.sh; cp /tmp/o/dynlog.txt /tmp/o/splitred.log $OUT/why/ )
rm -rf /tmp/o
bash scripts/gpu_cuda_set.sh
left=$((585 - ($(date +%s) - T0)))
echo "profile budget ${left}s" > $OUT/prof/budget.txt
if [ $left -gt 60 ]; then
  . scripts/gpu_env.sh
  timeout $left python3 bench/train_cuda.py --amp \
    --steps 5 --profile $OUT/prof --only torchferro,torch.compile > $OUT/prof/train.txt 2>&1
fi
