"""Hostile inputs for the threat-model tests (conformance/test_threat_model.py): files and messages crafted the way an
attacker would write them, built from real tinygrad output so that only the planted part is wrong."""
from __future__ import annotations
import json, pathlib
import numpy as np

def _int_kernel():
  """a real kernel AST (out = in + 5 over 3 int32) as rangeify makes it, and its PARAM nodes"""
  from tinygrad import Tensor, dtypes
  from uopcheck.fast import runner
  a = Tensor([1, 2, 3], dtype=dtypes.int32).realize()
  return runner.run(a + 5).kernels[0].ast

def _write(path:pathlib.Path, ast, device:str, before:dict[int, bytes]) -> pathlib.Path:
  from uopcheck.spec import uop_json
  from uopcheck.training.gate import REPRO_FORMAT
  rec = {"format": REPRO_FORMAT, "name": "E_4", "ast": uop_json.encode(ast), "var_vals": {}, "detail": "", "args": [["int", 3], ["int", 3]],
         "device": device, "hcq2": False}
  path.write_text(json.dumps(rec))
  with open(path.with_suffix(".npz"), "wb") as f: np.savez(f, **{f"before_{i}": np.frombuffer(b, np.uint8) for i, b in before.items()})   # type: ignore[arg-type]
  return path

def custom_op_reproducer(path:pathlib.Path, marker:pathlib.Path) -> pathlib.Path:
  """A kernel reproducer whose stored value is an ``Ops.CUSTOM`` node: its text is pasted into the C source. The text
  creates ``marker`` through a raw ``open`` syscall (x86-64) when the kernel runs, and evaluates to the loaded input."""
  from tinygrad.uop.ops import UOp, Ops
  from tinygrad.dtype import dtypes
  c_path = str(marker).replace("\\", "\\\\").replace('"', '\\"')
  payload = ('({{ long r; __asm__ volatile ("syscall" : "=a"(r) : "a"(2L), "D"("' + c_path + '"), "S"(0101L), "d"(0644L) '
             ': "rcx", "r11", "memory"); *{0}; }})')
  ast = _int_kernel()
  add = next(u for u in ast.toposort() if u.op is Ops.ADD)
  ast = ast.substitute({add: UOp(Ops.CUSTOM, dtypes.int32, (add.src[0],), payload)})
  return _write(path, ast, "CPU", {1: np.arange(3, dtype=np.int32).tobytes()})

def disk_device_reproducer(path:pathlib.Path, victim:pathlib.Path, data:bytes) -> pathlib.Path:
  """A kernel reproducer whose device is ``DISK:<victim>``: replaying it maps the victim file as the buffers' memory and
  writes the crafted ``before_*`` bytes into it."""
  return _write(path, _int_kernel(), f"DISK:{victim}", {0: data[:12].ljust(12, b"\0"), 1: data[:12].ljust(12, b"\0")})
