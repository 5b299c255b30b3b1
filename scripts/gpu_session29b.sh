# GPU (session 29, call 3): the CUDA-set fixes (eye case, automatic-dynamic masks under
# torch_rule), resnet50's channels-last bf16 training step with channels-last CUDA graphs on
# after the scheduler fix (the unrelated ReLU no longer joins the column sums), against eager
# and torch.compile, and its kernel trace. Few files to $OUT (a call's files come back only
# under a count limit): logs under /tmp.
# Run: run(command="bash scripts/gpu_session29b.sh", carry=["build/cp312"]).
set -u
. scripts/gpu_env.sh
O=$OUT
nvidia-smi --query-gpu=name --format=csv,noheader > $O/gpu.txt
( timeout 120 python3 -m pytest -q -p no:cacheprovider -x tests/test_cuda.py -k "eye" tests/test_cuda_dynamic.py -k "eye or automatic_dynamic" ) > /tmp/t.log 2>&1; tail -5 /tmp/t.log > $O/tests.txt
( TORCHFERRO_CUDA_CHANNELS_LAST=1 timeout 170 python3 bench/train_cuda.py --model resnet50 --batch 64 --amp --channels-last --steps 5 ) > $O/train_r50cl_on.txt 2>&1
( TORCHFERRO_CUDA_CHANNELS_LAST=1 timeout 110 python3 scripts/gpu_train_trace.py /tmp/trace_on --resnet50 --channels-last ) > /tmp/trace_on.log 2>&1
( python3 scripts/trace_kernels.py /tmp/trace_on/trace_r50cl.json ) > $O/trace_on_kernels.txt 2>&1
