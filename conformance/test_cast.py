"""CAST across every pair of dtypes and BITCAST across every same-size pair (plus size-changing ones): ref vs fast.

Float->int lanes out of the target's range (and NaN) are undefined in the spec and skipped."""
from __future__ import annotations
import pytest
from tinygrad import Tensor, dtypes
from tinygrad.uop import Ops
from tinygrad.uop.ops import UOp
from uopcheck.check import harness
from uopcheck.spec import op_tolerance
from conformance.edge_values import INTS, FLOATS, edges, make
from conformance.conftest import require_dtype

ALL = [dtypes.bool] + INTS + FLOATS
CAST_PAIRS = [(a, b) for a in ALL for b in ALL if a != b]

def _name(dt): return dt.name.replace(" ", "_")

@pytest.mark.parametrize("src,dst", CAST_PAIRS, ids=[f"{_name(a)}->{_name(b)}" for a, b in CAST_PAIRS])
def test_cast(src, dst, conformance_log):
  require_dtype(src)
  require_dtype(dst)
  res = harness.check(lambda: Tensor(UOp(Ops.CAST, dst, (make(edges(src), src).uop,), dst)), f"cast {src}->{dst}", tol=op_tolerance(Ops.CAST, dst))
  conformance_log(res)
  assert res.ok, res.reproducer or res.error
  assert res.comparisons[0].checked >= 2, "too few defined lanes to mean anything"

SAME_SIZE = [(a, b) for a in ALL for b in ALL if a != b and a.itemsize == b.itemsize and dtypes.bool not in (a, b)]
RESIZE = [(dtypes.float32, dtypes.uint8), (dtypes.uint8, dtypes.float32), (dtypes.int64, dtypes.int16), (dtypes.float16, dtypes.uint32),
          (dtypes.uint16, dtypes.float64)]

@pytest.mark.parametrize("src,dst", SAME_SIZE + RESIZE, ids=[f"{_name(a)}->{_name(b)}" for a, b in SAME_SIZE + RESIZE])
def test_bitcast(src, dst, conformance_log):
  require_dtype(src)
  require_dtype(dst)
  n = len(edges(src))
  k = max(dst.itemsize // src.itemsize, 1)
  vals = (edges(src) * k)[:((n * k) // k) * k] if src.itemsize < dst.itemsize else edges(src)
  vals = vals[:len(vals) - len(vals) % k]
  def build():
    x = make(vals, src)
    return Tensor(UOp(Ops.BITCAST, dst, (x.uop,), dst)) if src.itemsize == dst.itemsize else x.bitcast(dst)
  res = harness.check(build, f"bitcast {src}->{dst}", tol=None)
  conformance_log(res)
  assert res.ok, res.reproducer or res.error
