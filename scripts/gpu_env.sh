# Sourced by the GPU batch scripts on the device machine, from the repository root: stages the
# package with the carried cp312 extension (`make ext312`, carry ["build/cp312"]) in a temporary
# folder and puts it, scripts/ and tests/ on PYTHONPATH.
ROOT=$PWD
STAGE=$(mktemp -d); cp -r python/torchferro $STAGE/; find $STAGE -name '*.so' -delete
cp build/cp312/torchferro/_C.cpython-312-x86_64-linux-gnu.so $STAGE/torchferro/
export PYTHONPATH=$STAGE:$ROOT/scripts:$ROOT/tests PYTHONDONTWRITEBYTECODE=1
