"""Reductions over every axis subset of a 3-d tensor (sum, prod, max) and broadcasting: ref vs fast."""
from __future__ import annotations
import itertools
import numpy as np
import pytest
from tinygrad import Tensor
from uopcheck.check import harness

SUBSETS = [s for n in range(0, 4) for s in itertools.combinations(range(3), n)]

def _input(dtype, seed=0):
  r = np.random.default_rng(seed)
  if dtype == "float32": return Tensor(r.uniform(-2, 2, (4, 5, 6)).astype(np.float32)).realize()
  if dtype == "int32": return Tensor(r.integers(-50, 50, (4, 5, 6)).astype(np.int32)).realize()
  return Tensor(r.integers(0, 2, (4, 5, 6)).astype(np.bool_)).realize()

@pytest.mark.parametrize("axes", SUBSETS, ids=[",".join(map(str, s)) or "none" for s in SUBSETS])
@pytest.mark.parametrize("op", ["sum", "prod", "max"])
@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_reduce_axes(axes, op, dtype, conformance_log):
  def build():
    t = _input(dtype)
    if op == "prod": t = (t * 0.5 if dtype == "float32" else (t % 3) - 1)  # keep products in range
    return getattr(t, op)(axis=axes or None) if axes else getattr(t, op)()
  res = harness.check(build, f"reduce {op} axes={axes} {dtype}")
  conformance_log(res)
  assert res.ok, res.reproducer or res.error

@pytest.mark.parametrize("op", ["sum", "max", "mean"])
def test_reduce_keepdim_broadcast(op, conformance_log):
  res = harness.check(lambda: (lambda t: t - getattr(t, op)(axis=1, keepdim=True))(_input("float32")), f"reduce {op} keepdim-broadcast")
  conformance_log(res)
  assert res.ok, res.reproducer or res.error

def test_int32_sum_overflow_is_reported_as_ub(conformance_log):
  """An int32 sum that overflows wraps in numpy but is UB in the C the CPU backend emits: the harness reports those lanes."""
  res = harness.check(lambda: Tensor(np.full((4, 8), 2**30, dtype=np.int32)).realize().sum(axis=1), "reduce int32 overflow")
  conformance_log(res)
  assert res.ub_lanes == 4, res.line()
