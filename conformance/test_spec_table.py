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
  with pytest.raises(SpecError, match="unknown op"): op_spec(Fake)

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

# ** the executable entries of ALU ops **

def _in_scope_alu():
  from tinygrad.uop import GroupOp
  return [op for op in GroupOp.ALU if OP_TABLE[op].out_of_scope is None]

def test_every_in_scope_alu_op_has_every_executable_entry():
  from tinygrad.uop import GroupOp
  missing = []
  for op in _in_scope_alu():
    e = OP_TABLE[op]
    want_arity = 1 if op in GroupOp.Unary else 2 if op in GroupOp.Binary else 3
    if e.evaluate is None or e.arity != want_arity or not e.domain or e.tolerance not in ("exact", "rounded", "transcendental") or \
       not e.fuzz <= {"symbolic", "graph"} or e.check is None: missing.append(op)
  assert not missing, missing

def test_eval_alu_runs_the_table_entry():
  import numpy as np
  from dataclasses import replace
  from tinygrad.uop import Ops
  from tinygrad.dtype import dtypes
  from uopcheck.spec import alu, optable
  a, b = np.array([7, -7], np.int32), np.array([2, 2], np.int32)
  assert alu.eval_alu(Ops.CDIV, dtypes.int32, [a, b], dtypes.int32).value.tolist() == [3, -3]
  old = optable.OP_TABLE[Ops.CDIV]
  optable.OP_TABLE[Ops.CDIV] = replace(old, evaluate=lambda op, dt, srcs: alu.eval_numeric(Ops.FLOORDIV, dt, srcs))
  try: assert alu.eval_alu(Ops.CDIV, dtypes.int32, [a, b], dtypes.int32).value.tolist() == [3, -4]   # the table decides
  finally: optable.OP_TABLE[Ops.CDIV] = old

def test_the_symbolic_fuzzer_draws_exactly_the_ops_the_table_marks_for_it():
  from hypothesis import given, settings, HealthCheck
  from tinygrad.uop import GroupOp
  from uopcheck.fuzz.symbolic import int_expr
  seen: set = set()
  @settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck), database=None, derandomize=True)
  @given(int_expr())
  def draw(e): seen.update(u.op for u in e.toposort() if u.op in GroupOp.ALU)
  draw()
  assert seen == {op for op in _in_scope_alu() if "symbolic" in OP_TABLE[op].fuzz}, sorted(o.name for o in seen)

def test_the_graph_fuzzer_draws_only_ops_the_table_marks_for_it():
  from hypothesis import given, settings, HealthCheck
  from tinygrad.uop import GroupOp
  from uopcheck.fuzz.graph_strategy import programs
  from uopcheck.fuzz.program import build_program
  seen: set = set()
  @settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck), database=None, derandomize=True)
  @given(programs())
  def draw(d):
    for t in build_program(d, 0): seen.update(u.op for u in t.uop.toposort() if u.op in GroupOp.ALU)
  draw()
  marked = {op for op in _in_scope_alu() if "graph" in OP_TABLE[op].fuzz}
  assert len(seen) >= 6 and seen <= marked, sorted(o.name for o in seen - marked)

def test_every_integer_valued_alu_op_has_its_one_z3_definition():
  """the z3 model reads each integer op's definition from the table (spec.intsem), shared by the Int and BitVec
  encodings; THREEFRY (20 rounds of a cipher) is the one integer op without a z3 model, and says so by raising Unsupported"""
  from tinygrad.uop import Ops
  from uopcheck.spec import intsem
  missing = [op for op in _in_scope_alu() if OP_TABLE[op].domain in ("int", "int|bool", "numeric") and OP_TABLE[op].z3 is None]
  assert not missing, missing
  assert all(OP_TABLE[op].z3 is fn for op, fn in intsem.INT_SEMANTICS.items())
  assert OP_TABLE[Ops.THREEFRY].z3 is None

def test_the_z3_model_runs_the_table_entry():
  """swap CDIV's definition in the table for FLOORDIV's: the model's verdict on -7 CDIV 2 follows the table"""
  import z3
  from dataclasses import replace
  from tinygrad.uop import Ops
  from tinygrad.uop.ops import UOp
  from tinygrad.dtype import dtypes
  from uopcheck.spec import optable, intsem
  from uopcheck.spec.z3model import Z3Model, _signed_value
  def value() -> int:
    for dt in (dtypes.weakint, dtypes.int8):   # the Int and the BitVec encodings read the same entry
      m = Z3Model()
      v, _ = m.translate(UOp(Ops.CDIV, dt, (UOp.const(-7, dt), UOp.const(2, dt))))
      s = z3.Solver(ctx=m.ctx)
      s.check()
      got = _signed_value(s.model(), v, dt)
      if dt == dtypes.weakint: first = got
      else: assert got == first, (dt, got, first)
    return first
  assert value() == -3
  old = optable.OP_TABLE[Ops.CDIV]
  optable.OP_TABLE[Ops.CDIV] = replace(old, z3=lambda D, u, v: intsem.floor_div_mod(D, u.replace(op=Ops.FLOORDIV), v))
  try: assert value() == -4
  finally: optable.OP_TABLE[Ops.CDIV] = old

def test_a_float_op_the_table_calls_exact_never_rounds_and_one_it_calls_rounded_does():
  """the tolerance class is a claim about IEEE arithmetic, checked on float32 edge and random values: an ``exact`` op's
  result (computed in float64 from float32 operands) is always a float32, a ``rounded`` op's is not always. (NEG, MAX and
  TRUNC were classed rounded once, and the tolerance module's own op set disagreed with the table about them.)"""
  import numpy as np
  from conformance.edge_values import edges
  from uopcheck.spec.optable import ROUNDING_OPS
  rng = np.random.default_rng(0)
  x = np.concatenate([edges(dtypes.float32), rng.standard_normal(2000).astype(np.float32) * 1e3]).astype(np.float32)
  x = x[np.isfinite(x)]
  ga, gb = np.meshgrid(x[:300], x[-300:])
  a, b = ga.ravel().astype(np.float64), gb.ravel().astype(np.float64)
  with np.errstate(all="ignore"):
    f64 = {Ops.NEG: -a, Ops.MAX: np.maximum(a, b), Ops.TRUNC: np.trunc(a), Ops.ADD: a + b, Ops.SUB: a - b, Ops.MUL: a * b,
           Ops.FDIV: a / b, Ops.SQRT: np.sqrt(np.abs(a)), Ops.RECIPROCAL: 1 / a}
    rounds = {op: bool(np.any(np.isfinite(v) & (v.astype(np.float32).astype(np.float64) != v))) for op, v in f64.items()}
  for op, r in rounds.items():
    assert r == (OP_TABLE[op].tolerance != "exact"), f"{op}: the table says {OP_TABLE[op].tolerance}, IEEE says {'rounded' if r else 'exact'}"
    assert (op in ROUNDING_OPS) == r, op

def test_the_symbolic_fuzzer_draws_every_sized_int():
  """fuzz.symbolic once left out uint16 (the one dtype C promotes to int in a product); its dtypes are the table's"""
  from hypothesis import given, settings, HealthCheck
  from uopcheck.fuzz.symbolic import int_expr
  from uopcheck.spec.optable import SIZED_INTS
  seen: set = set()
  @settings(max_examples=400, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
  @given(int_expr())
  def draw(e): seen.update(x.dtype for x in e.toposort())
  draw()
  assert set(SIZED_INTS) <= seen, set(SIZED_INTS) - seen

def _evaluates_at(op:Ops, dt) -> bool:
  import numpy as np
  from uopcheck.spec import alu
  from uopcheck.spec.numpy_dtypes import np_dtype
  n = OP_TABLE[op].arity
  srcs = [np.array([True, False], np.bool_)] + [np.array([1, 0], np_dtype(dt))] * (n - 1) if op is Ops.WHERE else [np.array([1, 0], np_dtype(dt))] * n
  try: alu.eval_alu(op, dt, srcs, dt)
  except SpecError: return False
  return True

def test_the_bool_and_float_op_sets_are_what_the_spec_evaluates():
  """``BOOL_OPS`` (the ``on_bool`` entries) and ``FLOAT_OPS`` (entries whose domain takes floats) are what the rule
  instance builders put at a bool or float node: exactly the ops spec.alu evaluates there (the builders' own lists
  once disagreed: 3 bool ops in one, 7 in the other, NEG in neither)"""
  from uopcheck.spec.optable import BOOL_OPS, FLOAT_OPS
  alu_ops = [op for op in _in_scope_alu() if op is not Ops.THREEFRY]
  # (a comparison takes bool operands too, but makes a bool of any operands: the builders add GroupOp.Comparison themselves)
  at_bool = sorted(op for op in alu_ops if op not in GroupOp.Comparison and _evaluates_at(op, dtypes.bool))
  assert at_bool == sorted(BOOL_OPS), "on_bool disagrees with spec.alu"
  assert sorted(op for op in alu_ops if _evaluates_at(op, dtypes.float32)) == sorted(FLOAT_OPS), "a float op's domain disagrees with spec.alu"
  assert Ops.NEG in BOOL_OPS and Ops.SUB not in BOOL_OPS and Ops.AND not in FLOAT_OPS

def test_the_z3_model_has_every_bool_op_the_table_marks():
  """an op the table says has a value on bool must have one in the z3 model too (NEG on bool once made rules verify
  answer 'unknown' for an instance the numpy spec evaluates)"""
  from uopcheck.spec.optable import BOOL_OPS
  from uopcheck.spec.z3model import check_rewrite, Proved
  from uopcheck.spec.ints import OverflowReading
  a, b, c = (UOp.variable(n, False, True, dtypes.bool) for n in ("a", "b", "c"))
  for op in BOOL_OPS:
    n = OP_TABLE[op].arity
    u = UOp(op, dtypes.bool, (a, b, c) if n == 3 else (a, b)[:n])
    assert isinstance(check_rewrite(u, u, OverflowReading.UNDEFINED), Proved), op
  assert isinstance(check_rewrite(UOp(Ops.NEG, dtypes.bool, (a,)), a, OverflowReading.UNDEFINED), Proved)
