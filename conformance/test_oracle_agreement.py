"""The oracle checks itself: on every integer op and dtype, the numpy spec semantics, the z3 model (Int and BitVec, both
readings of signed overflow), the exhaustive evaluator and tinygrad's own python_alu agree wherever the spec says they
should. Each lane the spec leaves out is one of ``spec.ints.PYTHON_ALU_DIFFERENCES`` (the test names which)."""
from __future__ import annotations
from typing import Any
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

def _z3(node:UOp, reading:OverflowReading, weak_bits:int|None=None, sized_as_int:bool=False) -> tuple[Any, bool]:
  m = Z3Model(reading, weak_bits=weak_bits, sized_as_int=sized_as_int)
  v, d = m.translate(node)
  s = z3.Solver(ctx=m.ctx)
  s.add(*m.bounds, *m.links)
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

def _override_agrees(cls, flags:dict, dt, op:Ops, reading:OverflowReading, a_range:tuple, b) -> object:
  """z3 on: the override and the shared definition differ in value where defined, or in where they are defined"""
  from uopcheck.spec.optable import OP_TABLE
  m = Z3Model(reading, **flags)
  a = UOp.variable("a", a_range[0], a_range[1], dt)
  bu = UOp.const(b, dt) if isinstance(b, int) else UOp.variable("b", b[0], b[1], dt)
  u = UOp(op, dt, (a, bu))
  va, vb = m.translate(a)[0], m.translate(bu)[0]
  D = m.domain(dt)
  assert isinstance(D, cls)
  (x, cx), (y, cy) = cls.overrides[op](D, u, [va, vb]), OP_TABLE[op].z3(D, u, [va, vb])
  s = z3.Solver(ctx=m.ctx)
  s.set("rlimit", 50_000_000)   # unknown is a failure below, never a pass
  s.add(*m.bounds, z3.Or(z3.And(*cx) != z3.And(*cy), z3.And(*cy, x != y)))
  return s.check()

def unproved_overrides() -> list[str]:
  """every (domain, dtype, op, reading, divisor) whose override z3 does not prove equal to the shared definition"""
  from uopcheck.spec.z3model import ExactInt, WrappedInt
  consts = [1, 2, 3, 7, 8, 9, 64, 100]
  cases: list = []
  for op in (Ops.FLOORDIV, Ops.FLOORMOD):
    for b in consts + [-c for c in consts] + [(-1000, 1000)]:
      cases.append((ExactInt, {}, dtypes.weakint, op, OverflowReading.UNDEFINED, (-10**12, 10**12) if isinstance(b, int) else (-10**6, 10**6), b))
    for dt in (dtypes.int8, dtypes.uint8, dtypes.int32, dtypes.uint64):
      divs = [c for c in consts + [-c for c in consts] + [dt.min, dt.max] if c != 0 and dt.min <= c <= dt.max]
      if op is Ops.FLOORDIV or dt in dtypes.uints: divs.append((max(dt.min, -100), 100))
      for b in divs:
        for reading in OverflowReading: cases.append((WrappedInt, {"sized_as_int": True}, dt, op, reading, (dt.min, dt.max), b))
  assert ExactInt.overrides and WrappedInt.overrides and len(cases) > 200
  return [str((c[0].__name__, c[2], c[3], c[4], c[6], r)) for c in cases if (r := _override_agrees(*c)) != z3.unsat]

def test_each_domain_override_is_proved_equal_to_the_shared_definition():
  """spec.intsem writes each integer op once; a domain may override one with a form z3 decides faster (the Int domains
  floor-divide with z3's Euclidean '/'). z3 proves each override equal to the shared definition, and defined exactly where
  it is, for every dividend: per divisor for a set of constant divisors (both signs, 1, powers of two, the extremes), and
  for a symbolic divisor where z3 decides that (|b| <= 1000 on weakint; |b| <= 100 for FLOORDIV and unsigned FLOORMOD on
  sized ints -- signed FLOORMOD by a symbolic divisor is past z3's nonlinear arithmetic, hence the per-divisor proofs).
  In a fresh interpreter: z3's nonlinear integer search depends on what the process solved before (measured: weakint
  FLOORMOD by a symbolic divisor is unsat in 51K resource units in a new process, and still unknown at 100M after any
  earlier satisfiable check in the same process), so the proofs run where nothing was solved before them."""
  from conformance.isolated import run_isolated
  bad: Any = run_isolated("import json\nfrom uopcheck.settings import apply_environment\napply_environment()\n"
                     "from conformance.test_oracle_agreement import unproved_overrides\nprint(json.dumps(unproved_overrides()))", timeout=300)
  assert bad == [], bad[:5]

def test_a_wrong_override_is_refuted():
  """the proof above can fail: a floor division that truncates is told apart from the shared definition"""
  from uopcheck.spec.z3model import ExactInt
  from uopcheck.spec.optable import OP_TABLE
  m = Z3Model(OverflowReading.UNDEFINED)
  a, b = UOp.variable("a", -100, 100, dtypes.weakint), UOp.variable("b", -100, 100, dtypes.weakint)
  u = UOp(Ops.FLOORDIV, dtypes.weakint, (a, b))
  va, vb = m.translate(a)[0], m.translate(b)[0]
  D = ExactInt(m)
  q, _, _ = D.trunc_divmod(u, va, vb)
  y, cy = OP_TABLE[Ops.FLOORDIV].z3(D, u, [va, vb])
  s = z3.Solver(ctx=m.ctx)
  s.add(*m.bounds, z3.And(*cy), q != y)
  assert s.check() == z3.sat
