"""The op table names every tinygrad op, and its rules hold together."""
from __future__ import annotations
import pytest
from tinygrad.uop import Ops, GroupOp
from tinygrad.uop.ops import UOp
from tinygrad.dtype import dtypes
from uopcheck.spec import OP_TABLE, SpecError, op_spec, check_typing
from uopcheck.spec.weak import lowered_dtype

def test_every_tinygrad_op_is_in_the_table():
  missing = [op.name for op in Ops if op not in OP_TABLE]
  assert not missing, f"tinygrad has ops the spec doesn't mention: {missing}"
  assert set(OP_TABLE) == set(Ops)

def test_each_entry_is_in_scope_or_says_why():
  for op, s in OP_TABLE.items():
    assert s.op is op
    assert s.typing and s.semantics
    if s.out_of_scope is None: assert s.stages, f"{op} is in scope but has no stage"
    else: assert len(s.out_of_scope) > 10, f"{op}: out of scope needs a reason"

def test_every_alu_op_has_tensor_or_program_semantics():
  for op in GroupOp.ALU:
    assert OP_TABLE[op].out_of_scope is None, op
    assert OP_TABLE[op].check is not None, f"{op} needs an executable typing rule"

def test_unknown_op_is_a_spec_error():
  class Fake: name = "FAKE_OP"
  with pytest.raises(SpecError, match="unknown op"): op_spec(Fake)  # type: ignore[arg-type]

def test_typing_rules_fire():
  a, b = UOp.const(1.0, dtypes.float32), UOp.const(2, dtypes.int32)
  assert check_typing(UOp(Ops.ADD, dtypes.float32, (a, b))) is not None
  assert check_typing(UOp(Ops.ADD, dtypes.float32, (a, a))) is None
  assert "floats only" in check_typing(UOp(Ops.SQRT, dtypes.int32, (b,)))
  assert "ints only" in check_typing(UOp(Ops.CDIV, dtypes.float32, (a, a)))
  assert "bool" in check_typing(UOp(Ops.WHERE, dtypes.float32, (a, a, a)))
  assert check_typing(UOp(Ops.CMPLT, dtypes.bool, (a, UOp.const(1.0)))) is None  # a weak operand is fine

def test_weak_lowering_follows_value_range():
  assert lowered_dtype(dtypes.weakint, 0, 2**31 - 1) == dtypes.int32
  assert lowered_dtype(dtypes.weakint, -1, 2**31) == dtypes.int64
  assert lowered_dtype(dtypes.weakint, -2**31 - 1, 0) == dtypes.int64
  assert lowered_dtype(dtypes.weakfloat, 0.0, 1.0) == dtypes.default_float
  # agrees with tinygrad's own uop/weak.py on real UOps
  from tinygrad.uop.weak import default_dtype
  for lo, hi in [(0, 10), (-5, 2**31 - 1), (0, 2**31), (-2**40, 3)]:
    v = UOp.variable("x", lo, hi)
    assert default_dtype(v) == lowered_dtype(dtypes.weakint, lo, hi), (lo, hi)
