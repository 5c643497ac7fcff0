"""Sharded tensor graphs (Tensor.shard over CPU and CPU:1): the reference evaluates UNSHARD over the device RANGE by its
meaning and agrees with numpy and with tinygrad's real multi-device path; a device RANGE with nothing to bind it, or a
realized multi-device buffer, is a one-line SpecError."""
from __future__ import annotations
import numpy as np
import pytest
from tinygrad import Tensor, dtypes
from tinygrad.uop import Ops
from tinygrad.uop.ops import UOp, AxisType
from uopcheck.check import harness
from uopcheck.ref import evaluate
from uopcheck.spec import SpecError

D = ("CPU", "CPU:1")
A = np.arange(24, dtype=np.float32).reshape(4, 6) - 7

CASES = {
  "axis0_elementwise": (lambda a: a.shard(D, axis=0) * 2 + 1, lambda x: x * 2 + 1),
  "axis0_reduce_split_axis": (lambda a: a.shard(D, axis=0).sum(0), lambda x: x.sum(0)),
  "axis1_reduce_other_axis": (lambda a: a.shard(D, axis=1).max(0), lambda x: x.max(0)),
  "replicated": (lambda a: a.shard(D).min(1), lambda x: x.min(1)),
  "copy_back": (lambda a: (a.shard(D, axis=1) * 3).to("CPU"), lambda x: x * 3),
  "permute_split_axis": (lambda a: a.shard(D, axis=1).permute(1, 0).contiguous(), lambda x: x.T),
  "reshape_then_reduce": (lambda a: a.shard(D, axis=0).reshape(2, 12).sum(1), lambda x: x.reshape(2, 12).sum(1)),
  "matmul": (lambda a: a.shard(D, axis=0) @ Tensor.ones(6, 3).shard(D), lambda x: x @ np.ones((6, 3), np.float32)),
  "int_cast": (lambda a: (a.shard(D, axis=0).cast(dtypes.int8) * 100), lambda x: (x.astype(np.int8) * np.int8(100))),
}

@pytest.mark.parametrize("name", sorted(CASES))
def test_sharded_graph_ref_matches_numpy(name):
  make, want = CASES[name]
  t = make(Tensor(A).realize())
  got = evaluate(t)
  with np.errstate(over="ignore"): w = want(A)
  assert got.shape == w.shape and np.array_equal(got, w.astype(got.dtype)), (got, w)

@pytest.mark.parametrize("name", sorted(CASES))
def test_sharded_graph_ref_agrees_with_tinygrad(name):
  make, _ = CASES[name]
  r = harness.check(lambda: make(Tensor(A).realize()), f"shard {name}")
  assert r.ok, r.line()

def test_unsharded_value_is_per_device_slices():
  # the two devices hold different halves: a reference that evaluated the source once (device 0 only) would repeat rows 0-1
  t = Tensor(A).realize().shard(D, axis=0)
  assert t.uop.op is Ops.UNSHARD
  assert np.array_equal(evaluate(t), A) and not np.array_equal(np.concatenate([A[:2], A[:2]]), A)

def test_device_range_without_unshard_is_one_line_error():
  t = Tensor(A).realize().shard(D, axis=0)
  inner = t.uop.src[0]   # the SHRINK at RANGE * 2: needs a device index nothing binds
  with pytest.raises(SpecError, match="device RANGE") as e: evaluate(inner)
  assert "\n" not in str(e.value)

def test_bare_range_at_tensor_stage_is_refused():
  r = UOp.range(4, 0, AxisType.LOOP)
  with pytest.raises(SpecError) as e: evaluate(r.cast(dtypes.float32))
  assert "\n" not in str(e.value)

def test_realized_multi_device_buffer_is_out_of_scope():
  t = (Tensor(A).realize().shard(D, axis=0) * 2).realize()
  with pytest.raises(SpecError, match="multi-device BUFFER"): evaluate(t + 1)
