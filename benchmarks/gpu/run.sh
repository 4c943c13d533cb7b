#!/usr/bin/env bash
# The GPU session's one prepared script (run by the device tool on the lent H200):
#   benchmarks/gpu/run.sh            results under $OUT (default ./gpu-results)
# It installs what the GPU needs from wheels carried in benchmarks/gpu/wheels/ when present
# (the machine reaches no registry), then runs, each bounded by a timeout:
#   1. the cuda device's own tests (tests/devices/cuda) and the conformance kit on cuda;
#   2. the NCCL engine: every collective on cuda tensors, world size 1 (one GPU: every
#      NCCL call runs, without a peer), then the mixed "cpu:mpi,cuda:nccl" default;
# and writes each step's log and exit code under $OUT, so a failing step never hides the
# others' results.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT="${OUT:-gpu-results}"
mkdir -p "$OUT"
PY="${PYTHON:-.venv/bin/python}"
WHEELS=benchmarks/gpu/wheels

step() {  # step NAME SECONDS COMMAND...: run, keep its log and exit code
    local name="$1" limit="$2"
    shift 2
    echo "== $name" | tee -a "$OUT/summary.txt"
    timeout "$limit" "$@" >"$OUT/$name.log" 2>&1
    local rc=$?
    echo "$name: exit $rc" | tee -a "$OUT/summary.txt"
    tail -5 "$OUT/$name.log" | tee -a "$OUT/summary.txt"
}

if [ -d "$WHEELS" ]; then
    step install 300 "$PY" -m pip install --no-index --find-links "$WHEELS" \
        'cupy-cuda13x>=14' 'nvidia-cuda-nvrtc==13.0.*' 'nvidia-cuda-runtime==13.0.*' \
        nvidia-nccl-cu13 'mpi4py>=4.1' 'mpich>=4.2'
fi
nvidia-smi >"$OUT/nvidia-smi.txt" 2>&1
step info 60 "$PY" -m ember info
step cuda-tests 300 "$PY" -m pytest -q -p no:cacheprovider tests/devices/cuda
step conformance-cuda 300 env EMBER_TEST_DEVICES=cuda "$PY" -m pytest -q -p no:cacheprovider \
    runtime/ember/testing
MPIEXEC="$(dirname "$PY")/mpiexec"
step nccl-collectives 120 "$MPIEXEC" -n 1 "$PY" -m mpi4py \
    tests/distributed/scripts/collectives.py cuda
cat "$OUT/summary.txt"
