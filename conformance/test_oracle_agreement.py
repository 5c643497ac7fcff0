"""The oracle checks itself: on every integer op and dtype, the numpy spec semantics, the z3 model (Int and BitVec, both
readings of signed overflow), the exhaustive evaluator and tinygrad's own python_alu agree wherever the spec says they
should. Each lane the spec leaves out is one of ``spec.ints.PYTHON_ALU_DIFFERENCES`` (the test names which)."""
from __future__ import annotations
import z3
from hypothesis import given, settings, HealthCheck, strategies as st
from tinygrad.uop import Ops
from tinygrad.uop.ops import UOp, exec_alu
from tinygrad.dtype import dtypes
from uopcheck.spec.ints import OverflowReading, PYTHON_ALU_DIFFERENCES, C_UB_SIGNED
from uopcheck.spec.z3model import Z3Model, _signed_value
from uopcheck.fuzz.exhaustive import evaluate_at, exhaustive_check
from conformance.profiles import examples

DTS = [dtypes.weakint, dtypes.int8, dtypes.uint8, dtypes.int16, dtypes.uint16, dtypes.int32, dtypes.uint32, dtypes.int64, dtypes.uint64]
BINARY = [Ops.ADD, Ops.SUB, Ops.MUL, Ops.CDIV, Ops.CMOD, Ops.FLOORDIV, Ops.FLOORMOD, Ops.MAX, Ops.AND, Ops.OR, Ops.XOR,
          Ops.SHL, Ops.SHR, Ops.CMPLT, Ops.CMPNE, Ops.CMPEQ]
WEAK_LIM = 2**40

def _z3(node:UOp, reading:OverflowReading, weak_bits:int|None=None, sized_as_int:bool=False) -> tuple[object, bool]:
  m = Z3Model(reading, weak_bits=weak_bits, sized_as_int=sized_as_int)
  v, d = m.translate(node)
  s = z3.Solver(ctx=m.ctx); s.add(*m.bounds, *m.links)
  assert s.check() == z3.sat
  mdl = s.model()
  return _signed_value(mdl, v, node.dtype), z3.is_true(mdl.eval(d, model_completion=True))

def _left_out(op:Ops, dt, a:int, b:int, reading:OverflowReading) -> str|None:
  """Which deliberate difference (if any) covers this lane for python_alu."""
  lo, hi = (-2**63, 2**63 - 1) if dt == dtypes.weakint else (dt.min, dt.max)
  bits = 64 if dt == dtypes.weakint else dt.bitsize
  if op in (Ops.CDIV, Ops.CMOD, Ops.FLOORDIV, Ops.FLOORMOD):
    if b == 0: return "division by zero"
    if dt in dtypes.sints + (dtypes.weakint,) and a == lo and b == -1: return "signed MIN / -1"
  if dt == dtypes.weakint and op in (Ops.SHL, Ops.SHR) and b >= 64: return "weakint outside int64"  # defined, but past numpy's int64
  if op in (Ops.SHL, Ops.SHR) and not 0 <= b < bits: return "shift count outside [0, bits)"
  exact = {Ops.ADD: a + b, Ops.SUB: a - b, Ops.MUL: a * b, Ops.SHL: a << b if 0 <= b < bits else 0}.get(op)
  if dt == dtypes.weakint and exact is not None and not lo <= exact <= hi: return "weakint outside int64"
  if reading is OverflowReading.UNDEFINED and exact is not None:
    if dt in C_UB_SIGNED and not lo <= exact <= hi: return "signed overflow under UNDEFINED"
    if dt == dtypes.uint16 and op is Ops.MUL and exact > 2**31 - 1: return "signed overflow under UNDEFINED"
    if op is Ops.SHL and dt in C_UB_SIGNED and a < 0: return "signed overflow under UNDEFINED"
  return None

@st.composite
def lanes(draw):
  op, dt = draw(st.sampled_from(BINARY)), draw(st.sampled_from(DTS))
  lo, hi = (-WEAK_LIM, WEAK_LIM) if dt == dtypes.weakint else (dt.min, dt.max)
  edge = st.sampled_from([v for v in (0, 1, -1, 2, lo, hi, lo + 1, hi - 1, 7, -8) if lo <= v <= hi])
  a = draw(st.one_of(edge, st.integers(lo, hi)))
  b = draw(st.integers(-2, (64 if dt == dtypes.weakint else dt.bitsize) + 2).filter(lambda v: lo <= v <= hi)) if op in (Ops.SHL, Ops.SHR) \
      else draw(st.one_of(edge, st.integers(lo, hi)))
  return op, dt, a, b, draw(st.sampled_from(list(OverflowReading)))

@settings(max_examples=examples(1500), deadline=None, suppress_health_check=list(HealthCheck), database=None, derandomize=True)
@given(lanes())
def test_numpy_z3_exhaustive_and_python_alu_agree(case):
  op, dt, a, b, reading = case
  x, y = UOp.variable("x", a, a, dtype=dt), UOp.variable("y", b, b, dtype=dt)
  if dt == dtypes.weakint and op in (Ops.SHL, Ops.SHR): y = UOp.const(b, dt)  # the Int model shifts weakint by constants only
  node = UOp(op, dtypes.bool if op in (Ops.CMPLT, Ops.CMPNE, Ops.CMPEQ) else dt, (x, y))
  ub = reading is OverflowReading.UNDEFINED
  (nv, nundef), = evaluate_at([node], {"x": a, "y": b} if y.op is not Ops.CONST else {"x": a}, ub_is_undefined=ub)
  zv, zdef = _z3(node, reading)
  why = _left_out(op, dt, a, b, reading)
  assert why is None or why in PYTHON_ALU_DIFFERENCES
  if why != "weakint outside int64":  # there numpy (int64) can't say and z3's Int alone decides
    assert zdef == (not nundef), f"z3 defined={zdef}, numpy undefined={nundef} ({why})"
    if zdef: assert int(zv) == int(nv), f"z3 {zv} vs numpy {nv}"
  if dt == dtypes.weakint and why is None:  # the 64-bit BitVec reading of weakint agrees with the Int one where it fits
    bv, bdef = _z3(node, reading, weak_bits=64)
    assert bdef == zdef and (not bdef or int(bv) == int(zv))
  if dt != dtypes.weakint:  # sized ints as exact Ints (rules verify's fallback) agree with the BitVec model on every lane
    iv, idef = _z3(node, reading, sized_as_int=True)
    assert idef == zdef and (not idef or int(iv) == int(zv)), f"Int model {iv} (defined={idef}) vs BitVec {zv} (defined={zdef})"
  if zdef and why != "weakint outside int64":  # the exhaustive evaluator proves the node equal to its value on this domain
    assert exhaustive_check(node, UOp.const(nv, node.dtype), ub_is_undefined=ub)[0]
  if why is None:
    assert zdef, f"the spec leaves {op} {dt} {a},{b} undefined without a listed reason"
    pv = exec_alu(op, node.dtype, [a, b])
    assert int(pv) == int(zv), f"python_alu {pv} vs spec {zv}"

def test_every_deliberate_difference_is_exercised():
  seen = {_left_out(op, dt, a, b, r) for op, dt, a, b, r in [
    (Ops.CDIV, dtypes.int32, 5, 0, OverflowReading.WRAP), (Ops.CDIV, dtypes.int8, -128, -1, OverflowReading.WRAP),
    (Ops.SHL, dtypes.uint8, 1, 9, OverflowReading.WRAP), (Ops.ADD, dtypes.int32, 2**31 - 1, 1, OverflowReading.UNDEFINED),
    (Ops.MUL, dtypes.weakint, 2**40, 2**40, OverflowReading.WRAP)]}
  assert seen == set(PYTHON_ALU_DIFFERENCES)
