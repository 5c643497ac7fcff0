"""Float semantics and the tolerances for comparing float results.

Rules:
- IEEE-754 binary formats, round-to-nearest-even; overflow rounds to +-inf.
- NaN compares equal to NaN, +inf to +inf, -inf to -inf; -0.0 equals +0.0 (value comparison).
- Exactly-rounded ops (ADD, SUB, MUL, FDIV, SQRT, RECIPROCAL, NEG, TRUNC, MAX, CAST) get a
  budget of a few ULPs: the fast path may compute half/bfloat16 in float32 and round once more,
  and clang may contract a*b+c into an FMA (-ffp-contract=on is clang's default).
- Transcendental ops (EXP2, LOG2, SIN, POW) are decomposed by tinygrad into polynomial
  approximations (``codegen/decomp/transcendental.py``) on targets without the builtin, so
  they get a larger ULP budget and an absolute floor near zero.
- Graph-level comparisons (reductions, fused chains) use a relative+absolute tolerance per dtype,
  since the fast path reorders sums.
"""
from __future__ import annotations
from dataclasses import dataclass
import numpy as np
from tinygrad.dtype import DType, dtypes
from tinygrad.uop import Ops

@dataclass(frozen=True)
class Tolerance:
  """A lane passes when |fast-ref| <= atol + rtol*|ref|, or when it is within ``ulps`` units in the last place."""
  rtol: float|np.ndarray = 0.0   # an array gives one tolerance per lane
  atol: float|np.ndarray = 0.0
  ulps: int = 0

# machine epsilon (distance from 1.0 to the next value) per float dtype
EPS = {dtypes.float16: 2.0**-10, dtypes.bfloat16: 2.0**-7, dtypes.float32: 2.0**-23, dtypes.float64: 2.0**-52,
       dtypes.fp8e4m3: 2.0**-3, dtypes.fp8e5m2: 2.0**-2, dtypes.fp8e4m3fnuz: 2.0**-3, dtypes.fp8e5m2fnuz: 2.0**-2,
       dtypes.weakfloat: 2.0**-23}
# smallest positive normal per dtype: the absolute floor for relative tolerances
TINY = {dtypes.float16: 2.0**-14, dtypes.bfloat16: 2.0**-126, dtypes.float32: 2.0**-126, dtypes.float64: 2.0**-1022,
        dtypes.weakfloat: 2.0**-126, **{f: 2.0**-6 for f in dtypes.fp8s}}

def op_tolerance(op:Ops, dt:DType) -> Tolerance:
  """Tolerance for one elementwise op at dtype ``dt`` (ints and bools compare exactly)."""
  from uopcheck.spec.optable import OP_TABLE   # the op's tolerance class is the table's
  if not dtypes.is_float(dt): return Tolerance()
  eps, tiny = EPS[dt], TINY[dt]
  if op in OP_TABLE and OP_TABLE[op].tolerance == "transcendental":
    # half/bfloat16 are evaluated in float32 and rounded: 2 ulps of the narrow type; float32 polynomial: ~8 ulps
    return Tolerance(rtol=8*eps if dt in (dtypes.float32, dtypes.float64) else 2*eps, atol=max(16*tiny, 8*eps*1e-3), ulps=8)
  return Tolerance(rtol=2*eps, atol=tiny, ulps=2)

def pow_tolerance(dt:DType, x:np.ndarray, y:np.ndarray) -> Tolerance:
  """POW is lowered as exp2(y*log2|x|) computed in the op's own dtype, so the rounding of t = y*log2|x| (relative eps)
  becomes an absolute error eps*|t| in the exponent and a relative error ln2*eps*|t| in the result. Per lane:
  rtol = transcendental rtol + 2*ln2*eps*|t|."""
  tol = op_tolerance(Ops.POW, dt)
  if not dtypes.is_float(dt): return tol
  with np.errstate(all="ignore"):
    t = np.abs(np.asarray(y, np.float64) * np.log2(np.abs(np.asarray(x, np.float64))))
  t = np.where(np.isfinite(t), t, 0.0)
  return Tolerance(rtol=tol.rtol + 2 * np.log(2) * EPS[dt] * t, atol=tol.atol, ulps=tol.ulps)

def graph_tolerance(dt:DType, depth:int=1, reduce_size:int=1) -> Tolerance:
  """Tolerance for a whole graph's output: error grows with the op chain and the reduction length."""
  if not dtypes.is_float(dt): return Tolerance()
  eps = EPS[dt]
  k = 4 * depth + 2 * np.sqrt(max(reduce_size, 1))
  return Tolerance(rtol=min(k * eps, 0.05), atol=min(k * eps, 0.05), ulps=0)

def _ulp_distance(a:np.ndarray, b:np.ndarray) -> np.ndarray:
  """Distance in ULPs between two float arrays of the same width (sign-magnitude ordered)."""
  itype = {2: np.int16, 4: np.int32, 8: np.int64}[a.dtype.itemsize]
  ia, ib = a.view(itype).astype(np.int64), b.view(itype).astype(np.int64)
  big = np.int64(1) << (8 * a.dtype.itemsize - 1)
  ia = np.where(ia < 0, -(ia + big), ia)
  ib = np.where(ib < 0, -(ib + big), ib)
  return np.abs(ia - ib)

def float_close(ref:np.ndarray, fast:np.ndarray, dt:DType, tol:Tolerance) -> np.ndarray:
  """Per-lane verdict for floats: True where ``fast`` matches ``ref`` under ``tol`` and the NaN/inf rules."""
  r, f = np.asarray(ref, dtype=np.float64), np.asarray(fast, dtype=np.float64)
  rn, fn = np.isnan(r), np.isnan(f)
  rinf, finf = np.isinf(r), np.isinf(f)
  with np.errstate(invalid="ignore", over="ignore"):
    diff = np.abs(r - f)
    ok = diff <= tol.atol + tol.rtol * np.abs(r)
    if tol.ulps and dt in (dtypes.float16, dtypes.float32, dtypes.float64):
      nd = np.dtype({dtypes.float16: np.float16, dtypes.float32: np.float32, dtypes.float64: np.float64}[dt])
      ok |= _ulp_distance(r.astype(nd), f.astype(nd)) <= tol.ulps
  ok = np.where(rn | fn, rn & fn, ok)
  ok = np.where((rinf | finf) & ~(rn | fn), (r == f), ok)
  return ok
