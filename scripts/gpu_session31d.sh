# GPU (session 31, last call): resnet50's channels-last bf16 step traced with the session's
# build (new defaults), kernel summary and the CUDA sources back.
# Run: run(command="bash scripts/gpu_session31d.sh", carry=["build/cp312"]).
set -u
. scripts/gpu_env.sh
O=$OUT
( timeout 150 python3 scripts/gpu_train_trace.py /tmp/tr --resnet50 --channels-last ) > /tmp/tr_ours.log 2>&1
( python3 scripts/trace_kernels.py /tmp/tr/trace_r50cl.json --top 50; tail -n 5 /tmp/tr_ours.log ) > $O/r50cl_kernels.txt 2>&1
tar czf $O/r50cl_cu.tgz -C /tmp/tr cu
