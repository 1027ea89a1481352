#!/usr/bin/env bash
# Issue 28's device measurements in one command, run from the repository root on the GPU machine
# (docs/development.md, "Measuring on the GPU machine", says what to carry and how to call it).
#
#   bash benchmarks/gpu_check.sh [gpt_ppl,comet,ray]     # default: all three; "none": install
#
# Installs the carried wheels (.whl/*.whl, and Ray from its two carried halves
# .gpucarry/ray-a/ and .gpucarry/ray-b/ once both are there) into /tmp/gpusite, which stays
# while the machine is warm, then runs, each writing its log to $OUT (or /tmp/gpu-check):
#   gpt_ppl  benchmarks/gpu_scoring.py --only gpt_ppl: today's scorer, ours in bf16, and five
#            cells of a truncation curve scored in turn against one call a cell
#   comet    benchmarks/gpu_scoring.py --only comet: COMET's own predict against ours
#   ray      benchmarks/ray_gpu_plan.py: the one-actor-per-GPU plan, byte-identical to local
set -euo pipefail
parts=",${1:-gpt_ppl,comet,ray},"
out="${OUT:-/tmp/gpu-check}"
site=/tmp/gpusite
mkdir -p "$out" "$site"
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target "$site" .whl/*.whl
fi
if [ -d .gpucarry/ray-a ] && [ -d .gpucarry/ray-b ] && [ ! -d "$site/ray" ]; then
  wheel=$(cat .gpucarry/ray-a/name)
  cat .gpucarry/ray-a/part .gpucarry/ray-b/part > "/tmp/$wheel"
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
    --target "$site" "/tmp/$wheel" .gpucarry/ray-b/*.whl
fi
export PYTHONPATH="$site:$PWD" PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1
common=(--data .gpucarry/data --gpt-tokenizer .gpucarry/tok/gpt
        --bert-tokenizer .gpucarry/tok/bert)
{ nvidia-smi --query-gpu=name,memory.total --format=csv,noheader || echo "no nvidia-smi"; } | tee "$out/device.txt"
step() {  # step NAME COMMAND...: run it, its log to $out/NAME.log; a failure ends only it
  local name=$1; shift
  if [[ $parts == *,$name,* ]]; then
    "$@" 2>&1 | tee "$out/$name.log" || echo "[$name failed: exit ${PIPESTATUS[0]}]"
  fi
}
step gpt_ppl python3 benchmarks/gpu_scoring.py "${common[@]}" --only gpt_ppl --baseline-n 1000
step comet python3 benchmarks/gpu_scoring.py "${common[@]}" --only comet --baseline-n 1000
step ray python3 benchmarks/ray_gpu_plan.py --data .gpucarry/data --tokenizer .gpucarry/tok/gpt
