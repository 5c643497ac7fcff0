"""The spec's integer semantics, checked against their definitions: Python's exact integers, tinygrad's helpers, C."""
from __future__ import annotations
import numpy as np
from hypothesis import given, settings, strategies as st
from tinygrad.dtype import dtypes
from tinygrad.helpers import cdiv as tg_cdiv, cmod as tg_cmod
from uopcheck.spec import ints
from uopcheck.spec.alu import eval_alu, cast
from tinygrad.uop import Ops
from conformance.edge_values import INTS
from conformance.profiles import examples

def _wrap_py(v:int, dt) -> int:
  m = 1 << dt.bitsize
  v %= m
  return v - m if dt in dtypes.sints and v >= m // 2 else v

@settings(max_examples=examples(200), deadline=None)
@given(st.sampled_from(INTS), st.data())
def test_add_sub_mul_wrap_like_exact_integers(dt, data):
  a = data.draw(st.integers(dt.min, dt.max))
  b = data.draw(st.integers(dt.min, dt.max))
  A, B = np.array([a], dtype=ints.np_dtype(dt)), np.array([b], dtype=ints.np_dtype(dt))
  for op, f in [(Ops.ADD, int.__add__), (Ops.SUB, int.__sub__), (Ops.MUL, int.__mul__)]:
    r = eval_alu(op, dt, [A, B], dt)
    exact = f(a, b)
    assert int(r.value[0]) == _wrap_py(exact, dt)
    overflowed = not (dt.min <= exact <= dt.max)
    # UB only for C int/long signed overflow (and uint16*uint16 promoted to int)
    if dt in (dtypes.int32, dtypes.int64): assert bool(r.ub_overflow[0]) == overflowed
    elif dt == dtypes.uint16 and op is Ops.MUL: assert bool(r.ub_overflow[0]) == (a * b > 2**31 - 1)
    else: assert not r.ub_overflow[0]

@settings(max_examples=examples(200), deadline=None)
@given(st.sampled_from(INTS), st.data())
def test_division_matches_tinygrad_helpers_and_python(dt, data):
  a = data.draw(st.integers(dt.min, dt.max))
  b = data.draw(st.integers(dt.min, dt.max))
  A, B = np.array([a], dtype=ints.np_dtype(dt)), np.array([b], dtype=ints.np_dtype(dt))
  q, undef, ovf = ints.cdiv(A, B, dt)
  if b == 0:
    assert undef[0]
    return
  if dt.min < 0 and a == dt.min and b == -1:
    assert ovf[0]
    return
  assert int(q[0]) == tg_cdiv(a, b)                         # truncating, helpers.cdiv
  assert int(ints.cmod(A, B, dt)[0][0]) == tg_cmod(a, b)     # sign of dividend, helpers.cmod
  assert int(ints.floordiv(A, B, dt)[0][0]) == a // b        # floor, Python
  assert int(ints.floormod(A, B, dt)[0][0]) == a % b

def test_division_by_zero_and_min_over_minus_one_are_marked():
  dt = dtypes.int32
  A, B = np.array([7, dt.min, 5], np.int32), np.array([0, -1, 2], np.int32)
  for f in (ints.cdiv, ints.floordiv):
    _, undef, ovf = f(A, B, dt)
    assert undef.tolist() == [True, False, False] and ovf.tolist() == [False, True, False]

def test_shift_counts_out_of_range_are_undefined():
  dt = dtypes.int32
  v, undef, ovf = ints.shift("shl", np.array([1, 1, 1, -1], np.int32), np.array([31, 32, -1, 1], np.int32), dt)
  assert undef.tolist() == [False, True, True, False]
  assert ovf.tolist() == [True, False, False, True]  # 1<<31 leaves int32; -1<<1 is a negative left shift (UB in C)
  v, undef, _ = ints.shift("shr", np.array([-8], np.int32), np.array([1], np.int32), dt)
  assert v.tolist() == [-4]  # arithmetic shift for signed

def test_float_to_int_cast_out_of_range_is_undefined():
  r = cast(np.array([1.9, -1.9, 127.5, 128.0, np.nan, -129.0], np.float32), dtypes.float32, dtypes.int8)
  assert r.value[:3].tolist() == [1, -1, 127]
  assert r.undefined.tolist() == [False, False, False, True, True, True]

def test_int_to_int_cast_wraps():
  r = cast(np.array([300, -1, 2**31 - 1], np.int64), dtypes.int64, dtypes.uint8)
  assert r.value.tolist() == [44, 255, 255]
  assert not r.undefined.any()
