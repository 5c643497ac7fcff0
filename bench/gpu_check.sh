#!/usr/bin/env bash
# bench/gpu_check.sh RESULTS_DIR -- uopcheck's fast path on an NVIDIA GPU, when a machine with one is at hand for a few minutes.
#
# The machine (README "A real GPU") has CUDA, PyTorch, numpy, hypothesis and pytest, no clang and no network: tinygrad, z3
# and uopcheck travel as wheels in .whl/ (made beside the checkout by `bench/gpu_wheels.sh`). It runs, each under a time limit:
#   1. `uopcheck check --device CUDA` (plain and HCQ2) and `--device NV` (tinygrad's own NVIDIA driver, HCQ2): ref vs the GPU
#      on every real graph;
#   2. the conformance subset (ops x dtypes, movement, reductions, casts, the real graphs) with UOPCHECK_DEVICE=CUDA: every
#      case builds, runs and reads its graph there (the machine has no clang, so nothing may touch tinygrad's CPU device).
# Everything lands in RESULTS_DIR (one log, the reports); the suite never depends on this script.
set -u
RES=${1:?usage: bench/gpu_check.sh RESULTS_DIR}
mkdir -p "$RES"
cd "$(dirname "$0")/.."
exec > >(tee "$RES/gpu_check.log") 2>&1
t0=$(date +%s)
step() { echo; echo "== [$(( $(date +%s) - t0 )) s] $*"; }

step "machine"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || echo "no nvidia-smi"
python3 --version

step "packages (wheels from .whl/)"
ls .whl
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/uopcheck-site .whl/*.whl || exit 3
export PATH=/tmp/uopcheck-site/bin:$PATH
export PYTHONPATH=/tmp/uopcheck-site PYTHONUNBUFFERED=1
# tinygrad's CUDA backend loads libcuda and libnvrtc through ctypes: point it at the files this machine has
CUDA_PATH=$(ldconfig -p 2>/dev/null | awk '/libcuda\.so\.1 /{print $NF; exit}')
[ -n "$CUDA_PATH" ] || CUDA_PATH=$(find /usr/local/nvidia /usr/lib /usr/lib64 /usr/local/cuda* -name 'libcuda.so.1' 2>/dev/null | head -1)
NVRTC_PATH=$(find /usr/local/cuda* /opt /usr/lib -name 'libnvrtc.so*' ! -name '*builtins*' 2>/dev/null | sort | head -1)
[ -n "$NVRTC_PATH" ] || NVRTC_PATH=$(python3 -c "import nvidia, pathlib; print(next(iter(sorted(p for d in nvidia.__path__ for p in pathlib.Path(d).rglob('libnvrtc.so*') if 'builtins' not in p.name)), ''))" 2>/dev/null)
# through LD_LIBRARY_PATH, not CUDA_PATH: tinygrad also reads CUDA_PATH as the folder of the CUDA headers (nvrtc's -I)
export LD_LIBRARY_PATH="$(dirname "$CUDA_PATH"):$(dirname "$NVRTC_PATH")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
echo "libcuda: $CUDA_PATH  libnvrtc: $NVRTC_PATH"; unset CUDA_PATH NVRTC_PATH
ls -d /usr/local/cuda*/include 2>/dev/null | head -3
# the checkout's uopcheck/ folder would shadow the installed package (its subpackages live in spec/, fuzz/, ... and are mapped
# by the install): run from a scratch folder holding only the tests and the pytest settings
SRC=$PWD; WORK=$(mktemp -d); cp -r conformance pyproject.toml "$WORK"/; cd "$WORK"
python3 -c "import tinygrad, uopcheck.cli, numpy; print('tinygrad', tinygrad.__file__, 'numpy', numpy.__version__)" || exit 3

step "smoke: a matmul on each NVIDIA device"
for dev in CUDA NV; do
  DEV=$dev timeout 60 python3 -c "
from tinygrad import Tensor, Device
import numpy as np
a, b = np.random.rand(64, 64).astype(np.float32), np.random.rand(64, 64).astype(np.float32)
print(Device.DEFAULT, 'max err', float(np.abs((Tensor(a) @ Tensor(b)).numpy() - a @ b).max()))" 2>&1 | tail -3
  echo "smoke $dev rc=${PIPESTATUS[0]}"
done

step "uopcheck check on the GPU (every real graph, ref vs fast)"
for run in CUDA:plain CUDA:hcq2 NV:hcq2; do
  dev=${run%%:*}; flag=""; [ "${run##*:}" = plain ] && flag="--no-hcq2"
  timeout 75 python3 -m uopcheck.cli check --device $dev $flag --report term,json,md --report-dir "$RES/check-$dev-${run##*:}"
  echo "check --device $dev $flag rc=$?"
done

step "conformance subset with the GPU as tinygrad's default device"
UOPCHECK_DEVICE=CUDA HCQ2=0 timeout 180 python3 -m pytest conformance/test_real_graphs.py conformance/test_alu.py conformance/test_movement.py \
  conformance/test_reduce.py conformance/test_cast.py -q --maxfail 30 -p no:cacheprovider --hypothesis-profile dev -n 8 \
  --junitxml "$RES/conformance-cuda.xml" 2>&1 | tail -40
echo "conformance UOPCHECK_DEVICE=CUDA rc=${PIPESTATUS[0]}"
echo "scratch: $WORK (from $SRC)"
step "done"
