"""The production path in emulation: tinygrad's AMD backend (its AMD LLVM renderer, AMD rewrites and decompositions, the
KFD queues of ``runtime/ops_amd.py``) on tinygrad's mock GPU, MI350X's gfx950 (CDNA4) first and RDNA3's gfx1100 second,
checked against the reference. Each check runs ``uopcheck`` in a fresh process: the mock replaces tinygrad's device file
interface for the whole process. The plain runtime path (``--no-hcq2``): HCQ2 on the mock stops with "CPU hang
detected" (README, "The production path in emulation")."""
from __future__ import annotations
import json, os, pathlib, subprocess, sys
import pytest
from uopcheck.fast.devices import mock_gpu_source, llvm22_library

ROOT = pathlib.Path(__file__).resolve().parent.parent
pytestmark = [pytest.mark.amd_emulated,
              pytest.mark.skipif(mock_gpu_source() is None, reason="tinygrad's mock GPU (test/mockgpu) not found: set TINYGRAD_SRC or put "
                                 "../shared/tinygrad-src beside this checkout")]
GFX950 = pytest.mark.skipif(llvm22_library() is None and not os.environ.get("LLVM_PATH"),
                            reason="gfx950 (MI350X) needs LLVM >= 20: Debian package libllvm22 (make amdllvm) or LLVM_PATH")

def _check(tmp_path, device:str, *graphs:str, timeout:float=600) -> tuple[subprocess.CompletedProcess, list[dict]]:
  p = subprocess.run([sys.executable, "-m", "uopcheck.cli", "check", *graphs, "--device", device, "--no-hcq2", "--report", "json",
                      "--report-dir", str(tmp_path / "r"), "--json", str(tmp_path / "rows.json")],
                     capture_output=True, text=True, cwd=ROOT, timeout=timeout, env={k: v for k, v in os.environ.items() if k != "DEV"})
  rows = json.loads((tmp_path / "rows.json").read_text()) if (tmp_path / "rows.json").exists() else []
  return p, rows

@GFX950
def test_real_graphs_on_emulated_mi350x_with_mfma_tensor_cores(tmp_path):
  p, rows = _check(tmp_path, "MOCK+AMD::gfx950", "matmul_half", "matmul", "softmax", "argmax", "cumsum", "rmsnorm", "embedding")
  assert p.returncode == 0 and rows and all(r["ok"] for r in rows), (p.stdout[-3000:], p.stderr[-2000:])
  assert all(r["device"] == "AMD" for r in rows)
  tc = {r["graph"]: r["tensor_core_kernels"] for r in rows}
  assert tc["matmul_half"] >= 1, tc   # the half matmul's kernel calls llvm.amdgcn.mfma.* (CDNA4's matrix cores)

def test_real_graphs_on_emulated_rdna3(tmp_path):
  p, rows = _check(tmp_path, "MOCK+AMD", "matmul", "softmax", "layernorm")
  assert p.returncode == 0 and rows and all(r["ok"] for r in rows), (p.stdout[-3000:], p.stderr[-2000:])

@GFX950
def test_ops_and_dtypes_on_emulated_mi350x(tmp_path):
  """op by op (integer division and modulo, shifts, comparisons, half and bfloat16 arithmetic, casts) on gfx950, by the
  same tests the CPU runs, with UOPCHECK_DEVICE: the graphs are built, run and read on the emulated device"""
  env = {**os.environ, "UOPCHECK_DEVICE": "MOCK+AMD::gfx950", "HCQ2": "0"}
  sel = "CDIV or CMOD or FLOORDIV or SHL or CMPLT or ADD-half or MUL-__bf16 or MAX-half or test_cast"
  p = subprocess.run([sys.executable, "-m", "pytest", "conformance/test_alu.py", "conformance/test_cast.py", "-q", "-p", "no:cacheprovider",
                      "-k", sel, "-x", "--hypothesis-profile", "dev"], capture_output=True, text=True, cwd=ROOT, env=env, timeout=900)
  assert p.returncode == 0 and " passed" in p.stdout, p.stdout[-4000:] + p.stderr[-2000:]
