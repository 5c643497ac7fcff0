"""Exact integer semantics per dtype: wrap-around, division, shifts, and the two readings of overflow.

Sources (tinygrad 0.14.0):
- ``helpers.cdiv``/``cmod``: CDIV truncates toward zero, CMOD takes the sign of the dividend
  (``cdiv(x,y) = abs(x)//abs(y) * sign``; ``cmod = x - cdiv(x,y)*y``), as C's ``/`` and ``%``.
- ``helpers.floordiv``/``floormod``: FLOORDIV/FLOORMOD floor (Python ``//`` and ``%``).
  Both helpers return 0 for a zero divisor; the *spec* calls division by zero undefined, since
  the CPU backend renders CDIV/CMOD as C ``/`` and ``%`` (``renderer/cstyle.py``).
- Sized ints hold two's-complement values and wrap (``dtype.truncate`` uses ctypes).

Signed overflow has two readings, and the spec names both:
- ``WRAP``: numpy and tinygrad's PYTHON emulator wrap modulo 2**bits.
- ``UNDEFINED``: the CPU backend compiles C with ``clang -O2`` and no ``-fwrapv``
  (``runtime/support/compiler_cpu.py``), so a C ``int``/``long`` overflow is undefined behaviour.
  C's integer promotions make int8/int16 arithmetic happen in ``int`` (then convert back, which
  clang defines as wrapping), so only int32/int64 results -- and uint16*uint16, which promotes
  to ``int`` and can pass INT_MAX -- are UB. Unsigned arithmetic of uint32/uint64 wraps by
  definition.
Tensor-level comparison uses WRAP and reports the lanes where UNDEFINED would apply."""
from __future__ import annotations
from enum import Enum
import numpy as np
from tinygrad.dtype import DType, dtypes
from uopcheck.spec.numpy_dtypes import np_dtype

class OverflowReading(Enum):
  WRAP = "wrap"            # numpy, DEV=PYTHON
  UNDEFINED = "undefined"  # CPU backend: C without -fwrapv

# dtypes whose signed overflow is undefined behaviour in the C the CPU backend emits
C_UB_SIGNED = (dtypes.int32, dtypes.int64)

def bits(dt:DType) -> int: return 64 if dt == dtypes.weakint else dt.bitsize

def wrap(x:np.ndarray, dt:DType) -> np.ndarray:
  """Two's-complement wrap of (possibly wider) integer values into ``dt``."""
  with np.errstate(over="ignore"): return np.asarray(x).astype(np_dtype(dt))

def in_range(exact:np.ndarray, dt:DType) -> np.ndarray:
  """Lanes of exact (int64 or Python-object) integers that fit ``dt``."""
  lo, hi = (-2**63, 2**63-1) if dt == dtypes.weakint else (dt.min, dt.max)
  return (exact >= lo) & (exact <= hi)

def _wide_arith(op:str, a:np.ndarray, b:np.ndarray, signed:bool) -> tuple[np.ndarray, np.ndarray]:
  """64-bit add/sub/mul: the wrapped result and the overflow lanes, from the classic two's-complement identities."""
  t = np.int64 if signed else np.uint64
  a, b = np.asarray(a).astype(t), np.asarray(b).astype(t)
  with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
    if op == "add":
      r = a + b
      ovf = ((a ^ r) & (b ^ r)) < 0 if signed else r < a
    elif op == "sub":
      r = a - b
      ovf = ((a ^ b) & (a ^ r)) < 0 if signed else a < b
    else:
      r = a * b
      nz = a != 0
      back = r // np.where(nz, a, 1).astype(t)
      ovf = nz & (back != b)
      if signed: ovf |= (a == -1) & (b == np.iinfo(np.int64).min) | (b == -1) & (a == np.iinfo(np.int64).min)
  return r, np.asarray(ovf, bool)

def arith(op:str, a:np.ndarray, b:np.ndarray, dt:DType) -> tuple[np.ndarray, np.ndarray]:
  """(wrapped result in ``dt``, lanes that overflow ``dt``) for op in add/sub/mul."""
  if bits(dt) >= 64:
    r, ovf = _wide_arith(op, a, b, signed=dt != dtypes.uint64)
    return wrap(r, dt), ovf
  wide_t = np.uint64 if dt == dtypes.uint32 and op == "mul" else np.int64  # every exact result fits
  a2, b2 = np.asarray(a).astype(wide_t), np.asarray(b).astype(wide_t)
  with np.errstate(over="ignore"):
    exact = {"add": a2 + b2, "sub": a2 - b2, "mul": a2 * b2}[op] if wide_t == np.int64 else a2 * b2
  ovf = ~np.asarray(in_range(exact, dt), dtype=bool)
  return wrap(exact, dt), ovf

def ub_overflow(op:str, a:np.ndarray, b:np.ndarray, dt:DType, ovf:np.ndarray) -> np.ndarray:
  """Lanes whose overflow is undefined behaviour on the CPU backend (see module docstring)."""
  if dt in C_UB_SIGNED: return ovf
  if dt == dtypes.uint16 and op == "mul":  # promoted to int: 65535*65535 > INT_MAX
    return (a.astype(np.int64) * b.astype(np.int64)) > 2**31 - 1
  return np.zeros(np.shape(ovf), dtype=bool)

def cdiv(a:np.ndarray, b:np.ndarray, dt:DType) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
  """C division (truncate toward zero). Returns (result, undefined lanes, UB-overflow lanes)."""
  undef = b == 0
  safe_b = np.where(undef, 1, b).astype(a.dtype)
  ovf = np.zeros(np.shape(a), bool)
  if dt in dtypes.sints or dt == dtypes.weakint:
    ovf = (a == (np.iinfo(a.dtype).min)) & (safe_b == -1)
    safe_b = np.where(ovf, 1, safe_b).astype(a.dtype)
  with np.errstate(over="ignore", divide="ignore"):
    fq = a // safe_b
    r = a - fq * safe_b
    q = np.where((r != 0) & ((a < 0) != (safe_b < 0)), fq + 1, fq)
    q = np.where(ovf, a, q)  # INT_MIN / -1 wraps to INT_MIN under WRAP
  return wrap(np.where(undef, 0, q), dt), undef, ovf

def cmod(a:np.ndarray, b:np.ndarray, dt:DType) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
  """C remainder (sign of the dividend): a - cdiv(a,b)*b."""
  q, undef, ovf = cdiv(a, b, dt)
  with np.errstate(over="ignore"): r = a - q * np.where(undef, 1, b).astype(a.dtype)
  return wrap(np.where(undef | ovf, 0, r), dt), undef, ovf

def floordiv(a:np.ndarray, b:np.ndarray, dt:DType) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
  """Floor division (Python ``//``). Division by zero is undefined; MIN // -1 overflows."""
  undef = b == 0
  safe_b = np.where(undef, 1, b).astype(a.dtype)
  ovf = np.zeros(np.shape(a), bool)
  if dt in dtypes.sints or dt == dtypes.weakint:
    ovf = (a == np.iinfo(a.dtype).min) & (safe_b == -1)
    safe_b = np.where(ovf, 1, safe_b).astype(a.dtype)
  with np.errstate(over="ignore", divide="ignore"): q = np.where(ovf, a, a // safe_b)
  return wrap(np.where(undef, 0, q), dt), undef, ovf

def floormod(a:np.ndarray, b:np.ndarray, dt:DType) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
  undef = b == 0
  safe_b = np.where(undef, 1, b).astype(a.dtype)
  with np.errstate(over="ignore", divide="ignore"): r = np.where((safe_b == -1), 0, a % np.where(safe_b == -1, 1, safe_b).astype(a.dtype))
  return wrap(np.where(undef, 0, r), dt), undef, np.zeros(np.shape(a), bool)

def shift(op:str, a:np.ndarray, b:np.ndarray, dt:DType) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
  """SHL/SHR. A count outside [0, bits) is undefined (C). SHR of a signed value is arithmetic.
  SHL of a negative signed value, or one whose result leaves the type, is UB in C for int32/int64."""
  w = bits(dt)
  bb = b.astype(np.int64)
  undef = (bb < 0) | (bb >= w)
  cnt = np.where(undef, 0, bb).astype(np.uint64 if dt in dtypes.uints else np.int64)
  with np.errstate(over="ignore"):
    if op == "shl":
      res = wrap(np.left_shift(a.astype(np.uint64) if dt in dtypes.uints else a.astype(np.int64), cnt), dt)
      ovf = np.zeros(np.shape(a), bool)
      if dt in C_UB_SIGNED:
        back = np.right_shift(res.astype(np.int64), cnt.astype(np.int64))
        ovf = (a < 0) | (back != a.astype(np.int64))
    else:
      res = wrap(np.right_shift(a, cnt.astype(a.dtype)), dt)
      ovf = np.zeros(np.shape(a), bool)
  return res, undef, ovf & ~undef

# Where the spec deliberately differs from tinygrad's own ``python_alu`` (+ ``dtype.truncate``), each with its reason.
# Everywhere else the numpy semantics, the z3 model (Int and BitVec, both readings), the exhaustive evaluator and
# python_alu must agree (conformance/test_oracle_agreement.py checks it); the keys name the lanes the spec leaves out.
PYTHON_ALU_DIFFERENCES: dict[str, str] = {
  "division by zero": "python_alu's cdiv/cmod/floordiv/floormod return 0; the spec leaves it undefined, since the CPU backend "
                      "renders C '/' and '%', which trap (SIGFPE) on x86",
  "signed MIN / -1": "python_alu wraps the quotient; C leaves it undefined and x86 traps, so the spec does too",
  "shift count outside [0, bits)": "python_alu shifts by any count; C leaves it undefined (the spec is conservative for int8/int16 "
                                   "too, whose promoted C shift would be defined for counts below 32)",
  "signed overflow under UNDEFINED": "python_alu (like numpy and DEV=PYTHON) wraps; under C's reading an int32/int64 overflow, a "
                                     "uint16*uint16 product past INT_MAX and a left shift of a negative value are undefined",
  "weakint outside int64": "python_alu computes unbounded ints; the numpy evaluator holds int64 and calls a result outside it "
                           "(or a shift by 64 or more) undefined, leaving it to z3's Int -- a limit of the evaluator, not the spec",
}
