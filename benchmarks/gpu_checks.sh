#!/usr/bin/env bash
# The GPU checks of issue 32, as one short script: the transformers backend beside raw generate at batch
# 1, 64 and 256 with the compile option off and on (outputs across batch sizes compared, in bfloat16), then
# the probe's --full sizes with the extraction and the torch fits on the GPU. Figures, not pass/fail.
#
#   bash benchmarks/gpu_checks.sh [OUT]        # OUT: where the outputs go (default gpu-checks/)
#
# Needs the package installed with the local and probe extras on a CUDA build of torch, and the upstream
# source mirror for the quick suite and DREAM: SCRAMBLED_BENCH_SOURCE_DIR, or SCRAMBLED_BENCH_SHARED as CI
# sets it (../shared beside the checkout is found by itself). Each check runs under its own time limit
# (TRANSFORMERS_SECONDS, PROBE_SECONDS), so one that overruns still leaves the other's figures.
set -uo pipefail
cd "$(dirname "$0")/.."
out="${1:-gpu-checks}"
mkdir -p "$out"
python="${PYTHON:-.venv/bin/python}"
if [ -z "${SCRAMBLED_BENCH_SOURCE_DIR:-}" ]; then
  for shared in "${SCRAMBLED_BENCH_SHARED:-}" ../shared shared; do
    if [ -n "$shared" ] && [ -d "$shared/data/sources" ]; then
      export SCRAMBLED_BENCH_SHARED="$(cd "$shared" && pwd)"
      export SCRAMBLED_BENCH_SOURCE_DIR="$SCRAMBLED_BENCH_SHARED/data/sources"
      break
    fi
  done
fi
export HF_HUB_OFFLINE=1 PYTHONUNBUFFERED=1
{ nvidia-smi; "$python" -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, torch.cuda.get_device_name(0))"; } \
  > "$out/device.txt" 2>&1

timeout "${TRANSFORMERS_SECONDS:-330}" "$python" benchmarks/bench_transformers_batch.py \
  --device cuda --dtype bfloat16 --batch-sizes 1,64,256 --samples 256 --batches 16 --compile both \
  --data "$out/scrambled_bench" 2>&1 | tee "$out/bench_transformers_batch.txt"
echo "bench_transformers_batch exit ${PIPESTATUS[0]}" | tee -a "$out/bench_transformers_batch.txt"

# torch first: its 31 layers are the figure asked for; scikit-learn's one layer at full size (minutes of CPU)
# is the comparison, and the first thing cut if the time runs out
timeout "${PROBE_SECONDS:-240}" "$python" benchmarks/bench_probe.py --device cuda --full --fitters torch,sklearn --layers 1 \
  2>&1 | tee "$out/bench_probe.txt"
echo "bench_probe exit ${PIPESTATUS[0]}" | tee -a "$out/bench_probe.txt"
