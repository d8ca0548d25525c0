#!/usr/bin/env bash
# Issue 8's GPU checks, for a session that has a CUDA GPU (under 8 minutes on one H200; each step
# has its own time limit, and a step that fails or runs out of time does not stop the next):
#   1. the FlexAttention tests: SSA forward and gradients (q, k, v, b, n) against the reference
#      path, with causal and padding masks, grouped-query heads, per-layer and per-head b, n;
#   2. the GPU benchmark: SSA through FlexAttention against FlashAttention-backed SDPA at 1024,
#      2048 and 4096 tokens (target: at most 1.3x softmax in time), cached under results/paper/;
#   3. the paper profile on the GPU: two optimizer steps of every chapter's paper configuration
#      (ssa_book.paper_check), the decoder at the paper's micro-batch of 4 x 1024 tokens; losses,
#      checkpoints and cache entries checked, wall time and peak memory per chapter in
#      paper_check.json (written after each chapter; caches and checkpoints go to a temporary folder).
# Usage: scripts/gpu_check.sh [OUTPUT_FOLDER]   (default: results/gpu-check; the JSON lands there)
# Needs torch (CUDA build) and transformers in $PYTHON (default: .venv/bin/python, else python3),
# and the datasets in data/ (`make data`) for step 3.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-$([ -x .venv/bin/python ] && echo .venv/bin/python || echo python3)}
OUTPUT=${1:-results/gpu-check}
mkdir -p "$OUTPUT"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"

"$PYTHON" -c "import torch; assert torch.cuda.is_available(), 'no CUDA GPU visible to torch'; print(torch.__version__, torch.cuda.get_device_name())"

failed=()
step() {  # name, seconds, log file, command...: run under `timeout`, record a failure, go on
    local name=$1 limit=$2 log=$3 started=$SECONDS status=0
    shift 3
    echo "== $name (at most $limit s)"
    timeout "$limit" "$@" 2>&1 | tee "$log" || status=$?
    echo "== $name: exit status $status after $((SECONDS - started)) s"
    [ "$status" -eq 0 ] || failed+=("$name (exit status $status)")
}

step "1/3 GPU tests (FlexAttention vs reference, forward and backward)" 130 "$OUTPUT/tests.log" \
    "$PYTHON" -m pytest -q -x tests/library/test_kernels.py -k "cuda"
# The quick run (the in-context size, 1,024 and 4,096 tokens): the whole one (--full) outlasts the step.
step "2/3 GPU benchmark (softmax SDPA / SSA reference / SSA FlexAttention)" 200 "$OUTPUT/bench.log" \
    "$PYTHON" -m ssa_book bench --device cuda --json "$OUTPUT/bench.json"
# The decoder first: its 114M model at the paper's micro-batch is what a CPU cannot check.
step "3/3 paper profile, two steps per chapter (ssa_book.paper_check)" 130 "$OUTPUT/paper_check.log" \
    "$PYTHON" -m ssa_book paper-check --device cuda --micro-batch paper --chapters lm encoder icl alternatives \
    --json "$OUTPUT/paper_check.json"

if [ ${#failed[@]} -gt 0 ]; then
    printf 'FAILED: %s\n' "${failed[@]}"
    exit 1
fi
echo "all GPU checks passed"
