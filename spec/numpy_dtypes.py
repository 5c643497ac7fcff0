"""How each tinygrad dtype is held in numpy by the reference, and rounding into a dtype.

Storage rule: bool, every sized int, float16/32/64 use their own numpy dtype. bfloat16 and the
fp8 formats have no numpy dtype: they are held in float32 arrays whose every value is exactly
representable in the format (``round_to`` keeps that invariant). ``weakint`` is held as int64
(mathematical integers; the reference reports a lane that leaves int64), ``weakfloat`` as
float64 (real numbers, approximated at double precision)."""
from __future__ import annotations
import numpy as np
from tinygrad.dtype import DType, dtypes
from tinygrad import dtype as _tg_dtype

_NP = {dtypes.bool: np.bool_, dtypes.int8: np.int8, dtypes.uint8: np.uint8, dtypes.int16: np.int16, dtypes.uint16: np.uint16,
       dtypes.int32: np.int32, dtypes.uint32: np.uint32, dtypes.int64: np.int64, dtypes.uint64: np.uint64,
       dtypes.float16: np.float16, dtypes.float32: np.float32, dtypes.float64: np.float64,
       dtypes.bfloat16: np.float32, dtypes.weakint: np.int64, dtypes.weakfloat: np.float64,
       **{f: np.float32 for f in dtypes.fp8s}}

def np_dtype(dt:DType) -> np.dtype:
  """The numpy dtype that holds values of ``dt`` in the reference."""
  if dt not in _NP: raise KeyError(f"no numpy storage for {dt}")
  return np.dtype(_NP[dt])

def storage_dtype(dt:DType) -> np.dtype:
  """The numpy dtype of the *bytes* of ``dt`` in device memory (bfloat16 -> uint16 bits, fp8 -> uint8 bits)."""
  if dt == dtypes.bfloat16: return np.dtype(np.uint16)
  if dt in dtypes.fp8s: return np.dtype(np.uint8)
  return np_dtype(dt)

def bf16_round(x:np.ndarray) -> np.ndarray:
  """Round float32 values to the nearest bfloat16 (ties to even), kept as float32. NaN/inf pass through."""
  x = np.asarray(x, dtype=np.float32)
  u = x.view(np.uint32).astype(np.uint64)
  r = ((u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000).astype(np.uint32).view(np.float32)
  return np.where(np.isfinite(x), r, x).astype(np.float32)

def bf16_from_bits(bits:np.ndarray) -> np.ndarray:
  return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)

def bf16_to_bits(x:np.ndarray) -> np.ndarray:
  return (bf16_round(x).view(np.uint32) >> 16).astype(np.uint16)

def fp8_round(x:np.ndarray, dt:DType) -> np.ndarray:
  """Round to an fp8 format (saturating as tinygrad's ``float_to_fp8`` does), kept as float32."""
  f = np.vectorize(lambda v: _tg_dtype.fp8_to_float(_tg_dtype.float_to_fp8(float(v), dt), dt), otypes=[np.float32])
  return f(np.asarray(x, dtype=np.float64)) if np.size(x) else np.asarray(x, dtype=np.float32)

def fp8_from_bits(bits:np.ndarray, dt:DType) -> np.ndarray:
  f = np.vectorize(lambda b: _tg_dtype.fp8_to_float(int(b), dt), otypes=[np.float32])
  return f(np.asarray(bits, dtype=np.uint8)) if np.size(bits) else np.zeros(np.shape(bits), np.float32)

def fp8_to_bits(x:np.ndarray, dt:DType) -> np.ndarray:
  f = np.vectorize(lambda v: _tg_dtype.float_to_fp8(float(v), dt), otypes=[np.uint8])
  return f(np.asarray(x, dtype=np.float64)) if np.size(x) else np.zeros(np.shape(x), np.uint8)

def round_to(x:np.ndarray, dt:DType) -> np.ndarray:
  """Round float values into ``dt`` (round-to-nearest-even, overflow to inf) and hold them in its storage."""
  if dt == dtypes.bfloat16: return bf16_round(np.asarray(x, dtype=np.float32) if np.asarray(x).dtype != np.float64 else _f64_to_bf16(x))
  if dt in dtypes.fp8s: return fp8_round(x, dt)
  with np.errstate(over="ignore", invalid="ignore"): return np.asarray(x).astype(np_dtype(dt))

def max_finite(dt:DType) -> float|None:
  """The largest finite value of a float dtype that overflows to inf (None for the saturating fp8 formats and non-floats)."""
  if dt == dtypes.bfloat16: return float.fromhex("0x1.fep127")
  if dt in (dtypes.float16, dtypes.float32, dtypes.float64, dtypes.weakfloat): return float(np.finfo(np_dtype(dt)).max)
  return None

def order_dependent_sum(abs_sum:np.ndarray, dt:DType) -> np.ndarray:
  """The lanes of a float sum whose finite terms add up, in absolute value, past ``dt``'s largest finite value: there
  some accumulation orders overflow to inf and others do not (tinygrad sums in the REDUCE's dtype, in the order its
  optimizer picks; the reference in float64), so the lane has no single value. ``abs_sum``: the sum of |term| over the
  finite terms (a product that overflows ``dt`` but not float64 counts: tinygrad's product is inf there)."""
  m = max_finite(dt)
  if m is None: return np.zeros(np.shape(abs_sum), bool)
  with np.errstate(all="ignore"): return np.asarray(abs_sum, dtype=np.float64) > m

def sum_may_overflow(largest_term:float, n_terms:int, dt:DType) -> bool:
  """Whether any lane of a sum of ``n_terms`` terms, none over ``largest_term`` in absolute value, can pass ``dt``'s
  largest finite value: when not, ``order_dependent_sum`` is False everywhere and its |term| sums need not be computed
  (the matmul shortcut would otherwise run a second einsum for every contraction)."""
  m = max_finite(dt)
  return m is not None and float(largest_term) * n_terms * (1 + 1e-9) > m

def finite_abs(x:np.ndarray) -> np.ndarray:
  """|x| as float64 where x is finite, 0 at inf and NaN (those propagate exactly in any order)."""
  f = np.asarray(x, dtype=np.float64)
  with np.errstate(all="ignore"): return np.where(np.isfinite(f), np.abs(f), 0.0)

def _f64_to_bf16(x:np.ndarray) -> np.ndarray:
  # float64 -> float32 -> bfloat16 double-rounds; tinygrad's truncate does the same (float_to_bf16 goes through float32)
  with np.errstate(over="ignore", invalid="ignore"): return bf16_round(np.asarray(x, dtype=np.float32))

def from_bytes(raw:bytes|memoryview, dt:DType, shape:tuple[int, ...]) -> np.ndarray:
  """Decode device bytes of ``dt`` into reference storage of the given shape."""
  bits = np.frombuffer(bytes(raw), dtype=storage_dtype(dt)).copy()
  if dt == dtypes.bfloat16: vals = bf16_from_bits(bits)
  elif dt in dtypes.fp8s: vals = fp8_from_bits(bits, dt)
  else: vals = bits
  return vals.reshape(shape)

def to_bytes(x:np.ndarray, dt:DType) -> bytes:
  if dt == dtypes.bfloat16: return bf16_to_bits(x).tobytes()
  if dt in dtypes.fp8s: return fp8_to_bits(x, dt).tobytes()
  return np.ascontiguousarray(x, dtype=np_dtype(dt)).tobytes()

def const_array(value, dt:DType) -> np.ndarray:
  """A CONST's value held at ``dt``. A sized-int CONST may carry a value outside its dtype (tinygrad commits weak consts
  "directly at dt: the value stays mathematical, emission truncates", uop/weak.py): it wraps, as emission does."""
  if dtypes.is_int(dt) and dt != dtypes.weakint:
    return np.array(int(value) & ((1 << dt.bitsize) - 1), dtype=np.uint64).astype(np_dtype(dt))
  if dt == dtypes.bfloat16 or dt in dtypes.fp8s: return round_to(np.array(float(value)), dt)
  with np.errstate(over="ignore"): return np.array(value).astype(np_dtype(dt))
