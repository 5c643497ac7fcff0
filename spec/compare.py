"""Comparing a reference result with a fast-path result: bitwise for ints and bools, tolerance for floats.

Lanes the spec calls undefined are skipped. Lanes that rest on signed overflow (UB on the CPU
backend) are compared under wrap-around but counted and reported, so a user sees "this result
rests on undefined behaviour on CPU" rather than a silent pass or a false failure."""
from __future__ import annotations
from dataclasses import dataclass, field
import numpy as np
from tinygrad.dtype import DType, dtypes
from uopcheck.spec.floats import Tolerance, float_close

@dataclass
class Comparison:
  ok: bool
  dtype: DType
  shape: tuple
  checked: int = 0
  skipped_undefined: int = 0
  ub_lanes: int = 0
  mismatches: int = 0
  first_index: tuple|None = None
  ref_value: object = None
  fast_value: object = None
  max_abs_err: float = 0.0
  notes: list[str] = field(default_factory=list)

  def summary(self) -> str:
    s = f"{'OK' if self.ok else 'MISMATCH'} {self.dtype} shape={self.shape} checked={self.checked}"
    if self.skipped_undefined: s += f" undefined-skipped={self.skipped_undefined}"
    if self.ub_lanes: s += f" UB-on-CPU-lanes={self.ub_lanes} (signed overflow: compared under wrap-around)"
    if not self.ok: s += f" mismatches={self.mismatches} first at {self.first_index}: ref={self.ref_value!r} fast={self.fast_value!r}"
    return s

def compare(ref:np.ndarray, fast:np.ndarray, dt:DType, tol:Tolerance, undefined:np.ndarray|None=None,
            ub_overflow:np.ndarray|None=None) -> Comparison:
  ref, fast = np.asarray(ref), np.asarray(fast)
  if ref.shape != fast.shape:
    return Comparison(False, dt, ref.shape, notes=[f"shape differs: ref {ref.shape} fast {fast.shape}"], mismatches=max(ref.size, 1))
  undef = np.zeros(ref.shape, bool) if undefined is None else np.broadcast_to(undefined, ref.shape)
  ub = np.zeros(ref.shape, bool) if ub_overflow is None else np.broadcast_to(ub_overflow, ref.shape)
  if dtypes.is_float(dt): same = float_close(ref, fast, dt, tol)
  else: same = ref == fast
  bad = ~same & ~undef
  res = Comparison(not bad.any(), dt, ref.shape, checked=int((~undef).sum()), skipped_undefined=int(undef.sum()),
                   ub_lanes=int((ub & ~undef).sum()), mismatches=int(bad.sum()))
  if dtypes.is_float(dt) and (~undef).any():
    with np.errstate(invalid="ignore", over="ignore"):
      d = np.abs(ref.astype(np.float64) - fast.astype(np.float64))[~undef & np.isfinite(ref.astype(np.float64))]
    res.max_abs_err = float(d.max()) if d.size else 0.0
  elif (~undef).any() and not bad.any(): res.max_abs_err = 0.0
  if bad.any():
    idx = tuple(int(i) for i in np.argwhere(bad)[0])
    res.first_index, res.ref_value, res.fast_value = idx, ref[idx].item(), fast[idx].item()
  return res
