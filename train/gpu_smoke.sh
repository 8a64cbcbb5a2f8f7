#!/usr/bin/env bash
# GPU smoke test of the training path (issue 14): <= 10 minutes on one CUDA GPU, nothing downloaded.
# A tiny random-initialised Qwen3 built here, 4 shipped bench tasks as EDGE rows replayed from cassettes/,
# 2 GRPO steps of 4 prompts x 4 rollouts with the grpo_1gpu_small recipe; prints each step's time and reward.
#
#   train/gpu_smoke.sh [OUT]          (default OUT: a new temporary folder)
#
# Needs: CUDA, this repository installed with the `verl` extra (verl 0.9.1 and its deps) and vLLM for rollouts.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-$( [ -x .venv/bin/python ] && echo .venv/bin/python || echo python )}"
OUT="${1:-$(mktemp -d -t kopa-gpu-smoke-XXXX)}"
"$PY" - <<'PY'
import sys
import torch
if not torch.cuda.is_available():
    sys.exit("gpu_smoke: no CUDA GPU visible (torch.cuda.is_available() is false)")
for module in ("verl", "vllm", "ray"):
    __import__(module)
print(f"gpu_smoke: {torch.cuda.get_device_name(0)}, torch {torch.__version__}")
PY
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 WANDB_MODE=disabled
timeout 600 "$PY" -m train.smoke "$OUT" --steps 2
