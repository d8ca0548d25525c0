#!/usr/bin/env bash
# Issue 8's GPU checks, for a session that has a CUDA GPU (about 5 minutes on one H200):
#   1. the FlexAttention tests: SSA forward and gradients (q, k, v, b, n) against the reference
#      path, with causal and padding masks, grouped-query heads, per-layer and per-head b, n;
#   2. the GPU benchmark: SSA through FlexAttention against FlashAttention-backed SDPA at 1024,
#      2048 and 4096 tokens (target: at most 1.3x softmax in time), cached under results/paper/.
# Usage: scripts/gpu_check.sh [OUTPUT_FOLDER]   (default: results/gpu-check; the JSON lands there)
# Needs torch (CUDA build) and transformers in $PYTHON (default: .venv/bin/python, else python3).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-$([ -x .venv/bin/python ] && echo .venv/bin/python || echo python3)}
OUTPUT=${1:-results/gpu-check}
mkdir -p "$OUTPUT"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"

"$PYTHON" -c "import torch; assert torch.cuda.is_available(), 'no CUDA GPU visible to torch'; print(torch.__version__, torch.cuda.get_device_name())"

echo "== 1/2 GPU tests (FlexAttention vs reference, forward and backward)"
timeout 150 "$PYTHON" -m pytest -q -x tests/test_kernels.py -k "cuda" 2>&1 | tee "$OUTPUT/tests.log"

echo "== 2/2 GPU benchmark (softmax SDPA / SSA reference / SSA FlexAttention)"
timeout 240 "$PYTHON" -m ssa.bench --profile paper --device cuda --force --json "$OUTPUT/bench.json" 2>&1 | tee "$OUTPUT/bench.log"
