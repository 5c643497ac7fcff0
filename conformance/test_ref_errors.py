"""Bad input to the reference: one SpecError naming the op, dtype, shape and the rule broken -- never a numpy traceback."""
from __future__ import annotations
import numpy as np
import pytest
from tinygrad import Tensor, dtypes
from tinygrad.uop import Ops
from tinygrad.uop.ops import UOp
from uopcheck.ref import evaluate
from uopcheck.spec import SpecError

def _buf(n=4, dt=dtypes.float32):
  return Tensor(np.arange(n, dtype=np.float32)).cast(dt).realize().uop

def test_out_of_scope_op_names_op_and_reason():
  u = UOp(Ops.WMMA, dtypes.float32, (_buf(), _buf(), _buf()), arg=(1, 2, 3, 4, 5))
  with pytest.raises(SpecError) as e: evaluate(u)
  msg = str(e.value)
  assert "Ops.WMMA" in msg and "dtypes.float" in msg and "tensor stage" in msg and "\n" not in msg

def test_program_only_op_is_refused_at_tensor_stage():
  b = _buf()
  with pytest.raises(SpecError, match=r"Ops.MULACC.*not allowed at the tensor stage"): evaluate(UOp(Ops.MULACC, dtypes.float32, (b, b, b)))

def test_typing_rule_violation_is_named():
  bad = UOp(Ops.ADD, dtypes.float32, (_buf(), _buf(dt=dtypes.int32)))
  with pytest.raises(SpecError, match=r"Ops.ADD dtype=dtypes.float.*breaks tinygrad's spec for the tensor stage"): evaluate(bad)
  # uopcheck's own typing rules stand behind tinygrad's spec
  with pytest.raises(SpecError,
                     match=r"Ops.ADD dtype=dtypes.float.*typing rule broken: operands must have the result dtype"): evaluate(bad, check_spec=False)

def test_malformed_movement_is_named_not_a_numpy_traceback():
  b = _buf(6)
  bad = UOp(Ops.RESHAPE, dtypes.float32, (b, UOp(Ops.STACK, dtypes.weakint, (UOp.const(4), UOp.const(4)))))
  with pytest.raises(SpecError) as e: evaluate(bad)
  assert "Ops.RESHAPE" in str(e.value) and "bad reshape" in str(e.value)
  assert e.value.__cause__ is None and e.value.__suppress_context__  # no chained numpy traceback

def test_bad_permutation_is_named():
  x = Tensor(np.ones((2, 3), np.float32)).realize().uop
  with pytest.raises(SpecError, match="invalid permutation"): evaluate(UOp(Ops.PERMUTE, dtypes.float32, (x,), (0, 0)))

def test_store_through_pad_is_refused():
  x = Tensor.zeros(4).contiguous().realize()
  tgt = x.uop.pad(((1, 1),))
  st = UOp(Ops.STORE, dtypes.void, (tgt, UOp.const(1.0, dtypes.float32)))
  with pytest.raises(SpecError, match="cannot write through a PAD"): evaluate(UOp.sink(st))

def test_evaluate_rejects_non_graphs():
  with pytest.raises(SpecError, match="takes a Tensor"): evaluate(42)
