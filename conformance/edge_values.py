"""Edge values per dtype for the op-by-op conformance matrix, and helpers to build input Tensors.

Inputs are realized buffers: the reference reads their bytes, the fast path loads them."""
from __future__ import annotations
import itertools
import numpy as np
from tinygrad import Tensor, dtypes
from tinygrad.dtype import DType

INTS = [dtypes.int8, dtypes.uint8, dtypes.int16, dtypes.uint16, dtypes.int32, dtypes.uint32, dtypes.int64, dtypes.uint64]
FLOATS = [dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64]

def int_edges(dt:DType) -> list[int]:
  vals = [0, 1, -1, 2, -2, 3, 7, -7, 100, -100, dt.min, dt.min + 1, dt.max, dt.max - 1, dt.max // 2, dt.min // 2]
  return sorted({v for v in vals if dt.min <= v <= dt.max})

def float_edges(dt:DType) -> list[float]:
  big = {dtypes.float16: 65504.0, dtypes.bfloat16: 3.3895313892515355e38, dtypes.float32: 3.4028234663852886e38,
         dtypes.float64: 1.7976931348623157e308}[dt]
  tiny = {dtypes.float16: 2.0**-14, dtypes.bfloat16: 2.0**-126, dtypes.float32: 2.0**-126, dtypes.float64: 2.0**-1022}[dt]
  denorm = {dtypes.float16: 2.0**-24, dtypes.bfloat16: 2.0**-133, dtypes.float32: 2.0**-149, dtypes.float64: 5e-324}[dt]
  return [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 10.0, 1e-3, big, -big, tiny, denorm, float("nan"), float("inf"), float("-inf")]

def edges(dt:DType) -> list:
  if dt == dtypes.bool: return [False, True]
  return float_edges(dt) if dtypes.is_float(dt) else int_edges(dt)

def make(values, dt:DType) -> Tensor:
  """A realized input Tensor of dtype ``dt`` holding ``values`` (rounded into dt by tinygrad's own cast for bf16)."""
  if dt == dtypes.bfloat16: return Tensor(np.array(values, dtype=np.float32)).cast(dt).contiguous().realize()
  if dtypes.is_float(dt): return Tensor(np.array(values, dtype={2: np.float16, 4: np.float32, 8: np.float64}[dt.itemsize])).realize()
  npdt = {dtypes.bool: np.bool_, dtypes.int8: np.int8, dtypes.uint8: np.uint8, dtypes.int16: np.int16, dtypes.uint16: np.uint16,
          dtypes.int32: np.int32, dtypes.uint32: np.uint32, dtypes.int64: np.int64, dtypes.uint64: np.uint64}[dt]
  return Tensor(np.array(values, dtype=npdt), dtype=dt).realize()

def pairs(dt:DType, keep=lambda a, b: True) -> tuple[list, list]:
  """Every pair of edge values (the outer product), filtered by ``keep``."""
  ps = [(a, b) for a, b in itertools.product(edges(dt), edges(dt)) if keep(a, b)]
  return [a for a, _ in ps], [b for _, b in ps]
