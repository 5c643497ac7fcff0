#!/usr/bin/env bash
# Llama 3 8B on one 8x MI350X node, behind the CPU gate.
#   training/mi350x.sh DATASET_PREFIX [extra `uopcheck train` arguments]
# DATASET_PREFIX: a Megatron indexed dataset tokenized with the Llama 3 tokenizer (PREFIX.bin + PREFIX.idx), e.g. the
# MLPerf Llama 3.1 C4 files (.../c4-train.en_6_text_document). Nothing here is hard-coded to a path.
set -euo pipefail
DATA=${1:?usage: $0 DATASET_PREFIX [uopcheck train args...]}; shift
OUT=${OUT:-reports/llama3-8b-mi350x}
export HCQ2=1                 # tinygrad's HCQ2 runtime (the path uopcheck's conformance suite checks)
export DEV=AMD                # all 8 GPUs: AMD:0..AMD:7
export BEAM=${BEAM:-4}        # kernel search for the real run; JITBEAM for the captured step
export JITBEAM=${JITBEAM:-$BEAM}
export WANDB=${WANDB:-0}      # 1: log online (needs WANDB_API_KEY); default offline under $OUT/wandb

# 1. bring-up: ROCm/comgr, gfx950 clang, /dev/kfd, PCI 0x75b0, VRAM BAR; stops here with the fix if one is missing
uopcheck amd doctor

# tinygrad 0.14.0's AMD backend under HCQ2=1 imports extra.hcq2.ops_amd2: a folder of the tinygrad repository that the
# PyPI wheel does not ship. TINYGRAD_SRC=/path/to/tinygrad (a v0.14.0 checkout) puts it on the path.
if [ -n "${TINYGRAD_SRC:-}" ]; then export PYTHONPATH="$TINYGRAD_SRC${PYTHONPATH:+:$PYTHONPATH}"; fi
python3 -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('extra.hcq2.ops_amd2') is None)" 2>/dev/null || {
  echo "mi350x.sh: HCQ2=1 on AMD needs tinygrad's extra/hcq2 (not in the PyPI wheel): set TINYGRAD_SRC to a tinygrad v0.14.0 checkout" >&2
  exit 1; }

# 2. the gate, then the run. The gate checks the run's own step -- all 8 devices, batch 16 (2 per GPU), the full sequence
#    length, the all-reduce's kernels and copies -- every lane against the CPU; the reference on every lane of the
#    elementwise kernels and reductions, on sampled lanes of the matmuls, and on every lane of each matmul by Freivalds'
#    projection (--gate-freivalds, default 2) (README "Training": what it costs at this size, and GATE_STEP_REFERENCE
#    for the step-level reference).
exec uopcheck train --config llama3-8b --device AMD --devices 8 --data "$DATA" \
  --batch-size 16 --grad-accum 8 --steps 1200 --warmup 100 --lr 3e-4 --min-lr 3e-5 --weight-decay 0.1 --clip 1.0 \
  --validate --gate-steps 1 \
  --checkpoint-every 100 --out "$OUT" "$@"
