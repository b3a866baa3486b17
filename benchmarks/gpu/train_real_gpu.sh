#!/usr/bin/env bash
# benchmarks/train_real.py at a larger scale on one GPU (issue 31): SmolLM2-135M GRPO on trl/sums-v0,
# two seeds, 8 tasks x 8 episodes per step, 200 steps, sampled evaluation (4 episodes per test task).
# With vLLM installed, TRL generates through it (colocate mode) and rolloutgym's batched loop sends its
# waves to the same engine (rolloutgym_trl.vllm.TRLVLLMBatchSampler); without it, the waves go to
# TransformersBatchSampler on the GPU. Not run on the 2-core CPU machine (no GPU there).
#
#   bash benchmarks/gpu/train_real_gpu.sh [OUT.json]
set -euo pipefail
cd "$(dirname "$0")/../.."
out="${1:-train_real_gpu.json}"
python -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 'no CUDA GPU visible to torch')"
vllm_args=()
if python -c "import vllm" 2>/dev/null; then
  vllm_args=(--trainer-arg use_vllm=true --trainer-arg vllm_mode=colocate --trainer-arg vllm_gpu_memory_utilization=0.3)
fi
python benchmarks/train_real.py --seeds 0 1 --steps 200 --prompts-per-step 8 --num-generations 8 \
  --eval-samples 4 --eval-temperature 0.7 --threads 8 --out "$out" "${vllm_args[@]}"
